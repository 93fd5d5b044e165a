#!/usr/bin/env python3
"""Blind harvests of labelled issue reports, outside the repository (bench/harvest/README.md).

  bench/harvest/harvest.py prepare DIR SHARED_DATA   DIR/used_links.txt from every labelled file
                                                     and the study's issues (reserved or read);
                                                     DIR/BRIEF.md for the labellers, with the
                                                     taxonomy's leaves; a copy of this script
  bench/harvest/harvest.py claim DIR URL WHO         claims a link for one labeller: prints
                                                     claimed, used or taken (exit 1 unless claimed)
  bench/harvest/harvest.py assemble DIR NAME FOLDER...
                                                     joins the labellers' DIR/FOLDER/rows.tsv and
                                                     DIR/FOLDER/raw/ into DIR/NAME.tsv (sealed) and
                                                     DIR/NAME/, and adds the links to the used list

A link is compared lower-cased, without a trailing slash, with /pull/ and /issues/ alike (GitHub
serves a pull request under both).
"""

import csv
import datetime
import fcntl
import glob
import json
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LINK = re.compile(r"https://github\.com/([^/\s|]+)/([^/\s|]+)/(?:issues|pull)/(\d+)", re.I)
SPLITS = ("blind-2022on", "blind-2017to2021")


def key(link):
    """owner/repo/N, lower-cased, for any GitHub issue or pull request link; None otherwise."""
    m = LINK.match(link.strip())
    return "%s/%s/%s" % (m[1].lower(), m[2].lower(), m[3]) if m else None


def used_path(folder):
    return os.path.join(folder, "used_links.txt")


def read_used(folder):
    with open(used_path(folder), encoding="utf-8") as f:
        return {line.strip() for line in f if line.strip()}


def leaves():
    with open(os.path.join(ROOT, "taxonomy", "descriptions.json"), encoding="utf-8") as f:
        nodes = json.load(f)["nodes"]
    # A leaf is a node no other node lies under.
    return {n for n in nodes if not any(o.startswith(n + "/") for o in nodes)}


def prepare(folder, shared):
    used(folder)
    with open(os.path.join(ROOT, "taxonomy", "descriptions.json"), encoding="utf-8") as f:
        nodes = json.load(f)["nodes"]
    with open(os.path.join(HERE, "BRIEF.md"), encoding="utf-8") as f:
        brief = f.read()
    brief = brief.replace("HARVEST_DIR", os.path.abspath(folder))
    brief = brief.replace("SHARED_DATA", os.path.abspath(shared))
    brief += "\n## The leaves\n" + "".join(
        "- `%s`: %s\n" % (leaf, nodes[leaf]["summary"]) for leaf in sorted(leaves()))
    with open(os.path.join(folder, "BRIEF.md"), "w", encoding="utf-8") as f:
        f.write(brief)
    shutil.copy(os.path.abspath(__file__), folder)
    print("%s/BRIEF.md for the labellers" % folder)


def used(folder):
    """Every link of the labelled files, the neighbours' table and the study's CSV: reports read
    before, and the study's issues reserved for the product owner's evaluation."""
    keys = set()
    files = (glob.glob(os.path.join(ROOT, "tests", "data", "classifier", "*.tsv")) +
             glob.glob(os.path.join(ROOT, "bench", "data", "*.tsv")) +
             [os.path.join(ROOT, "taxonomy", "neighbours.tsv")])
    for path in files:
        with open(path, encoding="utf-8") as f:
            for m in LINK.finditer(f.read()):
                keys.add(key(m[0]))
    with open(os.path.join(ROOT, "taxonomy", "tosem23_faults.csv"), encoding="utf-8") as f:
        for row in csv.DictReader(f):
            k = key(row["link"])
            if k:
                keys.add(k)
    os.makedirs(folder, exist_ok=True)
    # Links already on the list stay: sealed sets and claims are not in the repository.
    kept = read_used(folder) - keys if os.path.exists(used_path(folder)) else set()
    with open(used_path(folder), "w", encoding="utf-8") as f:
        f.write("".join(k + "\n" for k in sorted(keys | kept)))
    print("%d links in %s (%d of them only there)" % (len(keys | kept), used_path(folder),
                                                      len(kept)))


def claim(folder, link, who):
    k = key(link)
    if not k:
        print("not a GitHub issue or pull request link")
        return 1
    claims = os.path.join(folder, "claims.tsv")
    with open(os.path.join(folder, "claims.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if k in read_used(folder):
            print("used")
            return 1
        if os.path.exists(claims):
            with open(claims, encoding="utf-8") as f:
                if any(line.split("\t")[0] == k for line in f):
                    print("taken")
                    return 1
        with open(claims, "a", encoding="utf-8") as f:
            f.write("%s\t%s\n" % (k, who))
    print("claimed")
    return 0


def assemble(folder, name, labellers):
    # Imported here: claim runs from the labellers' copy of this script, outside the repository.
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import ranker  # the raw posts' file names (raw_file)

    known = leaves()
    rows, seen, dropped = [], set(), {}
    out = os.path.join(folder, name)
    os.makedirs(out, exist_ok=True)
    for labeller in labellers:
        with open(os.path.join(folder, labeller, "rows.tsv"), encoding="utf-8") as f:
            lines = [line.rstrip("\n") for line in f]
        for line in lines:
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.split("\t")
            why = None
            if len(fields) != 4:
                why = "not four fields"
            else:
                split, link, leaf, text = fields
                k = key(link)
                raw = ranker.raw_file(os.path.join(folder, labeller, "raw"), link.strip())
                if split not in SPLITS or not k:
                    why = "split or link"
                elif any(part not in known for part in leaf.split("|")):
                    why = "not a leaf"
                elif k in seen:
                    why = "twice"
                elif not os.path.isfile(raw):
                    why = "no raw post"
            if why:
                dropped[why] = dropped.get(why, 0) + 1
                continue
            seen.add(k)
            shutil.copy(raw, out)
            rows.append("\t".join([split, link.strip().rstrip("/"), leaf, text]))
    recent = sum(r.startswith(SPLITS[0]) for r in rows)
    with open(os.path.join(folder, name + ".tsv"), "w", encoding="utf-8") as f:
        f.write("# split\tlink\tleaf\tsummary: %d real GitHub reports of distributed training "
                "problems, harvested from topical queries of the issues search corpus on %s "
                "(%s) and labelled by helpers with the study's leaves; %d recent, %d study era; "
                "SEALED\n" % (len(rows), datetime.date.today(), ", ".join(labellers), recent,
                              len(rows) - recent))
        f.write("".join(r + "\n" for r in rows))
    with open(used_path(folder), "a", encoding="utf-8") as f:
        f.write("".join(key(r.split("\t")[1]) + "\n" for r in rows))
    print("%d rows (%d recent, %d study era); left out: %s" % (
        len(rows), recent, len(rows) - recent,
        ", ".join("%d %s" % (n, why) for why, n in sorted(dropped.items())) or "none"))
    return 0


def main(argv):
    if len(argv) == 4 and argv[1] == "prepare":
        return prepare(argv[2], argv[3]) or 0
    if len(argv) == 5 and argv[1] == "claim":
        return claim(argv[2], argv[3], argv[4])
    if len(argv) >= 5 and argv[1] == "assemble":
        return assemble(argv[2], argv[3], argv[4:])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
