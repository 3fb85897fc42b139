#!/usr/bin/env bash
# IPv6 as the transport, with the stock client. The underlay gets IPv6 addresses from
# 2001:2::/64 (RFC 5180, the IPv6 benchmarking range) next to its 198.18.0.0/24 ones.
#  - `proto udp6`: one dual-stack socket. Client 1 connects over IPv6 (remote 2001:2::1 udp6),
#    client 2 over IPv4 to the same server; both carry traffic; the status file shows client 1's
#    real address as IPv6 and client 2's as plain IPv4 (not ::ffff:...);
#  - client 1 moves to another IPv6 address and keeps its session (float over IPv6);
#  - `passtos` on the dual-stack socket: a packet with DSCP EF to client 1 leaves in an IPv6
#    datagram with traffic class EF, one to client 2 in an IPv4 datagram with TOS EF (ovpnd only:
#    2.6 sets the TOS on an AF_INET socket alone, so with udp6 it marks nothing);
#  - `proto udp` with `local ::` is dual-stack too; `proto udp4` with an IPv6 `local` is refused
#    at start-up with FILE:LINE.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init ipv6_transport

netns_setup 2
pki_make "$OVT_DIR"
ip -n "$NS_SRV" addr add 2001:2::1/64 dev br0 nodad
for i in 1 2; do
    ip -n "$(client_ns "$i")" addr add "2001:2::$((i + 1))/64" dev eth0 nodad
done
wait_for 10 ovt_run 3 "$(client_ns 1)" ping -6 -c 1 -W 1 -q 2001:2::1 >/dev/null ||
    fail "underlay: client 1 cannot reach 2001:2::1"
OVT_STATUS_VERSION=2

run() { # run PROTO_LINES...: server with those lines, client 1 over IPv6, client 2 over IPv4
    server_conf_write "$OVT_DIR" "$@"
    server_start "$OVT_DIR"
    OVT_CLIENT_REMOTE="remote 2001:2::1 $OVT_PORT udp6" client_start "$OVT_DIR" 1
    client_start "$OVT_DIR" 2
    wait_tunnel 1
    wait_tunnel 2
    assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 20 0.05 0 "$* : client 1 over IPv6 -> server"
    assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 20 0.05 0 "$* : client 2 over IPv4 -> server"
    assert_ping "$NS_SRV" "${CLIENT_TUN_IP[1]}" 10 0.05 0 "$* : server -> client 1"
}

run "proto udp6" "passtos"
if [ "$OVPN_SERVER_IMPL" = ovpnd ] && command -v tcpdump >/dev/null; then
    ovt_spawn "$NS_SRV" "$OVT_DIR/tcpdump-ef.log" tcpdump -n -l -i br0 "udp and src port $OVT_PORT and \
((ip6 and (ip6[0:2] & 0x0fc0) = 0x0b80) or (ip and (ip[1] & 0xfc) = 0xb8))"
    wait_for 5 grep -q "listening on" "$OVT_DIR/tcpdump-ef.log" || fail "tcpdump did not start"
    for i in 1 2; do
        ovt_run 10 "$NS_SRV" ping -n -q -c 3 -i 0.05 -W 2 -Q 0xb8 "$(client_tun_ip "$i")" >/dev/null 2>&1 ||
            fail "server -> client $i ping with DSCP EF failed"
    done
    wait_for 5 out_has "^3$" sh -c "grep -c '> 2001:2::2\.' '$OVT_DIR/tcpdump-ef.log'" ||
        fail "passtos: not 3 IPv6 datagrams with traffic class EF to client 1: $(cat "$OVT_DIR/tcpdump-ef.log")"
    wait_for 5 out_has "^3$" sh -c "grep -c '> 198\.18\.0\.3\.' '$OVT_DIR/tcpdump-ef.log'" ||
        fail "passtos: not 3 IPv4 datagrams with TOS EF to client 2: $(cat "$OVT_DIR/tcpdump-ef.log")"
    ovt_log "passtos on the dual-stack socket: EF over IPv6 (traffic class) and IPv4 (TOS)"
fi
grep -q "Peer Connection Initiated with \[AF_INET6\]2001:2::1" "$OVT_DIR/client1.log" ||
    fail "client 1 did not connect over IPv6"
sleep 1.5
st=$(grep "^CLIENT_LIST" "$OVT_DIR/status.log")
grep -Eq "^CLIENT_LIST,client1,2001:2::2(:[0-9]+)?," <<<"$st" || fail "status: client 1's real address is not 2001:2::2: $st"
grep -q "^CLIENT_LIST,client2,198\.18\.0\.3:[0-9]*," <<<"$st" || fail "status: client 2's real address is not plain IPv4: $st"

# Float over IPv6: client 1's address changes, its session follows an authenticated packet.
ip -n "$(client_ns 1)" addr add 2001:2::102/64 dev eth0 nodad
ip -n "$(client_ns 1)" addr del 2001:2::2/64 dev eth0
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 20 0.1 10 "client 1 after moving to 2001:2::102"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    wait_server_log "floated from \[2001:2::2\]:[0-9]* to \[2001:2::102\]" 10 || fail "no float to 2001:2::102 in the server log"
fi
ip -n "$(client_ns 1)" addr add 2001:2::2/64 dev eth0 nodad
client_stop 1
client_stop 2
server_stop

run "proto udp" "local ::"
client_stop 1
client_stop 2
server_stop

if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    server_conf_write "$OVT_DIR" "proto udp4" "local 2001:2::1"
    out=$("$OVPND" --test-config --config "$OVT_DIR/server.conf" 2>&1) && fail "proto udp4 with an IPv6 local was accepted"
    grep -q "server.conf:[0-9]*: local: '2001:2::1' is an IPv6 address, but proto is udp4" <<<"$out" ||
        fail "unexpected error for udp4 + IPv6 local: $out"
fi
ovt_log "PASS"
