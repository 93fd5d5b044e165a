#!/usr/bin/python3
"""Produce real multi-process PyTorch runs (traces + logs) with one injected fault each.

Each run is a real `torchrun` job of a small DDP model on the gloo backend (CPU), with
torch.profiler on every rank, written in the layout of tests/data/traces (rank<R> traces and
logs, torchelastic error files, launcher.log, ground_truth.json). It needs Debian's
python3-torch (1.13) and is run by hand, never by the build or the tests:

    /usr/bin/python3 scripts/gen_torch_runs.py run --scenario hang_timeout --world 4 \
        --faulty-rank 2 --fault-step 5 --out tests/data/traces/hang_timeout_w4

The training script deliberately logs in its own format (not the one of the fixtures in
tests/data/traces), so that what the analysis finds cannot depend on one script's wording.
"""

import argparse
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SCENARIOS = {
    # scenario: (mode, what is injected)
    "healthy": ("none", "nothing"),
    "straggler": ("sleep", "the faulty rank sleeps --delay seconds before every forward pass"),
    "hang_timeout": (
        "stall_before_forward",
        "at --fault-step the faulty rank blocks before its forward pass and never joins that "
        "step's gradient all_reduce",
    ),
    "rank_crash": ("bad_index", "at --fault-step the faulty rank indexes past its data set"),
    "mismatched_collective": (
        "shape",
        "at --fault-step the faulty rank all_reduces a tensor of shape [2] where the others use "
        "[1] (TORCH_DISTRIBUTED_DEBUG=DETAIL)",
    ),
    "uneven_inputs": (
        "barrier",
        "the faulty rank has --fault-step batches, the others --steps; it then waits in "
        "dist.barrier()",
    ),
    "unused_parameters": (
        "never_used",
        "the model has a head that forward never uses, with find_unused_parameters=False",
    ),
    "setup_failure": (
        "wrong_port",
        "the faulty rank connects to a MASTER_PORT where nothing listens",
    ),
    "world_size_mismatch": (
        "world_plus_one",
        "every rank is told WORLD_SIZE = --world + 1 while --world processes are launched, so "
        "the last rank never starts and the process group never forms",
    ),
    "nan_loss": (
        "nan_loss",
        "at --fault-step the faulty rank's inputs hold a NaN, and the training loop's own check "
        "raises ValueError('loss is nan')",
    ),
    "rank_killed": (
        "sigkill",
        "at --fault-step the faulty rank is killed with SIGKILL after its forward pass (as the "
        "OOM killer does): no traceback, no error file, exitcode -9",
    ),
    "early_exit": (
        "early_return",
        "the faulty rank returns from training after --fault-step steps and exits 0, skipping "
        "the final barrier; the others go on to the next step's gradient all_reduce",
    ),
    "collective_type": (
        "other_op",
        "at --fault-step the faulty rank calls --other-op on the loss tensor where the others "
        "call all_reduce",
    ),
    "dtype_mismatch": (
        "float64",
        "at --fault-step the faulty rank all_reduces a float64 loss tensor where the others use "
        "float32",
    ),
    "broadcast_src": (
        "broadcast_src",
        "every step broadcasts a tensor from rank 0; at --fault-step the faulty rank names "
        "another src",
    ),
    "subgroup_hang": (
        "subgroup_stall",
        "every step all_reduces in a dist.new_group of every rank but one that is not faulty; at "
        "--fault-step the faulty rank blocks before that subgroup all_reduce",
    ),
    "p2p_deadlock": (
        "recv_first",
        "at --fault-step the faulty rank and the next rank exchange a tensor and both call "
        "dist.recv first, so neither sends",
    ),
    "hook_exception": (
        "hook_raises",
        "at --fault-step a gradient hook on the faulty rank raises RuntimeError inside "
        "loss.backward()",
    ),
    "loader_stall": (
        "loader_stall",
        "the batches come from a torch.utils.data.DataLoader; at --fault-step the faulty rank's "
        "Dataset.__getitem__ blocks, inside the DataLoader's next() before any collective",
    ),
    "wrong_world_init": (
        "init_world_plus_one",
        "the faulty rank passes world_size = --world + 1 to init_process_group, the others "
        "--world",
    ),
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ----------------------------------------------------------------------------- the worker


def tee_own_output(path):
    """Send this process's fd 1 and 2 through `tee -a path` before torch is imported, so the
    per-rank log gets everything (Python, glog, tracebacks) and the launcher still sees it."""
    read_end, write_end = os.pipe()
    subprocess.Popen(["tee", "-a", path], stdin=read_end, stdout=sys.__stdout__)
    os.close(read_end)
    os.dup2(write_end, 1)
    os.dup2(write_end, 2)
    os.close(write_end)
    sys.stdout.reconfigure(line_buffering=True)
    sys.stderr.reconfigure(line_buffering=True)


def worker(a):
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    tee_own_output(os.path.join(a.out, "rank%d.log" % rank))

    import logging

    logging.basicConfig(
        level=logging.INFO,
        format="[%(asctime)s] %(levelname)s %(name)s (rank " + str(rank) + "): %(message)s",
    )
    log = logging.getLogger("job")

    import torch
    import torch.distributed as dist
    from torch.distributed.elastic.multiprocessing.errors import record
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.profiler import ProfilerAction, ProfilerActivity, profile

    stop = {"signal": None}

    def on_term(signum, _frame):
        stop["signal"] = signum

    signal.signal(signal.SIGTERM, on_term)
    faulty = rank == a.faulty_rank

    @record
    def train():
        log.info("hello from pid %d, rank %d/%d, torch %s", os.getpid(), rank, world, torch.__version__)
        if a.mode == "wrong_port" and faulty:
            os.environ["MASTER_PORT"] = str(a.wrong_port)
        if a.mode == "world_plus_one":
            os.environ["WORLD_SIZE"] = str(world + 1)
        log.info("MASTER_ADDR=%s MASTER_PORT=%s WORLD_SIZE=%s", os.environ["MASTER_ADDR"],
                 os.environ["MASTER_PORT"], os.environ["WORLD_SIZE"])
        import datetime

        init_args = {}
        if a.mode == "init_world_plus_one":
            init_args = {"rank": rank, "world_size": world + 1 if faulty else world}
            log.info("init_process_group(world_size=%d)", init_args["world_size"])
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=a.pg_timeout),
                                **init_args)
        log.info("joined the process group")

        torch.manual_seed(a.seed)
        layers = [torch.nn.Linear(32, 48), torch.nn.ReLU(), torch.nn.Linear(48, 8)]
        model = torch.nn.Sequential(*layers)
        if a.mode == "never_used":
            model.add_module("unused_head", torch.nn.Linear(8, 8))
            body = torch.nn.Sequential(*layers)
            model.forward = body.forward
        ddp = DDP(model, find_unused_parameters=False)
        if a.mode == "hook_raises" and faulty:
            hook_state = {"step": 0}

            def check_grad(grad):
                if hook_state["step"] == a.fault_step:
                    raise RuntimeError("gradient check failed: norm %.3f above the clip limit"
                                       % float(grad.norm()))
                return grad

            model[0].weight.register_hook(check_grad)
        # The subgroup leaves out the highest rank that is not faulty (every rank creates it).
        left_out = max(r for r in range(world) if r != a.faulty_rank)
        subgroup = None
        if a.mode == "subgroup_stall":
            subgroup = dist.new_group(ranks=[r for r in range(world) if r != left_out])
        opt = torch.optim.SGD(ddp.parameters(), lr=0.01)

        gen = torch.Generator().manual_seed(a.seed * 1000 + rank)
        batches = a.steps
        if a.mode == "barrier" and faulty:
            batches = a.fault_step
        x = torch.randn(batches * 16, 32, generator=gen)
        y = torch.randn(batches * 16, 8, generator=gen)
        print("rank %d: %d samples in %d batches" % (rank, x.shape[0], batches), flush=True)

        class Samples(torch.utils.data.Dataset):
            def __len__(self):
                return x.shape[0]

            def __getitem__(self, i):
                if a.mode == "loader_stall" and faulty and i == a.fault_step * 16:
                    log.info("reading sample %d", i)
                    deadline = time.time() + 120
                    while not stop["signal"] and time.time() < deadline:
                        time.sleep(0.05)
                return x[i], y[i]

        loader = iter(torch.utils.data.DataLoader(Samples(), batch_size=16))

        def export(prof):
            if a.trace_naming == "tensorboard":
                path = os.path.join(a.out, "rank%d.%d.pt.trace.json" % (rank, int(time.time() * 1000)))
            else:
                path = os.path.join(a.out, "rank%d.pt.trace.json" % rank)
            prof.export_chrome_trace(path)
            with open(os.path.join(a.sidecar, "rank%d.json" % rank), "w") as f:
                json.dump({"trace_start_unix_us": prof.profiler.kineto_results.trace_start_us(),
                           "trace": os.path.basename(path)}, f)

        with profile(activities=[ProfilerActivity.CPU],
                     schedule=lambda _step: ProfilerAction.RECORD, on_trace_ready=export) as prof:
            for step in range(batches):
                if stop["signal"]:
                    break
                if a.mode == "sleep" and faulty:
                    time.sleep(a.delay)
                if a.mode == "stall_before_forward" and faulty and step == a.fault_step:
                    log.info("waiting for the next batch")
                    deadline = time.time() + 120
                    while not stop["signal"] and time.time() < deadline:
                        time.sleep(0.05)
                    break
                if a.mode == "early_return" and faulty and step == a.fault_step:
                    log.info("stopping after %d steps", step)
                    break
                if a.mode == "loader_stall":
                    xb, yb = next(loader)
                    if stop["signal"]:
                        break
                else:
                    lo = step * 16
                    idx = torch.arange(lo, lo + 16)
                    if a.mode == "bad_index" and faulty and step == a.fault_step:
                        idx = idx + x.shape[0]
                    xb, yb = x[idx], y[idx]
                if a.mode == "nan_loss" and faulty and step == a.fault_step:
                    xb = xb.clone()
                    xb[0, 0] = float("nan")
                loss = torch.nn.functional.mse_loss(ddp(xb), yb)
                if not torch.isfinite(loss):
                    raise ValueError("loss is nan" if torch.isnan(loss) else "loss is inf")
                if a.mode == "sigkill" and faulty and step == a.fault_step:
                    log.info("forward done, loss %.4f", loss.item())
                    os.kill(os.getpid(), signal.SIGKILL)
                if a.mode == "hook_raises" and faulty:
                    hook_state["step"] = step
                loss.backward()
                opt.step()
                opt.zero_grad()
                stat = torch.tensor([loss.item()])
                at_fault = faulty and step == a.fault_step
                if a.mode == "shape" and at_fault:
                    stat = torch.tensor([loss.item(), 0.0])
                if a.mode == "float64" and at_fault:
                    stat = stat.double()
                if a.mode == "recv_first" and step == a.fault_step:
                    peer = (a.faulty_rank + 1) % world
                    if rank in (a.faulty_rank, peer):
                        other = peer if rank == a.faulty_rank else a.faulty_rank
                        box = torch.zeros(4)
                        log.info("exchanging with rank %d", other)
                        dist.recv(box, src=other)
                        dist.send(box, dst=other)
                if a.mode == "subgroup_stall" and rank != left_out:
                    if at_fault:
                        log.info("waiting for the shard statistics")
                        deadline = time.time() + 120
                        while not stop["signal"] and time.time() < deadline:
                            time.sleep(0.05)
                        break
                    dist.all_reduce(torch.ones(3), group=subgroup)
                if a.mode == "other_op" and at_fault:
                    if a.other_op == "broadcast":
                        dist.broadcast(stat, src=0)
                    else:
                        dist.all_gather([torch.zeros_like(stat) for _ in range(world)], stat)
                else:
                    dist.all_reduce(stat)
                if a.mode == "broadcast_src":
                    lr = torch.tensor([0.01 * (step + 1)])
                    src = 0
                    if at_fault:
                        src = 1 if a.faulty_rank == 0 else a.faulty_rank
                    dist.broadcast(lr, src=src)
                print("it %d/%d loss=%.4f mean_loss=%.4f" % (step + 1, batches, loss.item(),
                                                            stat[0].item() / world), flush=True)
                prof.step()
        if stop["signal"]:
            log.warning("got signal %d, exiting", stop["signal"])
            raise SystemExit(128 + stop["signal"])
        if a.mode == "early_return" and faulty:
            log.info("training finished")
            return
        if a.mode == "barrier" and faulty:
            log.info("out of data after %d batches, waiting for the others", batches)
        dist.barrier()
        log.info("done")
        dist.destroy_process_group()

    train()


# ----------------------------------------------------------------------------- the launcher


def run(a):
    mode, injection = SCENARIOS[a.scenario]
    out = os.path.abspath(a.out)
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    sidecar = tempfile.mkdtemp(prefix="rs_sidecar_")
    logdir = tempfile.mkdtemp(prefix="torchelastic_")
    faulty = a.faulty_rank if mode != "none" else -1
    debug = "DETAIL" if mode == "shape" else "OFF"
    wrong_port = free_port()
    cmd = ["/usr/bin/torchrun", "--nnodes=1", "--nproc_per_node=%d" % a.world,
           "--master_addr=127.0.0.1", "--master_port=%d" % free_port(),
           # torchrun 1.13 on Python 3.11 crashes on the default "0" redirects; a no-op map works.
           "--redirects", "9:0", "--tee", "9:0", "--log_dir", logdir,
           os.path.abspath(__file__), "_worker", "--mode", mode, "--out", out,
           "--seed", str(a.seed), "--steps", str(a.steps), "--faulty-rank", str(faulty),
           "--fault-step", str(a.fault_step), "--pg-timeout", str(a.pg_timeout),
           "--delay", str(a.delay), "--trace-naming", a.trace_naming, "--sidecar", sidecar,
           "--wrong-port", str(wrong_port), "--other-op", a.other_op]
    env = dict(os.environ, TORCH_DISTRIBUTED_DEBUG=debug, OMP_NUM_THREADS="1")
    started = time.time()
    with open(os.path.join(out, "launcher.log"), "wb") as launcher_log:
        proc = subprocess.Popen(["timeout", "-k", "5", "100"] + cmd, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, env=env, start_new_session=True)
        for chunk in iter(lambda: proc.stdout.read(4096), b""):
            launcher_log.write(chunk)
        code = proc.wait()
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    wall = time.time() - started
    time.sleep(0.5)  # the tee processes flush after their writers exit

    ranks = {}
    for r in range(a.world):
        info = {}
        side = os.path.join(sidecar, "rank%d.json" % r)
        if os.path.exists(side):
            with open(side) as f:
                info.update(json.load(f))
        errors = glob.glob(os.path.join(logdir, "*", "attempt_0", str(r), "error.json"))
        if errors:
            shutil.copy(errors[0], os.path.join(out, "rank%d.error.json" % r))
            info["torchelastic_error_file"] = "rank%d.error.json" % r
        ranks[str(r)] = info
    faulty_ranks = list(range(a.world)) if mode == "never_used" else ([] if faulty < 0 else [faulty])
    if mode == "recv_first":  # both sides of the exchange wait in recv
        faulty_ranks = sorted({faulty, (faulty + 1) % a.world})
    if mode == "world_plus_one":
        faulty_ranks = [a.world]  # the rank the job waits for was never launched
    fault_step = a.fault_step if mode in ("stall_before_forward", "bad_index", "shape", "barrier",
                                         "nan_loss", "sigkill", "early_return", "other_op",
                                         "float64", "broadcast_src", "subgroup_stall",
                                         "recv_first", "hook_raises", "loader_stall") else None
    if mode == "never_used":
        fault_step = 0
    truth = {
        "scenario": a.scenario, "variant": "gen_torch_runs", "mode": mode, "world_size": a.world,
        "seed": a.seed, "steps": a.steps, "faulty_rank": faulty, "faulty_ranks": faulty_ranks,
        "fault_step": fault_step, "pg_timeout_s": a.pg_timeout, "torch_distributed_debug": debug,
        "injection": injection, "trace_naming": a.trace_naming,
        "other_op": a.other_op if mode == "other_op" else None,
        "command": " ".join(["TORCH_DISTRIBUTED_DEBUG=" + debug] + cmd).replace(sidecar, "<tmp>/sidecar").replace(logdir, "<tmp>/torchelastic"),
        "observed": {"launcher_exit_code": code, "wall_time_s": round(wall, 2), "ranks": ranks},
        "notes": "trace_start_unix_us is out-of-band (read in the worker); trace timestamps are microseconds relative to it.",
    }
    with open(os.path.join(out, "ground_truth.json"), "w") as f:
        json.dump(truth, f, indent=2)
        f.write("\n")
    shutil.rmtree(sidecar, ignore_errors=True)
    shutil.rmtree(logdir, ignore_errors=True)
    print("%s: launcher exit %d in %.1f s -> %s" % (a.scenario, code, wall, out))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--scenario", choices=sorted(SCENARIOS), required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--world", type=int, default=3)
    r.add_argument("--faulty-rank", type=int, default=1)
    r.add_argument("--fault-step", type=int, default=3)
    r.add_argument("--steps", type=int, default=8)
    r.add_argument("--seed", type=int, default=11)
    r.add_argument("--pg-timeout", type=float, default=10.0)
    r.add_argument("--delay", type=float, default=0.25)
    r.add_argument("--trace-naming", choices=["plain", "tensorboard"], default="plain")
    r.add_argument("--other-op", choices=["broadcast", "all_gather"], default="broadcast")
    w = sub.add_parser("_worker")
    w.add_argument("--mode", required=True)
    w.add_argument("--out", required=True)
    w.add_argument("--seed", type=int, required=True)
    w.add_argument("--steps", type=int, required=True)
    w.add_argument("--faulty-rank", type=int, required=True)
    w.add_argument("--fault-step", type=int, required=True)
    w.add_argument("--pg-timeout", type=float, required=True)
    w.add_argument("--delay", type=float, required=True)
    w.add_argument("--trace-naming", required=True)
    w.add_argument("--sidecar", required=True)
    w.add_argument("--wrong-port", type=int, required=True)
    w.add_argument("--other-op", required=True)
    a = p.parse_args()
    if a.cmd == "run":
        run(a)
    else:
        worker(a)


if __name__ == "__main__":
    main()
