#!/usr/bin/env bash
# ovpnd built on the other data-channel crypto backend (build/ovpnd-mbedtls in a default build,
# where build/ovpnd uses OpenSSL libcrypto; see OVPND_DATA_CRYPTO in README.md) serves stock
# openvpn 2.6 clients: its log names that backend, four clients with AES-256-GCM,
# CHACHA20-POLY1305, AES-128-GCM and AES-256-CBC (HMAC SHA1) ping both ways with no loss, and
# 5 MiB cross the tunnel over TCP in each direction with matching sha256.
#   OVPND_OTHER_BACKEND_BIN  the server binary to test (set by CTest)
#   OVPND_OTHER_BACKEND      mbedtls or openssl: the backend that binary was built with
# ovt: optimised build only: it compares the two data-channel backends
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
backend=${OVPND_OTHER_BACKEND:-mbedtls}
OVPND=${OVPND_OTHER_BACKEND_BIN:-$OVT_SRC/build/ovpnd-$backend}
case "$backend" in
mbedtls) want_log="data channel crypto: mbed TLS 2\." ;;
openssl) want_log="data channel crypto: OpenSSL 3\." ;;
*)
    ovt_log "FAIL: OVPND_OTHER_BACKEND must be mbedtls or openssl, not '$backend'"
    exit 1
    ;;
esac
ovt_init data_crypto_backend

netns_setup 4
pki_make "$OVT_DIR"
server_conf_write "$OVT_DIR" "data-ciphers AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305:AES-256-CBC"
server_start "$OVT_DIR"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    wait_server_log "$want_log" 5 ||
        fail "server log does not name the $backend backend ('$want_log')"
    ovt_log "$(server_log_since | grep -m1 -o 'data channel crypto: .*')"
fi

ciphers=(AES-256-GCM CHACHA20-POLY1305 AES-128-GCM AES-256-CBC)
for i in 1 2 3 4; do
    client_start "$OVT_DIR" "$i" "data-ciphers ${ciphers[$((i - 1))]}"
done
for i in 1 2 3 4; do
    wait_tunnel "$i"
    want=${ciphers[$((i - 1))]}
    wait_for 5 grep -q "Data Channel: cipher '$want'" "$OVT_DIR/client$i.log" ||
        fail "client $i: data channel cipher is not $want"
    assert_ping "$(client_ns "$i")" "$OVT_SERVER_TUN_IP" 100 0.01 0 "client $i ($want) -> server"
    assert_ping "$NS_SRV" "${CLIENT_TUN_IP[$i]}" 10 0.05 0 "server -> client $i ($want)"
done

# transfer WHAT RECV_NS RECV_ADDR SEND_NS PORT: 5 MiB of random bytes from SEND_NS to a
# listener on RECV_ADDR (a tunnel address), sha256 compared.
transfer() {
    head -c $((5 * 1024 * 1024)) /dev/urandom >"$OVT_DIR/send.$5"
    tcp_transfer "$1" "$2" "$3" "$4" "$OVT_DIR/send.$5" "$OVT_DIR/recv.$5" "$5"
}
transfer "client 1 (AES-256-GCM) -> server" "$NS_SRV" "$OVT_SERVER_TUN_IP" "$(client_ns 1)" 5001
transfer "server -> client 2 (CHACHA20-POLY1305)" "$(client_ns 2)" "${CLIENT_TUN_IP[2]}" "$NS_SRV" 5002
server_alive || fail "server died"
