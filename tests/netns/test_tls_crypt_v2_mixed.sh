#!/usr/bin/env bash
# tls-crypt-v2 beside tls-crypt, then beside tls-auth, on one server (openvpn 2.6 allows both, so
# that clients with older profiles keep connecting while new ones get their own keys):
#   run 1, `tls-crypt-v2 SERVER-KEY` + `tls-crypt ta.key`:
#     client 1: a tls-crypt-v2 profile (renegotiates every 4 s: its later keys stay wrapped
#               with its own key)
#     client 2: a tls-crypt profile with the server's shared key
#     client 3: a tls-crypt profile with another key: refused, logged with its address
#   run 2, `tls-crypt-v2 SERVER-KEY` + `tls-auth tls-auth.key 0`:
#     client 1 again (tls-crypt-v2), client 2 with `tls-auth tls-auth.key 1`
# Every admitted client pings the server and the server pings it.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init tls_crypt_v2_mixed
# shellcheck disable=SC2034 # read by lib.sh: the wrapper lines are written here
OVT_WRAP=none
OVPND_BIN=${OVPND:-$OVT_SRC/build/ovpnd}
[ -x "$OVPND_BIN" ] || fail "ovpnd binary not found at $OVPND_BIN (it makes the keys)"

netns_setup 3
pki_make "$OVT_DIR" --clients 3
pki=$OVT_DIR/pki
k=$OVT_DIR/keys
mkdir -p "$k"
"$OVPND_BIN" --genkey tls-crypt-v2-server "$k/server.key" || fail "ovpnd could not make a server key"
"$OVPND_BIN" --tls-crypt-v2 "$k/server.key" --genkey tls-crypt-v2-client "$k/c1.key" ||
    fail "ovpnd could not make a client key"
openvpn --genkey tls-crypt "$k/other.key" >/dev/null
chmod 600 "$k"/*.key

both_ways() { # both_ways I WHAT
    assert_ping "$(client_ns "$1")" "$OVT_SERVER_TUN_IP" 20 0.02 0 "client $1 ($2)"
    assert_ping "$NS_SRV" "${CLIENT_TUN_IP[$1]}" 5 0.05 0 "server -> client $1 ($2)"
}

server_conf_write "$OVT_DIR" "tls-crypt-v2 $k/server.key" "tls-crypt $pki/ta.key"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1 "tls-crypt-v2 $k/c1.key" "reneg-sec 4"
client_start "$OVT_DIR" 2 "tls-crypt $pki/ta.key"
client_start "$OVT_DIR" 3 "tls-crypt $k/other.key"
wait_tunnel 1
wait_tunnel 2
both_ways 1 tls-crypt-v2
both_ways 2 "tls-crypt beside tls-crypt-v2"
c3=$(client_ip 3)
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    wait_server_log "$c3:[0-9]+: dropped packet: tls-auth/tls-crypt authentication failed" 20 ||
        fail "client 3's packets (another tls-crypt key) were not refused with its address"
else
    wait_server_log "tls-crypt unwrapping failed from \[AF_INET\]$c3" 20 ||
        fail "openvpn: client 3's refusal not logged"
fi
# client 1 renegotiates twice without restarting: its new keys come wrapped with its Kc
wait_for 30 sh -c "[ \$(grep -c 'TLS: soft reset' '$OVT_DIR/client1.log') -ge 2 ]" ||
    fail "client 1 did not renegotiate twice"
n_init=$(grep -c "Initialization Sequence Completed" "$OVT_DIR/client1.log" || true)
[ "$n_init" = 1 ] || fail "client 1 restarted instead of renegotiating ($n_init initialisations)"
both_ways 1 "tls-crypt-v2 after renegotiating"
! grep -q "Initialization Sequence Completed" "$OVT_DIR/client3.log" || fail "client 3 got a tunnel"
for i in 1 2 3; do
    client_stop "$i"
done
server_stop

server_conf_write "$OVT_DIR" "tls-crypt-v2 $k/server.key" "tls-auth $pki/tls-auth.key 0"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1 "tls-crypt-v2 $k/c1.key"
client_start "$OVT_DIR" 2 "tls-auth $pki/tls-auth.key 1"
wait_tunnel 1
wait_tunnel 2
both_ways 1 "tls-crypt-v2 beside tls-auth"
both_ways 2 "tls-auth beside tls-crypt-v2"
server_alive || fail "server died"
