#!/usr/bin/env python3
"""Fit and evaluate the symptom ranker's weights (taxonomy/ranker.json). Python 3 stdlib only.

The classifier scores every leaf as
    logit = prior_weight * log(base rate | frameworks) + evidence_scale * evidence
            + stage_scale * stage hint
and takes a softmax (model/kb/symptomclassifier.cpp). `rankscope classify --json` reports the
three inputs of every candidate (base_rate, score, stage_hint), so this script reads them from
the program itself and never re-implements the signatures or cues.

  scripts/ranker.py fit  LABELLED... [--rankscope build/app/rankscope] [--split S] [--write]
  scripts/ranker.py eval LABELLED... [--rankscope build/app/rankscope] [--split dev]

Fitting reads the weights it starts from (and any it does not fit) from taxonomy/ranker.json;
evaluation uses the weights compiled into the binary, so rebuild after --write.

LABELLED is a TSV of `split<TAB>link<TAB>leaf id<TAB>text` rows (` | ` in the text is a line
break; lines starting with # are comments): bench/data/tosem23_dev_split.tsv (the study's
issues we read, "train" and held-out "dev"), tests/data/classifier/frameworks_eval.tsv (our
reports for today's frameworks); or tests/data/classifier/manifest.json (our own reports,
split "own").
"""

import argparse
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RANKER_JSON = os.path.join(ROOT, "taxonomy", "ranker.json")
LEAVES = 38

GRID = {
    "evidence_scale": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0],
    "stage_scale": [0.0, 0.5, 1.0, 1.5, 2.0, 3.0],
    "prior_weight": [0.0, 0.25, 0.5, 0.75, 1.0, 1.5],
}
UNSURE_GRID = [x / 100.0 for x in range(10, 71, 5)]


def read_labelled(path):
    """Rows of (split, link, leaf, text)."""
    if path.endswith(".json"):
        folder = os.path.dirname(path)
        with open(path, encoding="utf-8") as f:
            manifest = json.load(f)
        rows = []
        for r in manifest["reports"]:
            with open(os.path.join(folder, r["file"]), encoding="utf-8") as t:
                rows.append(("own", r["file"], r["expected"], t.read()))
        return rows
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            split, link, leaf, text = line.split("\t", 3)
            rows.append((split, link, leaf, text.replace(" | ", "\n")))
    return rows


def features(rankscope, text):
    """{leaf: (evidence, base_rate, stage_hint)} for every leaf, and the program's ranking."""
    out = subprocess.run([rankscope, "classify", "--json", "--top", str(LEAVES), "-"],
                         input=text.encode("utf-8"), capture_output=True, check=True)
    doc = json.loads(out.stdout)
    feats = {c["symptom"]: (c["score"], c["base_rate"], c["stage_hint"])
             for c in doc["candidates"]}
    return feats, [c["symptom"] for c in doc["candidates"]], doc["candidates"]


def probabilities(feats, p):
    logits = {leaf: p["prior_weight"] * math.log(max(base, 1e-6)) + p["evidence_scale"] * ev +
              p["stage_scale"] * stage for leaf, (ev, base, stage) in feats.items()}
    top = max(logits.values())
    z = sum(math.exp(v - top) for v in logits.values())
    return {leaf: math.exp(v - top) / z for leaf, v in logits.items()}


def fit(items, current):
    best = None
    for e in GRID["evidence_scale"]:
        for s in GRID["stage_scale"]:
            for w in GRID["prior_weight"]:
                p = dict(current, evidence_scale=e, stage_scale=s, prior_weight=w)
                loglik, top1 = 0.0, 0
                for leaf, feats in items:
                    prob = probabilities(feats, p)
                    loglik += math.log(max(prob.get(leaf, 0.0), 1e-9))
                    top1 += max(prob, key=prob.get) == leaf
                key = (loglik / len(items), top1)
                if best is None or key > best[0]:
                    best = (key, p)
    p = best[1]
    # "Unsure" should mean "the first guess is probably wrong": the threshold that makes that
    # statement right for the most training reports.
    scored = []
    for leaf, feats in items:
        prob = probabilities(feats, p)
        first = max(prob, key=prob.get)
        scored.append((prob[first], first == leaf))
    p["unsure_below"] = max(UNSURE_GRID, key=lambda t: (
        sum((conf >= t) == right for conf, right in scored), -abs(t - 0.35)))
    return p, best[0]


def evaluate(rows, rankscope, label):
    n = top1 = top3 = unsure = unsure_right = 0
    misses = []
    with open(RANKER_JSON, encoding="utf-8") as f:
        threshold = json.load(f)["unsure_below"]
    for split, link, leaf, text in rows:
        _, ranked, candidates = features(rankscope, text)
        n += 1
        top1 += ranked[:1] == [leaf]
        top3 += leaf in ranked[:3]
        if candidates[0]["probability"] < threshold:
            unsure += 1
            unsure_right += ranked[0] != leaf
        if leaf not in ranked[:3]:
            misses.append((link, leaf, ranked[:3]))
    if n == 0:
        print("%s: no rows" % label)
        return
    print("%s: %d reports, top-1 %.1f %% (%d), top-3 %.1f %% (%d), unsure on %d (first guess "
          "wrong on %d of them)" % (label, n, 100.0 * top1 / n, top1, 100.0 * top3 / n, top3,
                                    unsure, unsure_right))
    for link, leaf, got in misses:
        print("  miss %s: %s, ranked %s" % (link, leaf, ", ".join(got)))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["fit", "eval"])
    parser.add_argument("labelled", nargs="+")
    parser.add_argument("--rankscope", default=os.path.join(ROOT, "build", "app", "rankscope"))
    parser.add_argument("--split", help="only rows of this split (fit: default all but 'dev')")
    parser.add_argument("--write", action="store_true", help="fit: write taxonomy/ranker.json")
    args = parser.parse_args()

    rows = [r for path in args.labelled for r in read_labelled(path)]
    if args.action == "eval":
        splits = [args.split] if args.split else sorted({r[0] for r in rows})
        for split in splits:
            evaluate([r for r in rows if r[0] == split], args.rankscope, split)
        return 0

    train = [r for r in rows if (r[0] == args.split if args.split else r[0] != "dev")]
    if not train:
        sys.exit("no training rows")
    with open(RANKER_JSON, encoding="utf-8") as f:
        current = json.load(f)
    items = [(leaf, features(args.rankscope, text)[0]) for _, _, leaf, text in train]
    fitted, (loglik, top1) = fit(items, current)
    print("fitted on %d reports: mean log-likelihood %.3f, top-1 %d" % (len(items), loglik, top1))
    fitted["fitted_on"] = "%d reports of %s (%s)" % (
        len(items), ", ".join(os.path.relpath(p, ROOT) for p in args.labelled),
        "split " + args.split if args.split else "every split but dev")
    text = json.dumps(fitted, indent=1) + "\n"
    if args.write:
        with open(RANKER_JSON, "w", encoding="utf-8") as f:
            f.write(text)
        print("wrote", os.path.relpath(RANKER_JSON, ROOT), "(rebuild to compile it in)")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
