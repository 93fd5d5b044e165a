#!/usr/bin/env python3
"""Fit and evaluate the symptom ranker's weights (taxonomy/ranker.json). Python 3 stdlib only.

The classifier scores every leaf as
    logit = (prior_weight * log(base rate | frameworks) + evidence_scale * evidence
             + stage_scale * stage hint) / temperature
and takes a softmax (model/kb/symptomclassifier.cpp). `rankscope classify --json` reports the
three inputs of every candidate (base_rate, score, stage_hint), so this script reads them from
the program itself and never re-implements the signatures or cues.

  scripts/ranker.py fit  LABELLED... [--rankscope build/bin/rankscope] [--split S] [--write]
  scripts/ranker.py cv   LABELLED... [--rankscope build/bin/rankscope] [--folds 5]
  scripts/ranker.py eval LABELLED... [--rankscope build/bin/rankscope] [--split dev]
  (each also takes --raw DIR [--summaries])

Fitting has two steps. The weights (evidence_scale, stage_scale, prior_weight) maximise the
log-likelihood of the right leaf over the fitting rows, every labelled file weighing the same in
total (our own reports are many and easy; the study's reports are few and what users paste). Then
the temperature is fitted on the calibration rows alone (--calibrate, default: the study's "train"
rows), so that the probability of the first candidate matches how often it is right on reports
like the study's. It is fitted out of fold (--folds, default 5): each fold's calibration rows are
scored with the weights fitted without them, so the temperature also pays for the optimism of
fitting the weights on the rows it calibrates on; "unsure" is the threshold below which the first
guess is more often wrong than right on those rows. Fitting reads the weights it starts from (and
any it does not fit) from taxonomy/ranker.json; evaluation uses the weights compiled into the
binary, so rebuild after --write. `cv` measures a change before the held-out rows see it: the
top-1 / top-3 of the calibration rows, each ranked with the weights fitted without its fold, and
their reliability table. Folds are fixed by the link's MD5, so every run splits alike. Evaluation
prints a reliability table (first candidate's probability in bins against how often it was right)
per split.

LABELLED is a TSV of `split<TAB>link<TAB>leaf id<TAB>text` rows (` | ` in the text is a line
break; lines starting with # are comments; `a|b` in the leaf field lists every leaf the labeller
gave the report, and ranking any of them counts as right): bench/data/tosem23_dev_split.tsv (the study's
issues we read, "train" and held-out "dev"), tests/data/classifier/frameworks_eval.tsv (our
reports for today's frameworks); or tests/data/classifier/manifest.json (our own reports,
split "own").

Our labelled rows hold our own short summaries of the reports, while users paste a report's raw
first post (title, template headings, environment dumps, code, logs). With --raw DIR, a row whose
link https://github.com/OWNER/REPO/issues/N has a file DIR/OWNER_REPO_N.txt is ranked from that
file's text instead of its summary, and rows without one are left out (every action prints how
many rows were raw); --summaries keeps the same rows but ranks their summaries, so that
summaries and raw posts of the same reports can be compared.
"""

import argparse
import hashlib
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
    "stage_scale": [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0],
    "prior_weight": [0.0, 0.25, 0.5, 0.75, 1.0, 1.5],
}
TEMPERATURE_GRID = [x / 20.0 for x in range(10, 121)]  # 0.5 .. 6.0
UNSURE_GRID = [x / 100.0 for x in range(5, 81, 5)]
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


def raw_file(folder, link):
    """DIR/OWNER_REPO_N.txt for a GitHub issue link, or None for any other link."""
    parts = link.rstrip("/").split("/")
    if len(parts) < 7 or parts[2] != "github.com" or parts[5] not in ("issues", "pull"):
        return None
    return os.path.join(folder, "%s_%s_%s.txt" % (parts[3], parts[4], parts[6]))


def with_raw_text(rows, folder, keep_summaries):
    """The rows that have a raw first post in `folder`, each with that text as its text (with
    keep_summaries, its summary)."""
    out = []
    for split, link, leaves, text, source in rows:
        path = raw_file(folder, link)
        if path and os.path.isfile(path):
            if not keep_summaries:
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
            out.append((split, link, leaves, text, source))
    print("raw: %d of %d rows have a raw first post in %s, ranked from %s; the %d others left "
          "out" % (len(out), len(rows), folder, "their summaries" if keep_summaries else "it",
                   len(rows) - len(out)))
    return out


def features(rankscope, text):
    """{leaf: (evidence, base_rate, stage_hint)} for every leaf in the program's order, and the
    program's candidates."""
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
    for leaves, feats, w, _ in items:
        prob = probabilities(feats, p)
        total += w * math.log(max(sum(prob.get(leaf, 0.0) for leaf in leaves), 1e-9))
        top1 += w * (max(prob, key=prob.get) in leaves)
        weights += w
    return total / weights, top1


def first_guesses(items, p):
    """(probability of the first candidate, whether it is right, weight) per item."""
    out = []
    for leaves, feats, w, _ in items:
        prob = probabilities(feats, p)
        first = max(prob, key=prob.get)
        out.append((prob[first], first in leaves, w))
    return out


def fit_weights(items, current):
    """The grid weights of the highest weighted log-likelihood, at temperature 1."""
    best = None
    for e in GRID["evidence_scale"]:
        for s in GRID["stage_scale"]:
            for w in GRID["prior_weight"]:
                p = dict(current, evidence_scale=e, stage_scale=s, prior_weight=w, temperature=1.0)
                key = loglik(items, p)
                if best is None or key > best[0]:
                    best = (key, p)
    return best


def fold_of(link, folds):
    return int(hashlib.md5(link.encode("utf-8")).hexdigest(), 16) % folds


def out_of_fold(items, calibration, current, folds):
    """(calibration item, weights fitted without its fold) for every calibration item."""
    if folds < 2:
        p = fit_weights(items, current)[1]
        return [(c, p) for c in calibration]
    out = []
    for k in range(folds):
        held = [c for c in calibration if fold_of(c[3], folds) == k]
        if held:
            kept = [i for i in items if i[3] is None or fold_of(i[3], folds) != k]
            p = fit_weights(kept, current)[1]
            out.extend((c, p) for c in held)
    return out


def fit(items, calibration, current, folds):
    best = fit_weights(items, current)
    p = best[1]
    # The temperature that makes the probabilities honest on calibration rows the weights were
    # not fitted on.
    scored = out_of_fold(items, calibration, current, folds)
    p["temperature"] = max(TEMPERATURE_GRID, key=lambda t: sum(
        loglik([c], dict(q, temperature=t))[0] * c[2] for c, q in scored))
    # "Unsure" should mean "the first guess is probably wrong": the threshold that makes that
    # statement right for the most calibration reports (by weight).
    guesses = [g for c, q in scored
               for g in first_guesses([c], dict(q, temperature=p["temperature"]))]
    p["unsure_below"] = max(UNSURE_GRID, key=lambda t: (
        sum(w for conf, right, w in guesses if (conf >= t) == right), -abs(t - 0.5)))
    return p, best[0]


def cross_validate(items, calibration, current, folds, temperature, source_of):
    """Out-of-fold top-1 / top-3 and reliability of the calibration rows, in all and per
    labelled file (source_of: link -> file)."""
    n = top1 = top3 = 0
    scored = []
    per_source = {}
    for (leaves, feats, _, link), p in out_of_fold(items, calibration, current, folds):
        prob = probabilities(feats, dict(p, temperature=temperature))
        # Leaves tied here keep the program's order (a stable sort of the candidates as it listed
        # them).
        ranked = sorted(prob, key=lambda leaf: -prob[leaf])
        n += 1
        top1 += ranked[0] in leaves
        top3 += any(leaf in ranked[:3] for leaf in leaves)
        counts = per_source.setdefault(source_of[link], [0, 0, 0])
        counts[0] += 1
        counts[1] += ranked[0] in leaves
        counts[2] += any(leaf in ranked[:3] for leaf in leaves)
        scored.append((prob[ranked[0]], ranked[0] in leaves))
    print("%d-fold cross-validation on %d calibration rows: top-1 %.1f %% (%d), top-3 %.1f %% "
          "(%d) at temperature %.2f" % (folds, n, 100.0 * top1 / n, top1, 100.0 * top3 / n, top3,
                                        temperature))
    for source, (count, right1, right3) in sorted(per_source.items()):
        print("  %s: %d rows, top-1 %.1f %% (%d), top-3 %.1f %% (%d)" % (
            source, count, 100.0 * right1 / count, right1, 100.0 * right3 / count, right3))
    print("  reliability (first candidate): bin, reports, mean stated, right")
    for name, count, stated, right in reliability(scored):
        print("  | %s | %d | %.2f | %.0f %% |" % (name, count, stated, 100.0 * right))


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
    parser.add_argument("action", choices=["fit", "cv", "eval"])
    parser.add_argument("labelled", nargs="+")
    parser.add_argument("--rankscope", default=os.path.join(ROOT, "build", "bin", "rankscope"))
    parser.add_argument("--split", help="only rows of this split (fit: default all but 'dev')")
    parser.add_argument("--calibrate", default="train",
                        help="fit: the split(s), comma-separated, the temperature and 'unsure' "
                        "are fitted on (each split weighing the same)")
    parser.add_argument("--folds", type=int, default=5,
                        help="fit, cv: folds of the calibration rows (1: no cross-validation)")
    parser.add_argument("--write", action="store_true", help="fit: write taxonomy/ranker.json")
    parser.add_argument("--raw", metavar="DIR",
                        help="rank each row's raw first post DIR/OWNER_REPO_N.txt instead of its "
                        "summary; rows without one are left out")
    parser.add_argument("--summaries", action="store_true",
                        help="with --raw: the same rows, ranked from their summaries")
    args = parser.parse_args()

    rows = [r for path in args.labelled for r in read_labelled(path)]
    if args.summaries and not args.raw:
        sys.exit("--summaries compares with --raw DIR; give both")
    if args.raw:
        rows = with_raw_text(rows, args.raw, args.summaries)
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
        # Calibration rows carry their link, so that cross-validation can hold out their fold.
        fold_key = link if split in calibrate else None
        items.append((leaves, cache[text], 1.0 / per_source[source], fold_key))
        if split in calibrate:
            calibration.append((leaves, cache[text], 1.0 / per_split[split], link))
    if not calibration:
        sys.exit("no calibration rows (split %s)" % args.calibrate)
    if args.action == "cv":
        cross_validate(items, calibration, current, args.folds, current.get("temperature", 1.0),
                       {link: source for split, link, _, _, source in train if split in calibrate})
        return 0
    fitted, (mean_loglik, top1) = fit(items, calibration, current, args.folds)
    print("fitted on %d reports (%s): weighted mean log-likelihood %.3f; temperature %.2f and "
          "unsure below %.2f on %d '%s' rows" % (
              len(items), ", ".join("%s %d" % kv for kv in sorted(per_source.items())),
              mean_loglik, fitted["temperature"], fitted["unsure_below"], len(calibration),
              args.calibrate))
    fitted["fitted_on"] = "%d %sreports of %s (%s, each file weighing the same); temperature " \
        "and unsure_below on the %d '%s' rows, out of %d folds" % (
            len(items), "raw first posts of the " if args.raw else "",
            ", ".join(os.path.relpath(p, ROOT) for p in args.labelled),
            "split " + args.split if args.split else "every split but dev", len(calibration),
            args.calibrate, args.folds)
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
