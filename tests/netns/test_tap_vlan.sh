#!/usr/bin/env bash
# dev tap with vlan-tagging (openvpn 2.6 vlan.c, multi.c), one server start and three stock
# clients. The server has vlan-pvid 10 and vlan-accept all (the default), so its tap is a trunk
# with VLAN 10 untagged (native) and VLAN 20 tagged; the gateways 198.19.10.1/24 (VLAN 10) and
# 198.19.20.1/24 (VLAN 20) are behind it; client-to-client is on. client-config-dir gives
# client1 vlan-pvid 10 and client2 vlan-pvid 20; client3 has no file and so the server's VLAN 10.
#  - each client reaches its VLAN's gateway (VLAN 20's frames tagged on the way to the tap and
#    untagged on the way back, VLAN 10's untagged both ways), and the server side reaches
#    client2 (a broadcast from the tap in VLAN 20);
#  - client1 and client3 reach each other (client-to-client inside VLAN 10);
#  - nothing crosses VLANs: client1 (with an address in 198.19.20.0/24 too) does not reach
#    VLAN 20's gateway, neither client1 nor the server side reaches client2's address in
#    198.19.10.0/24, and client2 never even sees their ARP broadcasts;
#  - every frame the server wrote into the tap was untagged (VLAN 10) or tagged with VID 20.
# The kernels this runs on may lack 802.1Q devices (CONFIG_VLAN_8021Q), so vlan_switch.py
# stands in for a VLAN-aware bridge: it moves the tap's untagged frames to and from a veth whose
# peer has 198.19.10.1/24, and those tagged 20 to and from another with 198.19.20.1/24.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init tap_vlan

netns_setup 3
pki_make "$OVT_DIR"
ns1=$(client_ns 1)
ns2=$(client_ns 2)
ns3=$(client_ns 3)

mkdir "$OVT_DIR/ccd"
echo "vlan-pvid 10" >"$OVT_DIR/ccd/client1"
echo "vlan-pvid 20" >"$OVT_DIR/ccd/client2"
cat >"$OVT_DIR/up.sh" <<'EOF2'
#!/bin/sh
# The tap (the trunk) and one gateway per VLAN on a veth pair; vlan_switch.py joins them.
set -e
ip link set dev "$1" up
ip addr add 198.19.0.1/24 dev "$1"
# ARP answers only for addresses of the interface asked on: a gateway does not answer for the
# other VLAN's, nor the tap's own stack (which sees VLAN 10's frames too) for either
echo 1 >/proc/sys/net/ipv4/conf/all/arp_ignore
for v in 10 20; do
    ip link add "vl$v" type veth peer name "gw$v"
    ip link set dev "vl$v" up
    ip link set dev "gw$v" up
    ip addr add "198.19.$v.1/24" dev "gw$v"
done
EOF2
chmod 755 "$OVT_DIR/up.sh"
OVT_TOPOLOGY=none OVT_SERVER_LINE="server-bridge nogw" server_conf_write "$OVT_DIR" \
    "script-security 2" "up $OVT_DIR/up.sh" "client-to-client" "vlan-tagging" "vlan-pvid 10" \
    "client-config-dir $OVT_DIR/ccd"
sed -i 's/^dev tun$/dev tap/' "$OVT_DIR/server.conf"
# two workers whatever the machine: MAC learns, broadcasts and client-to-client frames also go
# between workers, with their VLAN
[ "$OVPN_SERVER_IMPL" = ovpnd ] && echo "workers 2" >>"$OVT_DIR/server.conf"
server_start "$OVT_DIR"
sdev=$(ip -n "$NS_SRV" -o link show type tun | awk -F': ' 'NR==1 {print $2}' | cut -d@ -f1)
ovt_spawn "$NS_SRV" "$OVT_DIR/switch.log" "$OVT_PY" "$OVT_LIB_DIR/vlan_switch.py" "$sdev" \
    untagged=vl10 20=vl20
wait_for 5 grep -q "^ready" "$OVT_DIR/switch.log" || fail "vlan_switch.py did not start: $(cat "$OVT_DIR/switch.log")"

for i in 1 2 3; do
    client_start "$OVT_DIR" "$i" "dev tap"
done
# no pool (server-bridge nogw): each client gets its addresses as a host on its VLAN would
addrs=([1]="198.19.10.2/24 198.19.20.9/24" [2]="198.19.20.2/24 198.19.10.3/24" [3]="198.19.10.4/24")
for i in 1 2 3; do
    wait_for 30 grep -q "Initialization Sequence Completed" "$OVT_DIR/client$i.log" ||
        fail "client $i did not connect"
    ns=$(client_ns "$i")
    d=$(client_tun_dev "$i")
    ip -n "$ns" link set dev "$d" up
    for a in ${addrs[$i]}; do
        ip -n "$ns" addr add "$a" dev "$d"
    done
done

assert_ping "$ns1" 198.19.10.1 5 0.05 0 "client 1 (VLAN 10) -> VLAN 10's gateway"
assert_ping "$ns2" 198.19.20.1 5 0.05 0 "client 2 (VLAN 20) -> VLAN 20's gateway"
assert_ping "$ns3" 198.19.10.1 5 0.05 0 "client 3 (VLAN 10) -> VLAN 10's gateway"
assert_ping "$NS_SRV" 198.19.20.2 5 0.05 0 "VLAN 20's gateway -> client 2"
assert_ping "$ns1" 198.19.10.4 5 0.05 0 "client 1 -> client 3 (client-to-client in VLAN 10)"

# Across VLANs: three pings that must go unanswered, at once (each waits out its ARP request)
no_answer() { # no_answer NS DST: one ping gets no reply within 2 s
    ! ovt_run 10 "$1" ping -n -q -c 1 -W 2 "$2" >/dev/null 2>&1
}
no_answer "$ns1" 198.19.20.1 &
p1=$!
no_answer "$ns1" 198.19.10.3 &
p2=$!
no_answer "$NS_SRV" 198.19.10.3 &
p3=$!
wait "$p1" || fail "client 1 (VLAN 10) reached VLAN 20's gateway"
wait "$p2" || fail "client 1 (VLAN 10) reached client 2 (VLAN 20)"
wait "$p3" || fail "VLAN 10's gateway reached client 2 (VLAN 20)"
# client 2 would have learned the askers' MACs from their ARP requests for 198.19.10.3
d2=$(client_tun_dev 2)
if out_has "198\.19\.10\.[12] " ip -n "$ns2" neigh show dev "$d2"; then
    fail "client 2 (VLAN 20) saw VLAN 10's ARP broadcasts: $(ip -n "$ns2" neigh show dev "$d2")"
fi
if grep -q "not switched" "$OVT_DIR/switch.log"; then
    fail "the server wrote frames into the tap with a VLAN tag other than 20: $(grep "not switched" "$OVT_DIR/switch.log" | head -n 5)"
fi
ovt_log "the server's frames were untagged (VLAN 10) or tagged 20, none of another VLAN"
# The status file's routing table lists each learned MAC with its VLAN (2.6 mroute_addr_print:
# MAC@VID), here client 1's in VLAN 10 and client 2's in VLAN 20.
for i in 1:10 2:20; do
    n=${i%%:*}
    vid=${i##*:}
    mac=$(ip -n "$(client_ns "$n")" -o link show dev "$(client_tun_dev "$n")" |
        grep -o "link/ether [0-9a-f:]*" | awk '{print $2}')
    wait_for 5 grep -qi "^$mac@$vid,client$n," "$OVT_DIR/status.log" ||
        fail "the status file has no row $mac@$vid,client$n: $(grep -i "@" "$OVT_DIR/status.log")"
done
ovt_log "status: each client's MAC listed with its VLAN"
exit 0
