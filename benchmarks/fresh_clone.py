"""Follow the README as a new user would: clone, then run its two commands in order, timed.

Run: python benchmarks/fresh_clone.py [--repo PATH_OR_URL] [--rev REV] [--out validation/fresh_clone.csv]
     python benchmarks/fresh_clone.py --table   # the README's table from the CSV's latest run, no run

Clones the repository (default: the one holding this script, at HEAD) into a temporary folder, reads
the README's two shell commands (the first two ```sh blocks), splits each at ``&&`` into steps and
runs them in order in that clone, in one new venv (`.venv`), as the README says. For every step it
records the wall time, the CPU time of the step and all its children, the exit status, the longest
stretch with no output on stdout or stderr, and the machine's load average (1-minute value at the
start and the end, and the mean and maximum sampled every 5 s), because on a shared machine the
wall time says as much about the other jobs as about this one.

The rows are appended to a tidy CSV (default `validation/fresh_clone.csv`, one row per step and run,
with the run's UTC date), so earlier runs stay beside new ones. Each step's output goes to
`<tmp>/logs/stepN.log`; with `--keep` the clone and logs are kept. Exit status 1 if a step fails.
"""

import argparse
import csv
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

FIELDS = ["date_utc", "commit", "command", "step", "cmd", "exit_status", "wall_s", "cpu_s",
          "longest_silence_s", "load1_start", "load1_end", "load1_mean", "load1_max", "cpus"]


def readme_commands(readme: str) -> list[str]:
    """The README's first two ```sh blocks: the install-and-run command, then the test command."""
    blocks = re.findall(r"```sh\n(.*?)```", readme, re.S)
    if len(blocks) < 2:
        raise SystemExit("fresh_clone: README.md must open with two ```sh blocks (run, then test)")
    return [b.strip() for b in blocks[:2]]


def children_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


class LoadSampler(threading.Thread):
    """The 1-minute load average every `every` seconds until stopped."""

    def __init__(self, every: float = 5.0):
        super().__init__(daemon=True)
        self.every, self.samples, self._done = every, [os.getloadavg()[0]], threading.Event()

    def run(self):
        while not self._done.wait(self.every):
            self.samples.append(os.getloadavg()[0])

    def stop(self):
        self._done.set()
        self.join()
        self.samples.append(os.getloadavg()[0])


def run_step(cmd: str, cwd: Path, log: Path) -> dict:
    """Run one shell step, copying its output to `log`; time it and watch for silences."""
    sampler = LoadSampler()
    sampler.start()
    last = [time.perf_counter()]
    silence = [0.0]
    lock = threading.Lock()

    def pump(stream, out):
        for line in iter(stream.readline, b""):
            now = time.perf_counter()
            with lock:
                silence[0] = max(silence[0], now - last[0])
                last[0] = now
                out.write(f"[{now - t0:8.1f} s] ".encode() + line)
                out.flush()

    c0, t0 = children_cpu_s(), time.perf_counter()
    last[0] = t0
    with open(log, "wb") as out:
        proc = subprocess.Popen(["bash", "-c", cmd], cwd=cwd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        threads = [threading.Thread(target=pump, args=(s, out)) for s in (proc.stdout, proc.stderr)]
        for t in threads:
            t.start()
        status = proc.wait()
        for t in threads:
            t.join()
    wall = time.perf_counter() - t0
    sampler.stop()
    silence[0] = max(silence[0], time.perf_counter() - last[0])
    s = sampler.samples
    return {"cmd": cmd, "exit_status": status, "wall_s": round(wall, 1),
            "cpu_s": round(children_cpu_s() - c0, 1), "longest_silence_s": round(silence[0], 1),
            "load1_start": round(s[0], 2), "load1_end": round(s[-1], 2),
            "load1_mean": round(sum(s) / len(s), 2), "load1_max": round(max(s), 2)}


def _duration(seconds: float) -> str:
    m, s = divmod(round(seconds), 60)
    return f"{m} min {s} s" if m else f"{s} s"


def markdown_table(csv_path) -> str:
    """The README's table (step, wall, CPU, mean load average) of the CSV's latest run."""
    with open(csv_path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise SystemExit(f"fresh_clone: {csv_path} holds no run")
    last = [r for r in rows if r["date_utc"] == rows[-1]["date_utc"]]
    lines = [f"| step ({last[0]['date_utc'][:10]}) | wall | CPU | load average |", "|---|---|---|---|"]
    seen = set()
    for r in last:
        again = " (again)" if r["cmd"] in seen else ""
        seen.add(r["cmd"])
        failed = "" if r["exit_status"] == "0" else f" (exit status {r['exit_status']})"
        lines.append(f"| `{r['cmd']}`{again}{failed} | {_duration(float(r['wall_s']))} | "
                     f"{_duration(float(r['cpu_s']))} | {float(r['load1_mean']):.1f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    here = Path(__file__).resolve().parents[1]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", default=str(here), help="path or URL to clone (default: this repository)")
    ap.add_argument("--rev", default="HEAD", help="revision to check out (default: HEAD)")
    ap.add_argument("--out", default=str(here / "validation" / "fresh_clone.csv"),
                    help="CSV the rows are appended to")
    ap.add_argument("--keep", action="store_true", help="keep the temporary clone and its logs")
    ap.add_argument("--table", action="store_true",
                    help="print the README's table of the latest run in --out and exit (runs nothing)")
    args = ap.parse_args(argv)
    if args.table:
        print(markdown_table(args.out))
        return 0

    tmp = Path(tempfile.mkdtemp(prefix="fresh_clone_"))
    clone, logs = tmp / "latency_model", tmp / "logs"
    logs.mkdir()
    date = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    rows, failed = [], False
    try:
        subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", args.repo, str(clone)], check=True)
        subprocess.run(["git", "checkout", "--quiet", args.rev], cwd=clone, check=True)
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, check=True,
                                capture_output=True, text=True).stdout.strip()
        commands = readme_commands((clone / "README.md").read_text(encoding="utf-8"))
        n = 0
        for ci, command in enumerate(commands, 1):
            for step in command.split("&&"):
                n += 1
                step = step.strip()
                print(f"[{ci}.{n}] {step}", flush=True)
                r = run_step(step, clone, logs / f"step{n}.log")
                rows.append({"date_utc": date, "commit": commit, "command": ci, "step": n,
                             "cpus": os.cpu_count(), **r})
                print(f"      {r['wall_s']:8.1f} s wall  {r['cpu_s']:8.1f} s CPU  exit {r['exit_status']}"
                      f"  longest silence {r['longest_silence_s']:.0f} s"
                      f"  load {r['load1_start']:.1f} -> {r['load1_end']:.1f}"
                      f" (mean {r['load1_mean']:.1f}, max {r['load1_max']:.1f})", flush=True)
                if r["exit_status"] != 0:
                    failed = True
                    print(f"      failed: see {logs / f'step{n}.log'}", file=sys.stderr)
                    break
            if failed:
                break
    finally:
        if rows:
            out = Path(args.out)
            out.parent.mkdir(parents=True, exist_ok=True)
            new = not out.exists()
            with open(out, "a", newline="", encoding="utf-8") as f:
                w = csv.DictWriter(f, fieldnames=FIELDS)
                if new:
                    w.writeheader()
                w.writerows(rows)
            print(f"{len(rows)} rows appended to {out}")
        if args.keep or failed:
            print(f"clone and logs kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    for ci in sorted({r["command"] for r in rows}):
        steps = [r for r in rows if r["command"] == ci]
        print(f"command {ci}: {sum(r['wall_s'] for r in steps):.0f} s wall, "
              f"{sum(r['cpu_s'] for r in steps):.0f} s CPU")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
