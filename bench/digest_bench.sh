#!/usr/bin/env bash
# rankscope-digest on a synthetic 64-rank job with 1 and 2 MPI processes: per-process CPU
# throughput (the progress line each process prints), scaling, digest size per rank and per GB.
#   bench/digest_bench.sh [BUILD_DIR] [RANKS] [MB_PER_RANK]
set -euo pipefail
build="${1:-build}"
ranks="${2:-64}"
mb="${3:-8}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$build/bench/digest_bench" "$work/job" "$ranks" "$mb"
bytes=$(du -sb "$work/job" | cut -f1)
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
for np in 1 2; do
  start=$(date +%s.%N)
  mpirun --oversubscribe "${root[@]}" -np "$np" "$build/bin/rankscope-digest" "$work/job" \
    -o "$work/job$np.rsdigest" 2>"$work/log$np"
  end=$(date +%s.%N)
  grep -E "\]: read |wrote" "$work/log$np"
  size=$(stat -c %s "$work/job$np.rsdigest")
  echo "np=$np wall $(echo "$end - $start" | bc) s; digest $size bytes:" \
    "$(echo "scale=4; 100 * $size / $bytes" | bc) % of $bytes trace bytes," \
    "$(echo "$size / $ranks" | bc) bytes per rank," \
    "$(echo "scale=1; $size / ($bytes / 1000000000) / 1000000" | bc) MB per GB"
done
cmp "$work/job1.rsdigest" "$work/job2.rsdigest" && echo "digests of 1 and 2 processes: identical bytes"
