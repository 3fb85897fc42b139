#!/usr/bin/env python3
"""Send a burst of junk OpenVPN-looking datagrams, as fast as the loop goes, from many source
ports (so that a SO_REUSEPORT group without its steering program spreads them over every
socket). Standard library only.

    junk_flood.py --host ADDR --port N --count N [--size BYTES] [--sources K] [--peer-id ID ...]

Every other datagram starts like a control packet (P_CONTROL_HARD_RESET_CLIENT_V2 or
P_CONTROL_V1, key id 0), the others like P_DATA_V2 for one of the given peer-ids (default 1);
the rest of each of the --size bytes is random. 64 distinct datagrams are made up front and sent
in turn. Prints what it sent; exit status 0 when all --count went out (send errors such as a
full socket buffer are counted, not retried).
"""
import argparse
import os
import socket
import sys
import time

P_CONTROL_HARD_RESET_CLIENT_V2 = 7
P_CONTROL_V1 = 4
P_DATA_V2 = 9


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--size", type=int, default=1400)
    ap.add_argument("--sources", type=int, default=64)
    ap.add_argument("--peer-id", type=int, action="append")
    a = ap.parse_args()
    if not 0 < a.count <= 10000000 or not 8 <= a.size <= 1472 or not 0 < a.sources <= 1024:
        ap.error("bad --count, --size or --sources")
    peer_ids = a.peer_id or [1]

    made = []
    for i in range(64):
        if i % 2:
            pid = peer_ids[(i // 2) % len(peer_ids)] & 0xFFFFFF
            head = bytes([P_DATA_V2 << 3, pid >> 16, (pid >> 8) & 0xFF, pid & 0xFF])
        else:
            op = P_CONTROL_HARD_RESET_CLIENT_V2 if i % 4 == 0 else P_CONTROL_V1
            head = bytes([op << 3])
        made.append(head + os.urandom(a.size - len(head)))
    socks = []
    for _ in range(a.sources):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("0.0.0.0", 0))
        s.connect((a.host, a.port))
        socks.append(s)
    sent = errors = 0
    start = time.monotonic()
    for n in range(a.count):
        try:
            socks[n % a.sources].send(made[n % 64])
            sent += 1
        except OSError:
            errors += 1  # e.g. ECONNREFUSED from an ICMP error, ENOBUFS
    secs = time.monotonic() - start
    print("junk_flood: %d datagrams of %d bytes from %d ports in %.2f s (%d send errors)"
          % (sent, a.size, a.sources, secs, errors))
    return 0 if sent + errors == a.count else 1


if __name__ == "__main__":
    sys.exit(main())
