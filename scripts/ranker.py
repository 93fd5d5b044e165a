#!/usr/bin/env python3
"""Fit and evaluate the symptom ranker's weights (taxonomy/ranker.json), learn its term
model (taxonomy/terms.json) and write the labelled reports its nearest-report vote reads
(taxonomy/neighbours.tsv). Python 3 and numpy (python3-numpy).

The classifier scores every leaf as
    logit = (prior_weight * log(base rate | frameworks) + evidence_scale * evidence
             + stage_scale * stage hint + term_scale * term score
             + neighbour_scale * n / (n + neighbour_half_tokens)
               * log(neighbour share + neighbour_floor)) / temperature
and takes a softmax (model/kb/symptomclassifier.cpp). `rankscope classify --jsonl` reports the
inputs of every candidate (base_rate, score, stage_hint, neighbour_share, neighbour_tokens: n) and
the words its term model read in the text (tokens), so this script reads them from the program
itself and never re-implements the signatures, the cues, the tokenizer or the neighbour search.

  scripts/ranker.py words LABELLED... --raw DIR [--rankscope build/bin/rankscope] [--write]
  scripts/ranker.py neighbours LABELLED... [--write]
  scripts/ranker.py terms LABELLED... [--rankscope build/bin/rankscope] [--folds 5]
                          [--setting L2,MIN,CAP] [--write]
  scripts/ranker.py fit   LABELLED... [--rankscope build/bin/rankscope] [--split S] [--write]
  scripts/ranker.py cv    LABELLED... [--rankscope build/bin/rankscope] [--folds 5]
  scripts/ranker.py calibrate LABELLED... [--raw DIR] [--calibrate SPLITS] [--write]
  scripts/ranker.py eval  LABELLED... [--rankscope build/bin/rankscope] [--split dev] [--aggregate]
  (fit, cv and eval also take --raw DIR [--summaries])

The term model (model/kb/termmodel.h): per leaf, signed weights of words; a report's term score for
a leaf is the sum of the weights of the leaf's words it contains (each once), added to the leaf's
logit times term_scale. `terms` learns it (learn_terms) as a multinomial logistic regression on the
ranker's residual: every leaf's logit without terms (the weights of taxonomy/ranker.json,
temperature 1) is a fixed offset, and the words learn only what base rates, evidence and context
hints get wrong, for a leaf or against it. It is fitted by L-BFGS with an L2 penalty from every row
of the labelled files given, whatever the split, each file weighing the same: from our own
summaries and short error lines, and, for the rows in tests/data/classifier/raw_post_words.tsv,
also from the words of the report's raw first post (rebuild after --write to compile it in). Users
paste raw posts, whose words (template headings, environment dumps, code, logs) summaries do not
have: learned from summaries alone, the terms served summaries better than raw posts. The raw posts
cannot be committed (third-party prose), so `words` writes what the term model reads in them: per
link, the set of taxonomy words (taxonomy_words) and evidence tokens the program read in the post,
with no order and no counts. A raw post's doc has the leaves and the logit offset (evidence, base
rate, stage hint) of its row's summary: the offset of the raw text itself would need the text, and
the summary keeps the post's error lines. Against learning a few reports by heart: a word needs
min_reports reports, a leaf keeps the max_terms_per_leaf weights of the largest magnitude, and
these two and the L2 penalty are chosen among TERM_*_GRID by 5-fold cross-validation of the docs'
log-likelihood (choose_term_setting; the table is printed), or given (--setting: the choice takes
about thirty learnings, an hour on two cores). Against learning how we write our
summaries ("excerpt", "reporter", "asks") or one project's names ("colossalchat", "centos"), a word
must also be one the program reads in the taxonomy's own texts (taxonomy_words: descriptions,
walkthroughs, fix rules, cue patterns and literals, signature patterns): the vocabulary of the
symptoms, not of our summaries. Beside the words, the program reports an evidence token ("@" and
the id) for every signature, cue and frame that counted as evidence in the text; the term model
weighs these too (learnable), so that a rule whose leaf the labelled reports often disagree with (a
message the labellers put in another stage) gets a learned correction rather than a hand edit.
term_scale is fitted on term scores that are out of fold (each row scored by terms learned without
its fold). `cv` measures with and without the term model in one run, the terms of each fold learned
from the docs of the other folds' rows only, also with --raw (terms from the other folds' docs,
ranking the held-out fold's raw posts).

The nearest-report vote (model/kb/neighbourmodel.h): the 25 labelled reports whose raw first
posts share the most words with a report (cosine of idf-weighted word sets) vote for their leaves,
each with its similarity squared; a leaf's logit gains neighbour_scale * n / (n +
neighbour_half_tokens) * log(its share of the vote + neighbour_floor), n the report's words the
labelled reports hold (no vote below neighbour_min_tokens). `neighbours` writes the reports it
reads, taxonomy/neighbours.tsv, from RAW_WORDS_TSV and the labels of the files given (rebuild
after --write). A labelled row's own raw post is among them, so its vote already knows its leaf:
fit and cv leave the vote out (neighbour_scale 0) and keep the file's, calibrate leaves out the
rows it holds, and eval says how many of its rows it holds. The vote's settings were chosen out
of fold, each row's vote and term model from the other folds only, outside this script
(BENCHMARKS.md, "nearest labelled reports").

Fitting has three steps. The weights (evidence_scale, stage_scale, prior_weight) maximise the
log-likelihood of the right leaf over the fitting rows, every labelled file weighing the same in
total (our own reports are many and easy; the study's reports are few and what users paste). Then
term_scale, with those weights, on out-of-fold term scores of the same rows. Then the temperature is fitted on the calibration rows alone (--calibrate, default: the study's "train"
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

`calibrate` refits only the temperature and "unsure" of taxonomy/ranker.json, keeping every
other weight and the compiled term model, on the calibration rows as the program ranks them (term
scores included, all in sample): for reports the weights and the terms were not fitted on (a
newer harvest's raw posts), so that the stated probabilities match how often the first candidate
is right today without refitting the weights on a few hundred reports. The ranking does not
change (the temperature divides every logit). fitted_on keeps what it said and replaces only an
earlier recalibration's clause with one naming the rows.

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
import collections
import hashlib
import json
import math
import os
import subprocess
import sys

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RANKER_JSON = os.path.join(ROOT, "taxonomy", "ranker.json")
TERMS_JSON = os.path.join(ROOT, "taxonomy", "terms.json")
TERMS_SCHEMA = "rankscope.terms/2"
RAW_WORDS_TSV = os.path.join(ROOT, "tests", "data", "classifier", "raw_post_words.tsv")
NEIGHBOURS_TSV = os.path.join(ROOT, "taxonomy", "neighbours.tsv")
NEIGHBOUR_MIN_REPORTS = 3
LEAVES = 38

GRID = {
    "evidence_scale": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0],
    "stage_scale": [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0],
    "prior_weight": [0.0, 0.25, 0.5, 0.75, 1.0, 1.5],
}
TEMPERATURE_GRID = [x / 20.0 for x in range(10, 121)]  # 0.5 .. 6.0
TERM_SCALE_GRID = [0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5]
# The term model's settings `terms` chooses among by cross-validation (learn_terms): the L2
# penalty, the reports a word needs, the weights a leaf keeps.
TERM_L2_GRID = [0.3, 1.0, 3.0]
TERM_MIN_REPORTS_GRID = [3, 5]
TERM_MAX_PER_LEAF_GRID = [25, 60, 150]
TERM_MAX_ITERATIONS = 300
TERM_TOLERANCE = 1e-7
# The taxonomy files whose texts make the words the term model may weigh (taxonomy_words).
TAXONOMY_TEXTS = ["descriptions.json", "walkthroughs.json", "fix_rules.json", "cues.json",
                  "signatures.json"]
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


def read_raw_words():
    """{link: frozenset of the taxonomy words of its raw first post} from RAW_WORDS_TSV."""
    out = {}
    with open(RAW_WORDS_TSV, encoding="utf-8") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                link, words = line.rstrip("\n").split("\t")
                out[link] = frozenset(words.split())
    return out


def write_raw_words(rows, folder, rankscope, write):
    """RAW_WORDS_TSV: for every row with a raw first post in folder, its link and the taxonomy
    words the program read in the post, in alphabetical order (see the module's docstring). The
    links already in the file that these rows do not read again keep their words: the raw posts
    of earlier harvests may no longer be at hand."""
    allowed = taxonomy_words(rankscope)
    raw = with_raw_text(rows, folder, False)
    read = features_of_all(rankscope, [text for _, _, _, text, _ in raw])
    fresh = {link: " ".join(sorted(t for t in tokens if learnable(t, allowed)))
             for (_, link, _, _, _), (_, _, tokens) in zip(raw, read)}
    kept = {link: " ".join(sorted(words)) for link, words in read_raw_words().items()
            if link not in fresh}
    lines = sorted("%s\t%s\n" % kv for kv in {**kept, **fresh}.items())
    header = ("# link<TAB>the taxonomy words (scripts/ranker.py taxonomy_words) and evidence "
              "tokens (@rule) that rankscope read in the report's raw first post, in "
              "alphabetical order, without the post's word order or counts: what the term "
              "model learns from raw posts, which stay "
              "outside the repository. Written by `scripts/ranker.py words LABELLED... --raw DIR "
              "--write`, which adds or rereads the links of the rows given and keeps the others.\n")
    if write:
        with open(RAW_WORDS_TSV, "w", encoding="utf-8") as f:
            f.write(header + "".join(lines))
        print("wrote %s: %d raw posts, %d of them read now" % (
            os.path.relpath(RAW_WORDS_TSV, ROOT), len(lines), len(fresh)))
    else:
        sys.stdout.write(header + "".join(lines))


def vote_links():
    """The links of the labelled reports NEIGHBOURS_TSV holds (the nearest-report vote's)."""
    if not os.path.isfile(NEIGHBOURS_TSV):
        return frozenset()
    with open(NEIGHBOURS_TSV, encoding="utf-8") as f:
        return frozenset(line.split("\t")[1] for line in f
                         if line.strip() and not line.startswith("#"))


def write_neighbours(rows, write):
    """NEIGHBOURS_TSV: every labelled report with a raw first post's words in RAW_WORDS_TSV, as
    its leaves, link and those words (what NeighbourModel compares), each word kept only if at
    least NEIGHBOUR_MIN_REPORTS of the reports hold it: a word fewer reports share cannot make two
    of them alike, and a name one report spells (a user, a path) says nothing. Words, not the
    rules' evidence tokens (@id): the rules already weigh in through their own evidence and the
    term model, and a bare error line, which reads no word but its rule's and a frame's token,
    would otherwise find "neighbours" that share nothing else. Only raw posts: they are what
    users paste, and out of fold the vote of our summaries added nothing to theirs. A link
    labelled in several files keeps the leaves of the first."""
    leaves_of = {}
    for _, link, leaves, _, _ in rows:
        leaves_of.setdefault(link, leaves)
    words = {link: w for link, w in read_raw_words().items() if link in leaves_of and w}
    held = collections.Counter(t for w in words.values() for t in w)
    lines = []
    for link in sorted(words):
        kept = sorted(t for t in words[link]
                      if held[t] >= NEIGHBOUR_MIN_REPORTS and not t.startswith("@"))
        if kept:
            lines.append("%s\t%s\t%s\n" % ("|".join(leaves_of[link]), link, " ".join(kept)))
    header = ("# leaves<TAB>link<TAB>words: the labelled reports the ranker's nearest-report vote "
              "reads (model/kb/neighbourmodel.h), the words of each raw first post as "
              "tests/data/classifier/raw_post_words.tsv holds them (not the rules' @ tokens), "
              "words %d or more of them share. Written by `scripts/ranker.py neighbours LABELLED... --write` from %s.\n" % (
                  NEIGHBOUR_MIN_REPORTS, ", ".join(sorted({os.path.relpath(r[4], ROOT)
                                                           if os.path.isabs(r[4]) else r[4]
                                                           for r in rows}))))
    if write:
        with open(NEIGHBOURS_TSV, "w", encoding="utf-8") as f:
            f.write(header + "".join(lines))
        print("wrote %s: %d labelled reports" % (os.path.relpath(NEIGHBOURS_TSV, ROOT),
                                                 len(lines)))
    else:
        sys.stdout.write(header + "".join(lines))


def features(rankscope, text):
    """{leaf: (evidence, base_rate, stage_hint, neighbour share, neighbour tokens)} for every leaf
    in the program's order, the program's candidates, and the words its term model read (a frozenset)."""
    return features_of_all(rankscope, [text])[0]


def features_of_all(rankscope, texts):
    """features() of every text, from one run of the program (`classify --jsonl`: loading the
    rules and the term model costs more than ranking a report)."""
    lines = "".join(json.dumps(text) + "\n" for text in texts)
    out = subprocess.run([rankscope, "classify", "--jsonl", "--top", str(LEAVES)],
                         input=lines.encode("utf-8"), capture_output=True, check=True)
    docs = [json.loads(line) for line in out.stdout.decode("utf-8").splitlines()]
    if len(docs) != len(texts) or any("error" in doc for doc in docs):
        sys.exit("rankscope classify --jsonl answered %d lines for %d texts" % (len(docs),
                                                                               len(texts)))
    return [({c["symptom"]: (c["score"], c["base_rate"], c["stage_hint"], c["neighbour_share"],
                             c["neighbour_tokens"]) for c in doc["candidates"]}, doc["candidates"], frozenset(doc["tokens"]))
            for doc in docs]


def taxonomy_words(rankscope):
    """The words the program reads in the taxonomy's own texts (the leaves' descriptions, the fix
    walkthroughs and rules, the cues' patterns and literals, the signatures' patterns): the only
    words the term model may weigh (see the module's docstring)."""
    words = set()
    for name in TAXONOMY_TEXTS:
        with open(os.path.join(ROOT, "taxonomy", name), encoding="utf-8") as f:
            text = "\n".join(s.replace("\n", " ") for s in json_strings(json.load(f)))
        words |= features(rankscope, text)[2]
    return frozenset(words)


def learnable(token, allowed):
    """Whether the term model may weigh a token the program read: a word of the taxonomy's own
    texts (allowed, taxonomy_words), or an evidence token ("@" and the id of a rule that counted
    as evidence, TermModel::evidenceToken), whose weights correct the rule's leaf where the
    labelled reports disagree with it."""
    return token in allowed or token.startswith("@")


def json_strings(value):
    """Every string value of a JSON document but its schema and ids."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, v in value.items():
            if key not in ("schema", "id"):
                yield from json_strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from json_strings(v)


def base_logit(f, p):
    """A leaf's logit without the term model, at temperature 1 (as probabilities()); f[3] and
    f[4], when there, are the leaf's share of the nearest labelled reports' vote and the
    report's tokens that vote read."""
    logit = p["prior_weight"] * math.log(max(f[1], 1e-6)) + p["evidence_scale"] * f[0] + \
        p["stage_scale"] * f[2]
    if len(f) > 4 and p.get("neighbour_scale", 0.0) and f[4] >= p["neighbour_min_tokens"]:
        logit += p["neighbour_scale"] * f[4] / (f[4] + p["neighbour_half_tokens"]) * \
            math.log(f[3] + p["neighbour_floor"])
    return logit


def lbfgs(value_and_gradient, x):
    """A minimum of a smooth convex function of a numpy vector by L-BFGS (8 pairs kept,
    backtracking line search), stopping when a step lowers it by less than TERM_TOLERANCE of its
    value."""
    fx, g = value_and_gradient(x)
    pairs = []
    for _ in range(TERM_MAX_ITERATIONS):
        q = g.copy()
        alphas = []
        for s, y, rho in reversed(pairs):
            a = rho * s.dot(q)
            alphas.append(a)
            q -= a * y
        if pairs:
            s, y, _ = pairs[-1]
            q *= s.dot(y) / y.dot(y)
        else:
            q /= max(1.0, math.sqrt(g.dot(g)))
        for (s, y, rho), a in zip(pairs, reversed(alphas)):
            q += (a - rho * y.dot(q)) * s
        slope = -g.dot(q)
        if slope >= 0.0:
            break
        step = 1.0
        while True:
            xn = x - step * q
            fn, gn = value_and_gradient(xn)
            if fn <= fx + 1e-4 * step * slope or step < 1e-8:
                break
            step *= 0.5
        s, y = xn - x, gn - g
        sy = s.dot(y)
        if sy > 1e-12:
            pairs = (pairs + [(s, y, 1.0 / sy)])[-8:]
        done = fx - fn < TERM_TOLERANCE * max(1.0, abs(fx))
        x, fx, g = xn, fn, gn
        if done:
            break
    return x


class SparseWords:
    """The 0/1 matrix of which docs hold which words, as the word indices of every doc: a doc
    holds a few dozen of thousands of words, so products over the held pairs alone are many times
    faster than over a dense matrix (numpy alone: gathers and reduceat)."""

    def __init__(self, rows, columns):
        self.shape = (len(rows), columns)
        lengths = numpy.array([len(r) for r in rows], dtype=numpy.int64)
        self.row_of = numpy.repeat(numpy.arange(len(rows)), lengths)
        self.column_of = numpy.array([c for r in rows for c in r], dtype=numpy.int64)
        self.by_column = numpy.argsort(self.column_of, kind="stable")

    @staticmethod
    def _sums(values, keys, size):
        """out[k] = the sum of the values (rows of a 2-D array) whose key is k; keys sorted."""
        out = numpy.zeros((size, values.shape[1]))
        if len(keys):
            starts = numpy.flatnonzero(numpy.r_[True, keys[1:] != keys[:-1]])
            out[keys[starts]] = numpy.add.reduceat(values, starts, axis=0)
        return out

    def times(self, x):
        """self @ x for a (columns, k) array."""
        return self._sums(x[self.column_of], self.row_of, self.shape[0])

    def transposed_times(self, y):
        """self.T @ y for a (rows, k) array."""
        order = self.by_column
        return self._sums(y[self.row_of[order]], self.column_of[order], self.shape[1])


def fit_logistic(docs, p, vocabulary, l2):
    """{leaf: {term: weight}}: the multinomial logistic regression of the right leaf on the words
    of docs, each leaf's logit without the term model (under weights p) a fixed offset, so that
    the words learn only what the rest of the ranker gets wrong. Minimises the weighted negative
    log-likelihood (a report of several leaves: of any of them) plus l2 / 2 * the sum of the
    squared weights."""
    leaves = sorted(docs[0].feats)
    index = {t: i for i, t in enumerate(vocabulary)}
    kept = [d for d in docs if any(leaf in d.leaves for leaf in leaves)]
    words = SparseWords([sorted(index[t] for t in d.tokens if t in index) for d in kept],
                        len(vocabulary))
    # Without the neighbours' vote: a labelled report's own raw post is among the nearest reports
    # of its summary, so with it the words would learn from a vote that already knows the answer.
    alone = dict(p, neighbour_scale=0.0)
    offset = numpy.array([[base_logit(d.feats[leaf], alone) for leaf in leaves] for d in kept])
    right = numpy.array([[leaf in d.leaves for leaf in leaves] for d in kept], dtype=float)
    weight = numpy.array([d.weight for d in kept])
    shape = (len(vocabulary), len(leaves))

    def value_and_gradient(x):
        z = offset + words.times(x.reshape(shape))
        e = numpy.exp(z - z.max(axis=1, keepdims=True))
        total, right_total = e.sum(axis=1), (e * right).sum(axis=1)
        loss = 0.5 * l2 * x.dot(x) + weight.dot(numpy.log(total) - numpy.log(right_total))
        residual = weight[:, None] * (e / total[:, None] - e * right / right_total[:, None])
        return loss, words.transposed_times(residual).ravel() + l2 * x

    x = lbfgs(value_and_gradient, numpy.zeros(shape[0] * shape[1])).reshape(shape)
    return {leaf: {t: float(x[i, j]) for i, t in enumerate(vocabulary)}
            for j, leaf in enumerate(leaves)}


def learn_terms(docs, p, setting, allowed):
    """{leaf: {term: weight}} learned from docs (Doc) by fit_logistic under the ranker's weights
    p. setting: (l2, min_reports, max_per_leaf): a word needs min_reports docs and must be among
    `allowed` (taxonomy_words); a leaf keeps its max_per_leaf weights of the largest magnitude,
    rounded to 3 decimals, and none that rounds to 0."""
    l2, min_reports, cap = setting
    df = collections.Counter(t for d in docs for t in d.tokens)
    vocabulary = sorted(t for t, n in df.items() if n >= min_reports and learnable(t, allowed))
    if not vocabulary:
        return {}
    model = {}
    for leaf, weights in fit_logistic(docs, p, vocabulary, l2).items():
        kept = sorted(((-abs(round(w, 3)), t, round(w, 3)) for t, w in weights.items()
                       if round(w, 3) != 0.0))[:cap]
        if kept:
            model[leaf] = {t: w for _, t, w in sorted(kept, key=lambda k: (k[1]))}
    return model


def term_scores(model, tokens):
    """{leaf: sum of the weights of its words among tokens}, as TermModel::score."""
    out = {}
    for leaf, weights in model.items():
        present = [w for t, w in weights.items() if t in tokens]
        if present:
            out[leaf] = math.fsum(present)
    return out


def probabilities(feats, p):
    """feats: {leaf: (evidence, base_rate, stage_hint, neighbour share, neighbour tokens[, term
    score])}."""
    t = p.get("temperature", 1.0)
    term_scale = p.get("term_scale", 0.0)
    logits = {leaf: (base_logit(f, p) + (term_scale * f[5] if len(f) > 5 else 0.0)) / t
              for leaf, f in feats.items()}
    top = max(logits.values())
    z = sum(math.exp(v - top) for v in logits.values())
    return {leaf: math.exp(v - top) / z for leaf, v in logits.items()}


Item = collections.namedtuple("Item", "leaves feats weight fold_key tokens link")
Doc = collections.namedtuple("Doc", "leaves tokens link feats weight")


def loglik(items, p):
    """Weighted mean log-likelihood of the right leaves, and the weighted top-1 count."""
    total = weights = top1 = 0.0
    for item in items:
        prob = probabilities(item.feats, p)
        total += item.weight * math.log(max(sum(prob.get(leaf, 0.0) for leaf in item.leaves),
                                            1e-9))
        top1 += item.weight * (max(prob, key=prob.get) in item.leaves)
        weights += item.weight
    return total / weights, top1


def first_guesses(items, p):
    """(probability of the first candidate, whether it is right, weight) per item."""
    out = []
    for item in items:
        prob = probabilities(item.feats, p)
        first = max(prob, key=prob.get)
        out.append((prob[first], first in item.leaves, item.weight))
    return out


def fit_weights(items, current):
    """The grid weights of the highest weighted log-likelihood, at temperature 1, without the
    term model."""
    best = None
    for e in GRID["evidence_scale"]:
        for s in GRID["stage_scale"]:
            for w in GRID["prior_weight"]:
                p = dict(current, evidence_scale=e, stage_scale=s, prior_weight=w, temperature=1.0,
                         term_scale=0.0)
                key = loglik(items, p)
                if best is None or key > best[0]:
                    best = (key, p)
    return best


def fit_term_scale(items, weights):
    """`weights` with the term_scale of the highest weighted log-likelihood of items whose term
    scores come from terms learned without them (terms_out_of_fold)."""
    return max((dict(weights, term_scale=t) for t in TERM_SCALE_GRID),
               key=lambda p: (loglik(items, p)[0], -p["term_scale"]))


def with_terms(items, model):
    """The items, each leaf's features followed by its term score under `model`."""
    out = []
    for item in items:
        scores = term_scores(model, item.tokens)
        out.append(item._replace(feats={leaf: f[:5] + (scores.get(leaf, 0.0),)
                                        for leaf, f in item.feats.items()}))
    return out


def terms_out_of_fold(docs, items, folds, salt, p, setup):
    """The items with term scores from terms learned (under weights p, TermSetup setup) on the
    docs of the other folds (folds by the MD5 of link + salt, so that folds inside an outer fold
    are new ones)."""
    out = []
    for k in range(folds):
        held = [i for i in items if fold_of(i.link + salt, folds) == k]
        if held:
            model = learn_terms([d for d in docs if fold_of(d.link + salt, folds) != k], p,
                                setup.setting, setup.allowed)
            out.extend(with_terms(held, model))
    return out


def choose_term_setting(docs, p, allowed, folds):
    """The (l2, min_reports, max_per_leaf) of TERM_*_GRID whose terms, learned without each fold,
    give the fold's docs the highest weighted log-likelihood (term_scale 1, temperature 1)."""
    results = {}
    for k in range(folds):
        kept = [d for d in docs if fold_of(d.link, folds) != k]
        held = [Item(d.leaves, d.feats, d.weight, None, d.tokens, d.link)
                for d in docs if fold_of(d.link, folds) == k]
        for min_reports in TERM_MIN_REPORTS_GRID:
            for l2 in TERM_L2_GRID:
                full = learn_terms(kept, p, (l2, min_reports, 10 ** 9), allowed)
                for cap in TERM_MAX_PER_LEAF_GRID:
                    model = {leaf: dict(sorted(w.items(), key=lambda tw: -abs(tw[1]))[:cap])
                             for leaf, w in full.items()}
                    add_scores(results.setdefault((l2, min_reports, cap), [0.0, 0.0, 0, 0]),
                               with_terms(held, model), dict(p, term_scale=1.0, temperature=1.0))
    none = [0.0, 0.0, 0, 0]
    add_scores(none, [Item(d.leaves, d.feats, d.weight, None, d.tokens, d.link) for d in docs],
               dict(p, term_scale=0.0, temperature=1.0))
    print("term settings, %d-fold cross-validation on %d docs, summaries and raw posts' words "
          "(l2, min reports, words per leaf: weighted mean log-likelihood, top-1, top-3); "
          "without terms: %.3f, %d, %d" % (
              folds, len(docs), none[0] / none[1], none[2], none[3]))
    for setting, (ll, w, top1, top3) in sorted(results.items()):
        print("  %g, %d, %d: %.3f, %d, %d" % (setting + (ll / w, top1, top3)))
    best = max(results, key=lambda s: (results[s][0], s[0], s[1], -s[2]))
    print("chosen: l2 %g, min reports %d, words per leaf %d" % best)
    return best


def add_scores(total, items, p):
    """Adds to total [weighted log-likelihood, weights, top-1, top-3] those of items under p."""
    for item in items:
        prob = probabilities(item.feats, p)
        ranked = sorted(prob, key=lambda leaf: -prob[leaf])
        total[0] += item.weight * math.log(
            max(sum(prob.get(leaf, 0.0) for leaf in item.leaves), 1e-9))
        total[1] += item.weight
        total[2] += ranked[0] in item.leaves
        total[3] += any(leaf in ranked[:3] for leaf in item.leaves)


TermSetup = collections.namedtuple("TermSetup", "setting allowed")


def term_setup(rankscope):
    """The setting taxonomy/terms.json was learned with and the words it may weigh."""
    with open(TERMS_JSON, encoding="utf-8") as f:
        doc = json.load(f)
    if doc.get("schema") != TERMS_SCHEMA:
        sys.exit("%s is not %s: run `terms --write` first" % (TERMS_JSON, TERMS_SCHEMA))
    return TermSetup((doc["l2"], doc["min_reports"], doc["max_terms_per_leaf"]),
                     taxonomy_words(rankscope))


def term_setting(text):
    """--setting's (l2, min_reports, max_per_leaf) from "L2,MIN,CAP"."""
    try:
        l2, min_reports, cap = text.split(",")
        return float(l2), int(min_reports), int(cap)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not L2,MIN,CAP (e.g. 3,5,150)" % text)


def fold_of(link, folds):
    return int(hashlib.md5(link.encode("utf-8")).hexdigest(), 16) % folds


def out_of_fold(items, calibration, current, docs, folds, setup):
    """(calibration item, weights fitted without its fold) for every calibration item, twice:
    without the term model, and with terms learned from the docs of the other folds (the
    term_scale fitted on term scores of the fitting rows that are themselves out of fold)."""
    if folds < 2:
        p = fit_weights(items, current)[1]
        pt = fit_term_scale(terms_out_of_fold(docs, items, 5, "", p, setup), p)
        model = learn_terms(docs, p, setup.setting, setup.allowed)
        return [(c, p) for c in calibration], list(zip(with_terms(calibration, model),
                                                       [pt] * len(calibration)))
    plain, termed = [], []
    for k in range(folds):
        held = [c for c in calibration if fold_of(c.link, folds) == k]
        if not held:
            continue
        kept = [i for i in items if i.fold_key is None or fold_of(i.fold_key, folds) != k]
        p = fit_weights(kept, current)[1]
        plain.extend((c, p) for c in held)
        kept_docs = [d for d in docs if fold_of(d.link, folds) != k]
        pt = fit_term_scale(terms_out_of_fold(kept_docs, kept, folds, "#inner", p, setup), p)
        model = learn_terms(kept_docs, p, setup.setting, setup.allowed)
        termed.extend((c, pt) for c in with_terms(held, model))
    return plain, termed


def fit_calibration(scored):
    """(temperature, unsure_below) for scored calibration items, (item, weights it is ranked
    with) pairs: the temperature of the highest weighted log-likelihood, and "unsure" as the
    threshold that makes "the first guess is probably wrong" right for the most reports (by
    weight)."""
    temperature = max(TEMPERATURE_GRID, key=lambda t: sum(
        loglik([c], dict(q, temperature=t))[0] * c.weight for c, q in scored))
    guesses = [g for c, q in scored
               for g in first_guesses([c], dict(q, temperature=temperature))]
    unsure = max(UNSURE_GRID, key=lambda t: (
        sum(w for conf, right, w in guesses if (conf >= t) == right), -abs(t - 0.5)))
    return temperature, unsure


def fit(items, calibration_items, current, docs, folds, setup):
    best = fit_weights(items, current)
    p = fit_term_scale(terms_out_of_fold(docs, items, folds, "", best[1], setup), best[1])
    # Calibrated on rows the weights and the terms were not fitted on.
    p["temperature"], p["unsure_below"] = fit_calibration(
        out_of_fold(items, calibration_items, current, docs, folds, setup)[1])
    return p, best[0]


def cross_validate(items, calibration, current, docs, folds, source_of, setup):
    """Out-of-fold top-1 / top-3 and reliability of the calibration rows, without and with the
    term model, in all and per labelled file and split (source_of: link -> "file: split")."""
    plain, termed = out_of_fold(items, calibration, current, docs, folds, setup)
    for label, scored_items in (("without terms", plain), ("with terms", termed)):
        n = top1 = top3 = 0
        scored = []
        per_source = {}
        scales = sorted({q.get("term_scale", 0.0) for _, q in scored_items})
        for c, p in scored_items:
            prob = probabilities(c.feats, dict(p, temperature=current.get("temperature", 1.0)))
            # Leaves tied here keep the program's order (a stable sort of the candidates as it
            # listed them).
            ranked = sorted(prob, key=lambda leaf: -prob[leaf])
            right1 = ranked[0] in c.leaves
            right3 = any(leaf in ranked[:3] for leaf in c.leaves)
            n += 1
            top1 += right1
            top3 += right3
            counts = per_source.setdefault(source_of[c.link], [0, 0, 0])
            counts[0] += 1
            counts[1] += right1
            counts[2] += right3
            scored.append((prob[ranked[0]], right1))
        print("%s, %d-fold cross-validation on %d calibration rows: top-1 %.1f %% (%d), top-3 "
              "%.1f %% (%d) at temperature %.2f; term_scale per fold %s" % (
                  label, folds, n, 100.0 * top1 / n, top1, 100.0 * top3 / n, top3,
                  current.get("temperature", 1.0), ", ".join("%g" % x for x in scales)))
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


def evaluate(rows, rankscope, label, aggregate):
    voters = vote_links()
    known = sum(link in voters for _, link, _, _, _ in rows)
    if known:
        print("%s: %d of the %d rows are among the labelled reports the nearest-report vote "
              "reads (%s): their figures are in sample" % (
                  label, known, len(rows), os.path.relpath(NEIGHBOURS_TSV, ROOT)))
    read = features_of_all(rankscope, [text for _, _, _, text, _ in rows])
    report(label, [(link, leaves, candidates) for (_, link, leaves, _, _), (_, candidates, _)
                   in zip(rows, read)], aggregate)


def report(label, ranked_rows, aggregate):
    """Prints top-1 / top-3 of (link, leaves, the program's candidates) rows, on any of the
    labeller's leaves and on the first leaf alone, the unsure count and the reliability of the
    first candidate; with aggregate, no row is named."""
    n = top1 = top3 = unsure = unsure_right = 0
    # The labeller's first leaf alone: the study gives each issue one leaf, and a label of two
    # leaves is right more easily.
    top1_first = top3_first = several = 0
    misses, scored = [], []
    with open(RANKER_JSON, encoding="utf-8") as f:
        threshold = json.load(f)["unsure_below"]
    for link, leaves, candidates in ranked_rows:
        ranked = [c["symptom"] for c in candidates]
        n += 1
        top1 += ranked[0] in leaves
        top3 += any(leaf in ranked[:3] for leaf in leaves)
        top1_first += ranked[0] == leaves[0]
        top3_first += leaves[0] in ranked[:3]
        several += len(leaves) > 1
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
    print("  the labeller's first leaf only (%d rows have more than one): top-1 %.1f %% (%d), "
          "top-3 %.1f %% (%d)" % (several, 100.0 * top1_first / n, top1_first,
                                  100.0 * top3_first / n, top3_first))
    print("  reliability (first candidate): bin, reports, mean stated, right")
    for name, count, stated, right in reliability(scored):
        print("  | %s | %d | %.2f | %.0f %% |" % (name, count, stated, 100.0 * right))
    ece = sum(abs(c - r) for c, r in [(s, float(ok)) for s, ok in scored]) / n
    print("  mean |stated - right| per report %.2f; mean stated %.2f, top-1 %.2f" % (
        ece, sum(c for c, _ in scored) / n, top1 / n))
    if not aggregate:
        for link, leaf, got in misses:
            print("  miss %s: %s, ranked %s" % (link, leaf, ", ".join(got)))


def calibrate_only(rows, calibrate, current, args):
    """Refit the temperature and "unsure" on the rows of the calibration splits as the program
    ranks them, term scores included, each split weighing the same."""
    rows = [r for r in rows if r[0] in calibrate]
    voters = vote_links()
    if any(r[1] in voters for r in rows):
        # Their vote knows their leaf (their own raw post votes): calibrated on them, the
        # temperature would answer for a ranker surer than it is on new reports.
        print("calibrate leaves out the %d rows among the labelled reports the nearest-report "
              "vote reads (%s)" % (sum(r[1] in voters for r in rows),
                                   os.path.relpath(NEIGHBOURS_TSV, ROOT)))
        rows = [r for r in rows if r[1] not in voters]
    if not rows:
        sys.exit("no calibration rows (split %s)" % args.calibrate)
    per_split = collections.Counter(r[0] for r in rows)
    read = features_of_all(args.rankscope, [r[3] for r in rows])
    items = [Item(leaves, {c["symptom"]: (c["score"], c["base_rate"], c["stage_hint"],
                                          c["neighbour_share"], c["neighbour_tokens"],
                                          c["term_score"])
                           for c in candidates},
                  1.0 / per_split[split], link, tokens, link)
             for (split, link, leaves, _, _), (_, candidates, tokens) in zip(rows, read)]
    p = dict(current)
    before = loglik(items, p)[0]
    p["temperature"], p["unsure_below"] = fit_calibration([(item, current) for item in items])
    print("calibrated on %d '%s' rows: weighted mean log-likelihood %.3f at temperature %g, "
          "%.3f at %g; unsure below %.2f (was %.2f)" % (
              len(items), args.calibrate, before, current["temperature"], loglik(items, p)[0],
              p["temperature"], p["unsure_below"], current["unsure_below"]))
    clause = "; then temperature and unsure_below recalibrated"
    kept = current["fitted_on"]
    start = kept.find(clause)
    if start >= 0:  # an earlier recalibration's clause gives way; later notes stay
        end = kept.find("; then ", start + len(clause))
        kept = kept[:start] + (kept[end:] if end >= 0 else "")
    p["fitted_on"] = "%s%s, every other weight and the term model kept, on the %d '%s' %sreports " \
        "of %s" % (kept, clause, len(items), args.calibrate,
                   "raw first posts of the " if args.raw else "",
                   ", ".join(os.path.relpath(path, ROOT) for path in args.labelled))
    write_json(RANKER_JSON, p, args.write)


def write_json(path, doc, write):
    text = json.dumps(doc, indent=1) + "\n"
    if write:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print("wrote", os.path.relpath(path, ROOT), "(rebuild to compile it in)")
    else:
        sys.stdout.write(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["fit", "cv", "eval", "terms", "words", "neighbours",
                                           "calibrate"])
    parser.add_argument("labelled", nargs="+")
    parser.add_argument("--rankscope", default=os.path.join(ROOT, "build", "bin", "rankscope"))
    parser.add_argument("--split", help="only rows of this split (fit: default all but 'dev')")
    parser.add_argument("--calibrate", default="train",
                        help="fit, cv: the split(s), comma-separated, the temperature and "
                        "'unsure' are fitted on and cv holds out (each split weighing the same); "
                        "cv may hold out 'dev' too")
    parser.add_argument("--folds", type=int, default=5,
                        help="fit, cv: folds of the calibration rows (1: no cross-validation); "
                        "terms: folds of the choice of its setting")
    parser.add_argument("--write", action="store_true",
                        help="fit: write taxonomy/ranker.json; terms: taxonomy/terms.json; "
                        "words: tests/data/classifier/raw_post_words.tsv; neighbours: "
                        "taxonomy/neighbours.tsv")
    parser.add_argument("--setting", metavar="L2,MIN,CAP", type=term_setting,
                        help="terms: learn with this L2 penalty, words in at least MIN docs and "
                        "CAP words per leaf instead of choosing them by cross-validation")
    parser.add_argument("--raw", metavar="DIR",
                        help="rank each row's raw first post DIR/OWNER_REPO_N.txt instead of its "
                        "summary; rows without one are left out (words: read the raw posts there)")
    parser.add_argument("--aggregate", action="store_true",
                        help="eval: figures only, no row named (for sealed sets)")
    parser.add_argument("--summaries", action="store_true",
                        help="with --raw: the same rows, ranked from their summaries")
    args = parser.parse_args()

    rows = [r for path in args.labelled for r in read_labelled(path)]
    cache = {}

    def read(text):
        if text not in cache:
            cache[text] = features(args.rankscope, text)
        return cache[text]

    if args.action == "words":
        if not args.raw:
            sys.exit("words reads the raw first posts: give --raw DIR")
        write_raw_words(rows, args.raw, args.rankscope, args.write)
        return 0
    if args.action == "neighbours":
        write_neighbours(rows, args.write)
        return 0

    calibrate = args.calibrate.split(",")
    if "dev" in calibrate and args.action not in ("cv", "terms"):
        sys.exit("the held-out split measures; it is never fitted on")
    if args.summaries and not args.raw:
        sys.exit("--summaries compares with --raw DIR; give both")
    if args.raw and args.action == "terms":
        sys.exit("terms learns from the summaries and the raw posts' words (`words`); "
                 "--raw is for words, fit, cv and eval")
    summaries = rows  # the term model's docs are the summaries, whatever --raw ranks
    if args.raw:
        rows = with_raw_text(rows, args.raw, args.summaries)
    if args.action == "eval":
        splits = [args.split] if args.split else sorted({r[0] for r in rows})
        for split in splits:
            evaluate([r for r in rows if r[0] == split], args.rankscope, split, args.aggregate)
        return 0
    if args.action == "calibrate":
        with open(RANKER_JSON, encoding="utf-8") as f:
            calibrate_only(rows, calibrate, json.load(f), args)
        return 0

    # Every row's summary in one run of the program.
    unread = list(dict.fromkeys(r[3] for r in summaries))
    cache.update(zip(unread, features_of_all(args.rankscope, unread)))

    # The term model learns from every labelled row's summary and its raw post's words (in
    # RAW_WORDS_TSV), whatever its split (out of fold in fit and cv: they leave out the docs of
    # the fold they score). Every labelled file weighs the same in total; a row's raw post
    # weighs as its summary.
    doc_sources = collections.Counter(r[4] for r in summaries)
    raw_words = read_raw_words()
    docs = []
    for _, link, leaves, text, source in summaries:
        feats, _, tokens = read(text)
        weight = len(summaries) / (len(doc_sources) * doc_sources[source])
        docs.append(Doc(leaves, tokens, link, feats, weight))
        if link in raw_words:
            docs.append(Doc(leaves, raw_words[link], link, feats, weight))
    if args.action == "terms":
        with open(RANKER_JSON, encoding="utf-8") as f:
            current = json.load(f)
        allowed = taxonomy_words(args.rankscope)
        setting = args.setting or choose_term_setting(docs, current, allowed, args.folds)
        model = learn_terms(docs, current, setting, allowed)
        per_source = collections.Counter(r[4] for r in summaries)
        write_json(TERMS_JSON, {
            "schema": TERMS_SCHEMA,
            "learned_from": "%d labelled reports (our summaries and short error lines) of %s, "
                            "and the words of %d of their raw first posts (%s), "
                            "on the residual of the ranker's weights evidence_scale %g, "
                            "stage_scale %g, prior_weight %g; the setting %s" % (
                                len(summaries), ", ".join("%s (%d)" % kv
                                                     for kv in sorted(per_source.items())),
                                len(docs) - len(summaries), os.path.relpath(RAW_WORDS_TSV, ROOT),
                                current["evidence_scale"], current["stage_scale"],
                                current["prior_weight"],
                                "given (--setting)" if args.setting else
                                "chosen by %d-fold cross-validation" % args.folds),
            "vocabulary": "words of the taxonomy's own texts (%s), %d of them, and the "
                          "evidence tokens of its rules (@id)" % (
                              ", ".join(TAXONOMY_TEXTS), len(allowed)),
            "l2": setting[0], "min_reports": setting[1], "max_terms_per_leaf": setting[2],
            "leaves": model}, args.write)
        return 0

    # The raw posts (with --raw) in one run of the program too.
    unread = list(dict.fromkeys(r[3] for r in rows if r[3] not in cache))
    cache.update(zip(unread, features_of_all(args.rankscope, unread)))
    train = [r for r in rows if (r[0] == args.split if args.split else
                                 r[0] != "dev" or "dev" in calibrate)]
    if not train:
        sys.exit("no training rows")
    with open(RANKER_JSON, encoding="utf-8") as f:
        current = json.load(f)
    # The nearest labelled reports' vote cannot be held out here: a labelled row's own raw post
    # is among the reports it reads, so the program's vote already knows the row's leaf. fit and
    # cv weigh and measure the rest of the ranker without it (the vote was added on top of
    # these weights, out of fold, outside this script: BENCHMARKS.md).
    vote_scale = current.get("neighbour_scale", 0.0)
    current = dict(current, neighbour_scale=0.0)
    if vote_scale:
        print("fit and cv leave out the nearest labelled reports' vote (neighbour_scale %g in "
              "%s, kept)" % (vote_scale, os.path.relpath(RANKER_JSON, ROOT)))
    per_source = {}
    for r in train:
        per_source[r[4]] = per_source.get(r[4], 0) + 1
    per_split = {}
    for r in train:
        per_split[r[0]] = per_split.get(r[0], 0) + 1
    items, calibration_items = [], []
    for split, link, leaves, text, source in train:
        feats, _, tokens = read(text)
        # Calibration rows carry their link, so that cross-validation can hold out their fold.
        fold_key = link if split in calibrate else None
        items.append(Item(leaves, feats, 1.0 / per_source[source], fold_key, tokens, link))
        if split in calibrate:
            calibration_items.append(Item(leaves, feats, 1.0 / per_split[split], link, tokens, link))
    if not calibration_items:
        sys.exit("no calibration rows (split %s)" % args.calibrate)
    if args.action == "cv":
        cross_validate(items, calibration_items, current, docs, args.folds,
                       {link: "%s: %s" % (source, split)
                        for split, link, _, _, source in train if split in calibrate},
                       term_setup(args.rankscope))
        return 0
    fitted, (mean_loglik, top1) = fit(items, calibration_items, current, docs, args.folds,
                                      term_setup(args.rankscope))
    print("fitted on %d reports (%s): weighted mean log-likelihood %.3f without terms; term_scale "
          "%g, temperature %.2f and unsure below %.2f on %d '%s' rows" % (
              len(items), ", ".join("%s %d" % kv for kv in sorted(per_source.items())),
              mean_loglik, fitted["term_scale"], fitted["temperature"], fitted["unsure_below"],
              len(calibration_items), args.calibrate))
    fitted["neighbour_scale"] = vote_scale
    fitted["fitted_on"] = "%d %sreports of %s (%s, each file weighing the same); term_scale on " \
        "their term scores out of %d folds; temperature and unsure_below on the %d '%s' rows, " \
        "out of %d folds" % (
            len(items), "raw first posts (kept outside the repository: third-party prose; the "
            "files give their links) of the " if args.raw else "",
            ", ".join(os.path.relpath(p, ROOT) for p in args.labelled),
            "split " + args.split if args.split else "every split but dev", args.folds,
            len(calibration_items), args.calibrate, args.folds)
    write_json(RANKER_JSON, fitted, args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
