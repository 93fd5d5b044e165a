#!/bin/sh
# Peak memory and time of `rankscope analyze` on generated logs (written to a scratch folder, not
# kept): 50 MB of bare newlines, a 1 GB per-rank log of typical lines, a launcher log with 10 M
# distinct [rankN]: tags (over the default budget of distinct tags a file), and a 300 MB per-rank
# log of bench_logreader's line mix with an error line (CUDA OOM, NCCL WARN, watchdog timeout,
# traceback, in turn) after every 500th block, for the log MB per CPU-second of `analyze`.
#   bench/log_memory.sh [path to rankscope, default build/bin/rankscope] [scratch, default /tmp]
#   CASES="newlines onegig tags errors" (the default: all); KEEP=1 keeps the generated folders.
set -eu
bin="${1:-build/bin/rankscope}"
scratch="${2:-/tmp}/rankscope-log-memory"
cases="${CASES:-newlines onegig tags errors}"
rm -rf "$scratch"
mkdir -p "$scratch"

for case in $cases; do
  mkdir -p "$scratch/$case"
  case $case in
  newlines) head -c 50000000 /dev/zero | tr '\0' '\n' >"$scratch/newlines/rank0.log" ;;
  *) python3 - "$scratch" "$case" <<'PY'
import sys
scratch, case = sys.argv[1], sys.argv[2]
if case == "onegig":
    block = (b"2026-12-02 13:41:34.916 [rank0] INFO train: step 12 loss 33.91161 avg_loss 33.10142\n"
             b"I20261202 13:35:55.418524 28405 reducer.cpp:126] Reducer initialized\n"
             b"node7:12345:12400 [0] NCCL INFO Channel 00/02 :    0   1   2   3\n"
             b"some plain output line of a training script\n"
             b"\n")
    with open(scratch + "/onegig/rank0.log", "wb") as f:
        for _ in range((1 << 30) // len(block)):
            f.write(block)
elif case == "tags":
    with open(scratch + "/tags/launcher.log", "wb") as f:
        f.write(b"WARNING:torch.distributed.run:\n")
        for r in range(10_000_000):
            f.write(b"[rank%d]: hello\n" % r)
elif case == "errors":
    # The lines of bench/bench_logreader.cpp.
    block = (b"2026-12-02 13:41:34.916 [rank0] INFO train: step 12 loss 33.91161 avg_loss 33.10142\n"
             b"I20261202 13:35:55.418524 28405 reducer.cpp:126] Reducer initialized with bucket_bytes_cap_\n"
             b"node7:12345:12345 [0] NCCL INFO AllReduce: opCount 1a sendbuff 0x7f00 recvbuff 0x7f00 "
             b"count 6792 datatype 7 op 0 root 0 comm 0x55d5c8a0 [nranks=8] stream 0x5600\n"
             b"node7:12345:12400 [0] NCCL INFO Channel 00/02 :    0   1   2   3   4   5   6   7\n"
             b"2026-12-02 13:41:34.917 [rank0] INFO torch.nn.parallel.distributed: Reducer buckets "
             b"have been rebuilt in this iteration.\n"
             b"some plain output line of a training script without anything of note in it at all\n")
    errors = [
        b"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a "
        b"total capacity of 23.69 GiB of which 120.06 MiB is free.\n",
        b"node7:12345:12400 [0] misc/socket.cc:379 NCCL WARN Bootstrap : no socket interface found\n",
        b"[E1202 13:41:35.000000 28405 ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective "
        b"operation timeout: WorkNCCL(SeqNum=4521, OpType=ALLREDUCE, NumelIn=2049000, NumelOut=2049000, "
        b"Timeout(ms)=1800000) ran for 1800095 milliseconds before timing out.\n",
        b"Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n    main()\n"
        b"RuntimeError: CUDA error: an illegal memory access was encountered\n",
    ]
    with open(scratch + "/errors/rank0.log", "wb") as f:
        written, n = 0, 0
        while written < 300 * 1000 * 1000:
            f.write(block)
            written += len(block)
            n += 1
            if n % 500 == 0:
                e = errors[(n // 500 - 1) % len(errors)]
                f.write(e)
                written += len(e)
PY
  ;;
  esac
done

for case in $cases; do
  size=$(du -sm "$scratch/$case" | cut -f1)
  /usr/bin/time -v "$bin" analyze "$scratch/$case" --json >"$scratch/$case.json" 2>"$scratch/$case.time" || true
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$scratch/$case.time")
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$scratch/$case.time")
  # CPU time (user + system): what the run costs, whatever else the machine is running.
  cpu=$(awk '/(User|System) time \(seconds\)/ { s += $NF } END { print s }' "$scratch/$case.time")
  bytes=$(du -sb "$scratch/$case" | cut -f1)
  rate=$(awk -v b="$bytes" -v c="$cpu" 'BEGIN { if (c > 0) printf "%.0f", b / 1e6 / c; else print "-" }')
  status=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); s=[x for r in d['ranks'] for x in r['sources']]+d['unattributed_sources']; print('; '.join(sorted(set(x['path']+' '+x['status']+': '+x['message'] for x in s))))" "$scratch/$case.json" 2>/dev/null || echo "no report")
  echo "$case ($size MB): peak $((rss / 1024)) MB, $wall wall, $cpu s CPU ($rate MB per CPU-second); $status"
done
[ -n "${KEEP:-}" ] && echo "kept in $scratch" || rm -rf "$scratch"
