#!/usr/bin/env bash
# The tunnel comes up: the stock openvpn client gets an address from 198.19.0.0/24, 200 pings
# to the server's tun address go through with no loss, and the server reaches the client back.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init tunnel_basic

netns_setup 1
pki_make "$OVT_DIR"
server_conf_write "$OVT_DIR"
server_start "$OVT_DIR"

client_start "$OVT_DIR" 1
wait_tunnel 1
ip=${CLIENT_TUN_IP[1]}
case "$ip" in
198.19.0.1) fail "client got the server's own tunnel address $ip" ;;
198.19.0.*) ;;
*) fail "client address $ip is not in 198.19.0.0/24" ;;
esac
wait_for 3 out_has "inet $ip/24 " ip -n "$(client_ns 1)" -4 -o addr show ||
    fail "client address $ip does not have the /24 netmask of topology subnet"

assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 200 0.01 0 "client -> server tun"
assert_ping "$NS_SRV" "$ip" 20 0.05 0 "server -> client tun"

if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    # The kernel's own IPv6 router solicitations and MLD reports leave through the server's tun
    # within seconds of link-up: multicast, for no client, and not worth a warning.
    if server_log_grep "dropped packet from tun"; then
        fail "the server warned about packets from its tun: $(grep 'dropped packet from tun' "$OVT_DIR/server.log" | head -3)"
    fi
fi
