#!/usr/bin/env bash
# stale-routes-check 3 1 (openvpn 2.6 multi.c check_stale_routes): a client whose address has
# seen no routed packet for 3 s loses its route, with learn-address "delete" for it; a client
# that keeps pinging keeps its route. Afterwards packets from the server to the idle client's
# tunnel address go nowhere.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init stale_routes

netns_setup 2
pki_make "$OVT_DIR" --clients 2
d=$OVT_DIR
cat >"$d/la.sh" <<EOF2
#!/bin/sh
echo "\$*" >>"$d/la.log"
EOF2
chmod 755 "$d/la.sh"
: >"$d/la.log"
server_conf_write "$d" "script-security 2" "learn-address $d/la.sh" "stale-routes-check 3 1"
server_start "$d"

client_start "$d" 2
wait_tunnel 2
ip2=${CLIENT_TUN_IP[2]}
# client 2 keeps its address in use from now on
ovt_spawn "$(client_ns 2)" "$d/ping2.log" ping -n -i 0.2 "$OVT_SERVER_TUN_IP"
client_start "$d" 1
wait_tunnel 1
ip1=${CLIENT_TUN_IP[1]}
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 3 0.1 0 "client 1 before it goes idle"

wait_for 10 grep -qx "delete $ip1" "$d/la.log" ||
    fail "no learn-address delete for idle client 1's address $ip1 within 10 s"
[ "$OVPN_SERVER_IMPL" = ovpnd ] && { server_log_grep "client1/.*stale-routes-check: no traffic for 3 s" ||
    fail "the server log does not say client 1's routes went stale"; }
loss=$(ping_loss "$NS_SRV" "$ip1" 3 0.2)
[ "$loss" = 100 ] || fail "packets to idle client 1's address $ip1 still reach it ($loss% loss)"
grep -qx "delete $ip2" "$d/la.log" && fail "client 2, pinging all along, lost its route"
assert_ping "$NS_SRV" "$ip2" 5 0.1 0 "server -> client 2, which kept its route"
ovt_log "PASS"
