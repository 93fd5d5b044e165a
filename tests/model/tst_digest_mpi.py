#!/usr/bin/env python3
"""rankscope-digest under MPI: a generated job (one straggler, one hung rank) digested with 1, 2
and 4 processes gives the same digest content each time, and `rankscope analyze --json` of the
digest equals that of the folder (a rank's event count aside: it is what the digest kept). A
process that cannot read the folder, or lists it otherwise than process 0, ends the job with a
non-zero exit, a message naming it and no digest (never a hang or a digest of mixed folders).
Usage: tst_digest_mpi.py RANKSCOPE RANKSCOPE_DIGEST MPIEXEC GEN_OVERVIEW_JOB WORKDIR
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys

RANKS, STEPS = 24, 6
STRAGGLER, HUNG = 5, 17


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def analyze(rankscope, path):
    out = subprocess.run([rankscope, "analyze", path, "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"rankscope analyze {path}: {out.stderr}")
    report = json.loads(out.stdout)
    for rank in report.get("ranks", []):
        rank.pop("events", None)
    return report


def content(path):
    db = sqlite3.connect(path)
    rows = []
    for table in ("meta", "sources", "traces", "breakdown", "findings", "windows"):
        rows.append((table, sorted(db.execute(f"SELECT * FROM {table}").fetchall())))
    db.close()
    return rows


def mpirun(mpiexec, *programs):
    """mpiexec running each (processes, argv) of `programs` (MPMD, one ':' between them)."""
    command = [mpiexec, "--oversubscribe"]
    if os.geteuid() == 0:
        command.append("--allow-run-as-root")
    for i, (processes, argv) in enumerate(programs):
        command += ([":"] if i else []) + ["-np", str(processes)] + argv
    return command


def expect_refused(command, out, message):
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        fail(f"{' '.join(command)} hung")
    if run.returncode == 0:
        fail(f"{' '.join(command)} exited 0: {run.stderr}")
    if message not in run.stderr:
        fail(f"{' '.join(command)} did not say '{message}': {run.stderr}")
    if os.path.exists(out):
        fail(f"{' '.join(command)} wrote {out}")


def main():
    rankscope, digest, mpiexec, generator, work = sys.argv[1:6]
    shutil.rmtree(work, ignore_errors=True)
    job = os.path.join(work, "job")
    subprocess.run([sys.executable, generator, job, str(RANKS), str(STEPS), str(STRAGGLER),
                    str(HUNG)], check=True, capture_output=True)
    folder = analyze(rankscope, job)
    if not any(HUNG in f["ranks"] for f in folder["findings"]):
        fail(f"the folder's findings do not name the hung rank {HUNG}")
    reference = None
    for processes in (1, 2, 4):
        out = os.path.join(work, f"job{processes}.rsdigest")
        command = mpirun(mpiexec, (processes, [digest, job, "-o", out]))
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode != 0:
            fail(f"{' '.join(command)} exited {run.returncode}: {run.stderr}")
        # Progress: every process says what it read.
        for p in range(processes):
            if f"rankscope-digest[{p}/{processes}]: read " not in run.stderr:
                fail(f"process {p} of {processes} reported no progress: {run.stderr}")
        if analyze(rankscope, out) != folder:
            fail(f"analyze of the {processes}-process digest differs from the folder's")
        rows = content(out)
        if reference is None:
            reference = rows
        elif rows != reference:
            fail(f"the {processes}-process digest's content differs from the 1-process one")
    # Process 1 of 2 on a folder it cannot read; then on a copy with one trace less.
    out = os.path.join(work, "refused.rsdigest")
    missing = os.path.join(work, "missing")
    expect_refused(mpirun(mpiexec, (1, [digest, job, "-o", out]), (1, [digest, missing, "-o", out])),
                   out, f"{job} could not be read by process(es) 1 of 2; nothing written")
    other = os.path.join(work, "other")
    shutil.copytree(job, other)
    os.remove(os.path.join(other, sorted(f for f in os.listdir(other) if "trace" in f)[0]))
    expect_refused(mpirun(mpiexec, (1, [digest, job, "-o", out]), (1, [digest, other, "-o", out])),
                   out, f"process(es) 1 list {job} otherwise than process 0")
    print(f"PASS: {RANKS} ranks digested with 1, 2, 4 processes; findings equal the folder's; "
          "a process on another folder ends the job")


if __name__ == "__main__":
    main()
