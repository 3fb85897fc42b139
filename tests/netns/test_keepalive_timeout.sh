#!/usr/bin/env bash
# A client that vanishes without saying goodbye (SIGKILL: no explicit-exit-notify) is dropped by
# the server after its keepalive timeout (keepalive 1 3: the server drops after 2 x 3 s, as
# openvpn does), disappears from the status file, and its tunnel address goes back to the pool:
# when it connects again it gets that address back (openvpn 2.6 pool.c gives a returning common
# name its released address; had the address not been released it would get the next one).
# ovt: serial (see tests/CMakeLists.txt)
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init keepalive_timeout

netns_setup 1
pki_make "$OVT_DIR"
OVT_STATUS_VERSION=2 OVT_KEEPALIVE="1 3" server_conf_write "$OVT_DIR"
server_start "$OVT_DIR"

in_status() { grep -q "^CLIENT_LIST,$1," "$OVT_DIR/status.log" 2>/dev/null; }
not_in_status() { ! in_status "$1"; }

client_start "$OVT_DIR" 1
wait_tunnel 1
first_ip=${CLIENT_TUN_IP[1]}
wait_for 10 in_status client1 || fail "client1 never appeared in the status file"

t0=$SECONDS
kill -KILL "${CLIENT_PID[1]}"
ovt_wait "${CLIENT_PID[1]}" || true
CLIENT_PID[1]=
# Not before the timeout (nothing told the server), but soon after it.
sleep 2
in_status client1 || fail "client1 left the status file after 2 s, before any timeout could fire"
wait_for 20 not_in_status client1 || fail "client1 still listed 20 s after it was killed"
ovt_log "client1 dropped $((SECONDS - t0)) s after SIGKILL (keepalive 1 3)"
server_log_grep "ping-restart" || fail "the server log does not say why client1 was dropped"

# The address is free again: the same client connecting again gets it back.
client_start "$OVT_DIR" 1
wait_tunnel 1
[ "${CLIENT_TUN_IP[1]}" = "$first_ip" ] ||
    fail "address $first_ip was not returned to the pool (client1 got ${CLIENT_TUN_IP[1]} on its return)"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 20 0.05 0 "returning client"
