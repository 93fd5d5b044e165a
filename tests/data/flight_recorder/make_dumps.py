#!/usr/bin/env python3
"""Writes hand-built Flight Recorder dumps for RankScope's tests.

The layout follows what torch's ProcessGroupNCCL writes (diagnosis-formats.md section 1):
a 2-rank job whose rank 1 never issues collective_seq_id 3, so rank 0's entry is retired
without completing (a watchdog timeout). Pickles use protocol 2 (nccl_trace_rank_0) and
protocol 4 (nccl_trace_rank_1, framed, MEMOIZE); the JSON form (fr_json_rank_0.json) uses
the JSON conventions (no frames, process_group as a list, unknown times 0, pg_status strings).
Run: python3 make_dumps.py (from this folder). Output is committed with this script.
"""
import json
import os
import pickle

T0 = 1796218894000000000  # ns since epoch


def entry(rank, seq, state, retired, op="all_reduce", numel=6792, dtype="Float", frames=True):
    e = {
        "record_id": seq,
        "pg_id": 0,
        "process_group": ("0", "default_pg"),
        "thread_id": 140245,
        "thread_name": "pt_main_thread",
        "collective_seq_id": seq,
        "p2p_seq_id": 0,
        "op_id": seq,
        "profiling_name": "nccl:" + op,
        "time_created_ns": T0 + seq * 1000000 + rank * 1000,
        "input_sizes": [[numel]],
        "input_dtypes": [dtype],
        "output_sizes": [[numel]],
        "output_dtypes": [dtype],
        "state": state,
        "time_discovered_started_ns": T0 + seq * 1000000 + 5000 if state != "scheduled" else None,
        "time_discovered_completed_ns": T0 + seq * 1000000 + 90000 if state == "completed" else None,
        "retired": retired,
        "timeout_ms": 600000,
        "is_p2p": False,
    }
    if frames:
        e["frames"] = [
            {"name": "all_reduce", "filename": "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", "line": 2501},
            {"name": "train_step", "filename": "/home/user/job/train.py", "line": 87 + rank},
        ]
    return e


def send(rank, peer, p2p_seq):
    return {
        "record_id": 10 + p2p_seq, "pg_id": 0, "process_group": ("0", "default_pg"),
        "thread_id": 140245, "thread_name": "pt_main_thread",
        "collective_seq_id": 0, "p2p_seq_id": p2p_seq, "op_id": 10 + p2p_seq,
        "profiling_name": "nccl:send %d->%d" % (rank, peer),
        "time_created_ns": T0, "input_sizes": [[4, 4]], "input_dtypes": ["BFloat16"],
        "output_sizes": [[4, 4]], "output_dtypes": ["BFloat16"], "state": "completed",
        "time_discovered_started_ns": T0 + 10, "time_discovered_completed_ns": T0 + 20,
        "retired": True, "timeout_ms": 600000, "is_p2p": True, "frames": [],
    }


def dump(rank, last):
    entries = [entry(rank, 1, "completed", True), entry(rank, 2, "completed", True, numel=1)]
    if last:
        entries.append(entry(rank, 3, "started", True))
    if rank == 0:
        entries.append(send(0, 1, 1))
    return {
        "version": "2.5",
        "comm_lib_version": "2.21.5",
        "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"}},
        "pg_status": {"0": {"last_enqueued_collective": 3 if last else 2,
                            "last_started_collective": 3 if last else 2,
                            "last_completed_collective": 2}},
        "entries": entries,
    }


with open("nccl_trace_rank_0", "wb") as f:
    pickle.dump(dump(0, True), f, protocol=2)
with open("nccl_trace_rank_1", "wb") as f:
    pickle.dump(dump(1, False), f, protocol=4)

j = dump(0, True)
for e in j["entries"]:
    e.pop("frames", None)
    e["process_group"] = list(e["process_group"])
    for k in ("time_discovered_started_ns", "time_discovered_completed_ns"):
        e[k] = e[k] or 0
j["pg_status"] = {k: {kk: str(vv) for kk, vv in v.items()} for k, v in j["pg_status"].items()}
with open("fr_json_rank_0.json", "w") as f:
    json.dump(j, f, indent=1)

# Bad inputs: a pickle that would import os.system (never executed), and a cut one.
os.makedirs("bad", exist_ok=True)
with open("bad/forbidden_global_rank_0", "wb") as f:
    f.write(b"\x80\x02cos\nsystem\nq\x00X\x04\x00\x00\x00trueq\x01\x85q\x02Rq\x03.")
with open("bad/truncated_rank_1", "wb") as f:
    f.write(pickle.dumps(dump(1, False), protocol=4)[:300])
with open("bad/truncated_json_rank_0.json", "w") as f:
    f.write(json.dumps(dump(0, True))[:400])
