#!/usr/bin/env bash
# The TCP transport with the stock client (`proto tcp-client`), against one dual-stack server
# (`proto tcp6-server`). The underlay gets IPv6 addresses from 2001:2::/64 (RFC 5180, the IPv6
# benchmarking range) next to its 198.18.0.0/24 ones, as in test_ipv6_transport.sh.
#  - client 1 over IPv4, client 2 over IPv6: both tunnels up, ping both ways without loss;
#  - the status file shows each client's real address as 2.6 writes TCP peers (ADDR:PORT for
#    IPv4, the address for IPv6), each client once;
#  - 20 MiB cross client 1's tunnel each way with the same sha256;
#  - client 1 restarts (SIGUSR1: a new TCP connection and session), comes back with its
#    address, is listed once, and its old connection is gone (one established connection per
#    client on the server's port);
#  - with `passtos`, EF pings from the server to client 1 make the server's TCP segments to it
#    carry DSCP EF (2.6 sets IP_TOS on the client's socket after each packet), and plain pings
#    before them do not;
#  - the server closes the connection of a client that has gone (ping-restart, keepalive 1 4)
#    without the client closing it (SIGSTOP: its kernel keeps the connection open), and frees
#    its address: the client is no longer listed.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init tcp_transport

netns_setup 2
pki_make "$OVT_DIR"
ip -n "$NS_SRV" addr add 2001:2::1/64 dev br0 nodad
for i in 1 2; do
    ip -n "$(client_ns "$i")" addr add "2001:2::$((i + 1))/64" dev eth0 nodad
done
wait_for 10 ovt_run 3 "$(client_ns 1)" ping -6 -c 1 -W 1 -q 2001:2::1 >/dev/null ||
    fail "underlay: client 1 cannot reach 2001:2::1"

export OVT_PROTO=tcp6-server OVT_CLIENT_PROTO=tcp4-client OVT_STATUS_VERSION=2
OVT_KEEPALIVE="1 4" server_conf_write "$OVT_DIR" "passtos"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1
OVT_CLIENT_REMOTE="remote 2001:2::1 $OVT_PORT tcp6-client" client_start "$OVT_DIR" 2
wait_tunnel 1
wait_tunnel 2
grep -q "TCP connection established with \[AF_INET\]$OVT_SERVER_IP:$OVT_PORT" \
    "$OVT_DIR/client1.log" || fail "client 1 did not connect over TCP/IPv4"
grep -q "TCP connection established with \[AF_INET6\]2001:2::1" "$OVT_DIR/client2.log" ||
    fail "client 2 did not connect over TCP/IPv6"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 20 0.05 0 "client 1 (TCP/IPv4) -> server"
assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 20 0.05 0 "client 2 (TCP/IPv6) -> server"
assert_ping "$NS_SRV" "${CLIENT_TUN_IP[1]}" 10 0.05 0 "server -> client 1"
assert_ping "$NS_SRV" "${CLIENT_TUN_IP[2]}" 10 0.05 0 "server -> client 2"

# passtos over TCP: the segments to client 1 (IPv4-mapped on the dual-stack socket) are EF only
# once EF packets go to it.
if command -v tcpdump >/dev/null; then
    ovt_spawn "$NS_SRV" "$OVT_DIR/tcpdump-ef.log" tcpdump -n -l -i br0 \
        "tcp and src port $OVT_PORT and dst host 198.18.0.2 and (ip[1] & 0xfc) = 0xb8"
    wait_for 5 grep -q "listening on" "$OVT_DIR/tcpdump-ef.log" || fail "tcpdump did not start"
    assert_ping "$NS_SRV" "${CLIENT_TUN_IP[1]}" 5 0.05 0 "server -> client 1 (no DSCP)"
    sleep 0.5
    grep -q "> 198\.18\.0\.2\." "$OVT_DIR/tcpdump-ef.log" &&
        fail "passtos: EF segments to client 1 before any EF packet: $(cat "$OVT_DIR/tcpdump-ef.log")"
    ovt_run 10 "$NS_SRV" ping -n -q -c 5 -i 0.05 -W 2 -Q 0xb8 "${CLIENT_TUN_IP[1]}" >/dev/null 2>&1 ||
        fail "server -> client 1 ping with DSCP EF failed"
    wait_for 5 grep -q "> 198\.18\.0\.2\." "$OVT_DIR/tcpdump-ef.log" ||
        fail "passtos: no TCP segment with DSCP EF to client 1 after its EF pings"
    ovt_log "passtos: $(grep -c "> 198\.18\.0\.2\." "$OVT_DIR/tcpdump-ef.log") EF segments to client 1"
    # back to no DSCP, so that the transfers below are not marked
    assert_ping "$NS_SRV" "${CLIENT_TUN_IP[1]}" 3 0.05 0 "server -> client 1 (no DSCP again)"
fi

# Real Address as 2.6 writes it (multi.c: mroute_addr_print of the TCP peer's address).
listed() { grep -q "^CLIENT_LIST,$1," "$OVT_DIR/status.log" 2>/dev/null; }
wait_for 10 listed client2 || fail "client 2 never appeared in the status file"
st=$(grep "^CLIENT_LIST" "$OVT_DIR/status.log")
grep -Eq "^CLIENT_LIST,client1,198\.18\.0\.2:[0-9]+," <<<"$st" ||
    fail "status: client 1's real address is not 198.18.0.2:PORT: $st"
grep -Eq "^CLIENT_LIST,client2,2001:2::3(:[0-9]+)?," <<<"$st" ||
    fail "status: client 2's real address is not 2001:2::3: $st"
port1=$(sed -n 's/^CLIENT_LIST,client1,198\.18\.0\.2:\([0-9]*\),.*/\1/p' <<<"$st")
ss_port=$(ip netns exec "$(client_ns 1)" ss -Htn "dport = :$OVT_PORT" | awk '{ print $4 }' |
    sed 's/.*://')
[ "$port1" = "$ss_port" ] || fail "status: client 1's port $port1 is not its connection's ($ss_port)"
ovt_log "status: $(tr '\n' ' ' <<<"$st")"

# 20 MiB each way through client 1's tunnel.
head -c $((20 * 1024 * 1024)) /dev/urandom >"$OVT_DIR/up.bin"
head -c $((20 * 1024 * 1024)) /dev/urandom >"$OVT_DIR/down.bin"
tcp_transfer "client 1 -> server" "$NS_SRV" "$OVT_SERVER_TUN_IP" "$(client_ns 1)" \
    "$OVT_DIR/up.bin" "$OVT_DIR/up.recv" 5001 150
tcp_transfer "server -> client 1" "$(client_ns 1)" "${CLIENT_TUN_IP[1]}" "$NS_SRV" \
    "$OVT_DIR/down.bin" "$OVT_DIR/down.recv" 5002 150

# Restart: a new connection and session; the old connection goes.
ip1=${CLIENT_TUN_IP[1]}
client_restart 1
wait_tunnel 1
[ "${CLIENT_TUN_IP[1]}" = "$ip1" ] || fail "client 1 came back with ${CLIENT_TUN_IP[1]}, not $ip1"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client 1 after its restart"
one_conn() {
    [ "$(ip netns exec "$NS_SRV" ss -Htn state established "sport = :$OVT_PORT" |
        grep -Ec " (\[::ffff:)?198\.18\.0\.2\]?:")" = 1 ]
}
wait_for 10 one_conn || fail "client 1's old TCP connection is still open after its restart"
one_row() { [ "$(grep -c "^CLIENT_LIST,client1," "$OVT_DIR/status.log")" = 1 ]; }
wait_for 10 one_row || fail "client 1 is not listed exactly once after its restart"

# A client that vanishes: the server closes its connection after ping-restart (2 x 4 s, as 2.6
# doubles the server's keepalive timeout) and frees its address.
pid2=$(client_process_pid 2)
kill -STOP "$pid2"
OVT_CLEANUP+=("kill -CONT $pid2 2>/dev/null")
t0=$SECONDS
not_listed() { ! listed "$1"; }
wait_for 30 not_listed client2 || fail "client 2 still listed 30 s after it stopped answering"
no_conn2() {
    ! ip netns exec "$NS_SRV" ss -Htn state established "sport = :$OVT_PORT" | grep -q "2001:2::3"
}
wait_for 10 no_conn2 || fail "the server kept client 2's TCP connection after dropping it"
ovt_log "client 2 dropped and its connection closed $((SECONDS - t0)) s after it stopped"
grep -q "^ROUTING_TABLE,${CLIENT_TUN_IP[2]}," "$OVT_DIR/status.log" &&
    fail "client 2's address ${CLIENT_TUN_IP[2]} is still routed"
kill -KILL "$pid2"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client 1 after client 2 went"
server_alive || fail "server died"
