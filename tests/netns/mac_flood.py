#!/usr/bin/env python3
"""Send Ethernet frames from ever new source MACs out of a tap device. Standard library only.

    mac_flood.py --dev DEV --prefix 02:66 [--rate FPS] [--seconds S]

Each frame is a broadcast ARP request whose source MAC is PREFIX followed by a counter, so no
two frames share a source: what a client behind a bridge, or one trying to fill the server's
MAC table, sends. Run it in a client's namespace on its tap device (root: a packet socket).
Both the rate and the time are bounded. Prints how many frames it sent.
"""
import argparse
import socket
import struct
import time


def frame(src):
    arp = struct.pack("!HHBBH", 1, 0x0800, 6, 4, 1) + src + bytes(4) + bytes(6) + bytes(4)
    return b"\xff" * 6 + src + b"\x08\x06" + arp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dev", required=True)
    ap.add_argument("--prefix", default="02:66")
    ap.add_argument("--rate", type=float, default=2000)
    ap.add_argument("--seconds", type=float, default=3)
    a = ap.parse_args()
    prefix = bytes(int(x, 16) for x in a.prefix.split(":"))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((a.dev, 0))
    start = time.monotonic()
    n = 0
    while time.monotonic() - start < a.seconds:
        src = prefix + n.to_bytes(6 - len(prefix), "big")
        try:
            s.send(frame(src))
        except OSError:
            pass  # the device's queue is full: that frame is lost, as on a busy bridge
        n += 1
        ahead = n / a.rate - (time.monotonic() - start)
        if ahead > 0:
            time.sleep(ahead)
    print(f"mac_flood: {n} frames from {n} source MACs in {time.monotonic() - start:.1f} s")


if __name__ == "__main__":
    main()
