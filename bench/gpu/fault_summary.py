#!/usr/bin/env python3
"""Summarizes bench/gpu/fault_check.sh: per scenario the job's state, its items by status,
the distinct errors, how many items say they were measured again, and the seconds between
the log's events (fault injected -> hang detected / worker killed -> next worker ready)."""
import collections
import datetime
import json
import pathlib
import re
import sys

out = pathlib.Path(sys.argv[1])
STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})\]")


def when(line):
    m = STAMP.match(line)
    return datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f") if m else None


def events(log, patterns):
    """First time each pattern appears in the log (None where it does not)."""
    found = {}
    path = out / log
    if not path.exists():
        return found
    for line in path.read_text(errors="replace").splitlines():
        for name, pattern in patterns.items():
            if name not in found and pattern in line:
                found[name] = when(line)
    return found


def report(name):
    path = out / f"{name}.json"
    if not path.exists():
        print(f"{name}: no report")
        return
    doc = json.loads(path.read_text())
    items = doc.get("items", [])
    states = collections.Counter(i["status"] for i in items)
    retried = sum(1 for i in items
                  if "measured again after a worker fault" in ((i.get("result") or {}).get("notes") or ""))
    print(f"{name}: job {doc['job']['id']} {doc['job']['state']} "
          f"({doc['job'].get('error') or 'no error'}); items {dict(states)}; "
          f"{retried} say measured again")
    for err in sorted({i["error"] for i in items if i["status"] in ("failed", "cancelled")}):
        n = sum(1 for i in items if i["error"] == err)
        print(f"    {n} x {err}")


def seconds(a, b):
    return f"{(b - a).total_seconds():.2f} s" if a and b else "-"


print((out / "gpu.txt").read_text().strip() if (out / "gpu.txt").exists() else "gpu: ?")
print((out / "wall.txt").read_text().strip() if (out / "wall.txt").exists() else "")
for name in ["transient", "repeating", "hang", "hang_next", "cancel", "cancel_next", "start_job"]:
    report(name)
marks = {"fault": "injecting a fault at item", "hung": "no progress for",
         "killed": "killed", "lost": "worker pid", "ready_again": "starting a new one"}
for log in ["transient", "repeating", "hang", "cancel"]:
    e = events(f"{log}.log", marks)
    print(f"{log} log: fault -> detected/killed {seconds(e.get('fault'), e.get('hung') or e.get('killed'))}; "
          f"fault -> restart {seconds(e.get('fault'), e.get('ready_again'))}")
e = events("start.log", {"unavailable": "is unavailable", "back": "is available again",
                         "first": "failed to start (attempt 1"})
print(f"start log: first failure -> unavailable {seconds(e.get('first'), e.get('unavailable'))}; "
      f"unavailable -> available again {seconds(e.get('unavailable'), e.get('back'))}")
for f in ["cancel_cli.txt", "start_devices_first.txt", "start_devices_after.txt"]:
    if (out / f).exists():
        print(f"{f}: {(out / f).read_text().strip()}")
