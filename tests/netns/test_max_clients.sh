#!/usr/bin/env bash
# max-clients: a client beyond the limit is ignored, not refused with AUTH_FAILED (which makes
# the stock client give up): it keeps retrying and gets in once a place frees. Here the place
# frees when a client that vanished (SIGKILL) times out (keepalive 1 3). Also the case of a
# laptop reconnecting while its old session still holds the last place.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init max_clients

netns_setup 3
pki_make "$OVT_DIR"
OVT_KEEPALIVE="1 3" server_conf_write "$OVT_DIR" "max-clients 2"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1
client_start "$OVT_DIR" 2
wait_tunnel 1
wait_tunnel 2

client_start "$OVT_DIR" 3
kill -KILL "${CLIENT_PID[1]}"
ovt_wait "${CLIENT_PID[1]}" || true
CLIENT_PID[1]=
# Client 3 waits its turn, then takes the place client 1 left.
wait_tunnel 3 40
grep -q "AUTH_FAILED" "$OVT_DIR/client3.log" && fail "client 3 was sent AUTH_FAILED while full"
assert_ping "$(client_ns 3)" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client 3 after a place freed"

# Client 2's laptop restarts (SIGKILL, then the same certificate again) while full.
kill -KILL "${CLIENT_PID[2]}"
ovt_wait "${CLIENT_PID[2]}" || true
CLIENT_PID[2]=
client_start "$OVT_DIR" 2
wait_tunnel 2 40
grep -q "AUTH_FAILED" "$OVT_DIR/client2.log" && fail "reconnecting client 2 was sent AUTH_FAILED"
assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client 2 after its reconnect"
server_log_grep "max-clients reached" || fail "the server never logged that it was full"
