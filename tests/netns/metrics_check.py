#!/usr/bin/env python3
"""Helpers of test_metrics.sh: a systemd notify socket to listen on, and Prometheus' HTTP API.
Standard library only.

    metrics_check.py notify-listen SOCKET LOG
        Bind a unix datagram socket at SOCKET (as systemd's NOTIFY_SOCKET) and append every
        datagram to LOG, one line per NAME=value field, each prefixed with the receive time in
        seconds ("12.345 READY=1"). Runs until killed.
    metrics_check.py query URL EXPR
        Run the instant query EXPR against the Prometheus server at URL (/api/v1/query) and
        print one line per series: its labels as k=v,... then its value. Exit 1 on an error
        answer, 2 when the result is empty.
    metrics_check.py expect URL EXPR...
        Each instant query EXPR (a PromQL filter such as 'x == 2') must return a series. Prints
        the ones that return none, with what the metric holds; exit 1 if any.
    metrics_check.py workers-match URL STATUS N_WORKERS
        Whether Prometheus' latest ovpnd_worker_{receive,transmit}_bytes_total of each worker
        equal the "Worker N bytes in/out" rows of the status file (status-version 1) and are
        above zero. Prints what it compared; exit 0 when all match, 1 otherwise.
"""
import json
import os
import socket
import sys
import time
import urllib.parse
import urllib.request


def notify_listen(path, log):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    os.chmod(path, 0o666)
    t0 = time.monotonic()
    with open(log, "a", buffering=1) as out:
        out.write("listening\n")
        while True:
            data = s.recv(4096)
            for field in data.decode("utf-8", "replace").split("\n"):
                if field:
                    out.write("%.3f %s\n" % (time.monotonic() - t0, field))


def query(url, expr):
    q = urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen("%s/api/v1/query?%s" % (url, q), timeout=5) as r:
        ans = json.load(r)
    if ans.get("status") != "success":
        raise SystemExit("query %s: %s" % (expr, ans))
    return [(item["metric"], item["value"][1]) for item in ans["data"]["result"]]


def cmd_query(url, expr):
    res = query(url, expr)
    for labels, value in res:
        print(",".join("%s=%s" % kv for kv in sorted(labels.items())), value)
    return 0 if res else 2


def expect(url, exprs):
    bad = 0
    for expr in exprs:
        if not query(url, expr):
            name = expr.split("{")[0].split(" ")[0]
            print("no series for %s; %s is %s" % (expr, name, query(url, name)))
            bad += 1
    return 1 if bad else 0


def status_workers(path):
    rows = {}
    for line in open(path, encoding="utf-8", errors="replace"):
        key, _, value = line.rstrip("\n").rpartition(",")
        if key.startswith("Worker ") and value.isdigit():
            rows[key] = int(value)
    return rows


def workers_match(url, status, n_workers):
    rows = status_workers(status)
    ok = True
    for metric, row in (("ovpnd_worker_receive_bytes_total", "bytes in"),
                        ("ovpnd_worker_transmit_bytes_total", "bytes out")):
        got = {labels.get("worker"): int(float(v)) for labels, v in query(url, metric)}
        for w in range(n_workers):
            want = rows.get("Worker %d %s" % (w, row))
            have = got.get(str(w))
            print("worker %d %s: status file %s, Prometheus %s" % (w, row, want, have))
            if want is None or have is None or want != have or want <= 0:
                ok = False
    return 0 if ok else 1


def main():
    cmd = sys.argv[1]
    if cmd == "notify-listen":
        notify_listen(sys.argv[2], sys.argv[3])
    elif cmd == "query":
        return cmd_query(sys.argv[2], sys.argv[3])
    elif cmd == "expect":
        return expect(sys.argv[2], sys.argv[3:])
    elif cmd == "workers-match":
        return workers_match(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        raise SystemExit("unknown command " + cmd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
