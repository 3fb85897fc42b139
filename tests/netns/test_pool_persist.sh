#!/usr/bin/env bash
# ifconfig-pool-persist with the stock client:
#  - clients 1 and 2 (different certificates) connect in that order; when the server stops, the
#    file holds both lines in openvpn 2.6's format ("client1,198.19.0.2," and
#    "client2,198.19.0.3,");
#  - the file is edited (the two addresses swapped, a line without an address, an address
#    outside the pool) and the server restarted with SECONDS 1: client 1 connecting first
#    still gets its persisted 198.19.0.3, client 2 its 198.19.0.2; each bad line is logged
#    with FILE:LINE and skipped; a third common name gets an address nobody had (198.19.0.4),
#    and the file is rewritten while the server runs;
#  - a file that cannot be opened (its directory is missing) does not stop the start-up: a
#    warning names it and the reason, and once the directory is made the file is written
#    within SECONDS, the failures in between logged once;
#  - (start-up) the admission control bound is logged once.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init pool_persist

[ "$OVPN_SERVER_IMPL" = ovpnd ] || ovt_skip "checks ovpnd's log lines"
netns_setup 3
pki_make "$OVT_DIR"
ipp=$OVT_DIR/ipp.txt
file_is() { [ "$(cat "$ipp" 2>/dev/null)" = "$1" ]; }

server_conf_write "$OVT_DIR" "ifconfig-pool-persist $ipp"
server_start "$OVT_DIR"
# (the bound follows the handshake rate: with none yet, it stays as it started)
n=$(server_log_since | grep -c "admission control: at most") || true
[ "$n" = 1 ] || fail "the start-up logged the admission control bound $n times, not once"
client_start "$OVT_DIR" 1
wait_tunnel 1
client_start "$OVT_DIR" 2
wait_tunnel 2
[ "${CLIENT_TUN_IP[1]}" = 198.19.0.2 ] || fail "client 1 got ${CLIENT_TUN_IP[1]}, not the pool's first address"
[ "${CLIENT_TUN_IP[2]}" = 198.19.0.3 ] || fail "client 2 got ${CLIENT_TUN_IP[2]}, not the pool's second address"
[ -s "$ipp" ] && fail "the file was written before SECONDS (600) passed: $(cat "$ipp")"
server_stop
want=$'client1,198.19.0.2,\nclient2,198.19.0.3,'
file_is "$want" || fail "after the stop the file holds '$(cat "$ipp" 2>/dev/null)', expected '$want'"
ovt_log "file written at shutdown: $(tr '\n' ' ' <"$ipp")"
client_stop 1
client_stop 2

printf 'client1,198.19.0.3,\nclient2,198.19.0.2,\nbroken line\nclient9,198.19.5.1,\n' >"$ipp"
server_conf_write "$OVT_DIR" "ifconfig-pool-persist $ipp 1"
server_start "$OVT_DIR"
server_log_grep "$ipp:3: no address for CN=broken line .*skipped" ||
    fail "the line without an address was not logged with FILE:LINE"
server_log_grep "$ipp:4: IPv4 \(198.19.5.1\) out of pool range for CN=client9.*skipped" ||
    fail "the address outside the pool was not logged with FILE:LINE"
server_log_grep "ifconfig-pool-persist: 2 addresses of $ipp kept" || fail "the server did not read 2 entries"
client_start "$OVT_DIR" 1
wait_tunnel 1
client_start "$OVT_DIR" 2
wait_tunnel 2
client_start "$OVT_DIR" 3
wait_tunnel 3
[ "${CLIENT_TUN_IP[1]}" = 198.19.0.3 ] || fail "client 1 got ${CLIENT_TUN_IP[1]}, not its persisted 198.19.0.3"
[ "${CLIENT_TUN_IP[2]}" = 198.19.0.2 ] || fail "client 2 got ${CLIENT_TUN_IP[2]}, not its persisted 198.19.0.2"
[ "${CLIENT_TUN_IP[3]}" = 198.19.0.4 ] || fail "client 3 got ${CLIENT_TUN_IP[3]}, not the first free 198.19.0.4"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client 1 -> server with its persisted address"
want=$'client2,198.19.0.2,\nclient1,198.19.0.3,\nclient3,198.19.0.4,'
wait_for 5 file_is "$want" || fail "the file was not rewritten within SECONDS: '$(cat "$ipp")'"
ovt_log "file rewritten while running: $(tr '\n' ' ' <"$ipp")"

server_stop
late=$OVT_DIR/late/ipp.txt
server_conf_write "$OVT_DIR" "ifconfig-pool-persist $late 1"
server_start "$OVT_DIR"
server_log_grep "WARNING: ifconfig-pool-persist: cannot open $late for reading and writing: No such file or directory" ||
    fail "no warning naming the unopenable file and the reason"
mkdir "$OVT_DIR/late"
wait_for 5 test -e "$late" || fail "the file was not written once its directory existed"
n=$(server_log_since | grep -c "cannot write $late") || true
[ "$n" -le 1 ] || fail "the write failure was logged $n times, not once"
server_log_grep "ifconfig-pool-persist: $late written" || fail "the server did not say the file is written again"
ovt_log "written once its directory was made; failure lines: $n"
