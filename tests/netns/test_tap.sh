#!/usr/bin/env bash
# dev tap with two stock clients (dev tap), one server start each:
#  - `server 198.19.0.0 255.255.255.0` + client-to-client: the server's tap device is a tap
#    with 198.19.0.1/24; each client gets its pool address (198.19.0.2, .3) with the netmask
#    on its own tap device, pushed as openvpn 2.6 pushes it (route-gateway 198.19.0.1, ifconfig
#    ADDRESS NETMASK, no topology); each pings the server's tap address (its ARP request is a
#    broadcast through the tunnel, the server's reply a unicast routed by the client's learned
#    MAC), the server pings each client, the clients ping each other (client-to-client:
#    broadcast ARP to the other client, unicast frames between them by MAC), and a 2 MB TCP
#    transfer crosses with its checksum intact; learn-address is called as 2.6 calls it with
#    tap: "add MAC@0 CN" for the MAC a client sends from (never its pool address), "delete
#    MAC@0" once the client has gone; the status file's ROUTING TABLE lists the MAC
#    ("MAC@0,CN,REAL,LAST-REF"), not the pool address;
#  - `server-bridge 198.19.0.1 255.255.255.0 198.19.0.100 198.19.0.110`: the device gets no
#    address from the server (the up script gives it one, as it would add it to a bridge); the
#    client gets 198.19.0.100 and route-gateway 198.19.0.1 and pings the gateway;
#  - `mode server` + `tls-server` + `ifconfig-pool START END NETMASK` and no server line (the
#    long form of a bridge): the client gets the pool's first address and nothing else;
#  - `server-bridge` (no pool): the client gets route-gateway dhcp and no address; with an
#    address of its own (as a DHCP client would set) it pings the gateway.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init tap

netns_setup 2
pki_make "$OVT_DIR"
ns1=$(client_ns 1)
ns2=$(client_ns 2)

# The server config of lib.sh with dev tap (no topology line: 2.6 ignores it with tap).
tap_conf_write() {
    OVT_TOPOLOGY=none server_conf_write "$OVT_DIR" "$@"
    sed -i 's/^dev tun$/dev tap/' "$OVT_DIR/server.conf"
}

# "tap" when the device DEV in namespace NS is a tap device
dev_kind() {
    ip -n "$1" -d -o link show dev "$2" 2>/dev/null | grep -o "tun type [a-z]*" | awk '{print $3}'
}

server_tap_dev() {
    ip -n "$NS_SRV" -o link show type tun 2>/dev/null | awk -F': ' 'NR==1 {print $2}' | cut -d@ -f1
}

client_inet() {
    ip -n "$(client_ns "$1")" -4 -o addr show dev "$(client_tun_dev "$1")" | awk '{print $4}'
}

push_reply() {
    grep -o "PUSH_REPLY,[^']*" "$OVT_DIR/client$1.log" | head -n 1
}

# ---- server NET MASK with dev tap and client-to-client ----
# learn-address refuses the MACs of mac_flood.py (02:66:...), after a tenth of a second
cat >"$OVT_DIR/la.sh" <<EOF
#!/bin/sh
echo "\$script_type \$*" >>"$OVT_DIR/la.log"
case "\$2" in 02:66:*) sleep 0.1; exit 1 ;; esac
EOF
chmod 755 "$OVT_DIR/la.sh"
tap_conf_write "client-to-client" "script-security 2" "learn-address $OVT_DIR/la.sh"
# one worker: both clients share its asks to learn-address (the MAC flood below)
[ "$OVPN_SERVER_IMPL" = ovpnd ] && echo "workers 1" >>"$OVT_DIR/server.conf"
server_start "$OVT_DIR"
sdev=$(server_tap_dev)
[ "$(dev_kind "$NS_SRV" "$sdev")" = tap ] || fail "the server's device $sdev is not a tap device: $(ip -n "$NS_SRV" -d -o link show dev "$sdev")"
wait_for 3 out_has "inet 198\.19\.0\.1/24 " ip -n "$NS_SRV" -4 -o addr show dev "$sdev" ||
    fail "the server's tap has not 198.19.0.1/24: $(ip -n "$NS_SRV" -4 -o addr show dev "$sdev")"
client_start "$OVT_DIR" 1 "dev tap"
wait_tunnel 1
flood=
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    # Client 1 sends from 20,000 new MACs a second, each refused by learn-address, while client
    # 2 connects and pings: client 2's MAC must still be asked about and learned at once (a
    # client holds only a share of a worker's asks). openvpn 2.6 runs learn-address in its one
    # thread for each such frame and stalls for every client, so this part is ovpnd's alone.
    ovt_spawn "$ns1" "$OVT_DIR/flood.log" "$OVT_PY" "$OVT_LIB_DIR/mac_flood.py" \
        --dev "$(client_tun_dev 1)" --prefix 02:66 --rate 20000 --seconds 20
    flood=$OVT_LAST_PID
    sleep 0.5
fi
client_start "$OVT_DIR" 2 "dev tap"
wait_tunnel 2
if [ -n "$flood" ]; then
    assert_ping "$ns2" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client 2 -> server tap, during client 1's MAC flood"
    kill -0 "$flood" 2>/dev/null || fail "the MAC flood from client 1 ended before client 2 had pinged: $(cat "$OVT_DIR/flood.log")"
    kill "$flood"
    wait "$flood" 2>/dev/null || true
    [ "$(grep -c "^learn-address add 02:66:" "$OVT_DIR/la.log")" -ge 1 ] ||
        fail "learn-address was not asked about client 1's flood of MACs: $(cat "$OVT_DIR/flood.log")"
fi
for i in 1 2; do
    d=$(client_tun_dev "$i")
    [ "$(dev_kind "$(client_ns "$i")" "$d")" = tap ] || fail "client $i's device $d is not a tap device"
done
[ "$(client_inet 1)" = 198.19.0.2/24 ] || fail "client 1 has $(client_inet 1), not the pool's first 198.19.0.2/24"
[ "$(client_inet 2)" = 198.19.0.3/24 ] || fail "client 2 has $(client_inet 2), not 198.19.0.3/24"
pr=$(push_reply 1)
case "$pr" in
*"route-gateway 198.19.0.1"*"ifconfig 198.19.0.2 255.255.255.0"*) ;;
*) fail "client 1's PUSH_REPLY lacks 2.6's route-gateway / ifconfig ADDRESS NETMASK: $pr" ;;
esac
case "$pr" in
*topology*) fail "a topology was pushed with dev tap (2.6 pushes none): $pr" ;;
esac
assert_ping "$ns1" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client 1 -> server tap (ARP through the tunnel)"
assert_ping "$ns2" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client 2 -> server tap"
assert_ping "$NS_SRV" 198.19.0.2 10 0.05 0 "server -> client 1"
assert_ping "$NS_SRV" 198.19.0.3 10 0.05 0 "server -> client 2"
assert_ping "$ns1" 198.19.0.3 10 0.05 0 "client 1 -> client 2 (client-to-client)"
assert_ping "$ns2" 198.19.0.2 10 0.05 0 "client 2 -> client 1 (client-to-client)"
# the server's neighbour entry for client 1 is client 1's tap MAC: frames came through whole
mac1=$(ip -n "$ns1" -o link show dev "$(client_tun_dev 1)" | grep -o "link/ether [0-9a-f:]*" | awk '{print $2}')
wait_for 3 out_has "^198\.19\.0\.2 .*lladdr $mac1" ip -n "$NS_SRV" neigh show dev "$sdev" ||
    fail "the server's neighbour entry for 198.19.0.2 is not client 1's MAC $mac1: $(ip -n "$NS_SRV" neigh show dev "$sdev")"
grep -qx "learn-address add $mac1@0 client1" "$OVT_DIR/la.log" ||
    fail "learn-address was not called with 'add $mac1@0 client1': $(cat "$OVT_DIR/la.log" 2>/dev/null)"
grep -q "198\.19\.0\." "$OVT_DIR/la.log" &&
    fail "learn-address was called for a pool address (2.6 learns none with tap): $(cat "$OVT_DIR/la.log")"
# status version 1: "MAC@VID,CN,REAL,LAST-REF" in the ROUTING TABLE, no pool address there
wait_for 3 grep -q "^$mac1@0,client1,198\.18\.0\.[0-9]*:[0-9]*,[0-9]" "$OVT_DIR/status.log" ||
    fail "the status file's ROUTING TABLE has no row for client 1's MAC: $(cat "$OVT_DIR/status.log")"
grep -q "^198\.19\.0\.[0-9]*," "$OVT_DIR/status.log" &&
    fail "the status file's ROUTING TABLE lists a pool address (2.6 lists MACs with tap): $(cat "$OVT_DIR/status.log")"
head -c 2000000 /dev/urandom >"$OVT_DIR/xfer.bin"
tcp_transfer "TCP client 1 -> server over tap" "$NS_SRV" "$OVT_SERVER_TUN_IP" "$ns1" \
    "$OVT_DIR/xfer.bin" "$OVT_DIR/xfer.out" 5001 60
client_stop 1
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    # ovpnd deletes a client's MACs when it goes; 2.6 when its route reaper gets to them (up to
    # minutes later) or at its exit: a documented difference, in time only
    wait_for 5 grep -qx "learn-address delete $mac1@0" "$OVT_DIR/la.log" ||
        fail "no learn-address 'delete $mac1@0' when client 1 left: $(cat "$OVT_DIR/la.log")"
fi
client_stop 2
server_stop
# "delete MAC@0" without a common name (2.6 multi_reap_range), after the "add"
grep -n . "$OVT_DIR/la.log" | grep -q ":learn-address delete $mac1@0$" ||
    fail "no learn-address 'delete $mac1@0' for client 1: $(cat "$OVT_DIR/la.log")"
[ "$(grep -n "add $mac1@0 " "$OVT_DIR/la.log" | head -n 1 | cut -d: -f1)" -lt \
    "$(grep -n "delete $mac1@0" "$OVT_DIR/la.log" | tail -n 1 | cut -d: -f1)" ] ||
    fail "learn-address: client 1's delete came before its add: $(cat "$OVT_DIR/la.log")"

# ---- server-bridge GW MASK POOL-START POOL-END ----
cat >"$OVT_DIR/up.sh" <<'EOF'
#!/bin/sh
# what a bridge set-up would do: here the gateway address goes on the device itself
ip link set dev "$1" up
ip addr add 198.19.0.1/24 dev "$1"
EOF
chmod 755 "$OVT_DIR/up.sh"
OVT_SERVER_LINE="server-bridge 198.19.0.1 255.255.255.0 198.19.0.100 198.19.0.110" \
    tap_conf_write "script-security 2" "up $OVT_DIR/up.sh"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1 "dev tap"
wait_tunnel 1
[ "$(client_inet 1)" = 198.19.0.100/24 ] || fail "server-bridge: client 1 has $(client_inet 1), not the bridge pool's first 198.19.0.100/24"
pr=$(push_reply 1)
case "$pr" in
*"route-gateway 198.19.0.1"*"ifconfig 198.19.0.100 255.255.255.0"*) ;;
*) fail "server-bridge: client 1's PUSH_REPLY lacks route-gateway 198.19.0.1 / ifconfig 198.19.0.100 255.255.255.0: $pr" ;;
esac
assert_ping "$ns1" "$OVT_SERVER_TUN_IP" 10 0.05 0 "server-bridge: client 1 -> gateway"
client_stop 1
server_stop

# ---- the long form of a bridge: mode server + tls-server + ifconfig-pool, no server line ----
# (2.6 starts it: the device is left as opened, the client gets the pool's first address with
# the pool's netmask, and no route-gateway is pushed)
OVT_SERVER_LINE=$'mode server\ntls-server\nifconfig-pool 198.19.0.100 198.19.0.110 255.255.255.0' \
    tap_conf_write "script-security 2" "up $OVT_DIR/up.sh"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1 "dev tap"
wait_tunnel 1
[ "$(client_inet 1)" = 198.19.0.100/24 ] || fail "mode server + ifconfig-pool: client 1 has $(client_inet 1), not 198.19.0.100/24"
pr=$(push_reply 1)
case "$pr" in
*"route-gateway"*) fail "mode server + ifconfig-pool: a route-gateway was pushed (2.6 pushes none): $pr" ;;
esac
assert_ping "$ns1" "$OVT_SERVER_TUN_IP" 10 0.05 0 "mode server + ifconfig-pool: client 1 -> the device's address"
client_stop 1
server_stop

# ---- server-bridge without a pool: route-gateway dhcp, no ifconfig ----
OVT_SERVER_LINE="server-bridge" tap_conf_write "script-security 2" "up $OVT_DIR/up.sh"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1 "dev tap"
wait_for 30 grep -q "Initialization Sequence Completed" "$OVT_DIR/client1.log" ||
    fail "server-bridge (no pool): client 1 did not connect"
pr=$(push_reply 1)
case "$pr" in
*"route-gateway dhcp"*) ;;
*) fail "server-bridge (no pool): client 1 was not pushed route-gateway dhcp: $pr" ;;
esac
case "$pr" in
*"ifconfig "*) fail "server-bridge (no pool): client 1 was pushed an address: $pr" ;;
esac
# what the client's DHCP client would do: bring the device up with an address of the LAN
d=$(client_tun_dev 1)
ip -n "$ns1" link set dev "$d" up
ip -n "$ns1" addr add 198.19.0.50/24 dev "$d"
assert_ping "$ns1" "$OVT_SERVER_TUN_IP" 10 0.05 0 "server-bridge (no pool): client 1 (its own address) -> gateway"
exit 0
