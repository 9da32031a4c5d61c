"""A command hook for tests: records its stdin, then prints, sleeps and exits as told.

    python hook_script.py [--record FILE] [--stdout TEXT] [--stderr TEXT]
                          [--exit N] [--sleep S] [--child-pids FILE]

``--child-pids`` starts a child process (a sleeping Python) and writes both
pids to FILE before sleeping, so a test can check that a timeout or a cancel
killed the whole process group.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--record")
    parser.add_argument("--stdout", default="")
    parser.add_argument("--stderr", default="")
    parser.add_argument("--exit", type=int, default=0)
    parser.add_argument("--sleep", type=float, default=0)
    parser.add_argument("--child-pids")
    args = parser.parse_args()
    data = sys.stdin.read()
    if args.record:
        with open(args.record, "a", encoding="utf-8") as fh:
            record = json.loads(data)
            record["_cwd"] = os.getcwd()
            fh.write(json.dumps(record) + "\n")
    if args.child_pids:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        with open(args.child_pids, "w", encoding="utf-8") as fh:
            fh.write(f"{os.getpid()} {child.pid}\n")
    if args.sleep:
        time.sleep(args.sleep)
    if args.stdout:
        sys.stdout.write(args.stdout)
    if args.stderr:
        sys.stderr.write(args.stderr)
    return args.exit


if __name__ == "__main__":
    raise SystemExit(main())
