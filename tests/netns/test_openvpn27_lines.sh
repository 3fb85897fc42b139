#!/usr/bin/env bash
# Server config lines that openvpn 2.7 adds and 2.6 refuses, and what stock 2.6 clients see:
#  - data-ciphers DEFAULT:AES-192-CBC (2.7: DEFAULT stands for the default list): a client
#    limited to AES-192-CBC gets AES-192-CBC, a client with its defaults gets AES-256-GCM, and
#    both ping; a client limited to AES-128-CBC, in neither part of the list, is refused.
#  - route-table 100 between two route lines: the route before it goes into the main table,
#    the one after it into table 100 with its metric, and the client still pings (its subnet
#    route comes from the device's address); with topology net30 the pool route `server` adds
#    goes into table 100 too, as 2.7 gives it the last route-table.
# openvpn 2.6 refuses the line ("Unsupported cipher in --data-ciphers: DEFAULT"): ovpnd only.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init openvpn27_lines
[ "$OVPN_SERVER_IMPL" = ovpnd ] || ovt_skip "openvpn 2.6 refuses DEFAULT in data-ciphers (2.7 adds it)"

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
server_conf_write "$OVT_DIR" "route 198.19.9.0 255.255.255.0" "route-table 100" \
    "route 198.19.8.0 255.255.255.0 vpn_gateway 7"
server_start "$OVT_DIR"
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
ovt_log "PASS"
