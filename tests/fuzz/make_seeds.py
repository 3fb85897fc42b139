#!/usr/bin/env python3
"""Write the starting corpus of the fuzz targets (tests/fuzz/corpus/NAME/seed-*).

usage: tests/fuzz/make_seeds.py [CORPUS_DIR]   (default: tests/fuzz/corpus beside this file)

Each seed is a well-formed input in the layout its target reads (see the comment at the top of
each tests/fuzz/fuzz_*.c), so the fuzzer starts from packets that get deep
into the code. Inputs the fuzzer finds worth keeping (scripts/fuzz.sh --merge) and inputs that
once found a bug (named found-WHAT) are added beside these under other names.
"""
import os
import re
import struct
import sys


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def tcp_segment(family, seq, payload, flags=0x10, ack=1000, window=502, options=b"",
                ip_id=1, df=True, src_port=40000, dst_port=5201):
    doff = (20 + len(options)) // 4
    tcp = struct.pack("!HHIIBBHHH", src_port, dst_port, seq, ack, doff << 4, flags, window, 0,
                      0) + options + payload
    if family == 4:
        src, dst = bytes([198, 19, 0, 2]), bytes([198, 19, 0, 1])
        pseudo = src + dst + struct.pack("!BBH", 0, 6, len(tcp))
        c = 0xFFFF - csum(pseudo + tcp)
        tcp = tcp[:16] + struct.pack("!H", c) + tcp[18:]
        total = 20 + len(tcp)
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, ip_id, 0x4000 if df else 0, 64, 6, 0,
                         src, dst)
        ip = ip[:10] + struct.pack("!H", 0xFFFF - csum(ip)) + ip[12:]
        return ip + tcp
    src = bytes.fromhex("fd000000000000000000000000000002")
    dst = bytes.fromhex("fd000000000000000000000000000001")
    pseudo = src + dst + struct.pack("!I3xB", len(tcp), 6)
    c = 0xFFFF - csum(pseudo + tcp)
    tcp = tcp[:16] + struct.pack("!H", c) + tcp[18:]
    ip = struct.pack("!IHBB16s16s", 0x60000000, len(tcp), 6, 64, src, dst)
    return ip + tcp


def records(packets, batch_end_every=0):
    out = b""
    for i, p in enumerate(packets):
        hi = (len(p) >> 8) & 0x07
        if batch_end_every and (i + 1) % batch_end_every == 0:
            hi |= 0x80
        out += bytes([len(p) & 0xFF, hi]) + p
    return out


def flow(family, n, mss, start=1, **kw):
    pkts, seq = [], start
    for i in range(n):
        size = mss if i < n - 1 else mss // 2
        flags = 0x18 if i == n - 1 else 0x10
        pkts.append(tcp_segment(family, seq, bytes((seq + j) & 0xFF for j in range(size)),
                                flags=flags, ip_id=7 + i, **kw))
        seq += size
    return pkts


def vnet(flags, gso_type, hdr_len, gso_size, csum_start, csum_offset):
    return struct.pack("=BBHHHH", flags, gso_type, hdr_len, gso_size, csum_start, csum_offset)


def super_packet(family, payload_len, gso_size):
    seg = tcp_segment(family, 5000, bytes(i & 0xFF for i in range(payload_len)), flags=0x18,
                      options=b"\x01\x01\x08\x0a" + bytes(8))
    iphl = 20 if family == 4 else 40
    return vnet(1, 1 if family == 4 else 4, iphl + 32, gso_size, iphl, 16) + seg


def tunnel_seeds():
    mss_syn = tcp_segment(4, 1, b"", flags=0x02, options=b"\x02\x04\x05\xb4\x01\x03\x03\x07")
    mss_syn6 = tcp_segment(6, 1, b"", flags=0x02, options=b"\x02\x04\x05\xa0\x04\x02\x00\x00")
    a = flow(4, 6, 1200)
    b = flow(4, 5, 1000, src_port=40001, window=100)
    interleaved = [p for pair in zip(a, b) for p in pair]
    ping = b"\x2a\x18\x7b\xf3\x64\x1e\xb4\xcb\x07\xed\x2d\x0a\x98\x1f\xc7\x48"
    return {
        "seed-flow-ipv4": b"\0" + records(flow(4, 8, 1300)),
        "seed-flow-ipv6": b"\0" + records(flow(6, 6, 1280)),
        "seed-two-flows": b"\0" + records(interleaved, batch_end_every=4),
        "seed-syn-mss": b"\0" + records([mss_syn, mss_syn6, ping] + flow(4, 3, 1400)),
        "seed-no-df": b"\0" + records(flow(4, 4, 1300, df=False)),
        "seed-tun-tso4": b"\1" + super_packet(4, 4000, 1348),
        "seed-tun-tso6": b"\1" + super_packet(6, 3000, 1328),
        "seed-tun-csum": b"\1" + vnet(1, 0, 0, 0, 20, 16) + tcp_segment(4, 9, b"hello" * 40),
    }


def control_packet(opcode, sid, message_id, payload=b"", acks=(), remote_sid=b""):
    out = bytes([opcode << 3]) + sid + bytes([len(acks)])
    for a in acks:
        out += struct.pack("!I", a)
    if acks:
        out += remote_sid
    if opcode != 5:
        out += struct.pack("!I", message_id)
    return out + payload


def length_records(packets):
    return b"".join(bytes([len(p) & 0xFF]) + p for p in packets)


def key_method2_message():
    def s(text):
        b = text.encode() + b"\0"
        return struct.pack("!H", len(b)) + b

    return (bytes(4) + b"\x02" + bytes(range(48)) + bytes(range(32)) + bytes(range(32, 64)) +
            s("V4,dev-type tun,link-mtu 1559,tun-mtu 1500,proto UDPv4,cipher AES-256-GCM,"
              "auth [null-digest],keysize 256,key-method 2,tls-client") + s("user") +
            s("password") +
            s("IV_VER=2.6.14\nIV_PLAT=linux\nIV_PROTO=990\nIV_NCP=2\n"
              "IV_CIPHERS=AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305\nIV_MTU=1600\n"))


def control_seeds():
    sid, rsid = bytes(range(1, 9)), bytes(range(9, 17))
    pkts = [
        control_packet(7, sid, 0),
        control_packet(4, sid, 2, b"\x16\x03\x01" + bytes(40), acks=(0,), remote_sid=rsid),
        control_packet(4, sid, 1, b"\x16\x03\x01" + bytes(60), acks=(1, 2), remote_sid=rsid),
        control_packet(5, sid, 0, acks=(0, 1, 2), remote_sid=rsid),
        control_packet(4, sid, 3, b"x" * 100),
        control_packet(4, sid, 2, b"\x16\x03\x01" + bytes(40)),
    ]
    token = "SESS_ID_AT_" + "A" * 80
    return {
        "seed-reliable": b"\0" + length_records(pkts),
        "seed-key-method2": b"\1" + key_method2_message(),
        "seed-messages": b"\2" + b"PUSH_REQUEST\0EXIT\r\n\0INFO,hello\0AUTH_FAILED,x\0PUSH_",
        "seed-token": b"\3" + token.encode(),
        "seed-wrapped": b"\4" + b"\x38" + sid + bytes(100),
    }


def replay_record(mode, value):
    return bytes([mode]) + struct.pack("<I", value & 0xFFFFFFFF)


def replay_seeds():
    def absolute(ids, failed=()):
        return b"".join(replay_record(1 | (2 if i in failed else 0), i) for i in ids)

    in_order = list(range(1, 80))
    shuffled = [1, 3, 2, 2, 10, 5, 4, 9, 200, 137, 136, 150, 150, 70]
    return {
        "seed-window-64": struct.pack("<H", 64) + absolute(in_order + shuffled, failed=(9,)),
        "seed-strict": struct.pack("<H", 0) + absolute([5, 6, 8, 7, 6, 7, 9]),
        "seed-clamped": struct.pack("<H", 1100) + absolute([3000, 1000, 1976, 1977, 2999]),
        "seed-near-wrap": struct.pack("<H", 64) + absolute([0xFFFFFFF0, 0xFFFFFFFF, 0xFFFFFFC0]),
        "seed-relative": struct.pack("<H", 32) +
        b"".join(replay_record(0, 1024 + d) for d in (1, 5, -3, -3, 2, -40, 7)),
    }


def config_seeds(root):
    seeds = {}
    for name, path in (("seed-sample", "sample-config/server.conf"),
                       ("seed-inline", "tests/unit/data/config/inline.conf")):
        with open(os.path.join(root, path), "rb") as f:
            # the sample shows the usual private subnets as text; tests use 198.19.0.0/16 only
            seeds[name] = re.sub(rb"\b(10\.8|192\.168)\.", b"198.19.", f.read())

    seeds["seed-directives"] = (
        b"dev tun\nproto udp6\nport 1194\ntopology subnet\nserver 198.19.0.0 255.255.0.0\n"
        b"server-ipv6 fd00:1::/64\npush \"route 198.19.0.0 255.255.0.0\"\n"
        b"keepalive 10 60\ndata-ciphers AES-256-GCM:CHACHA20-POLY1305\n"
        b"tls-groups X25519:secp256r1\ntls-cipher TLS-ECDHE-ECDSA-WITH-AES-256-GCM-SHA384\n"
        b"verify-client-cert optional\nauth-gen-token 3600 0 external-auth\n"
        b"client-config-dir ccd\nifconfig-pool-persist ipp.txt 60\nmssfix 1400 mtu\n"
        b"max-clients 1000\nconnect-freq 10 20\nreplay-window 128 15\nworkers 2\n"
        b"--verb 4\n;comment\n# comment\n")
    return seeds


def ccd_seeds():
    return {
        "seed-ccd": b"\0ifconfig-push 198.19.0.10 255.255.255.0\n"
                    b"ifconfig-ipv6-push fd00:1::10/64 fd00:1::1\niroute 198.19.8.0 255.255.255.0\n"
                    b"iroute-ipv6 fd00:2::/64\npush \"route 198.19.9.0 255.255.255.0\"\n"
                    b"push-reset\npush-remove route\n# comment\n",
        "seed-ccd-disable": b"\0disable\n",
        "seed-ipp": b"\1client1,198.19.0.2,fd00:1::1000\nclient2,198.19.0.3,\n"
                    b"client3,,fd00:1::1002\r\n\n# x\nbad\n",
    }


def aead_seeds():
    def one(cipher, aad_len, flip, text):
        return (bytes([cipher]) + bytes(range(32)) + bytes(range(100, 112)) + bytes([aad_len]) +
                struct.pack("!H", flip) + bytes(range(aad_len)) + text)

    return {
        "seed-aes128-packet": one(0, 8, 3, bytes(range(200))),
        "seed-aes256-empty": one(1, 8, 1000, b""),
        "seed-chacha-long": one(2, 12, 777, bytes(i & 0xFF for i in range(1500))),
        # the top bit: CBC + HMAC (cipher = low bits % 6; digest = first nonce byte % 5: SHA1 here)
        "seed-cbc-aes256": one(0x82, 0, 5, bytes(range(100))),
        "seed-cbc-camellia128-empty": one(0x83, 0, 70, b""),
        "seed-cbc-aes128-long": one(0x80, 0, 999, bytes(i & 0xFF for i in range(1400))),
    }


def worker_decide_seeds():
    # Header: 2 workers, 4 peers each, client-to-client on, AES-128-GCM; then 4-byte events.
    hdr = bytes([1, 3, 1])

    def ev(*events):
        return hdr + b"".join(bytes(e) for e in events)

    def send(client, key_id, len_byte, worker, addr):
        return (3 + 10 * key_id, client, len_byte, worker | addr << 2)

    def install(client, peer_id):
        return (0, client, peer_id, 0)

    seeds = {
        "seed-basic": ev(install(0, 0), install(1, 1), send(0, 0, 20, 0, 0), send(1, 0, 30, 0, 1),
                         (4, 0, 0, 0), (134, 0, 5, 0), (5, 0, 40, 0), (5, 1, 44, 1)),
        "seed-float": ev(install(0, 0), send(0, 0, 20, 0, 2), send(0, 0, 20, 0, 2), (7, 0, 15, 0),
                         send(0, 0, 20, 0, 2), (6, 0, 0, 2 << 2), send(0, 0, 20, 0, 2),
                         (7, 0, 60, 0), send(0, 0, 20, 0, 2), (6, 0, 1, 2 << 2),
                         send(0, 0, 20, 0, 2), send(0, 0, 20, 0, 0)),
        "seed-rekey": ev(install(0, 0), (2, 0, 1, 0), send(0, 1, 20, 0, 0), send(0, 0, 20, 0, 0),
                         (2, 0, 2, 0), send(0, 0, 20, 0, 0), send(0, 2, 20, 0, 0),
                         send(0, 1, 20, 0, 0)),
        "seed-retire": ev(install(0, 0), (2, 0, 1, 0), send(0, 1, 20, 0, 0), (132, 0, 0, 0),
                          send(0, 0, 20, 0, 0), (132, 0, 1, 0), send(0, 1, 20, 0, 0),
                          (2, 0, 2, 0), send(0, 2, 20, 0, 0), install(1, 1), (2, 1, 1, 0),
                          (132, 1, 1, 0), send(1, 1, 20, 1, 1), send(1, 0, 20, 1, 1)),
        "seed-c2c": ev(install(0, 0), install(1, 1), install(2, 2), (9, 1, 1, 0), (9, 2, 2, 0),
                       (9, 3, 5, 0), send(0, 0, 17, 0, 0), send(0, 0, 18, 0, 0),
                       send(0, 0, 19, 0, 0), (8, 0, 1, 0), (1, 1, 0, 0), (8, 0, 1, 0),
                       send(0, 0, 17, 0, 0)),
    }
    # the same with AES-128-CBC (cipher index 3 in the third header byte)
    for name in ("seed-basic", "seed-rekey", "seed-float"):
        data = seeds[name]
        seeds[name.replace("seed-", "seed-cbc-")] = data[:2] + bytes([data[2] | 3 << 1]) + data[3:]
    return seeds


def acceptor_decide_seeds():
    # Header: hand-window 60 s, max-clients 4 (1 for seed-max-clients), tls-auth on; then
    # 4-byte events.
    def ev(*events, hdr=bytes([59, 3, 1])):
        return hdr + b"".join(bytes(e) for e in events)

    def reset(addr, sid):
        return (0, addr | sid << 2, 0, 0)

    def echo(cookie_ix, opcode_ack=0, wrap_hi=2):
        return (1, 0, cookie_ix, 0x80 | wrap_hi | opcode_ack)

    return {
        "seed-handshake": ev(reset(0, 0), echo(0), (2, 0, 5, 3), (2, 0, 5, 3), (2, 0, 6, 3),
                             (2, 0, 7, 0x83), reset(1, 1), (3, 0, 200, 0), echo(1),
                             reset(2, 2), (0, 2 | 2 << 2, 0x9F, 0), echo(2, 1)),
        "seed-float": ev(reset(0, 0), echo(0), reset(1, 1), echo(1), (5, 0, 0, 1), (5, 1, 1, 1),
                         (7, 0, 1, 0), (6, 1, 0, 0), reset(1, 1), echo(2), (5, 1, 0, 1),
                         (7, 0, 1, 0), (7, 0, 2, 0)),
        "seed-max-clients": ev(reset(0, 0), echo(0), reset(1, 1), echo(1), reset(0, 2), echo(2),
                               (4, 0, 1, 0), reset(3, 3), (1, 3 | 3 << 2, 0, 0x12),
                               hdr=bytes([9, 0, 0])),
        "seed-first-look": ev((8, 0x48, 0, 1), (71, 0x48, 0, 5, ), (98, 0x4A, 1, 2),
                              (26, 0x30, 0, 0), (53, 0x38, 0, 0), (80, 0xF8, 0, 0)),
    }


def lz4_len_ext(n):
    """LZ4 length extension bytes for a length field that went past 15."""
    out = b""
    while n >= 255:
        out += b"\xff"
        n -= 255
    return out + bytes([n])


def lz4_block(literal, match_offset=0, match_len=0, tail=b"ABCDE"):
    """One LZ4 block: literal, then (match_len > 0) a match of match_len bytes at match_offset
    back, then the tail as the last, literal-only, sequence."""
    out = b""
    if match_len:
        ll, ml = len(literal), match_len - 4
        out += bytes([(min(ll, 15) << 4) | min(ml, 15)])
        out += lz4_len_ext(ll - 15) if ll >= 15 else b""
        out += literal + struct.pack("<H", match_offset)
        out += lz4_len_ext(ml - 15) if ml >= 15 else b""
        literal = tail
    ll = len(literal)
    out += bytes([min(ll, 15) << 4]) + (lz4_len_ext(ll - 15) if ll >= 15 else b"") + literal
    return out


def comp_seeds():
    # selector byte: framing (0 none, 1 comp-lzo no, 2 stub-v2, 3 stub, 4 lzo, 5 lz4, 6 lz4-v2),
    # bit 7: no room around the payload
    http = b"E" + b"GET /index.html HTTP/1.1 Host: a.b "[1:]
    text = lz4_block(http, len(http), 900)
    bomb = lz4_block(b"A", 1, 60000)
    swap = lambda b: b"\x69" + b[1:] + b[:1]
    lzo_literals = bytes([17 + len(http)]) + http + b"\x11\x00\x00"  # literal run, end marker
    return {
        "seed-lz4v2-text": b"\x06\x50\x01" + text,
        "seed-lz4v2-bomb": b"\x06\x50\x01" + bomb,
        "seed-lz4-swap-text": b"\x05" + swap(text),
        "seed-lz4-swap-bomb": b"\x05" + swap(bomb),
        "seed-lzo-literals": b"\x04\x66" + lzo_literals,
        "seed-stub-swap": b"\x03\xfb\x00\x00\x54\x12\x34\x45",
        "seed-tight-swap": b"\x83\xfb\x00\x00\x54\x12\x34\x45",
        "seed-v2-escaped": b"\x02\x50\x00\x50\x01\x02",
        "seed-lzo-stub": b"\x01\xfa\x45\x00\x00\x14",
        "seed-none": b"\x00" + http,
    }


def fragment_seeds():
    # [max_len selector: 2048, 1000, 100, 4][time step (x 500 ms)][length (2 bytes)][bytes]...
    def hdr(t, seq=0, fid=0, size=0):
        v = t | seq << 2 | fid << 10 | ((size // 4) << 15 if t == 2 else 0)
        return struct.pack(">I", v)

    def rec(body, step=0):
        return bytes([step]) + struct.pack(">H", len(body)) + body

    ip = bytes([0x45]) + bytes(range(1, 100))
    two = rec(hdr(1, 1, 0) + ip) + rec(hdr(2, 1, 1, 100) + b"tail")
    return {
        "seed-whole": b"\x00" + rec(hdr(0) + ip),
        "seed-two-pieces": b"\x00" + two,
        "seed-out-of-order": b"\x00" + rec(hdr(2, 9, 1, 100) + b"tail") + rec(hdr(1, 9, 0) + ip),
        "seed-timeout": b"\x00" + rec(hdr(1, 3, 0) + ip) + rec(hdr(2, 3, 1, 100) + b"tail", 21),
        "seed-overflow": b"\x02" + rec(hdr(2, 4, 31, 65532) + b"x" * 8),
        "seed-window": b"\x01" + rec(hdr(1, 250, 0) + ip) + rec(hdr(1, 5, 0) + ip) +
                       rec(hdr(2, 250, 1, 100) + b"tail"),
    }


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    corpus = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus")
    for target, seeds in (("fuzz_tunnel", tunnel_seeds()), ("fuzz_control", control_seeds()),
                          ("fuzz_replay", replay_seeds()),
                          ("fuzz_config", config_seeds(os.path.dirname(os.path.dirname(here)))),
                          ("fuzz_ccd", ccd_seeds()), ("fuzz_aead", aead_seeds()),
                          ("fuzz_worker_decide", worker_decide_seeds()),
                          ("fuzz_acceptor_decide", acceptor_decide_seeds()),
                          ("fuzz_comp", comp_seeds()), ("fuzz_fragment", fragment_seeds())):
        d = os.path.join(corpus, target)
        os.makedirs(d, exist_ok=True)
        for name, data in seeds.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
