#!/usr/bin/env bash
# RankScope's `analyze --json` side by side with Holistic Trace Analysis's load
# (`hta.common.trace.Trace(trace_dir=D).load_traces()`) on the same folders, alternating, N runs of
# each (issue #22: RankScope >= 100x faster). Prints every run and a table of medians and ratios.
#
#   bench/hta_compare.sh [--build DIR] [--runs N] [--work DIR] [--mb-per-rank MB] [FOLDER ...]
#
# With no FOLDER it measures WORK/plain and WORK/gzip, writing them first when missing: a 2-rank
# synthetic Kineto job of MB (default 90) per rank from DIR/bench/digest_bench (bench/kinetogen's
# PyTorch 2.x profile), and a `gzip -6` copy of each file. They are kept for the next run.
#
# HTA is not shipped with RankScope and is no dependency of it. Install it where the network
# allows (`pip install HolisticTraceAnalysis`), or set HTA_PYTHONPATH to a directory holding its
# `hta` package; HTA_PYTHON names the interpreter (default python3, which needs pandas, numpy,
# psutil and yaml). The script stops before measuring anything when `import hta.common.trace` fails.
#
# Times: wall and user + sys CPU of each whole process from /usr/bin/time (HTA's forked parser
# workers are waited for, so their CPU is in it), HTA's Trace() (it reads every file to find its
# rank) and load_traces() wall measured inside Python, peak RSS of the largest process. Ratios:
# whole-process wall, whole-process CPU, and load_traces() alone against RankScope's whole process
# (the conservative one). On a loaded machine compare the CPU columns.
set -euo pipefail

build=build
runs=3
work=/tmp/rankscope-hta
mb_per_rank=90
folders=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --mb-per-rank) mb_per_rank="$2"; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    -*) echo "error: unknown option $1" >&2; exit 2 ;;
    *) folders+=("$1"); shift ;;
  esac
done

rankscope="$build/bin/rankscope"
py="${HTA_PYTHON:-python3}"
[ -z "${HTA_PYTHONPATH:-}" ] || export PYTHONPATH="$HTA_PYTHONPATH${PYTHONPATH:+:$PYTHONPATH}"
[ -x "$rankscope" ] || { echo "error: $rankscope not found (build the rankscope target)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "error: /usr/bin/time not found (Debian package: time)" >&2; exit 2; }
if ! hta_where=$("$py" -c 'import hta.common.trace as t; print(t.__file__)' 2>&1); then
  echo "error: HTA is not importable with $py (PYTHONPATH=${PYTHONPATH:-}):" >&2
  echo "$hta_where" | tail -n 1 >&2
  echo "install it (pip install HolisticTraceAnalysis) or set HTA_PYTHONPATH / HTA_PYTHON" >&2
  exit 2
fi

if [ ${#folders[@]} -eq 0 ]; then
  if ! ls "$work"/plain/*.json >/dev/null 2>&1; then
    [ -x "$build/bench/digest_bench" ] || { echo "error: $build/bench/digest_bench not built" >&2; exit 2; }
    "$build/bench/digest_bench" "$work/plain" 2 "$mb_per_rank"
  fi
  mkdir -p "$work/gzip"
  for f in "$work"/plain/*.json; do
    gz="$work/gzip/$(basename "$f").gz"
    [ -s "$gz" ] || gzip -6 -c "$f" >"$gz"
  done
  folders=("$work/plain" "$work/gzip")
fi

# Trace() finds the ranks (it reads each file for distributedInfo.rank), load_traces() parses.
hta_load='
import logging, resource, sys, time
from hta.common.trace import Trace
logging.getLogger("hta").setLevel(logging.ERROR)
def cpu():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime
c0, t0 = cpu(), time.perf_counter()
trace = Trace(trace_dir=sys.argv[1])
t1 = time.perf_counter()
trace.load_traces()
t2 = time.perf_counter()
rows = ",".join(str(len(trace.traces[r])) for r in sorted(trace.traces))
print(f"{t1 - t0:.3f} {t2 - t1:.3f} {cpu() - c0:.3f} {rows}")
'

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "HTA: $hta_where ($py)"
echo "RankScope: $rankscope"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-28s %-9s %3s %9s %9s %9s %9s %8s  %s\n' folder tool run wall_s cpu_s hta_init hta_load rss_MB \
  "rows per rank (HTA) / events per rank (RankScope)"
names=()
for i in "${!folders[@]}"; do
  dir="${folders[$i]}"
  names[i]="$(basename "$dir") ($(du -sbL "$dir" | awk '{printf "%.1f", $1 / 1e6}') MB)"
done
for run in $(seq 1 "$runs"); do
  for i in "${!folders[@]}"; do
    dir="${folders[$i]}"
    name="${names[$i]}"
    /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$py" -c "$hta_load" "$dir" >"$tmp/out" 2>"$tmp/err" ||
      { echo "error: HTA failed on $dir:" >&2; tail -n 5 "$tmp/err" >&2; exit 1; }
    read -r wall user sys rss <"$tmp/time"
    read -r init load _ rows < <(tail -n 1 "$tmp/out")
    cpu=$(echo "$user + $sys" | bc)
    echo "$wall $cpu $load" >>"$tmp/hta-$i"
    printf '%-28s %-9s %3d %9.2f %9.2f %9.2f %9.2f %8.0f  %s\n' "$name" HTA "$run" "$wall" "$cpu" "$init" \
      "$load" "$((rss / 1024))" "$rows"

    /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$rankscope" analyze "$dir" --json >"$tmp/json" 2>"$tmp/err" ||
      { echo "error: rankscope analyze failed on $dir:" >&2; tail -n 5 "$tmp/err" >&2; exit 1; }
    read -r wall user sys rss <"$tmp/time"
    cpu=$(echo "$user + $sys" | bc)
    echo "$wall $cpu" >>"$tmp/rs-$i"
    events=$(grep -E '^      "events": ' "$tmp/json" | tr -dc '0-9\n' | paste -sd, -)
    printf '%-28s %-9s %3d %9.2f %9.2f %9s %9s %8.0f  %s\n' "$name" RankScope "$run" "$wall" "$cpu" - - \
      "$((rss / 1024))" "$events"
  done
done

echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "medians of $runs alternated runs; ratio = HTA / RankScope (target >= 100x, #22)"
printf '%-28s %10s %10s %10s %10s %10s %9s %9s %12s\n' folder HTA_wall HTA_cpu HTA_load RS_wall RS_cpu \
  x_wall x_cpu x_load_only
for i in "${!folders[@]}"; do
  hw=$(cut -d' ' -f1 "$tmp/hta-$i" | median)
  hc=$(cut -d' ' -f2 "$tmp/hta-$i" | median)
  hl=$(cut -d' ' -f3 "$tmp/hta-$i" | median)
  rw=$(cut -d' ' -f1 "$tmp/rs-$i" | median)
  rc=$(cut -d' ' -f2 "$tmp/rs-$i" | median)
  printf '%-28s %10.2f %10.2f %10.2f %10.2f %10.2f %8.0fx %8.0fx %11.0fx\n' "${names[$i]}" "$hw" "$hc" "$hl" "$rw" \
    "$rc" "$(echo "$hw / $rw" | bc -l)" "$(echo "$hc / $rc" | bc -l)" "$(echo "$hl / $rw" | bc -l)"
done
