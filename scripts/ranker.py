#!/usr/bin/env python3
"""Fit and evaluate the symptom ranker's weights (taxonomy/ranker.json). Python 3 stdlib only.

The classifier scores every leaf as
    logit = (prior_weight * log(base rate | frameworks) + evidence_scale * evidence
             + stage_scale * stage hint) / temperature
and takes a softmax (model/kb/symptomclassifier.cpp). `rankscope classify --json` reports the
three inputs of every candidate (base_rate, score, stage_hint), so this script reads them from
the program itself and never re-implements the signatures or cues.

  scripts/ranker.py fit  LABELLED... [--rankscope build/bin/rankscope] [--split S] [--write]
  scripts/ranker.py eval LABELLED... [--rankscope build/bin/rankscope] [--split dev]

Fitting has two steps. The weights (evidence_scale, stage_scale, prior_weight) maximise the
log-likelihood of the right leaf over the fitting rows, every labelled file weighing the same in
total (our own reports are many and easy; the study's reports are few and what users paste).
Then the temperature is fitted on the calibration rows alone (--calibrate, default: the study's
"train" rows), so that the probability of the first candidate matches how often it is right on
reports like the study's; "unsure" is the threshold below which the first guess is more often
wrong than right on those rows. Fitting reads the weights it starts from (and any it does not
fit) from taxonomy/ranker.json; evaluation uses the weights compiled into the binary, so rebuild
after --write. Evaluation prints a reliability table (first candidate's probability in bins
against how often it was right) per split.

LABELLED is a TSV of `split<TAB>link<TAB>leaf id<TAB>text` rows (` | ` in the text is a line
break; lines starting with # are comments; `a|b` in the leaf field lists every leaf the labeller
gave the report, and ranking any of them counts as right): bench/data/tosem23_dev_split.tsv (the study's
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
TEMPERATURE_GRID = [x / 20.0 for x in range(10, 121)]  # 0.5 .. 6.0
UNSURE_GRID = [x / 100.0 for x in range(10, 81, 5)]
RELIABILITY_BINS = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0001]


def read_labelled(path):
    """Rows of (split, link, leaves, text, source); leaves is a tuple, the first one the main."""
    source = os.path.relpath(path, ROOT)
    if path.endswith(".json"):
        folder = os.path.dirname(path)
        with open(path, encoding="utf-8") as f:
            manifest = json.load(f)
        rows = []
        for r in manifest["reports"]:
            with open(os.path.join(folder, r["file"]), encoding="utf-8") as t:
                rows.append(("own", r["file"], (r["expected"],), t.read(), source))
        return rows
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            split, link, leaf, text = line.split("\t", 3)
            rows.append((split, link, tuple(leaf.split("|")), text.replace(" | ", "\n"), source))
    return rows


def features(rankscope, text):
    """{leaf: (evidence, base_rate, stage_hint)} for every leaf, and the program's candidates."""
    out = subprocess.run([rankscope, "classify", "--json", "--top", str(LEAVES), "-"],
                         input=text.encode("utf-8"), capture_output=True, check=True)
    doc = json.loads(out.stdout)
    feats = {c["symptom"]: (c["score"], c["base_rate"], c["stage_hint"])
             for c in doc["candidates"]}
    return feats, doc["candidates"]


def probabilities(feats, p):
    t = p.get("temperature", 1.0)
    logits = {leaf: (p["prior_weight"] * math.log(max(base, 1e-6)) + p["evidence_scale"] * ev +
                     p["stage_scale"] * stage) / t for leaf, (ev, base, stage) in feats.items()}
    top = max(logits.values())
    z = sum(math.exp(v - top) for v in logits.values())
    return {leaf: math.exp(v - top) / z for leaf, v in logits.items()}


def loglik(items, p):
    """Weighted mean log-likelihood of the right leaves, and the weighted top-1 count."""
    total = weights = top1 = 0.0
    for leaves, feats, w in items:
        prob = probabilities(feats, p)
        total += w * math.log(max(sum(prob.get(leaf, 0.0) for leaf in leaves), 1e-9))
        top1 += w * (max(prob, key=prob.get) in leaves)
        weights += w
    return total / weights, top1


def first_guesses(items, p):
    """(probability of the first candidate, whether it is right, weight) per item."""
    out = []
    for leaves, feats, w in items:
        prob = probabilities(feats, p)
        first = max(prob, key=prob.get)
        out.append((prob[first], first in leaves, w))
    return out


def fit(items, calibration, current):
    best = None
    for e in GRID["evidence_scale"]:
        for s in GRID["stage_scale"]:
            for w in GRID["prior_weight"]:
                p = dict(current, evidence_scale=e, stage_scale=s, prior_weight=w, temperature=1.0)
                key = loglik(items, p)
                if best is None or key > best[0]:
                    best = (key, p)
    p = best[1]
    # The temperature that makes the probabilities honest on the calibration rows.
    p["temperature"] = max(TEMPERATURE_GRID,
                           key=lambda t: loglik(calibration, dict(p, temperature=t))[0])
    # "Unsure" should mean "the first guess is probably wrong": the threshold that makes that
    # statement right for the most calibration reports (by weight).
    scored = first_guesses(calibration, p)
    p["unsure_below"] = max(UNSURE_GRID, key=lambda t: (
        sum(w for conf, right, w in scored if (conf >= t) == right), -abs(t - 0.5)))
    return p, best[0]


def reliability(scored):
    """Rows of (bin label, reports, mean stated probability, observed accuracy)."""
    rows = []
    for lo, hi in zip(RELIABILITY_BINS, RELIABILITY_BINS[1:]):
        inside = [(c, r) for c, r in scored if lo <= c < hi]
        if inside:
            rows.append(("%.1f-%.1f" % (lo, min(hi, 1.0)), len(inside),
                         sum(c for c, _ in inside) / len(inside),
                         sum(r for _, r in inside) / len(inside)))
    return rows


def evaluate(rows, rankscope, label):
    n = top1 = top3 = unsure = unsure_right = 0
    misses, scored = [], []
    with open(RANKER_JSON, encoding="utf-8") as f:
        threshold = json.load(f)["unsure_below"]
    for split, link, leaves, text, _ in rows:
        _, candidates = features(rankscope, text)
        ranked = [c["symptom"] for c in candidates]
        n += 1
        top1 += ranked[0] in leaves
        top3 += any(leaf in ranked[:3] for leaf in leaves)
        scored.append((candidates[0]["probability"], ranked[0] in leaves))
        if candidates[0]["probability"] < threshold:
            unsure += 1
            unsure_right += ranked[0] not in leaves
        if not any(leaf in ranked[:3] for leaf in leaves):
            misses.append((link, "|".join(leaves), ranked[:3]))
    if n == 0:
        print("%s: no rows" % label)
        return
    print("%s: %d reports, top-1 %.1f %% (%d), top-3 %.1f %% (%d), unsure on %d (first guess "
          "wrong on %d of them)" % (label, n, 100.0 * top1 / n, top1, 100.0 * top3 / n, top3,
                                    unsure, unsure_right))
    print("  reliability (first candidate): bin, reports, mean stated, right")
    for name, count, stated, right in reliability(scored):
        print("  | %s | %d | %.2f | %.0f %% |" % (name, count, stated, 100.0 * right))
    ece = sum(abs(c - r) for c, r in [(s, float(ok)) for s, ok in scored]) / n
    print("  mean |stated - right| per report %.2f; mean stated %.2f, top-1 %.2f" % (
        ece, sum(c for c, _ in scored) / n, top1 / n))
    for link, leaf, got in misses:
        print("  miss %s: %s, ranked %s" % (link, leaf, ", ".join(got)))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["fit", "eval"])
    parser.add_argument("labelled", nargs="+")
    parser.add_argument("--rankscope", default=os.path.join(ROOT, "build", "bin", "rankscope"))
    parser.add_argument("--split", help="only rows of this split (fit: default all but 'dev')")
    parser.add_argument("--calibrate", default="train",
                        help="fit: the split(s), comma-separated, the temperature and 'unsure' "
                        "are fitted on (each split weighing the same)")
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
    per_source = {}
    for r in train:
        per_source[r[4]] = per_source.get(r[4], 0) + 1
    calibrate = args.calibrate.split(",")
    if "dev" in calibrate:
        sys.exit("the held-out split measures; it is never fitted on")
    per_split = {}
    for r in train:
        per_split[r[0]] = per_split.get(r[0], 0) + 1
    cache = {}
    items, calibration = [], []
    for split, link, leaves, text, source in train:
        if text not in cache:
            cache[text] = features(args.rankscope, text)[0]
        item = (leaves, cache[text], 1.0 / per_source[source])
        items.append(item)
        if split in calibrate:
            calibration.append((leaves, cache[text], 1.0 / per_split[split]))
    if not calibration:
        sys.exit("no calibration rows (split %s)" % args.calibrate)
    fitted, (mean_loglik, top1) = fit(items, calibration, current)
    print("fitted on %d reports (%s): weighted mean log-likelihood %.3f; temperature %.2f and "
          "unsure below %.2f on %d '%s' rows" % (
              len(items), ", ".join("%s %d" % kv for kv in sorted(per_source.items())),
              mean_loglik, fitted["temperature"], fitted["unsure_below"], len(calibration),
              args.calibrate))
    fitted["fitted_on"] = "%d reports of %s (%s, each file weighing the same); temperature and " \
        "unsure_below on the %d '%s' rows" % (
            len(items), ", ".join(os.path.relpath(p, ROOT) for p in args.labelled),
            "split " + args.split if args.split else "every split but dev", len(calibration),
            args.calibrate)
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
