#!/usr/bin/env python3
"""Move one file over one TCP connection, for the tunnel transfer test. Standard library only.

    tcpxfer.py listen  --bind ADDR --port N --ready FILE (--send FILE | --recv FILE) [--timeout S]
    tcpxfer.py connect --host ADDR --port N             (--send FILE | --recv FILE) [--timeout S]

`listen` accepts exactly one connection (it touches --ready once it is listening); the side with
--send writes the whole file then shuts down its write half, the side with --recv stores
everything until EOF. Every socket operation has a timeout and the whole run a deadline, so a
stalled tunnel makes this fail rather than hang. Prints one summary line; checksums are left
to the caller (sha256sum of both files), so this script cannot vouch for itself.
"""
import argparse
import os
import socket
import sys
import time

CHUNK = 64 * 1024


def send_file(sock, path, deadline, rate=0.0):
    n = 0
    t0 = time.monotonic()
    with open(path, "rb") as f:
        while True:
            buf = f.read(CHUNK)
            if not buf:
                break
            view = memoryview(buf)
            while view:
                if time.monotonic() > deadline:
                    raise TimeoutError("deadline passed while sending")
                k = sock.send(view)
                view = view[k:]
                n += k
            if rate > 0:  # pace the sender: n bytes may not leave before n / rate seconds
                ahead = t0 + n / rate - time.monotonic()
                if ahead > 0:
                    time.sleep(ahead)
    sock.shutdown(socket.SHUT_WR)
    # Wait for the peer to close so that every byte is known to be consumed.
    while sock.recv(CHUNK):
        pass
    return n


def recv_file(sock, path, deadline):
    n = 0
    with open(path, "wb") as f:
        while True:
            if time.monotonic() > deadline:
                raise TimeoutError("deadline passed while receiving")
            buf = sock.recv(CHUNK)
            if not buf:
                break
            f.write(buf)
            n += len(buf)
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("listen", "connect"))
    ap.add_argument("--bind")
    ap.add_argument("--host")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--ready")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--send")
    g.add_argument("--recv")
    ap.add_argument("--timeout", type=float, default=120.0, help="whole-run deadline, seconds")
    ap.add_argument("--rate", type=float, default=0.0, help="send at most this many bytes/s")
    a = ap.parse_args()

    deadline = time.monotonic() + a.timeout
    io_timeout = min(30.0, a.timeout)
    start = time.monotonic()
    if a.mode == "listen":
        if not a.bind or not a.ready:
            ap.error("listen needs --bind and --ready")
        family = socket.AF_INET6 if ":" in a.bind else socket.AF_INET
        ls = socket.socket(family, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind((a.bind, a.port))
        ls.listen(1)
        ls.settimeout(a.timeout)
        with open(a.ready, "w") as f:
            f.write("%d\n" % os.getpid())
        sock, peer = ls.accept()
        ls.close()
    else:
        if not a.host:
            ap.error("connect needs --host")
        sock = socket.create_connection((a.host, a.port), timeout=io_timeout)
        peer = (a.host, a.port)
    sock.settimeout(io_timeout)
    try:
        if a.send:
            n = send_file(sock, a.send, deadline, a.rate)
            what = "sent"
        else:
            n = recv_file(sock, a.recv, deadline)
            what = "received"
    finally:
        sock.close()
    secs = max(time.monotonic() - start, 1e-6)
    print("tcpxfer %s: %s %d bytes with %s:%d in %.1f s (%.1f MB/s)"
          % (a.mode, what, n, peer[0], peer[1], secs, n / secs / 1e6))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, TimeoutError) as e:
        print("tcpxfer: %s" % e, file=sys.stderr)
        sys.exit(1)
