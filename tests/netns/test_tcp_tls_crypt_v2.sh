#!/usr/bin/env bash
# tls-crypt-v2 over the TCP transport: the stock client's P_CONTROL_HARD_RESET_CLIENT_V3 carries
# its wrapped key (WKc); over TCP the server keeps the client key with the session it creates at
# once (no cookie round trip, so the client is not asked to send its WKc again). Two clients with
# keys made by openvpn and by ovpnd connect with `proto tcp-client` and ping; a client whose key
# was wrapped with another server key does not get in, and the others keep working.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init tcp_tls_crypt_v2
OVT_WRAP=none
OVPND_BIN=${OVPND:-$OVT_SRC/build/ovpnd}
[ -x "$OVPND_BIN" ] || fail "ovpnd binary not found at $OVPND_BIN (it makes the keys)"

netns_setup 3
pki_make "$OVT_DIR" --clients 3
k=$OVT_DIR/keys
mkdir -p "$k"
"$OVPND_BIN" --genkey tls-crypt-v2-server "$k/server.key" || fail "ovpnd could not make a server key"
openvpn --genkey tls-crypt-v2-client "$k/c1.key" --tls-crypt-v2 "$k/server.key" >/dev/null ||
    fail "openvpn cannot wrap a client key with ovpnd's server key"
"$OVPND_BIN" --tls-crypt-v2 "$k/server.key" --genkey tls-crypt-v2-client "$k/c2.key" ||
    fail "ovpnd could not make a client key"
openvpn --genkey tls-crypt-v2-server "$k/other-server.key" >/dev/null
openvpn --genkey tls-crypt-v2-client "$k/c3.key" --tls-crypt-v2 "$k/other-server.key" >/dev/null
chmod 600 "$k"/*.key

export OVT_PROTO=tcp-server OVT_CLIENT_PROTO=tcp4-client
server_conf_write "$OVT_DIR" "tls-crypt-v2 $k/server.key"
server_start "$OVT_DIR"
for i in 1 2 3; do client_start "$OVT_DIR" "$i" "tls-crypt-v2 $k/c$i.key"; done
wait_tunnel 1
wait_tunnel 2
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 20 0.05 0 "client 1 (key by openvpn) over TCP"
assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 20 0.05 0 "client 2 (key by ovpnd) over TCP"
# the server has seen client 3's reset and refused its key (both log the client's address)
wait_for 20 server_log_grep "$(client_ip 3):[0-9]*" || fail "the server never saw client 3"
client_up 3 && fail "client 3, whose key another server wrapped, got a tunnel"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client 1 after client 3's tries"
server_alive || fail "server died"
