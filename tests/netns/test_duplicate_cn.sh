#!/usr/bin/env bash
# duplicate-cn. Off (the default): a second device with the same certificate replaces the
# first cleanly: the first is told AUTH_FAILED and stops (no reconnect ping-pong between the
# two), the second keeps its tunnel, the status file lists the certificate once; also when the
# second is still in client-connect as a third arrives. On: both stay up with their own
# addresses.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init duplicate_cn

netns_setup 3
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

# Off, with a client-connect script that takes 3 s: device 3 arrives while device 2 is still in
# client-connect. The newest replaces both (device 2 was not connected yet, and was left
# running beside device 3 before).
cat >"$dir/cc.sh" <<EOS
#!/bin/sh
[ -e "$dir/slow" ] && sleep 3
exit 0
EOS
chmod 755 "$dir/cc.sh"
rm -f "$dir/slow"
OVT_STATUS_VERSION=2 OVT_KEEPALIVE="2 6" server_conf_write "$dir" "script-security 2" \
    "client-connect $dir/cc.sh"
server_start "$dir"
OVT_CLIENT_CERT=$pki/client1.crt OVT_CLIENT_KEY=$pki/client1.key client_start "$dir" 1
wait_tunnel 1
touch "$dir/slow"
OVT_CLIENT_CERT=$pki/client1.crt OVT_CLIENT_KEY=$pki/client1.key client_start "$dir" 2
wait_server_log "198\.18\.0\.2:[0-9]+: new connection by the same common name" 10 ||
    fail "device 2 did not replace device 1"
OVT_CLIENT_CERT=$pki/client1.crt OVT_CLIENT_KEY=$pki/client1.key client_start "$dir" 3
wait_tunnel 3
server_log_grep "198\.18\.0\.3:[0-9]+: new connection by the same common name" ||
    fail "device 2, still in client-connect, was not replaced by device 3"
sleep 1.5 # device 2's client-connect (begun before device 3's) has ended; the next status write
[ "$(grep -c '^CLIENT_LIST,client1,' "$dir/status.log")" = 1 ] ||
    fail "the status file lists client1 $(grep -c '^CLIENT_LIST,client1,' "$dir/status.log") times"
grep -q '^CLIENT_LIST,client1,198\.18\.0\.4:' "$dir/status.log" ||
    fail "the status file should show device 3"
assert_ping "$(client_ns 3)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "device 3"
ovt_log "duplicate-cn off: device 3 replaced device 2 in client-connect"
client_stop 3
client_stop 2
client_stop 1
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
