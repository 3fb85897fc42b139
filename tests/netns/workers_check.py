#!/usr/bin/env python3
"""Check the per-worker rows of an ovpnd status file (status-version 2) against its client list.

    workers_check.py STATUS_FILE N_WORKERS N_CLIENTS (on|off)

ovpnd gives client sessions to workers by peer-id (worker = peer-id % N_WORKERS) and only that
worker decrypts and encrypts the session's packets. Checked from the outside:
  - N_CLIENTS clients are listed, each with a peer-id;
  - for every worker, "bytes in" equals the sum of Bytes Received of the clients whose peer-id
    names it, and "bytes out" the sum of their Bytes Sent: each session's traffic was handled by
    exactly one worker, its owner;
  - with 2 or more workers, sessions sit on more than one worker and each such worker carried
    traffic;
  - steering "on": no packet had to be handed over between workers; "off": some were.
Exit 0 when all hold, 1 with reasons on stderr.
"""
import csv
import sys


def main():
    path, n_workers, n_clients, steering = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    rows = list(csv.reader(open(path, newline="")))
    header = next(r for r in rows if r[:2] == ["HEADER", "CLIENT_LIST"])[1:]
    clients = [dict(zip(header, r)) for r in rows if r and r[0] == "CLIENT_LIST"]
    stats = {r[1]: int(r[2]) for r in rows if r and r[0] == "GLOBAL_STATS" and len(r) == 3 and r[2].isdigit()}
    errors = []
    if len(clients) != n_clients:
        errors.append(f"{len(clients)} clients listed, expected {n_clients}")
    per_worker = {w: {"in": 0, "out": 0, "sessions": 0} for w in range(n_workers)}
    for c in clients:
        w = int(c["Peer ID"]) % n_workers
        per_worker[w]["in"] += int(c["Bytes Received"])
        per_worker[w]["out"] += int(c["Bytes Sent"])
        per_worker[w]["sessions"] += 1
    for w in range(n_workers):
        got = {k: stats.get(f"Worker {w} {k}") for k in ("sessions", "bytes in", "bytes out", "handed over")}
        if None in got.values():
            errors.append(f"worker {w}: rows missing in GLOBAL_STATS ({got})")
            continue
        exp = per_worker[w]
        print(f"worker {w}: sessions {got['sessions']}, bytes in {got['bytes in']} (clients {exp['in']}), "
              f"bytes out {got['bytes out']} (clients {exp['out']}), handed over {got['handed over']}")
        if got["sessions"] != exp["sessions"]:
            errors.append(f"worker {w}: {got['sessions']} sessions, but {exp['sessions']} clients have its peer-ids")
        if got["bytes in"] != exp["in"] or got["bytes out"] != exp["out"]:
            errors.append(f"worker {w}: bytes in/out {got['bytes in']}/{got['bytes out']} differ from its clients' "
                          f"{exp['in']}/{exp['out']}: some traffic was handled by another worker")
    if n_workers >= 2:
        busy = [w for w in range(n_workers) if per_worker[w]["sessions"] > 0]
        if len(busy) < 2:
            errors.append(f"all sessions on worker(s) {busy}")
        for w in busy:
            if stats.get(f"Worker {w} bytes in", 0) == 0:
                errors.append(f"worker {w} has sessions but carried no traffic")
        handed = sum(stats.get(f"Worker {w} handed over", 0) for w in range(n_workers))
        if steering == "on" and handed != 0:
            errors.append(f"steering on, yet {handed} packets were handed over between workers")
        if steering == "off" and handed == 0:
            errors.append("steering off, yet nothing was handed over: the fallback was not exercised")
    for e in errors:
        print(e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
