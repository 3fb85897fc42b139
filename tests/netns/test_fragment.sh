#!/usr/bin/env bash
# `fragment 1000` on the server and in the stock client's profile (openvpn's own fragmentation
# of data-channel packets, for paths that lose big datagrams): pings of 1400 bytes (cut into
# pieces both ways) and of 100 bytes (whole) pass, and 256 KiB go each way over TCP with the same
# sha256 (mssfix 0 on both sides, so that every full TCP segment is cut into two pieces and
# reassembled). On the client's wire no datagram carries more than 1000 bytes of UDP payload, the
# client does not warn about an options mismatch, and the server's counters (logged at the stop)
# show packets cut into pieces, pieces reassembled, and no bad piece.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init fragment

command -v tcpdump >/dev/null || ovt_skip "tcpdump not installed"
netns_setup 1
pki_make "$OVT_DIR"
size=$((256 * 1024))
head -c "$size" /dev/urandom >"$OVT_DIR/random.bin"
cns=$(client_ns 1)


# worker_sum SED_CAPTURE: the captured number of the workers' counters (logged at the stop),
# summed over the workers.
worker_sum() {
    server_log_since | sed -n "s/.*worker [0-9]*: packets in.*$1.*/\1/p" |
        awk '{ n += $1 } END { print n + 0 }'
}

ip -n "$NS_SRV" link set dev vc1 gso_max_segs 1 || fail "cannot set gso_max_segs on vc1"
server_conf_write "$OVT_DIR" "fragment 1000" "mssfix 0"
server_start "$OVT_DIR"
pcap=$OVT_DIR/client.pcap
ovt_spawn "$cns" "$OVT_DIR/tcpdump.log" tcpdump -i eth0 -n -U --immediate-mode -s 0 -w "$pcap" \
    udp port "$OVT_PORT"
tcpdump_pid=$OVT_LAST_PID
wait_for 10 grep -q "listening on" "$OVT_DIR/tcpdump.log" || fail "tcpdump did not start"
client_start "$OVT_DIR" 1 "fragment 1000" "mssfix 0" "verb 7"
wait_tunnel 1
cip=${CLIENT_TUN_IP[1]}

assert_ping "$cns" "$OVT_SERVER_TUN_IP" 20 0.02 0 "ping -s 1400 (in pieces both ways)" -s 1400
assert_ping "$cns" "$OVT_SERVER_TUN_IP" 20 0.02 0 "ping -s 100 (whole)" -s 100
assert_ping "$NS_SRV" "$cip" 20 0.02 0 "server -> client, ping -s 1400" -s 1400
tcp_transfer "TCP up" "$NS_SRV" "$OVT_SERVER_TUN_IP" "$cns" "$OVT_DIR/random.bin" \
    "$OVT_DIR/recv.bin" 5001
tcp_transfer "TCP down" "$cns" "$cip" "$NS_SRV" "$OVT_DIR/random.bin" "$OVT_DIR/recv.bin" 5002
server_alive || fail "the server died"

kill -INT "$tcpdump_pid" 2>/dev/null || true
ovt_wait "$tcpdump_pid" || true
# The data-channel datagrams on the client's wire (P_DATA_V1/V2; control packets are not cut by
# fragment): how many, and the largest UDP payload each way. The server's veth into the bridge
# takes no segmentation offload (gso_max_segs 1, set before the server started), so that the
# kernel cuts the server's UDP GSO sends into their datagrams before the capture sees them, as a
# real link carries them.
read -r n_dgrams max_up max_down < <("$OVT_PY" - "$pcap" "$OVT_LIB_DIR" "$OVT_PORT" <<'EOF'
import sys
sys.path.insert(0, sys.argv[2])
from pcap_udp import udp_datagrams
port = int(sys.argv[3])
n = up = down = 0
for sport, dport, payload in udp_datagrams(sys.argv[1]):
    if not payload or payload[0] >> 3 not in (6, 9):
        continue
    n += 1
    if dport == port:
        up = max(up, len(payload))
    elif sport == port:
        down = max(down, len(payload))
print(n, up, down)
EOF
)
ovt_log "client's wire: $n_dgrams data datagrams, largest UDP payload up $max_up, down" \
    "$max_down bytes"
[ "$n_dgrams" -gt 400 ] || fail "only $n_dgrams data datagrams in the capture"
if [ "$max_up" -gt 1000 ] || [ "$max_down" -gt 1000 ]; then
    fail "a datagram larger than fragment 1000 crossed the wire (up $max_up, down $max_down)"
fi
# a full TCP segment (1500 bytes, mssfix 0) goes as two pieces of 752 bytes, 780 once sealed
[ "$max_down" -gt 700 ] || fail "no datagram from the server near half a full packet ($max_down)"
# 2.6 compares the options strings at verb 7 (D_SHOW_OCC): its own has mtu-dynamic, and the
# server's must give no "used inconsistently" / "present in ... config" warning.
grep -q "Local Options String.*,mtu-dynamic," "$OVT_DIR/client1.log" ||
    fail "the client's options string has no mtu-dynamic (not at verb 7?)"
if grep -E "WARNING: '[a-z-]+' is (used inconsistently|present in)" "$OVT_DIR/client1.log"; then
    fail "the client warns about an options mismatch"
fi

client_stop 1
server_stop
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    pieces=$(worker_sum 'fragments received \([0-9]*\) ')
    reassembled=$(worker_sum 'packets reassembled \([0-9]*\),')
    cut=$(worker_sum 'packets fragmented \([0-9]*\) ')
    sent=$(worker_sum 'fragments sent \([0-9]*\))')
    bad=$(worker_sum 'dropped bad fragments \([0-9]*\)')
    ovt_log "server: fragments received $pieces, packets reassembled $reassembled, packets" \
        "cut $cut into $sent fragments, bad $bad"
    # 256 KiB in full segments is over 180 packets each way, each in two pieces; 40 pings too
    [ "$reassembled" -gt 180 ] || fail "the server reassembled only $reassembled packets"
    [ "$pieces" -ge $((2 * reassembled)) ] || fail "$pieces pieces for $reassembled packets"
    [ "$cut" -gt 180 ] || fail "the server cut only $cut packets into pieces"
    [ "$sent" -ge $((2 * cut)) ] || fail "$sent pieces sent for $cut packets"
    [ "$bad" -eq 0 ] || fail "the server dropped $bad pieces as bad"
fi
