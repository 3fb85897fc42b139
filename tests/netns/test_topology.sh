#!/usr/bin/env bash
# Topologies and pools with the stock client, one server start each:
#  - topology net30 + client-to-client: the first two clients get openvpn 2.6's /30 pairs
#    (198.19.0.6 peer 198.19.0.5, 198.19.0.10 peer 198.19.0.9) and the pushed route to the
#    whole network; both ping the server's tun address and each other; the status file lists
#    both addresses; a third client's client-config-dir pair (198.19.0.101 198.19.0.102, the
#    client end first, inside the pool) comes up as written and is reachable;
#  - topology p2p: the client gets 198.19.0.4 with the server's 198.19.0.1 as its peer, and
#    pings it;
#  - topology subnet with `server ... nopool`, a narrower ifconfig-pool (.100-.149) and
#    ifconfig-ipv6 + ifconfig-ipv6-pool: the client's IPv4 address is the first of the pool,
#    its IPv6 address the first of the IPv6 pool, and IPv6 pings work; a second client's
#    client-config-dir file gives it an address outside the pool (.50), reachable from the
#    server; a third client's file pushes an address outside the server's subnet: refused,
#    and the log names the file and line.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init topology

[ "$OVPN_SERVER_IMPL" = ovpnd ] || ovt_skip "checks ovpnd's refusal messages"
netns_setup 3
pki_make "$OVT_DIR"
ns1=$(client_ns 1)
ns2=$(client_ns 2)

# "ADDR peer REMOTE" of client I's tun, or "ADDR/BITS"
client_inet() {
    ip -n "$(client_ns "$1")" -4 -o addr show dev "$(client_tun_dev "$1")" |
        awk '{ if ($5 == "peer") print $4 " peer " $6; else print $4 }'
}
status_has() { grep -q "$1" "$OVT_DIR/status.log" 2>/dev/null; }

# ---- net30 with client-to-client ----
ccd=$OVT_DIR/ccd
mkdir -p "$ccd"
chmod 755 "$ccd"
# the HOWTO's net30 pair: the client end first (a /30 block's .1), the server end second
printf 'ifconfig-push 198.19.0.101 198.19.0.102\n' >"$ccd/client3"
chmod 644 "$ccd/client3"
OVT_TOPOLOGY=net30 server_conf_write "$OVT_DIR" "client-to-client" "client-config-dir $ccd"
server_start "$OVT_DIR"
wait_for 3 out_has "inet 198\.19\.0\.1 peer 198\.19\.0\.2/32 " ip -n "$NS_SRV" -4 -o addr show ||
    fail "net30: the server's tun is not 198.19.0.1 peer 198.19.0.2: $(ip -n "$NS_SRV" -4 -o addr show)"
wait_for 3 out_has "^198\.19\.0\.0/24 .*dev " ip -n "$NS_SRV" -4 route show ||
    fail "net30: no route to 198.19.0.0/24 into the server's tun"
client_start "$OVT_DIR" 1
wait_tunnel 1
client_start "$OVT_DIR" 2
wait_tunnel 2
[ "$(client_inet 1)" = "198.19.0.6 peer 198.19.0.5/32" ] || fail "net30: client 1 has $(client_inet 1), not 2.6's first pair"
[ "$(client_inet 2)" = "198.19.0.10 peer 198.19.0.9/32" ] || fail "net30: client 2 has $(client_inet 2), not 2.6's second pair"
grep -q "PUSH_REPLY,.*route 198.19.0.0 255.255.255.0,topology net30,.*ifconfig 198.19.0.6 198.19.0.5" "$OVT_DIR/client1.log" ||
    fail "net30: client 1's PUSH_REPLY lacks 2.6's route/topology/ifconfig: $(grep PUSH_REPLY "$OVT_DIR/client1.log" | head -n 1)"
assert_ping "$ns1" "$OVT_SERVER_TUN_IP" 10 0.05 0 "net30: client 1 -> server tun"
assert_ping "$ns2" "$OVT_SERVER_TUN_IP" 10 0.05 0 "net30: client 2 -> server tun"
assert_ping "$ns1" 198.19.0.10 10 0.05 10 "net30: client 1 -> client 2 (client-to-client)"
assert_ping "$NS_SRV" 198.19.0.6 10 0.05 0 "net30: server -> client 1"
wait_for 10 status_has "^198.19.0.10,client2," || fail "net30: the status file does not list 198.19.0.10 for client2"
status_has "^198.19.0.6,client1," || fail "net30: no routing row 198.19.0.6 for client1 in the status file"
client_start "$OVT_DIR" 3
wait_tunnel 3
[ "$(client_inet 3)" = "198.19.0.101 peer 198.19.0.102/32" ] || fail "net30: client 3 has $(client_inet 3), not its ifconfig-push pair"
assert_ping "$(client_ns 3)" "$OVT_SERVER_TUN_IP" 5 0.05 0 "net30: client 3 (ifconfig-push pair) -> server tun"
assert_ping "$NS_SRV" 198.19.0.101 5 0.05 0 "net30: server -> client 3"
client_stop 1
client_stop 2
client_stop 3
server_stop
rm -f "$ccd/client3"

# ---- p2p ----
OVT_TOPOLOGY=p2p server_conf_write "$OVT_DIR"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1
wait_tunnel 1
[ "$(client_inet 1)" = "198.19.0.4 peer 198.19.0.1/32" ] || fail "p2p: client 1 has $(client_inet 1), not 198.19.0.4 peer 198.19.0.1"
grep -q "PUSH_REPLY,.*topology p2p,.*ifconfig 198.19.0.4 198.19.0.1" "$OVT_DIR/client1.log" ||
    fail "p2p: client 1's PUSH_REPLY lacks topology p2p / ifconfig 198.19.0.4 198.19.0.1"
assert_ping "$ns1" "$OVT_SERVER_TUN_IP" 10 0.05 0 "p2p: client 1 -> server tun"
client_stop 1
server_stop

# ---- subnet, server nopool + ifconfig-pool, ifconfig-ipv6 + ifconfig-ipv6-pool, CCD ----
printf 'ifconfig-push 198.19.0.50 255.255.255.0\n' >"$ccd/client2"
printf '# outside the subnet\n\nifconfig-push 198.19.1.50 255.255.255.0\n' >"$ccd/client3"
chmod 644 "$ccd"/*
OVT_SERVER_LINE="server 198.19.0.0 255.255.255.0 nopool" server_conf_write "$OVT_DIR" \
    "ifconfig-pool 198.19.0.100 198.19.0.149" \
    "ifconfig-ipv6 2001:2:0:19::1/64 2001:2:0:19::2" \
    "ifconfig-ipv6-pool 2001:2:0:19::100/64" \
    "client-config-dir $ccd"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1
client_start "$OVT_DIR" 2
client_start "$OVT_DIR" 3
wait_tunnel 1
wait_tunnel 2
[ "${CLIENT_TUN_IP[1]}" = 198.19.0.100 ] || fail "ifconfig-pool: client 1 got ${CLIENT_TUN_IP[1]}, not the pool's first 198.19.0.100"
[ "$(client_inet 1)" = 198.19.0.100/24 ] || fail "ifconfig-pool: client 1 has $(client_inet 1), not the /24 of the server"
a6=$(ip -n "$ns1" -6 -o addr show dev "$(client_tun_dev 1)" scope global | awk '{print $4}')
[ "$a6" = 2001:2:0:19::100/64 ] || fail "ifconfig-ipv6-pool: client 1 has IPv6 '$a6', not 2001:2:0:19::100/64"
assert_ping "$ns1" 2001:2:0:19::1 10 0.05 0 "ifconfig-ipv6-pool: client 1 -> server IPv6"
assert_ping "$NS_SRV" 2001:2:0:19::100 10 0.05 0 "ifconfig-ipv6-pool: server -> client 1 IPv6"
[ "${CLIENT_TUN_IP[2]}" = 198.19.0.50 ] || fail "client 2 got ${CLIENT_TUN_IP[2]}, not its ifconfig-push 198.19.0.50"
assert_ping "$NS_SRV" 198.19.0.50 10 0.05 0 "server -> client 2 (static address outside the pool)"
assert_ping "$ns2" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client 2 -> server tun"
wait_server_log "client3.*$ccd/client3:3: ifconfig-push: 198.19.1.50 violates the tunnel network/netmask constraint|client3.*$ccd/client3:3: ifconfig-push: 198.19.1.50 is not a client address" 20 ||
    fail "client 3's address outside the subnet was not refused with file and line: $(server_log_since | grep client3 | tail -n 3)"
client_up 3 && fail "client 3 came up with an address outside the subnet"
ovt_log "client 3 refused: $(server_log_since | grep -o "$ccd/client3:3: [^\"]*" | head -n 1)"
exit 0
