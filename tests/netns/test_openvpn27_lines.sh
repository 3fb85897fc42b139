#!/usr/bin/env bash
# Server config lines that openvpn 2.7 adds and 2.6 refuses, and what stock 2.6 clients see:
#  - data-ciphers DEFAULT:AES-192-CBC (2.7: DEFAULT stands for the default list): a client
#    limited to AES-192-CBC gets AES-192-CBC, a client with its defaults gets AES-256-GCM, and
#    both ping; a client limited to AES-128-CBC, in neither part of the list, is refused.
#  - route-table 100 between two route lines: the route before it goes into the main table,
#    the one after it into table 100 with its metric, and so does a route-ipv6 after it; the
#    client still pings (its subnet route comes from the device's address); with topology net30
#    the pool route `server` adds goes into table 100 too, as 2.7 gives it the last route-table.
#  - override-username alice in client 1's client-config-dir file, the client authenticating as
#    bob (auth-user-pass-verify script, auth-gen-token, reneg-sec 4): the status file and the
#    client-disconnect script name alice, the push reply carries auth-token-user (base64 of
#    alice), the client renegotiates twice on its token without the script being asked again,
#    and still pings; without a username/password check the same file refuses the client.
# openvpn 2.6 refuses each of these lines ("Unsupported cipher in --data-ciphers: DEFAULT",
# "Unrecognized option" for route-table and override-username), and Debian 12 has no 2.7 to
# compare with: ovpnd only.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init openvpn27_lines
[ "$OVPN_SERVER_IMPL" = ovpnd ] || ovt_skip "openvpn 2.6 refuses these openvpn 2.7 lines"

netns_setup 3
pki_make "$OVT_DIR" --clients 3

# ---- data-ciphers DEFAULT:AES-192-CBC ----
server_conf_write "$OVT_DIR" "data-ciphers DEFAULT:AES-192-CBC"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1 "data-ciphers AES-192-CBC"
client_start "$OVT_DIR" 2
client_start "$OVT_DIR" 3 "data-ciphers AES-128-CBC" "auth-retry none"
wait_tunnel 1
wait_tunnel 2
grep -q "Data Channel: cipher 'AES-192-CBC'" "$OVT_DIR/client1.log" ||
    fail "client 1's data channel is not AES-192-CBC: $(grep 'Data Channel:' "$OVT_DIR/client1.log")"
grep -q "Data Channel: cipher 'AES-256-GCM'" "$OVT_DIR/client2.log" ||
    fail "client 2's data channel is not AES-256-GCM: $(grep 'Data Channel:' "$OVT_DIR/client2.log")"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 10 0.05 0 "AES-192-CBC client: ping"
assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 10 0.05 0 "AES-256-GCM client: ping"
refused() { grep -q "AUTH_FAILED" "$OVT_DIR/client3.log"; }
wait_for 30 refused || fail "the AES-128-CBC client was not refused"
server_log_grep "198\.18\.0\.4:[0-9]+.*no shared data cipher" ||
    fail "the server log does not name the AES-128-CBC client and the missing shared cipher"
ovt_log "data-ciphers DEFAULT:AES-192-CBC: AES-192-CBC and AES-256-GCM clients connect, AES-128-CBC is refused"
client_stop 1
client_stop 2
client_stop 3
server_stop

# ---- route-table ----
# route_in TABLE PREFIX [MORE]: `ip route show table TABLE` in the server namespace has a line
# for PREFIX into the tun device (with MORE in it).
route_in() {
    ip netns exec "$NS_SRV" ip route show table "$1" | grep -q "^$2 dev tun[0-9]* .*${3:-}"
}
server_conf_write "$OVT_DIR" "server-ipv6 2001:2:0:19::/64" "route 198.19.9.0 255.255.255.0" \
    "route-table 100" "route 198.19.8.0 255.255.255.0 vpn_gateway 7" \
    "route-ipv6 2001:2:0:50::/64"
server_start "$OVT_DIR"
route6_in_100() {
    ip netns exec "$NS_SRV" ip -6 route show table 100 | grep -q "^2001:2:0:50::/64 dev tun[0-9]* "
}
route6_in_100 || fail "route-table: route-ipv6 2001:2:0:50::/64 is not in table 100: $(ip netns exec "$NS_SRV" ip -6 route show table 100)"
route_in 100 198.19.8.0/24 "metric 7" ||
    fail "route-table: 198.19.8.0/24 is not in table 100: $(ip netns exec "$NS_SRV" ip route show table 100)"
route_in main 198.19.9.0/24 || fail "route-table: the route before it is not in the main table"
if route_in main 198.19.8.0/24 || route_in 100 198.19.9.0/24; then
    fail "route-table: a route is in both tables: $(ip netns exec "$NS_SRV" ip route show table all)"
fi
client_start "$OVT_DIR" 1
wait_tunnel 1
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.05 0 "route-table: ping"
client_stop 1
server_stop
OVT_TOPOLOGY=net30 server_conf_write "$OVT_DIR" "route-table 100"
server_start "$OVT_DIR"
route_in 100 198.19.0.0/24 || fail "route-table: net30's pool route is not in table 100"
route_in main 198.19.0.0/24 && fail "route-table: net30's pool route is in the main table"
server_stop
ovt_log "route-table: routes after it and net30's pool route in table 100, the earlier one in main"

# ---- override-username ----
d=$OVT_DIR
mkdir -p "$d/ccd"
echo "override-username alice" >"$d/ccd/client1"
cat >"$d/verify.sh" <<'EOF'
#!/bin/sh
sed -n 1p "$1" >>"$AUTH_TEST_DIR/calls.log"
[ "$(sed -n 1p "$1")" = bob ] && [ "$(sed -n 2p "$1")" = secret-bob ]
EOF
cat >"$d/disconnect.sh" <<'EOF'
#!/bin/sh
echo "username=$username common_name=$common_name" >>"$AUTH_TEST_DIR/disconnect.log"
EOF
chmod 755 "$d/verify.sh" "$d/disconnect.sh"
printf 'bob\nsecret-bob\n' >"$d/up1.txt"
chmod 600 "$d/up1.txt"
: >"$d/calls.log"
: >"$d/disconnect.log"
"$OVPND" --genkey auth-token "$d/token.key" || fail "ovpnd --genkey auth-token failed"
OVT_STATUS_VERSION=2 server_conf_write "$d" "client-config-dir $d/ccd" "script-security 2" \
    "auth-user-pass-verify '$d/verify.sh' via-file" "client-disconnect '$d/disconnect.sh'" \
    "setenv AUTH_TEST_DIR $d" "tmp-dir $d" "auth-gen-token 0 120" \
    "auth-gen-token-secret $d/token.key" "reneg-sec 4"
server_start "$d"
client_start "$d" 1 "auth-user-pass $d/up1.txt" "auth-retry none" "verb 4"
wait_tunnel 1
server_log_grep "override-username: username 'bob' is now 'alice'" ||
    fail "override-username: the server log does not say bob became alice"
listed_alice() { grep -q "^CLIENT_LIST,client1,198\.18\.0\.2:[0-9]*,.*,alice," "$d/status.log"; }
wait_for 10 listed_alice || fail "override-username: the status file does not list alice: $(cat "$d/status.log")"
grep -q "auth-token-user YWxpY2U=" "$d/client1.log" ||
    fail "override-username: the push reply has no auth-token-user YWxpY2U=: $(grep PUSH_REPLY "$d/client1.log")"
handshakes_3() { [ "$(grep -c "Control Channel: TLS" "$d/client1.log")" -ge 3 ]; }
wait_for 20 handshakes_3 || fail "override-username: the client did not renegotiate twice"
[ "$(wc -l <"$d/calls.log")" = 1 ] ||
    fail "override-username: the script was asked again at a renegotiation: $(cat "$d/calls.log")"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.05 0 "override-username: ping after renegotiations"
client_stop 1
disconnected() { grep -q . "$d/disconnect.log"; }
wait_for 10 disconnected || fail "override-username: client-disconnect did not run"
grep -qx "username=alice common_name=client1" "$d/disconnect.log" ||
    fail "override-username: client-disconnect saw $(cat "$d/disconnect.log")"
server_stop
server_conf_write "$d" "client-config-dir $d/ccd"
server_start "$d"
client_start "$d" 1 "auth-retry none"
without_check() { server_log_grep "override-username needs a username/password check"; }
wait_for 20 without_check || fail "override-username without a password check: the client was not refused"
[ -z "$(client_tun_ip 1)" ] || fail "override-username without a password check: the client got a tunnel"
client_stop 1
server_stop
ovt_log "override-username: alice in status, scripts and auth-token-user; renegotiations on the token; refused without a password check"
ovt_log "PASS"
