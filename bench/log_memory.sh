#!/bin/sh
# Peak memory and time of `rankscope analyze` on generated logs (written to a scratch folder, not
# kept): 50 MB of bare newlines, a 1 GB per-rank log of typical lines, and a launcher log with
# 10 M distinct [rankN]: tags (over the default budget of distinct tags a file).
#   bench/log_memory.sh [path to rankscope, default build/bin/rankscope] [scratch, default /tmp]
set -eu
bin="${1:-build/bin/rankscope}"
scratch="${2:-/tmp}/rankscope-log-memory"
rm -rf "$scratch"
mkdir -p "$scratch/newlines" "$scratch/onegig" "$scratch/tags"

head -c 50000000 /dev/zero | tr '\0' '\n' >"$scratch/newlines/rank0.log"
python3 - "$scratch" <<'PY'
import sys
scratch = sys.argv[1]
block = (b"2026-12-02 13:41:34.916 [rank0] INFO train: step 12 loss 33.91161 avg_loss 33.10142\n"
         b"I20261202 13:35:55.418524 28405 reducer.cpp:126] Reducer initialized\n"
         b"node7:12345:12400 [0] NCCL INFO Channel 00/02 :    0   1   2   3\n"
         b"some plain output line of a training script\n"
         b"\n")
with open(scratch + "/onegig/rank0.log", "wb") as f:
    for _ in range((1 << 30) // len(block)):
        f.write(block)
with open(scratch + "/tags/launcher.log", "wb") as f:
    f.write(b"WARNING:torch.distributed.run:\n")
    for r in range(10_000_000):
        f.write(b"[rank%d]: hello\n" % r)
PY

for case in ${CASES:-newlines onegig tags}; do
  size=$(du -sm "$scratch/$case" | cut -f1)
  /usr/bin/time -v "$bin" analyze "$scratch/$case" --json >"$scratch/$case.json" 2>"$scratch/$case.time" || true
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$scratch/$case.time")
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$scratch/$case.time")
  # CPU time (user + system): what the run costs, whatever else the machine is running.
  cpu=$(awk '/(User|System) time \(seconds\)/ { s += $NF } END { print s }' "$scratch/$case.time")
  status=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); s=[x for r in d['ranks'] for x in r['sources']]+d['unattributed_sources']; print('; '.join(sorted(set(x['path']+' '+x['status']+': '+x['message'] for x in s))))" "$scratch/$case.json" 2>/dev/null || echo "no report")
  echo "$case ($size MB): peak $((rss / 1024)) MB, $wall wall, $cpu s CPU; $status"
done
rm -rf "$scratch"
