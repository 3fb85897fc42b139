#!/usr/bin/env bash
# A laptop whose address changes mid-session (NAT rebinding, new network) keeps its tunnel: its
# next authenticated packet from the new address moves the session there (openvpn's float with
# peer-id). Pings go on, the status file shows the new real address, and the explicit exit
# from the new address still ends the session at once.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init float

netns_setup 1
pki_make "$OVT_DIR"
OVT_STATUS_VERSION=2 OVT_KEEPALIVE="10 120" server_conf_write "$OVT_DIR"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1
wait_tunnel 1
ns=$(client_ns 1)
assert_ping "$ns" "$OVT_SERVER_TUN_IP" 10 0.05 0 "before the move"

# Move the client from 198.18.0.2 to 198.18.0.102 (same underlay /24).
ip -n "$ns" addr del 198.18.0.2/24 dev eth0
ip -n "$ns" addr add 198.18.0.102/24 dev eth0
assert_ping "$ns" "$OVT_SERVER_TUN_IP" 20 0.1 5 "after the move"
moved() { grep -q '^CLIENT_LIST,client1,198\.18\.0\.102:' "$OVT_DIR/status.log"; }
wait_for 10 moved || fail "status file does not show the new address 198.18.0.102"
gone() { ! grep -q '^CLIENT_LIST,client1,' "$OVT_DIR/status.log"; }
client_stop 1
wait_for 10 gone || fail "explicit exit from the new address did not end the session"
ovt_log "client moved to 198.18.0.102 and its exit from there was honoured"
