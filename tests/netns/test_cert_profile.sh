#!/usr/bin/env bash
# tls-cert-profile: a client whose certificate has an RSA 1024-bit key (signed by the right CA
# with SHA-256) is refused by ovpnd's default profile (Mbed TLS's: RSA 2048 and up) and the
# server log says why; with `tls-cert-profile legacy` (openvpn 2.6's Mbed TLS profile: RSA 1024
# and up, SHA-1 and up) the same client connects and passes traffic. Against openvpn 2.6 as the
# server only the second half applies (its OpenSSL default already takes RSA 1024). Between the
# two, a client with an Ed25519 certificate is refused by ovpnd (Mbed TLS 2.28 has no Ed25519;
# openvpn 2.6 with OpenSSL accepts it, so not run against openvpn).
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init cert_profile

netns_setup 1
pki_make "$OVT_DIR"

r=$OVT_DIR/rsa1024
pki_sign_client "$r" rsa1024 rsa:1024 -days 30
e=$OVT_DIR/ed25519
pki_sign_client "$e" ed25519 ed25519 -days 30

if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    server_conf_write "$OVT_DIR"
    server_start "$OVT_DIR"
    OVT_CLIENT_CERT=$r/client.crt OVT_CLIENT_KEY=$r/client.key \
        client_start "$OVT_DIR" 1 "hand-window 10"
    wait_server_log "$(client_ip 1).*certificate verification failed: .*unacceptable key" 40 ||
        fail "the default profile did not refuse the RSA 1024 certificate: $(server_log_since |
            grep -m2 "$(client_ip 1)" || echo nothing logged)"
    ovt_log "default profile: $(server_log_since | grep -m1 'unacceptable key' | cut -c21-200)"
    [ -z "$(client_tun_ip 1)" ] || fail "the RSA 1024 client got a tunnel address"
    client_stop 1
    # Ed25519: Mbed TLS 2.28 has no such key type, so the certificate cannot be verified.
    # (openvpn 2.6 with OpenSSL takes it; this half runs against ovpnd only.)
    rm -f "$OVT_DIR/client1.log"
    OVT_SERVER_LOG_OFF=$(stat -c %s "$OVT_DIR/server.log") # only what follows
    OVT_CLIENT_CERT=$e/client.crt OVT_CLIENT_KEY=$e/client.key \
        client_start "$OVT_DIR" 1 "hand-window 10"
    wait_server_log "$(client_ip 1).*(TLS handshake failed|certificate verification failed)" 40 ||
        fail "the Ed25519 certificate was not refused: $(server_log_since |
            grep -m2 "$(client_ip 1)" || echo nothing logged)"
    ovt_log "Ed25519: $(server_log_since | grep "$(client_ip 1)" | tail -n 1 | cut -c21-220)"
    [ -z "$(client_tun_ip 1)" ] || fail "the Ed25519 client got a tunnel address"
    client_stop 1
    server_stop
fi

server_conf_write "$OVT_DIR" "tls-cert-profile legacy"
server_start "$OVT_DIR"
rm -f "$OVT_DIR/client1.log"
OVT_CLIENT_CERT=$r/client.crt OVT_CLIENT_KEY=$r/client.key client_start "$OVT_DIR" 1
wait_tunnel 1
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 10 0.02 0 "RSA 1024 client with tls-cert-profile legacy"
ovt_log "PASS"
