#!/usr/bin/env bash
# A client that comes back gets its address back at once, as from openvpn 2.6 (pool.c: the pool
# prefers the entry a common name had; 2.6 frees it as soon as the old instance is gone), also
# when it returns from another port (nobind) while the server still winds its old session
# down:
# 1. it exits (SIGTERM, EXIT sent) and starts again within a second;
# 2. it is killed (no EXIT) and starts again: the new session replaces the old one
#    (duplicate-cn is off) and takes its address;
# 3. it restarts in place (SIGUSR1, a new source port).
# Client 2 stays connected throughout and keeps its address; client 1 is listed once.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init reconnect_address

netns_setup 2
pki_make "$OVT_DIR"
server_conf_write "$OVT_DIR"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1
wait_tunnel 1
client_start "$OVT_DIR" 2
wait_tunnel 2
ip1=${CLIENT_TUN_IP[1]} ip2=${CLIENT_TUN_IP[2]}
ns1=$(client_ns 1)

same_address() { # same_address WHAT: client 1 is up again with ip1 and reaches the server
    wait_tunnel 1
    [ "${CLIENT_TUN_IP[1]}" = "$ip1" ] || fail "$1: client 1 got ${CLIENT_TUN_IP[1]}, not $ip1"
    assert_ping "$ns1" "$OVT_SERVER_TUN_IP" 5 0.05 0 "$1: client 1 at $ip1"
}

# ---- 1. exit and start again ----
client_stop 1
client_start "$OVT_DIR" 1
same_address "after its exit"

# ---- 2. killed, then started again ----
pid=$(client_process_pid 1) || fail "no openvpn process for client 1"
kill -KILL "$pid"
ovt_wait "${CLIENT_PID[1]}" || true
client_start "$OVT_DIR" 1
same_address "after it was killed"

# ---- 3. restart in place from a new port ----
client_restart 1
CLIENT_TUN_IP[1]=
same_address "after SIGUSR1"

[ "$(client_tun_ip 2)" = "$ip2" ] || fail "client 2 lost its address $ip2"
assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client 2, connected throughout"
one_row() { [ "$(grep -c '^client1,' "$OVT_DIR/status.log" 2>/dev/null)" = 1 ]; }
wait_for 5 one_row || fail "the status file does not list client 1 exactly once"
server_alive || fail "the server died"
