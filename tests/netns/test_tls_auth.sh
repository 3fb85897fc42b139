#!/usr/bin/env bash
# tls-auth instead of tls-crypt (server `tls-auth ta 0`, clients `tls-auth ta 1`), with three
# clients at once:
#   client 1: default data-ciphers -> the server's first choice, AES-256-GCM (openvpn 2.6 default
#             data-ciphers AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305)
#   client 2: data-ciphers CHACHA20-POLY1305
#   client 3: data-ciphers AES-128-GCM
# Each tunnel comes up with the expected data channel cipher (client log) and carries pings both
# ways with no loss. The server has `tls-groups secp384r1:secp256r1`, so every client's control
# channel uses secp384r1 for ECDHE (client log: "peer temporary key: 384 bits"); the list also
# limits certificate curves, as in openvpn 2.6, so the P-256 of the test certificates stays in.
# `tls-cipher` names one suite in Mbed TLS's spelling and skips a name it does not know: the
# control channel uses that suite (tls-version-max 1.2, so that openvpn 2.6 as the server, which
# would pick TLS 1.3, passes the same checks).
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init tls_auth
# shellcheck disable=SC2034 # read by lib.sh
OVT_WRAP=tls-auth

netns_setup 3
pki_make "$OVT_DIR"
server_conf_write "$OVT_DIR" "tls-groups secp384r1:secp256r1" \
    "tls-cipher NO-SUCH-SUITE:TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256" "tls-version-max 1.2"
grep -q '^tls-auth .* 0$' "$OVT_DIR/server.conf" || fail "server.conf has no 'tls-auth ... 0' line"
server_start "$OVT_DIR"

ciphers=(AES-256-GCM CHACHA20-POLY1305 AES-128-GCM)
client_start "$OVT_DIR" 1
client_start "$OVT_DIR" 2 "data-ciphers CHACHA20-POLY1305"
client_start "$OVT_DIR" 3 "data-ciphers AES-128-GCM"
for i in 1 2 3; do
    wait_tunnel "$i"
    want=${ciphers[$((i - 1))]}
    wait_for 5 grep -q "Data Channel: cipher '$want'" "$OVT_DIR/client$i.log" ||
        fail "client $i: data channel cipher is not $want ($(grep -m1 'Data Channel: cipher' \
            "$OVT_DIR/client$i.log" | cut -c21- || echo none logged))"
    grep -q "tls-auth" "$OVT_DIR/client$i.conf" || fail "client $i config lacks tls-auth"
    grep -q "cipher TLSv1.2 ECDHE-ECDSA-AES128-GCM-SHA256," "$OVT_DIR/client$i.log" ||
        fail "client $i: control channel suite is not the one tls-cipher names ($(grep -m1 -o \
            'Control Channel: [^,]*' "$OVT_DIR/client$i.log" || echo none logged))"
    grep -q "peer temporary key: 384 bits" "$OVT_DIR/client$i.log" ||
        fail "client $i: ECDHE did not use secp384r1 from tls-groups ($(grep -m1 -o \
            'peer temporary key: .*' "$OVT_DIR/client$i.log" || echo none logged))"
done

assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 200 0.01 0 "client 1 (AES-256-GCM)"
assert_ping "$NS_SRV" "${CLIENT_TUN_IP[1]}" 20 0.05 0 "server -> client 1"
for i in 2 3; do
    assert_ping "$(client_ns "$i")" "$OVT_SERVER_TUN_IP" 100 0.01 0 "client $i (${ciphers[$((i - 1))]})"
    assert_ping "$NS_SRV" "${CLIENT_TUN_IP[$i]}" 10 0.05 0 "server -> client $i"
done
server_alive || fail "server died"
