#!/usr/bin/env bash
# A server config without `topology` gets openvpn 2.6's default, net30: the stock client gets
# the first /30 pair of the pool (198.19.0.6 peer 198.19.0.5), a client-config-dir file's
# `ifconfig-push 198.19.0.101 198.19.0.102` is read as a net30 pair (the client's address, then
# its peer), both clients ping the server's tun address and the server pings them; ovpnd logs
# that net30 is in force because topology was not set. Also against openvpn 2.6, which behaves
# the same (its own log line differs and is not checked).
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init topology_default

netns_setup 2
pki_make "$OVT_DIR"
ccd=$OVT_DIR/ccd
mkdir -p "$ccd"
chmod 755 "$ccd"
printf 'ifconfig-push 198.19.0.101 198.19.0.102\n' >"$ccd/client2"
chmod 644 "$ccd/client2"

client_inet() { # "ADDR peer REMOTE/32" or "ADDR/BITS" of client I's tun
    ip -n "$(client_ns "$1")" -4 -o addr show dev "$(client_tun_dev "$1")" |
        awk '{ if ($5 == "peer") print $4 " peer " $6; else print $4 }'
}

OVT_TOPOLOGY=none server_conf_write "$OVT_DIR" "client-config-dir $ccd"
grep -q '^topology' "$OVT_DIR/server.conf" && fail "the config has a topology line"
server_start "$OVT_DIR"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    server_log_grep "topology is not set: net30, the default of openvpn 2.6, is in force" ||
        fail "ovpnd did not log that net30 is in force"
    server_log_grep "\(topology net30\)" || fail "the start-up line does not name topology net30"
fi
wait_for 3 out_has "inet 198\.19\.0\.1 peer 198\.19\.0\.2/32 " ip -n "$NS_SRV" -4 -o addr show ||
    fail "the server's tun is not net30's 198.19.0.1 peer 198.19.0.2: $(ip -n "$NS_SRV" -4 -o addr show)"
client_start "$OVT_DIR" 1
wait_tunnel 1
client_start "$OVT_DIR" 2
wait_tunnel 2
[ "$(client_inet 1)" = "198.19.0.6 peer 198.19.0.5/32" ] ||
    fail "client 1 has $(client_inet 1), not 2.6's first net30 pair 198.19.0.6 peer 198.19.0.5"
[ "$(client_inet 2)" = "198.19.0.101 peer 198.19.0.102/32" ] ||
    fail "client 2 has $(client_inet 2), not its ifconfig-push pair 198.19.0.101 peer 198.19.0.102"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client 1 -> server tun"
assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client 2 (ifconfig-push pair) -> server tun"
assert_ping "$NS_SRV" 198.19.0.6 5 0.05 0 "server -> client 1"
assert_ping "$NS_SRV" 198.19.0.101 5 0.05 0 "server -> client 2"
client_stop 1
client_stop 2
server_stop
ovt_log "PASS"
