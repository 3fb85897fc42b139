#!/usr/bin/env bash
# IPv6 inside the tunnel (server-ipv6), with the stock client. IPv6 addresses come from
# 2001:2::/48, the IPv6 benchmarking range (RFC 5180), the counterpart of the 198.18.0.0/15
# range the IPv4 side uses.
#  - client 1 gets an address from the IPv6 pool (2001:2:0:19::1000 on, paired with its IPv4 pool
#    address as openvpn 2.6 pairs them), pings the server's 2001:2:0:19::1 and is pinged back; the pushed route-ipv6
#    appears in its routing table; the status file lists its IPv6 address;
#  - client 2's CCD file gives it a fixed IPv6 address and an iroute-ipv6 for a LAN namespace
#    behind it: the server side reaches the LAN host over IPv6;
#  - with client-to-client, client 1 and client 2 reach each other over IPv6;
#  - a TCP transfer over IPv6 keeps its sha256;
#  - with 2 workers, IPv6 packets from the kernel to the clients' addresses land on the owning
#    worker's TUN queue (eBPF steering): pings to both clients hand nothing over;
#  - client 2 restarts (SIGUSR1, a new source port): its new session gets the CCD's fixed IPv6
#    address again while the old one is still closing, and the host behind it is reached;
#  - block-ipv6 (a second server): IPv6 towards a client gets an ICMPv6 "no route" instead.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init ipv6_tunnel

netns_setup 2
pki_make "$OVT_DIR"
ccd=$OVT_DIR/ccd
mkdir -p "$ccd"
chmod 755 "$ccd"
lan=ovt-lan6-$OVT_ID
ovt_add_ns "$lan"
ns1=$(client_ns 1)
ns2=$(client_ns 2)
ip -n "$ns2" link add lan0 type veth peer name eth0 netns "$lan"
ip -n "$ns2" addr add 2001:2:0:50::1/64 dev lan0 nodad
ip -n "$ns2" link set lan0 up
ip -n "$lan" addr add 2001:2:0:50::2/64 dev eth0 nodad
ip -n "$lan" link set eth0 up
ip -n "$lan" -6 route add default via 2001:2:0:50::1
ip netns exec "$ns2" sysctl -q -w net.ipv6.conf.all.forwarding=1
cat >"$ccd/client2" <<'CCD'
ifconfig-ipv6-push 2001:2:0:19::77/64 2001:2:0:19::1
iroute-ipv6 2001:2:0:50::/64
# its own LAN must not be routed into the tunnel
push-remove "route-ipv6 2001:2:0:50::/64"
CCD
chmod 644 "$ccd/client2"

OVT_STATUS_VERSION=2
server_conf_write "$OVT_DIR" \
    "server-ipv6 2001:2:0:19::/64" \
    "route-ipv6 2001:2:0:50::/64" \
    'push "route-ipv6 2001:2:0:60::/64"' \
    'push "route-ipv6 2001:2:0:50::/64"' \
    "client-config-dir $ccd" \
    "client-to-client"
# two workers whatever the machine (openvpn 2.6 has one thread and no such option)
[ "$OVPN_SERVER_IMPL" = ovpnd ] && echo "workers 2" >>"$OVT_DIR/server.conf"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1
client_start "$OVT_DIR" 2
wait_tunnel 1
wait_tunnel 2

addr6() { # the client's global IPv6 address on its tun device
    ip -n "$(client_ns "$1")" -6 -o addr show dev "$(client_tun_dev "$1")" scope global |
        awk '{print $4}' | cut -d/ -f1
}
a1=$(addr6 1)
a2=$(addr6 2)
# The IPv6 pool pairs with the IPv4 pool by index: 198.19.0.2 <-> ::1000, .3 <-> ::1001, ...
want1=2001:2:0:19::$(printf %x $((0x1000 + ${CLIENT_TUN_IP[1]##*.} - 2)))
[ "$a1" = "$want1" ] || fail "client 1 (${CLIENT_TUN_IP[1]}) has IPv6 address '$a1', expected $want1"
[ "$a2" = 2001:2:0:19::77 ] || fail "client 2 has IPv6 address '$a2', expected its ifconfig-ipv6-push 2001:2:0:19::77"
ovt_log "IPv6 addresses: client 1 $a1, client 2 $a2"
# server-ipv6 pushes tun-ipv6 ahead of the IPv4 options, as 2.6 helper.c does
pr1=$(grep -o "PUSH_REPLY,[^']*" "$OVT_DIR/client1.log" | head -n 1)
case "$pr1" in
*"route-ipv6 2001:2:0:50::/64,tun-ipv6,route-gateway "*) ;;
*) fail "client 1's PUSH_REPLY lacks tun-ipv6 after the push lines, before route-gateway: $pr1" ;;
esac
rt1=$(ip -n "$ns1" -6 route show)
grep -q '^2001:2:0:60::/64 ' <<<"$rt1" || fail "the pushed route-ipv6 is not in client 1's table: $rt1"
rt2=$(ip -n "$ns2" -6 route show dev "$(client_tun_dev 2)")
grep -q '^2001:2:0:50::/64 ' <<<"$rt2" && fail "push-remove in client 2's CCD file did not remove the route to its own LAN"

assert_ping "$ns1" 2001:2:0:19::1 20 0.05 0 "client 1 -> server (IPv6)"
assert_ping "$NS_SRV" "$a1" 10 0.05 0 "server -> client 1 (IPv6)"
assert_ping "$NS_SRV" 2001:2:0:50::2 10 0.05 0 "server -> host behind client 2 (iroute-ipv6)"
assert_ping "$lan" 2001:2:0:19::1 10 0.05 0 "host behind client 2 -> server (IPv6)"
assert_ping "$ns1" "$a2" 10 0.05 0 "client 1 -> client 2 (IPv6, client-to-client)"
# three hops and a forwarding namespace: one lost echo of ten is not a failure
assert_ping "$ns1" 2001:2:0:50::2 10 0.05 10 "client 1 -> host behind client 2 (client-to-client + iroute-ipv6)"

# TCP over IPv6 through the tunnel.
xfer=$OVT_LIB_DIR/tcpxfer.py
head -c $((4 * 1024 * 1024)) /dev/urandom >"$OVT_DIR/up.bin"
ovt_spawn "$NS_SRV" "$OVT_DIR/listen.log" "$OVT_PY" "$xfer" listen --bind 2001:2:0:19::1 \
    --port 5001 --ready "$OVT_DIR/ready" --recv "$OVT_DIR/up.recv" --timeout 60
lpid=$OVT_LAST_PID
wait_for 10 test -e "$OVT_DIR/ready" || fail "IPv6 listener did not start"
ovt_run 70 "$ns1" "$OVT_PY" "$xfer" connect --host 2001:2:0:19::1 --port 5001 \
    --send "$OVT_DIR/up.bin" --timeout 60 >"$OVT_DIR/connect.log" 2>&1 ||
    fail "TCP over IPv6 failed: $(cat "$OVT_DIR/connect.log")"
ovt_wait "$lpid" || fail "IPv6 receiver failed: $(cat "$OVT_DIR/listen.log")"
[ "$(sha256sum <"$OVT_DIR/up.bin")" = "$(sha256sum <"$OVT_DIR/up.recv")" ] || fail "TCP over IPv6: sha256 mismatch"
ovt_log "TCP over IPv6, client -> server: 4 MiB, sha256 matches"
# and the other way (with ovpnd: the server's TCP super-packets cut into IPv6 segments)
ovt_spawn "$ns1" "$OVT_DIR/listen2.log" "$OVT_PY" "$xfer" listen --bind "$a1" \
    --port 5002 --ready "$OVT_DIR/ready2" --recv "$OVT_DIR/down.recv" --timeout 60
lpid=$OVT_LAST_PID
wait_for 10 test -e "$OVT_DIR/ready2" || fail "IPv6 listener on client 1 did not start"
ovt_run 70 "$NS_SRV" "$OVT_PY" "$xfer" connect --host "$a1" --port 5002 \
    --send "$OVT_DIR/up.bin" --timeout 60 >"$OVT_DIR/connect2.log" 2>&1 ||
    fail "TCP over IPv6 to the client failed: $(cat "$OVT_DIR/connect2.log")"
ovt_wait "$lpid" || fail "IPv6 receiver on client 1 failed: $(cat "$OVT_DIR/listen2.log")"
[ "$(sha256sum <"$OVT_DIR/up.bin")" = "$(sha256sum <"$OVT_DIR/down.recv")" ] ||
    fail "TCP over IPv6, server -> client: sha256 mismatch"
ovt_log "TCP over IPv6, server -> client: 4 MiB, sha256 matches"

if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    handed() { # packets handed between workers so far, from the status file
        sleep 1.5
        awk -F, '/^GLOBAL_STATS,Worker [0-9]+ handed over,/ {n += $3} END {print n + 0}' "$OVT_DIR/status.log"
    }
    before=$(handed)
    assert_ping "$NS_SRV" "$a1" 20 0.02 0 "server -> client 1 (IPv6), for steering"
    assert_ping "$NS_SRV" "$a2" 20 0.02 0 "server -> client 2 (IPv6), for steering"
    after=$(handed)
    [ "$after" = "$before" ] || fail "IPv6 packets to clients were handed between workers ($before -> $after): TUN steering missed them"
    ovt_log "IPv6 to both clients: no packet handed between workers"
    grep -q "^CLIENT_LIST,client1,[^,]*,${CLIENT_TUN_IP[1]},$a1," "$OVT_DIR/status.log" ||
        fail "the status file does not list client 1's IPv6 address: $(grep CLIENT_LIST "$OVT_DIR/status.log")"
fi

client_restart 2
[ "$(addr6 2)" = 2001:2:0:19::77 ] || fail "after its restart client 2 has IPv6 address '$(addr6 2)'"
assert_ping "$NS_SRV" 2001:2:0:50::2 10 0.05 0 "server -> host behind client 2 after its restart"

# block-ipv6 (2.6 forward.c process_ip_header from multi_process_incoming_tun): IPv6 that the
# tun device sends towards a client is answered with an ICMPv6 "no route" from the tunnel's
# remote address (server-ipv6 NETWORK+2) and dropped; IPv4 is untouched.
client_stop 1
client_stop 2
server_stop
server_conf_write "$OVT_DIR" "server-ipv6 2001:2:0:19::/64" "block-ipv6"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1
wait_tunnel 1
b1=$(addr6 1)
[ -n "$b1" ] || fail "block-ipv6: client 1 got no IPv6 address"
out=$(ip netns exec "$NS_SRV" ping -6 -n -c 2 -i 0.2 -W 2 "$b1" 2>&1 || true)
grep -q "From 2001:2:0:19::2 icmp_seq=1 Destination unreachable: No route" <<<"$out" ||
    fail "block-ipv6: no ICMPv6 'no route' from 2001:2:0:19::2 for a ping to client 1: $out"
grep -q " 0 received" <<<"$out" || fail "block-ipv6: client 1 answered IPv6 pings: $out"
assert_ping "$NS_SRV" "${CLIENT_TUN_IP[1]}" 3 0.05 0 "block-ipv6: IPv4 server -> client 1"
ovt_log "block-ipv6: IPv6 towards client 1 answered with ICMPv6 no route, IPv4 fine"
ovt_log "PASS"
