#!/usr/bin/env bash
# remote-cert-tls client: a certificate from the right CA but without the "TLS Web Client
# Authentication" extended key usage (made here with no extended key usage at all, which TLS
# itself lets through) is refused with AUTH_FAILED and a log line naming the peer and the
# reason, and gets no address; a proper client certificate still connects. Then a client with
# no data cipher in common with the server is refused the same way, with 2.6's AUTH_FAILED text.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init refusals

netns_setup 2
pki_make "$OVT_DIR"
OVT_STATUS_VERSION=2 server_conf_write "$OVT_DIR" "remote-cert-tls client"
server_start "$OVT_DIR"

pki=$OVT_DIR/pki
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=noeku \
    -keyout "$pki/noeku.key" -out "$pki/noeku.csr" 2>/dev/null
printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n' >"$pki/noeku.ext"
openssl x509 -req -in "$pki/noeku.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 2 -extfile "$pki/noeku.ext" -out "$pki/noeku.crt" 2>/dev/null
OVT_CLIENT_CERT=$pki/noeku.crt OVT_CLIENT_KEY=$pki/noeku.key \
    client_start "$OVT_DIR" 2 "auth-retry none"
refused() { grep -q "AUTH_FAILED" "$OVT_DIR/client2.log"; }
wait_for 30 refused || fail "client certificate without clientAuth EKU was not refused"
server_log_grep "198\.18\.0\.3:[0-9]+.*(remote-cert-tls client)" ||
    fail "server log does not name the refused peer and the reason"
[ -z "$(client_tun_ip 2)" ] || fail "the refused client got a tunnel address"
if grep -q "^CLIENT_LIST,noeku," "$OVT_DIR/status.log" 2>/dev/null; then
    fail "the refused client is listed in the status file"
fi
ovt_log "certificate without clientAuth EKU refused with AUTH_FAILED"

client_start "$OVT_DIR" 1
wait_tunnel 1
[ "${CLIENT_TUN_IP[1]}" = 198.19.0.2 ] ||
    fail "the refused client consumed an address (good client got ${CLIENT_TUN_IP[1]})"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 10 0.05 0 "proper client certificate"
client_stop 1
server_stop

OVT_STATUS_VERSION=2 server_conf_write "$OVT_DIR" "data-ciphers AES-256-GCM"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 2 "data-ciphers AES-128-GCM:CHACHA20-POLY1305" "auth-retry none"
refused_cipher() { grep -q "AUTH_FAILED.*no shared cipher\|AUTH: Received control message: AUTH_FAILED" "$OVT_DIR/client2.log"; }
wait_for 30 refused_cipher || fail "client without a shared cipher was not told AUTH_FAILED"
server_log_grep "198\.18\.0\.3:[0-9]+.*no shared data cipher" ||
    fail "server log does not name the peer and the missing shared cipher"
[ -z "$(client_tun_ip 2)" ] || fail "the client without a shared cipher got a tunnel address"
ovt_log "client without a shared data cipher refused with AUTH_FAILED"
client_stop 2
server_stop

# A certificate from the right CA without a common name is refused, as 2.6 does.
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /O=nocn \
    -keyout "$pki/nocn.key" -out "$pki/nocn.csr" 2>/dev/null
printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n' \
    >"$pki/nocn.ext"
openssl x509 -req -in "$pki/nocn.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 2 -extfile "$pki/nocn.ext" -out "$pki/nocn.crt" 2>/dev/null
server_conf_write "$OVT_DIR"
server_start "$OVT_DIR"
OVT_CLIENT_CERT=$pki/nocn.crt OVT_CLIENT_KEY=$pki/nocn.key client_start "$OVT_DIR" 2 "auth-retry none"
wait_for 30 refused || fail "client certificate without a CN was not refused"
server_log_grep "198\.18\.0\.3:[0-9]+.*no common name" || fail "server log does not say why"
[ -z "$(client_tun_ip 2)" ] || fail "the client without a CN got a tunnel address"
ovt_log "certificate without a common name refused"
