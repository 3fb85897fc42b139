#!/usr/bin/env bash
# UDP and TCP in one server, as openvpn 2.7's multi-socket `local HOST PORT PROTO` lines: one
# UDP and one TCP socket on port 1194, 4 stock clients on each (clients 1-4 `proto udp`, 5-8
# `proto tcp-client`), client-to-client, 2 workers. All 8 get addresses from the one pool
# (8 different addresses), appear in the one status file, and every client pings every other
# (UDP <-> TCP included) through the server. Then client 1 leaves UDP and comes back over TCP:
# it gets its address back, like any returning client, and is listed once.
# openvpn 2.6 has one socket per process: ovpnd only.
# ovt: serial (see tests/CMakeLists.txt)
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init tcp_udp_mixed
[ "$OVPN_SERVER_IMPL" = ovpnd ] || ovt_skip "openvpn 2.6 serves one transport per process"

netns_setup 8
pki_make "$OVT_DIR" --clients 8
server_conf_write "$OVT_DIR" "local $OVT_SERVER_IP $OVT_PORT udp" "local $OVT_SERVER_IP $OVT_PORT tcp" \
    "client-to-client" "workers 2"
server_start "$OVT_DIR"
tcp_ready() { out_has . ip netns exec "$NS_SRV" ss -Hltn "sport = :$OVT_PORT"; }
wait_for 10 tcp_ready || fail "the server does not listen on TCP $OVT_PORT"
server_log_grep "listening on UDP $OVT_SERVER_IP:$OVT_PORT and TCP $OVT_SERVER_IP:$OVT_PORT" ||
    fail "the server does not say it listens on both"
for i in 1 2 3 4; do client_start "$OVT_DIR" "$i"; done
for i in 5 6 7 8; do OVT_CLIENT_PROTO=tcp4-client client_start "$OVT_DIR" "$i"; done
for i in 1 2 3 4 5 6 7 8; do wait_tunnel "$i" 60; done
for i in 5 6 7 8; do
    grep -q "TCP connection established" "$OVT_DIR/client$i.log" || fail "client $i is not on TCP"
done
n_addr=$(for i in 1 2 3 4 5 6 7 8; do echo "${CLIENT_TUN_IP[$i]}"; done | sort -u | wc -l)
[ "$n_addr" = 8 ] || fail "8 clients got $n_addr different addresses"

listed_all() {
    for i in 1 2 3 4 5 6 7 8; do
        grep -q "^client$i,198\.18\.0\.$((i + 1)):[0-9]*," "$OVT_DIR/status.log" 2>/dev/null || return 1
    done
}
wait_for 10 listed_all || fail "the status file does not list all 8 clients: $(cat "$OVT_DIR/status.log")"
for w in 0 1; do
    n=$(sed -n "s/^Worker $w sessions,//p" "$OVT_DIR/status.log")
    [ "${n:-0}" -gt 0 ] || fail "worker $w carries no client: $(grep ^Worker "$OVT_DIR/status.log")"
done
ovt_log "status: $(grep -c '^client' "$OVT_DIR/status.log") clients listed, $(grep 'sessions,' "$OVT_DIR/status.log" | tr '\n' ' ')"

for i in 1 2 3 4 5 6 7 8; do
    for j in 1 2 3 4 5 6 7 8; do
        [ "$i" = "$j" ] && continue
        loss=$(ping_loss "$(client_ns "$i")" "${CLIENT_TUN_IP[$j]}" 3 0.05)
        [ "$loss" = 0 ] || fail "client $i -> client $j (${CLIENT_TUN_IP[$j]}): $loss% loss"
    done
done
ovt_log "every client pings every other (UDP <-> UDP, UDP <-> TCP, TCP <-> TCP): 56 pairs"

ip1=${CLIENT_TUN_IP[1]}
client_stop 1
OVT_CLIENT_PROTO=tcp4-client client_start "$OVT_DIR" 1
wait_tunnel 1 60
grep -q "TCP connection established" "$OVT_DIR/client1.log" || fail "client 1 did not come back over TCP"
[ "${CLIENT_TUN_IP[1]}" = "$ip1" ] || fail "client 1 came back over TCP with ${CLIENT_TUN_IP[1]}, not $ip1"
once1() { [ "$(grep -c "^client1," "$OVT_DIR/status.log")" = 1 ]; }
wait_for 10 once1 || fail "client 1 is not listed exactly once after moving to TCP"
loss=$(ping_loss "$(client_ns 1)" "${CLIENT_TUN_IP[5]}" 5 0.05)
[ "$loss" = 0 ] || fail "client 1 (now TCP) -> client 5: $loss% loss"
ovt_log "client 1 moved from UDP to TCP and kept $ip1"
server_alive || fail "server died"
