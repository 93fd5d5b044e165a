#!/usr/bin/env python3
"""Ranks read reports' raw first posts out of fold (bench/harvest/README.md).

  bench/harvest/out_of_fold.py --raw DIR --rows FILE... --out OUT.jsonl [--folds 5] [--build build]

The rows of the --rows files that have a raw post DIR/OWNER_REPO_N.txt are split into folds by
the MD5 of their link. For each fold, the nearest-report vote (taxonomy/neighbours.tsv) leaves the
fold's links out and the term model (taxonomy/terms.json) is relearned, at its committed setting,
from the labelled files it was learned from without the fold's rows; the program is rebuilt and
ranks the fold's posts. The two taxonomy files are restored at the end, and the program rebuilt.
OUT.jsonl gets, per post, its link, split, leaves and the program's ranking; the figures are
printed per split as `scripts/ranker.py eval` prints them (any leaf, first leaf, reliability).
"""

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import ranker  # noqa: E402

TAXONOMY_FILES = ["taxonomy/neighbours.tsv", "taxonomy/terms.json"]


def learned_from():
    """The labelled files terms.json names, in its order."""
    with open(ranker.TERMS_JSON, encoding="utf-8") as f:
        text = json.load(f)["learned_from"]
    return re.findall(r"((?:bench|tests)/[\w./-]+\.(?:tsv|json)) \(\d+\)", text)


def without(path, links, folder):
    """A copy of a labelled TSV file in folder without the rows of links (a JSON manifest, whose
    reports have no links, as it is)."""
    if path.endswith(".json"):
        return os.path.join(ROOT, path)
    copy = os.path.join(folder, path.replace("/", "_"))
    with open(os.path.join(ROOT, path), encoding="utf-8") as f, \
            open(copy, "w", encoding="utf-8") as out:
        for line in f:
            fields = line.split("\t")
            if len(fields) < 2 or fields[1].strip().lower() not in links:
                out.write(line)
    return copy


def rebuild(build):
    subprocess.run(["cmake", "--build", build, "--target", "rankscope", "-j2"], check=True,
                   stdout=subprocess.DEVNULL)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--raw", required=True)
    parser.add_argument("--rows", nargs="+", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()
    if subprocess.run(["git", "-C", ROOT, "diff", "--quiet", "--"] + TAXONOMY_FILES).returncode:
        sys.exit("out_of_fold: %s have uncommitted changes" % " and ".join(TAXONOMY_FILES))
    rows = [r for path in args.rows for r in ranker.read_labelled(path)]
    rows = ranker.with_raw_text(rows, args.raw, False)
    with open(ranker.TERMS_JSON, encoding="utf-8") as f:
        terms = json.load(f)
    setting = "%g,%d,%d" % (terms["l2"], terms["min_reports"], terms["max_terms_per_leaf"])
    binary = os.path.join(args.build, "bin", "rankscope")
    ranked = []  # (split, link, leaves, candidates)
    try:
        for fold in range(args.folds):
            part = [r for r in rows if int(hashlib.md5(r[1].lower().encode()).hexdigest(), 16) %
                    args.folds == fold]
            links = {r[1].lower() for r in part}
            with open(ranker.NEIGHBOURS_TSV, encoding="utf-8") as f:
                kept = [line for line in f
                        if len(line.split("\t")) < 2 or line.split("\t")[1].lower() not in links]
            with open(ranker.NEIGHBOURS_TSV, "w", encoding="utf-8") as f:
                f.writelines(kept)
            with tempfile.TemporaryDirectory() as folder:
                files = [without(path, links, folder) for path in learned_from()]
                script = os.path.join(ROOT, "scripts", "ranker.py")
                subprocess.run([sys.executable, script, "terms"] + files +
                               ["--setting", setting, "--rankscope", binary, "--write"],
                               check=True, stdout=subprocess.DEVNULL)
            rebuild(args.build)
            for (split, link, leaves, _, _), (_, candidates, _) in zip(
                    part, ranker.features_of_all(binary, [r[3] for r in part])):
                ranked.append((split, link, leaves, candidates))
            subprocess.run(["git", "-C", ROOT, "checkout", "--"] + TAXONOMY_FILES, check=True)
            print("fold %d: %d posts" % (fold, len(part)))
    finally:
        subprocess.run(["git", "-C", ROOT, "checkout", "--"] + TAXONOMY_FILES, check=True)
        rebuild(args.build)
    with open(args.out, "w", encoding="utf-8") as f:
        f.writelines(json.dumps({"link": link, "split": split, "leaves": list(leaves),
                                 "ranked": [c["symptom"] for c in candidates],
                                 "probability": candidates[0]["probability"]}) + "\n"
                     for split, link, leaves, candidates in ranked)
    for split in sorted({r[0] for r in ranked}):
        ranker.report(split, [r[1:] for r in ranked if r[0] == split], aggregate=False)


if __name__ == "__main__":
    main()
