#!/usr/bin/env python3
"""Send a bounded stream of junk UDP datagrams at an OpenVPN server. Standard library only.

    garbage.py --host ADDR --port N [--count 10000] [--pcap FILE] [--seed N]
               [--rate PPS] [--max-seconds S] [--from-port SPORT]

Mix of datagrams (lengths 0..1600):
  random      random bytes of random length, including empty datagrams
  lookalike   a plausible first byte (0x38 hard reset, 0x48 P_DATA_V2, 0x20 P_CONTROL_V1,
              0x28 P_ACK_V1, and the other key ids) followed by random bytes
  short       a plausible first byte followed by 0..64 random bytes (header-boundary lengths)
  truncated   a prefix of a real OpenVPN packet read from --pcap (from a tcpdump capture)
  flipped     a real packet with 1..4 random bytes changed (never the full original)
  replayed    a real packet unchanged
When no real packets are available the last three kinds are left out.

With --from-port the datagrams leave from UDP port SPORT of this namespace's address through a
raw socket (root only), so they come from a real client's own address and port while its socket
on that port is left alone: junk in the client's name, as anyone on its path can send.

The count and the time are both bounded; it sends at most --rate datagrams per second and stops
at --max-seconds whatever happens. Prints a one-line summary per kind.
"""
import argparse
import random
import socket
import struct
import sys
import time

from pcap_udp import udp_datagrams

OPCODE_BYTES = [0x38, 0x48, 0x20, 0x28]
MAX_LEN = 1600


def read_pcap_udp_payloads(path, port):
    """UDP payloads (2 bytes or more) to or from `port` in a classic pcap file."""
    return [p for s, d, p in udp_datagrams(path) if port in (s, d) and len(p) >= 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--pcap")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--rate", type=float, default=4000.0, help="datagrams per second, at most")
    ap.add_argument("--max-seconds", type=float, default=30.0)
    ap.add_argument("--from-port", type=int, default=None,
                    help="send from this UDP source port through a raw socket")
    a = ap.parse_args()
    if a.count < 0 or a.count > 1000000 or a.rate <= 0:
        ap.error("bad --count or --rate")
    if a.from_port is not None and not 0 < a.from_port < 65536:
        ap.error("bad --from-port")

    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1 << 32)
    rng = random.Random(seed)
    real = read_pcap_udp_payloads(a.pcap, a.port) if a.pcap else []

    def rand_bytes(n):
        return rng.randbytes(n)

    def lookalike():
        first = rng.choice(OPCODE_BYTES) | rng.choice([0, 0, 0, 1, 2, 7])
        return bytes([first]) + rand_bytes(rng.randrange(0, MAX_LEN))

    def make(kind):
        if kind == "random":
            return rand_bytes(rng.randrange(0, MAX_LEN + 1))
        if kind == "lookalike":
            return lookalike()
        if kind == "short":
            return bytes([rng.choice(OPCODE_BYTES)]) + rand_bytes(rng.randrange(0, 65))
        if kind == "truncated":
            p = rng.choice(real)
            return p[:rng.randrange(0, len(p))]
        if kind == "flipped":
            p = bytearray(rng.choice(real))
            for _ in range(rng.randrange(1, 5)):
                i = rng.randrange(0, len(p))
                p[i] ^= rng.randrange(1, 256)
            return bytes(p)
        if kind == "replayed":
            return rng.choice(real)
        raise ValueError(kind)

    kinds = ["random", "lookalike", "short"] + (["truncated", "flipped", "replayed"] if real else [])
    weights = [3, 3, 1] + ([3, 2, 1] if real else [])
    sent = {k: 0 for k in kinds}
    errors = 0
    if a.from_port is None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

        def send(pkt):
            sock.sendto(pkt, (a.host, a.port))
    else:
        sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP)

        def send(pkt):
            # the kernel writes the IP header; ours is the UDP header (checksum 0: none, RFC 768)
            sock.sendto(struct.pack(">HHHH", a.from_port, a.port, 8 + len(pkt), 0) + pkt,
                        (a.host, 0))
    start = time.monotonic()
    deadline = start + a.max_seconds
    interval = 1.0 / a.rate
    for n in range(a.count):
        now = time.monotonic()
        if now > deadline:
            break
        due = start + n * interval
        if due > now:
            time.sleep(due - now)
        kind = rng.choices(kinds, weights)[0]
        pkt = make(kind)
        try:
            send(pkt)
            sent[kind] += 1
        except OSError:
            # e.g. ECONNREFUSED from an earlier ICMP error; keep going, count it
            errors += 1
    secs = time.monotonic() - start
    total = sum(sent.values())
    print("garbage: seed %d, %d real packets to mutate, sent %d datagrams in %.1f s (%d send errors)"
          % (seed, len(real), total, secs, errors))
    for k in kinds:
        print("garbage:   %-10s %d" % (k, sent[k]))
    return 0 if total + errors >= a.count else 1


if __name__ == "__main__":
    sys.exit(main())
