#!/usr/bin/env bash
# duplicate-cn. Off (the default): a second device with the same certificate replaces the
# first cleanly: the first is told AUTH_FAILED and stops (no reconnect ping-pong between the
# two), the second keeps its tunnel, the status file lists the certificate once. On: both stay
# up with their own addresses.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init duplicate_cn

netns_setup 2
pki_make "$OVT_DIR"
dir=$OVT_DIR
pki=$dir/pki
OVT_STATUS_VERSION=2 OVT_KEEPALIVE="2 6" server_conf_write "$dir"
server_start "$dir"

OVT_CLIENT_CERT=$pki/client1.crt OVT_CLIENT_KEY=$pki/client1.key client_start "$dir" 1
wait_tunnel 1
OVT_CLIENT_CERT=$pki/client1.crt OVT_CLIENT_KEY=$pki/client1.key client_start "$dir" 2
wait_tunnel 2
wait_for 15 grep -q "AUTH_FAILED,replaced by a new connection" "$dir/client1.log" ||
    fail "the replaced client was not told"
wait_for 15 pid_gone "${CLIENT_PID[1]}" || fail "the replaced client did not stop"
server_log_grep "198\.18\.0\.2:[0-9]+: new connection by the same common name" ||
    fail "server log does not say which session was replaced"
# Longer than the pushed ping-restart (6 s): the second device stays, nobody reconnects.
sleep 8
client_up 2 || fail "the new device lost its tunnel"
[ "$(grep -c "Initialization Sequence Completed" "$dir/client2.log")" = 1 ] ||
    fail "the new device had to reconnect"
[ "$(grep -c '^CLIENT_LIST,client1,' "$dir/status.log")" = 1 ] ||
    fail "the status file should list client1 once"
grep -q '^CLIENT_LIST,client1,198\.18\.0\.3:' "$dir/status.log" ||
    fail "the status file should show the new device's address"
assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "the new device"
ovt_log "duplicate-cn off: the second device replaced the first, which stopped"
client_stop 2
server_stop

OVT_STATUS_VERSION=2 server_conf_write "$dir" "duplicate-cn"
server_start "$dir"
OVT_CLIENT_CERT=$pki/client1.crt OVT_CLIENT_KEY=$pki/client1.key client_start "$dir" 1
OVT_CLIENT_CERT=$pki/client1.crt OVT_CLIENT_KEY=$pki/client1.key client_start "$dir" 2
wait_tunnel 1
wait_tunnel 2
[ "${CLIENT_TUN_IP[1]}" != "${CLIENT_TUN_IP[2]}" ] || fail "both devices got the same address"
wait_for 5 count_lines '^CLIENT_LIST,client1,' "$dir/status.log" 2 ||
    fail "the status file should list both devices: $(grep -E '^(TIME|CLIENT_LIST)' "$dir/status.log" | tr '\n' ' ')"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "device 1"
assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "device 2"
ovt_log "duplicate-cn on: both devices stay up"
