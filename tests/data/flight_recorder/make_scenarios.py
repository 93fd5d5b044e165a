#!/usr/bin/env python3
"""Writes one hand-built 4-rank Flight Recorder job per fault kind, in both forms torch writes.

../fr_scenarios/<kind>_pickle/nccl_trace_rank_N: the dict pickled with protocol 2 (what the
watchdog's timeout dump is); ../fr_scenarios/<kind>_json/nccl_trace_rank_N.json: the JSON form
(process_group a list, no frames, unknown times 0, pg_status values strings).
Every job runs all_reduce on the default group "0"; each kind breaks one thing:
  op_type      rank 2 issues broadcast at seq 3 where the others issue all_reduce
  op_type_completed  rank 2 runs seq 2 as all_gather where the others run all_reduce; every
               rank completes it (a type mismatch: nobody waits)
  absent_rank  a healthy job whose rank 3 left no dump (three dumps of a 4-rank group)
  size         rank 1 reduces 1000 elements at seq 2, the others 6792
  dtype        rank 3 sends Half at seq 4, the others Float
  missing_rank rank 2 never issues seq 4, the others wait in it (retired, timed out)
  state        seq 5: rank 2 never started it, the others completed it
  not_started  seq 5: rank 2 never started it, the others started it and wait
  hang         rank 3 stops after seq 2 (its pg_status says so), the others wait in seq 3
  trimmed      rank 0's ring buffer dropped seqs 0-1; rank 3 never issues seq 4
  p2p_unpaired rank 0 sends to rank 1 twice (p2p_seq_id 1, 2), rank 1 posts one recv
  p2p_size     rank 0 sends 6792 elements to rank 1, whose recv is posted for 3396; both wait
  version      rank 1 wrote dump version 3.0, the others 2.5; no fault in the entries
  coalesced_ok seq 4 coalesces two broadcasts (slow path: one entry per op, then the block's
               "coalesced" end entry, all with collective_seq_id 4), seq 5 is one
               allreduce_coalesced entry (fast path), then a batch_isend_irecv ring whose ops and
               end entry share a p2p_seq_id; no fault
  coalesced_size  as coalesced_ok, but rank 1's second broadcast of seq 4 is 5x5, not 4x4
  coalesced_order as coalesced_ok, but rank 2 broadcasts the 8-element tensor of seq 4 first:
               the block moves as many elements as the others' but pairs different tensors
  p2p_subgroup two pipeline groups, "1" = ranks [0, 2] and "2" = [1, 3]: each first stage sends
               its activations to its second stage twice, over its group. ProcessGroupNCCL names
               the ranks of "send a->b" / "recv a<-b" by their place in the group (rank 2 writes
               "recv 1<-0" for a recv from global rank 0); every send has its recv; no fault
  tp_dp_stall  tensor-parallel groups "1" = [0, 1], "2" = [2, 3], data-parallel "3" = [0, 2],
               "4" = [1, 3]; each step runs a TP then a DP all_reduce. In step 3 rank 3 stalls in
               its own code before its DP all_reduce: rank 1 waits in it, so it never issues the
               next TP all_reduce rank 0 waits in; rank 2 waits in the next TP all_reduce for rank
               3. Rank 3 is the one cause; rank 1 only waited for it
  pp_stall     a 2-stage pipeline, stages [0, 1] and [2, 3] with TP groups "3" = [0, 1] and
               "4" = [2, 3]; pipeline groups "1" = [0, 2], "2" = [1, 3] carry each step's
               activations (send on stage 0, recv on stage 1, group-local ranks). In step 3 rank
               0 stalls after its TP all_reduce and never sends: rank 2 waits in its recv, so it
               never issues the TP all_reduce rank 3 waits in, and rank 1 waits for rank 0 in the
               next TP all_reduce. Rank 0 is the one cause
Run: python3 make_scenarios.py (from this folder). Output is committed with this script.
"""
import json
import os
import pickle
import shutil

T0 = 1796218894000000000
WORLD = 4
NUMEL = 6792


def entry(rank, seq, op="all_reduce", numel=NUMEL, dtype="Float", state="completed",
          retired=True):
    t = T0 + seq * 50000000 + rank * 3000
    return {
        "record_id": seq, "pg_id": 0, "process_group": ("0", "default_pg"),
        "thread_id": 140245, "thread_name": "pt_main_thread",
        "collective_seq_id": seq, "p2p_seq_id": 0, "op_id": seq,
        "profiling_name": "nccl:" + op, "time_created_ns": t,
        "input_sizes": [[numel]], "input_dtypes": [dtype],
        "output_sizes": [[numel]], "output_dtypes": [dtype], "state": state,
        "time_discovered_started_ns": t + 5000 if state != "scheduled" else None,
        "time_discovered_completed_ns": t + 900000 if state == "completed" else None,
        "retired": retired, "timeout_ms": 600000, "is_p2p": False,
        "frames": [{"name": "train_step", "filename": "/home/user/job/train.py", "line": 87}],
    }


def waiting(rank, seq, **kw):
    # Still in the collective when the watchdog dumped: started, retired without completing.
    return entry(rank, seq, state="started", retired=True, **kw)


def p2p(rank, peer, op, p2p_seq, state="started", numel=NUMEL):
    e = entry(rank, 4 + p2p_seq, state=state, retired=True, numel=numel)
    e["collective_seq_id"] = 3  # the last collective: p2p ops do not advance it
    e["p2p_seq_id"] = p2p_seq
    e["is_p2p"] = True
    e["profiling_name"] = "nccl:%s %d%s%d" % (op, rank, "->" if op == "send" else "<-", peer)
    return e


def coalesced(rank, seq, shapes, end="coalesced"):
    # torch >= 2.7 records each op of a coalescing block (slow path) with the block's
    # collective_seq_id and closes it with an end entry whose sizes are empty.
    out = [entry(rank, seq, op="broadcast") for _ in shapes]
    for k, (e, shape) in enumerate(zip(out, shapes)):
        e["input_sizes"] = e["output_sizes"] = [shape]
        e["op_id"] = seq * 10 + k
    e = entry(rank, seq, op=end)
    e["input_sizes"] = e["output_sizes"] = [[]]
    e["input_dtypes"] = e["output_dtypes"] = []
    return out + [e]


def p2p_ring(rank, p2p_seq):
    # batch_isend_irecv around the ring: every op and the block's end entry share one p2p_seq_id.
    ops = [p2p(rank, (rank + 1) % WORLD, "send", p2p_seq, state="completed"),
           p2p(rank, (rank - 1) % WORLD, "recv", p2p_seq, state="completed")]
    end = p2p(rank, 0, "send", p2p_seq, state="completed")
    end["profiling_name"] = "nccl:coalesced"
    end["input_sizes"] = end["output_sizes"] = [[]]
    return ops + [end]


def coalesced_job(first_shapes):
    jobs = {}
    for r in range(WORLD):
        fast = entry(r, 5, op="allreduce_coalesced")
        fast["input_sizes"] = fast["output_sizes"] = [[NUMEL], [16]]
        ring = p2p_ring(r, 1)
        for x in ring:
            x["collective_seq_id"] = 5  # the last collective before the p2p block
        e = healthy(r, 4) + coalesced(r, 4, first_shapes(r)) + [fast] + ring
        for i, x in enumerate(e):
            x["record_id"] = i
        jobs[r] = dump(e)
    return jobs


def pipeline_p2p(rank, p2p_seq):
    # The group of a 2-stage pipeline: global ranks r and r + 2; stage = place in the group.
    group, members = ("1", [0, 2]) if rank % 2 == 0 else ("2", [1, 3])
    stage = members.index(rank)
    e = p2p(stage, 1 - stage, "send" if stage == 0 else "recv", p2p_seq, state="completed")
    e["pg_id"] = int(group)
    e["process_group"] = (group, "pp")
    e["collective_seq_id"] = 4
    return e


def tp_dp_stall(rank):
    # (group, desc, members) of the rank's TP and DP groups; per group seq ids from 0.
    tp = ("1", "tp", [0, 1]) if rank < 2 else ("2", "tp", [2, 3])
    dp = ("3", "dp", [0, 2]) if rank % 2 == 0 else ("4", "dp", [1, 3])
    out = []

    def op(group, seq, state="completed"):
        e = entry(rank, len(out), state=state, retired=True)
        e["pg_id"] = int(group[0])
        e["process_group"] = (group[0], group[1])
        e["collective_seq_id"] = seq
        out.append(e)

    for step in range(3):
        op(tp, step)
        op(dp, step)
    op(tp, 3)
    if rank == 1:
        op(dp, 3, state="started")  # waits for rank 3, which never issues it
    elif rank != 3:
        op(dp, 3)
        op(tp, 4, state="started")  # rank 0 waits for rank 1, rank 2 for rank 3
    for i, e in enumerate(out):
        e["record_id"] = i
        e["op_id"] = i
    pg_status = {}
    for group in (tp, dp):
        mine = [e for e in out if e["process_group"][0] == group[0]]
        pg_status[group[0]] = {
            "last_enqueued_collective": max(e["collective_seq_id"] for e in mine),
            "last_started_collective": max(e["collective_seq_id"] for e in mine),
            "last_completed_collective": max(
                e["collective_seq_id"] for e in mine if e["state"] == "completed")}
    return dump(out, pg_status=pg_status,
                groups={g[0]: (g[1], g[2]) for g in (tp, dp)})


def pp_stall(rank):
    stage = 0 if rank < 2 else 1
    tp = ("3", "tp", [0, 1]) if stage == 0 else ("4", "tp", [2, 3])
    pp = ("1", "pp", [0, 2]) if rank % 2 == 0 else ("2", "pp", [1, 3])
    out = []
    p2p_seq = [0]

    def add(e, group):
        e["pg_id"] = int(group[0])
        e["process_group"] = (group[0], group[1])
        out.append(e)

    def tp_op(seq, state="completed"):
        e = entry(rank, len(out), state=state, retired=True)
        e["collective_seq_id"] = seq
        add(e, tp)

    def pp_op(state="completed"):
        p2p_seq[0] += 1
        me, peer = pp[2].index(rank), 1 - pp[2].index(rank)
        e = p2p(me, peer, "send" if stage == 0 else "recv", p2p_seq[0], state=state)
        e["collective_seq_id"] = 0
        add(e, pp)

    for step in range(4):
        stalled = rank == 0 and step == 3
        if stage == 0:
            tp_op(step)
            if stalled:
                break
            pp_op()
        else:
            waits = rank == 2 and step == 3
            pp_op(state="started" if waits else "completed")
            if waits:
                break
            tp_op(step, state="started" if rank == 3 and step == 3 else "completed")
    if rank == 1:
        tp_op(4, state="started")  # waits for rank 0
    for i, e in enumerate(out):
        e["record_id"] = i
        e["op_id"] = i
    pg_status = {}
    for group in (tp, pp):
        mine = [e for e in out if e["process_group"][0] == group[0] and not e["is_p2p"]]
        done = [e["collective_seq_id"] for e in mine if e["state"] == "completed"]
        pg_status[group[0]] = {
            "last_enqueued_collective": max((e["collective_seq_id"] for e in mine), default=-1),
            "last_started_collective": max((e["collective_seq_id"] for e in mine), default=-1),
            "last_completed_collective": max(done, default=-1)}
    return dump(out, pg_status=pg_status, groups={g[0]: (g[1], g[2]) for g in (tp, pp)})


def status(entries):
    entries = [e for e in entries if not e["is_p2p"]]
    done = [e["collective_seq_id"] for e in entries if e["state"] == "completed"]
    started = [e["collective_seq_id"] for e in entries if e["state"] != "scheduled"]
    enq = [e["collective_seq_id"] for e in entries]
    return {"0": {"last_enqueued_collective": max(enq, default=-1),
                  "last_started_collective": max(started, default=-1),
                  "last_completed_collective": max(done, default=-1)}}


def dump(entries, version="2.5", pg_status=None, groups=None):
    config = {"0": {"name": "0", "desc": "default_pg", "ranks": str(list(range(WORLD)))}}
    for name, (desc, members) in (groups or {}).items():
        config[name] = {"name": name, "desc": desc, "ranks": str(members)}
    return {"version": version, "comm_lib_version": "2.21.5", "pg_config": config,
            "pg_status": pg_status if pg_status is not None else status(entries),
            "entries": entries}


def healthy(rank, n):
    return [entry(rank, s) for s in range(n)]


def scenarios():
    out = {}
    jobs = {}
    for r in range(WORLD):
        e = healthy(r, 3) + [waiting(r, 3, op="broadcast" if r == 2 else "all_reduce")]
        jobs[r] = dump(e)
    out["op_type"] = jobs
    jobs = {}
    for r in range(WORLD):
        jobs[r] = dump(healthy(r, 2) + [entry(r, 2, op="all_gather" if r == 2 else "all_reduce")])
    out["op_type_completed"] = jobs
    out["absent_rank"] = {r: dump(healthy(r, 4)) for r in range(WORLD - 1)}
    jobs = {}
    for r in range(WORLD):
        e = healthy(r, 2) + [waiting(r, 2, numel=1000 if r == 1 else NUMEL)]
        jobs[r] = dump(e)
    out["size"] = jobs
    jobs = {}
    for r in range(WORLD):
        e = healthy(r, 4) + [waiting(r, 4, dtype="Half" if r == 3 else "Float")]
        jobs[r] = dump(e)
    out["dtype"] = jobs
    jobs = {}
    for r in range(WORLD):
        e = healthy(r, 4) + ([] if r == 2 else [waiting(r, 4)])
        jobs[r] = dump(e)
    out["missing_rank"] = jobs
    jobs = {}
    for r in range(WORLD):
        last = entry(r, 5, state="scheduled", retired=False) if r == 2 else entry(r, 5)
        jobs[r] = dump(healthy(r, 5) + [last])
    out["state"] = jobs
    jobs = {}
    for r in range(WORLD):
        last = entry(r, 5, state="scheduled", retired=False) if r == 2 else waiting(r, 5)
        jobs[r] = dump(healthy(r, 5) + [last])
    out["not_started"] = jobs
    jobs = {}
    for r in range(WORLD):
        e = healthy(r, 3) + ([] if r == 3 else [waiting(r, 3)])
        jobs[r] = dump(e)
    out["hang"] = jobs
    jobs = {}
    for r in range(WORLD):
        e = healthy(r, 4) + ([] if r == 3 else [waiting(r, 4)])
        if r == 0:
            e = e[2:]  # ring buffer full: the oldest entries are gone
        jobs[r] = dump(e)
    out["trimmed"] = jobs
    jobs = {}
    for r in range(WORLD):
        e = healthy(r, 4)
        if r == 0:
            e += [p2p(0, 1, "send", 1, state="completed"), p2p(0, 1, "send", 2)]
        if r == 1:
            e += [p2p(1, 0, "recv", 1, state="completed")]
        jobs[r] = dump(e)
    out["p2p_unpaired"] = jobs
    jobs = {}
    for r in range(WORLD):
        e = healthy(r, 4)
        if r == 0:
            e += [p2p(0, 1, "send", 1)]
        if r == 1:
            e += [p2p(1, 0, "recv", 1, numel=NUMEL // 2)]
        jobs[r] = dump(e)
    out["p2p_size"] = jobs
    jobs = {}
    for r in range(WORLD):
        jobs[r] = dump(healthy(r, 4), version="3.0" if r == 1 else "2.5")
    out["version"] = jobs
    out["coalesced_ok"] = coalesced_job(lambda r: [[4, 4], [8]])
    out["coalesced_size"] = coalesced_job(lambda r: [[4, 4], [5, 5] if r == 1 else [8]])
    out["coalesced_order"] = coalesced_job(lambda r: [[8], [4, 4]] if r == 2 else [[4, 4], [8]])
    jobs = {}
    for r in range(WORLD):
        e = healthy(r, 4) + [pipeline_p2p(r, 1), pipeline_p2p(r, 2)]
        for i, x in enumerate(e):
            x["record_id"] = i
        group = {"1": ("pp", [0, 2])} if r % 2 == 0 else {"2": ("pp", [1, 3])}
        jobs[r] = dump(e, groups=group)
    out["p2p_subgroup"] = jobs
    out["tp_dp_stall"] = {r: tp_dp_stall(r) for r in range(WORLD)}
    out["pp_stall"] = {r: pp_stall(r) for r in range(WORLD)}
    return out


def as_json(d):
    j = json.loads(json.dumps(d))  # tuples become lists
    for e in j["entries"]:
        e.pop("frames", None)
        for k in ("time_discovered_started_ns", "time_discovered_completed_ns"):
            if e[k] is None:
                e[k] = 0
    j["pg_status"] = {k: {kk: str(vv) for kk, vv in v.items()} for k, v in j["pg_status"].items()}
    return j


root = os.path.join("..", "fr_scenarios")  # beside this folder: its loader test reads every file here
if os.path.isdir(root):
    shutil.rmtree(root)
for kind, jobs in scenarios().items():
    os.makedirs(os.path.join(root, kind + "_pickle"))
    os.makedirs(os.path.join(root, kind + "_json"))
    for r, d in jobs.items():
        with open(os.path.join(root, kind + "_pickle", "nccl_trace_rank_%d" % r), "wb") as f:
            pickle.dump(d, f, protocol=2)
        with open(os.path.join(root, kind + "_json", "nccl_trace_rank_%d.json" % r), "w") as f:
            json.dump(as_json(d), f, indent=1)
