"""Read the UDP datagrams of a tcpdump capture. Standard library only; shared by the test
helpers in this directory (garbage.py, forge_session.py)."""
import struct


def udp_datagrams(path):
    """(sport, dport, payload) of each whole IPv4 UDP datagram in a classic pcap file (Ethernet
    or Linux cooked, either byte order), in capture order. Fragments are skipped; a file that
    cannot be read or is not classic pcap gives nothing."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return
    if len(data) < 24:
        return
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        endian = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        endian = ">"
    else:
        return  # pcapng or something else: not worth parsing here
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    if linktype == 1:
        l2 = 14
    elif linktype == 113:
        l2 = 16
    else:
        return
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(endian + "I", data[off + 8:off + 12])[0]
        frame = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if len(frame) < l2 + 20:
            continue
        ethertype = struct.unpack(">H", frame[l2 - 2:l2])[0]
        if ethertype != 0x0800:
            continue
        ip = frame[l2:]
        ihl = (ip[0] & 0x0F) * 4
        if ip[0] >> 4 != 4 or ip[9] != 17 or len(ip) < ihl + 8:
            continue
        frag = struct.unpack(">H", ip[6:8])[0]
        if frag & 0x3FFF:  # fragments: skip, the payload would be incomplete
            continue
        sport, dport, ulen = struct.unpack(">HHH", ip[ihl:ihl + 6])
        yield sport, dport, ip[ihl + 8:ihl + ulen]
