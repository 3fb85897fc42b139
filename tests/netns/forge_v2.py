#!/usr/bin/env python3
"""Send a tls-crypt-v2 client's first packet (P_CONTROL_HARD_RESET_CLIENT_V3) built from a
client key file, honest or not, and report whether the server answered.

    forge_v2.py --host ADDR --port N --key CLIENT-KEY --mode good|other-kc|truncated

good:      Kc and WKc of the key, as the stock 2.6 client sends them (the control case: the
           server must answer this one)
other-kc:  the key's WKc with the packet wrapped by another, random Kc: a WKc lifted from
           another client's packet
truncated: the honest packet with 40 bytes cut from the middle of its WKc (its trailing
           length kept)

Layouts: tls-crypt (the client sends with key[1]: AES key bytes 128..159, HMAC key 192..223 of
Kc), byte0 || session id || packet id 0x0f000001 (early negotiation) || time || tag || AES-CTR(
ack count 0 || message id 0) || WKc; see doc "openvpn-protocol.md" 3.3, 3.4, 3.6. Exit status 0
when the server answered (the packet is sent up to three times, 2 s apart), 3 when it
did not, 2 on a usage error.
"""
import argparse
import base64
import hashlib
import hmac
import os
import socket
import struct
import sys
import time

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


def read_key(path):
    lines = open(path).read().split("\n")
    body = [l.strip() for l in lines if l.strip() and not l.startswith("-----")]
    raw = base64.b64decode("".join(body))
    return raw[:256], raw[256:]


def wrap(kc, byte0, sid, body):
    ke, ka = kc[128:160], kc[192:224]
    hdr = bytes([byte0]) + sid + struct.pack(">II", 0x0F000001, int(time.time()))
    tag = hmac.new(ka, hdr + body, hashlib.sha256).digest()
    enc = Cipher(algorithms.AES(ke), modes.CTR(tag[:16])).encryptor()
    return hdr + tag + enc.update(body) + enc.finalize()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--mode", choices=["good", "other-kc", "truncated"], required=True)
    ap.add_argument("--flood", type=float, default=0,
                    help="instead: send the packet for this many seconds from --sources source "
                         "ports, as fast as the loop goes (a replayed reset flood)")
    ap.add_argument("--sources", type=int, default=256)
    args = ap.parse_args()

    kc, wkc = read_key(args.key)
    if args.mode == "other-kc":
        kc = os.urandom(256)
    if args.mode == "truncated":
        wkc = wkc[:100] + wkc[140:]
    pkt = wrap(kc, 10 << 3, os.urandom(8), b"\x00" + struct.pack(">I", 0)) + wkc
    if args.flood > 0:
        socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(args.sources)]
        for x in socks:
            x.setblocking(False)
        end, n, i = time.monotonic() + args.flood, 0, 0
        while time.monotonic() < end:
            for _ in range(64):
                try:
                    socks[i % len(socks)].sendto(pkt, (args.host, args.port))
                    n += 1
                except (BlockingIOError, OSError):
                    pass
                i += 1
        print(f"{args.mode}: flooded {n} packets from {len(socks)} ports")
        return 0
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2.0)
    for _ in range(3):  # UDP: a datagram may be lost; the same packet up to three times
        s.sendto(pkt, (args.host, args.port))
        try:
            data, _ = s.recvfrom(2048)
        except socket.timeout:
            continue
        print(f"{args.mode}: answered, {len(data)} bytes, opcode {data[0] >> 3}")
        return 0
    print(f"{args.mode}: no answer")
    return 3


if __name__ == "__main__":
    sys.exit(main())
