#!/usr/bin/env bash
# A client that comes back gets its address back at once, as from openvpn 2.6 (pool.c: the pool
# prefers the entry a common name had; 2.6 frees it as soon as the old instance is gone), also
# when it returns from another port (nobind) while the server still winds its old session
# down:
# 1. it exits (SIGTERM, EXIT sent) and starts again within a second;
# 2. it is killed (no EXIT) and starts again: the new session replaces the old one
#    (duplicate-cn is off) and takes its address;
# 3. it restarts in place (SIGUSR1, a new source port).
# Client 2 stays connected throughout and keeps its address; client 1 is listed once, and
# learn-address never says "update" for an address it has just deleted.
# 4. With one worker and a client-connect script that moves client 1 elsewhere (ifconfig-push
#    198.19.0.50) when it comes back: once its old session is gone, client 2 reconnects and gets
#    the peer-id the old session had; the address client 1 left must route to nobody (it was
#    still routed to that peer-id: client 2's tun received the server's pings to it).
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init reconnect_address

netns_setup 2
pki_make "$OVT_DIR"
cat >"$OVT_DIR/la.sh" <<EOS
#!/bin/sh
echo "\$1 \$2 \$3" >>"$OVT_DIR/la.log"
exit 0
EOS
chmod 755 "$OVT_DIR/la.sh"
server_conf_write "$OVT_DIR" "script-security 2" "learn-address $OVT_DIR/la.sh"
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
wait_for 5 status_lists_once client1 || fail "the status file does not list client 1 exactly once"
server_alive || fail "the server died"

# learn-address: the address is learned for client 1 last. 2.6 says "update" at each return (it
# runs no "delete" when the old instance goes); ovpnd runs "delete" when the old session closes,
# so the new one must "add" (an "update" of a deleted address would confuse a script).
last=$(grep " $ip1 " "$OVT_DIR/la.log" | tail -n 1)
case "$last" in
"add $ip1 client1" | "update $ip1 client1") ;;
*) fail "learn-address for $ip1 ended with '$last', not add or update for client1" ;;
esac
bad=$(awk -v a="$ip1" '$2 == a { if ($1 == "update" && prev == "delete") print NR; prev = $1 }' "$OVT_DIR/la.log")
[ -z "$bad" ] || fail "learn-address said update for $ip1 right after its delete (line $bad of la.log)"
ovt_log "learn-address for $ip1: $(grep " $ip1 " "$OVT_DIR/la.log" | awk '{ print $1 }' | tr '\n' ' ')"

# ---- 4. the address taken over, then moved away by client-connect ----
client_stop 1
client_stop 2
server_stop
cat >"$OVT_DIR/cc.sh" <<EOS
#!/bin/sh
[ "\$common_name" = client1 ] && [ -e "$OVT_DIR/move" ] && echo "ifconfig-push 198.19.0.50 255.255.255.0" >"\$1"
exit 0
EOS
chmod 755 "$OVT_DIR/cc.sh"
rm -f "$OVT_DIR/move"
workers=()
[ "$OVPN_SERVER_IMPL" = ovpnd ] && workers=("workers 1")
server_conf_write "$OVT_DIR" "${workers[@]}" "script-security 2" "client-connect $OVT_DIR/cc.sh"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1
wait_tunnel 1
old=${CLIENT_TUN_IP[1]}
touch "$OVT_DIR/move"
client_stop 1
client_start "$OVT_DIR" 1
wait_tunnel 1
[ "${CLIENT_TUN_IP[1]}" = 198.19.0.50 ] || fail "client-connect did not move client 1 (${CLIENT_TUN_IP[1]})"
sleep 6 # the old session's linger (5 s) ends and frees its peer-id
client_start "$OVT_DIR" 2
wait_tunnel 2
ns2=$(client_ns 2)
dev2=$(client_tun_dev 2)
rx_packets() { ip -n "$ns2" -s -j link show dev "$dev2" | "$OVT_PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["rx"]["packets"])'; }
if [ "${CLIENT_TUN_IP[2]}" = "$old" ]; then
    # openvpn 2.6 hands the freed address to client 2; ovpnd's pool keeps it for client 1's
    # common name while others are free, which is what makes this check mean something
    [ "$OVPN_SERVER_IMPL" != ovpnd ] || fail "client 2 was given $old, which client 1 left"
    ovt_log "client 2 was given $old, which client 1 left: nothing more to check"
else
    rx0=$(rx_packets)
    ovt_run 10 "$NS_SRV" ping -n -q -c 20 -i 0.05 -W 1 "$old" >/dev/null 2>&1 || true
    sleep 0.5
    rx1=$(rx_packets)
    ovt_log "20 pings from the server to $old, which client 1 left: client 2's tun received $((rx1 - rx0)) packets"
    [ $((rx1 - rx0)) -lt 5 ] || fail "the address client 1 left still routes to client 2 (its old peer-id)"
fi
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client 1 at 198.19.0.50"
assert_ping "$ns2" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client 2 at ${CLIENT_TUN_IP[2]}"
server_alive || fail "the server died"
