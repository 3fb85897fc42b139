"""What 802.1Q VLAN devices on a tap device would do, for tests on kernels without them
(CONFIG_VLAN_8021Q): VLAN-aware switching between one trunk port and access ports.

    vlan_switch.py TRUNK VID=PORT [VID=PORT ...]    (VID "untagged": the trunk's native VLAN)

A frame that arrives on TRUNK (the server's tap device: written into it by the server) tagged
with VID leaves on that VID's PORT untagged; a frame that arrives on PORT leaves on TRUNK
tagged with its VID (priority 0). With an "untagged" port, untagged frames go between it and
TRUNK as they are (they reach TRUNK's own stack too). Frames of other VIDs on TRUNK are left
to the kernel (which drops them). The kernel
takes the tag off a received frame before a packet socket sees it, so the VID is read from the
socket's auxiliary data. Prints "ready" once every socket is bound, then one line per frame it
leaves alone. Standard library only; runs until killed."""
import select
import socket
import struct
import sys

ETH_P_ALL = 3
SOL_PACKET = 263
PACKET_AUXDATA = 8
PACKET_OUTGOING = 4
TP_STATUS_VLAN_VALID = 1 << 4
AUXDATA = struct.Struct("IIIHHHH")  # struct tpacket_auxdata


def bind(ifname):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
    s.bind((ifname, 0))
    return s


def vid_of(ancillary):
    """The VID of a received frame's tag, or None when it had none."""
    for level, kind, data in ancillary:
        if level == SOL_PACKET and kind == PACKET_AUXDATA and len(data) >= AUXDATA.size:
            status, _, _, _, _, tci, _ = AUXDATA.unpack(data[: AUXDATA.size])
            if status & TP_STATUS_VLAN_VALID:
                return tci & 0x0FFF
    return None


def main():
    trunk = bind(sys.argv[1])
    ports = {}  # vid -> socket
    vid_by_fd = {}
    for arg in sys.argv[2:]:
        vid, name = arg.split("=", 1)
        vid = None if vid == "untagged" else int(vid)
        s = bind(name)
        ports[vid] = s
        vid_by_fd[s.fileno()] = vid
    poll = select.poll()
    poll.register(trunk, select.POLLIN)
    for s in ports.values():
        poll.register(s, select.POLLIN)
    print("ready", flush=True)
    while True:
        for fd, _ in poll.poll():
            if fd == trunk.fileno():
                data, anc, _, addr = trunk.recvmsg(65536, socket.CMSG_SPACE(AUXDATA.size))
                if addr[2] == PACKET_OUTGOING:
                    continue  # what the kernel or this switch sends to the server
                vid = vid_of(anc)
                if vid in ports:
                    ports[vid].send(data)
                else:
                    print(f"from the server, not switched: VID {vid}, {len(data)} bytes, "
                          f"EtherType {data[12:14].hex()}", flush=True)
                continue
            vid = vid_by_fd[fd]
            data, addr = ports[vid].recvfrom(65536)
            if addr[2] == PACKET_OUTGOING or len(data) < 14:
                continue
            if vid is None:
                trunk.send(data)
            else:
                trunk.send(data[:12] + struct.pack("!HH", 0x8100, vid) + data[12:])


if __name__ == "__main__":
    main()
