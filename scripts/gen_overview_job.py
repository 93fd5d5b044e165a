#!/usr/bin/env python3
"""Writes an N-rank synthetic Kineto job for looking at the rank overview: per step each rank
computes (GPU kernels on stream 7), then joins an NCCL all_reduce (record_param_comms with Seq,
the kernel on stream 28). One rank is late at every collective (a straggler); one never reaches
the last all_reduce, where the others sit until the trace ends (a hang).

Usage: gen_overview_job.py OUT_DIR RANKS [STEPS] [STRAGGLER] [HUNG]
"""
import json
import os
import sys


def main():
    out, ranks = sys.argv[1], int(sys.argv[2])
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 12
    straggler = int(sys.argv[4]) if len(sys.argv) > 4 else ranks // 3
    hung = int(sys.argv[5]) if len(sys.argv) > 5 else ranks - 2
    os.makedirs(out, exist_ok=True)
    compute_us, late_us, comm_us, hang_us = 8000, 3000, 1500, 60_000_000
    group = {"Process Group Name": "0", "Process Group Description": "default_pg",
             "Group size": ranks, "Collective name": "allreduce", "dtype": "Float",
             "In msg nelems": 1048576, "Out msg nelems": 1048576}
    for rank in range(ranks):
        pid = 4000 + rank
        events = []

        def x(cat, name, p, tid, ts, dur, args=None):
            events.append({"ph": "X", "cat": cat, "name": name, "pid": p, "tid": tid,
                           "ts": ts, "dur": dur, "args": args or {}})

        t = 1000
        for step in range(steps):
            last = step == steps - 1
            step_start = t
            arrive_all = t + compute_us + late_us  # the straggler's arrival
            mine = t + compute_us + (late_us if rank == straggler else 0)
            if last and rank == hung:
                # Computes, then never reaches the all_reduce: its step goes on to the end.
                x("kernel", "volta_sgemm", 0, 7, t + 50, compute_us - 100,
                  {"device": 0, "stream": 7})
                x("user_annotation", f"ProfilerStep#{step}", pid, pid, step_start,
                  compute_us + hang_us + 2_000_000)
                break
            for k in range(4):
                x("kernel", "volta_sgemm", 0, 7, t + 50 + k * compute_us // 4,
                  compute_us // 4 - 100 + (late_us // 4 if rank == straggler else 0),
                  {"device": 0, "stream": 7})
            seq = {"Seq": step + 1, **group}
            x("cpu_op", "record_param_comms", pid, pid, mine, 200, seq)
            end = arrive_all + comm_us if not last else arrive_all + hang_us
            x("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0, 28, mine + 20,
              end - mine - 20, {"device": 0, "stream": 28, **seq})
            x("user_annotation", f"ProfilerStep#{step}", pid, pid, step_start,
              end - step_start + 100)
            t = end + 200
        doc = {"schemaVersion": 1,
               "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": ranks},
               "baseTimeNanoseconds": 1700000000000000000, "traceEvents": events}
        with open(os.path.join(out, f"rank{rank}.pt.trace.json"), "w") as f:
            json.dump(doc, f)


if __name__ == "__main__":
    main()
