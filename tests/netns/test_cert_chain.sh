#!/usr/bin/env bash
# Certificate files as deployments write them (openvpn 2.6 options.c, ssl.c, ssl_verify.c):
#  1. `ca` holding two CA certificates (a bundle) and `cert` holding the server certificate and
#     the intermediate CA that signed it: a client with only the root CA verifies the server
#     (the chain is sent), and a client whose certificate the second CA signed connects.
#  2. `extra-certs FILE`: the server certificate alone in `cert`, the intermediate in
#     extra-certs: a client with only the root CA connects; without extra-certs it cannot verify
#     the server (what shows that extra-certs is what sent the intermediate).
#  3. `crl-verify DIR dir`: a file named by a client certificate's decimal serial number in DIR
#     revokes it: that client is refused with the serial in the log, the other connects; a file
#     added for a connected client refuses it at its next renegotiation.
# (`capath DIR`: test_capath.sh.)
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init cert_chain

netns_setup 2
pki_make "$OVT_DIR" --clients 1
dir=$OVT_DIR
pki=$dir/pki

# An intermediate CA under the root, a server certificate it signs, and a second root CA that
# signs one client certificate.
mk() { # mk NAME SUBJECT SIGNER_CRT SIGNER_KEY SERIAL EXT...: NAME.crt/.key in $dir
    local name=$1 subj=$2 ca=$3 cakey=$4 serial=$5
    shift 5
    printf '%s\n' "$@" >"$dir/$name.ext"
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$dir/$name.key" \
        -subj "$subj" -out "$dir/$name.csr" &&
        openssl x509 -req -in "$dir/$name.csr" -CA "$ca" -CAkey "$cakey" -set_serial "$serial" \
            -days 2 -sha256 -extfile "$dir/$name.ext" -out "$dir/$name.crt"
}
{
    mk int "/CN=ovpnd test intermediate" "$pki/ca.crt" "$pki/ca.key" 11 \
        'basicConstraints = critical, CA:TRUE' 'keyUsage = critical, keyCertSign, cRLSign' &&
        mk srvint "/CN=server" "$dir/int.crt" "$dir/int.key" 12 'basicConstraints = CA:FALSE' \
            'keyUsage = critical, digitalSignature, keyAgreement' \
            'extendedKeyUsage = serverAuth' &&
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
            -keyout "$dir/ca2.key" -subj "/CN=ovpnd second CA" -days 2 -out "$dir/ca2.crt" &&
        mk c2 "/CN=fromca2" "$dir/ca2.crt" "$dir/ca2.key" 987654321 'basicConstraints = CA:FALSE' \
            'keyUsage = critical, digitalSignature, keyAgreement' 'extendedKeyUsage = clientAuth'
} >"$dir/openssl.log" 2>&1 || fail "could not make the test certificates: $(cat "$dir/openssl.log")"
cat "$pki/ca.crt" "$dir/ca2.crt" >"$dir/bundle.crt"
cat "$dir/srvint.crt" "$dir/int.crt" >"$dir/chain.crt"

ca2_client() { # client_start in namespace $1 with the certificate from the second CA
    OVT_CLIENT_CERT=$dir/c2.crt OVT_CLIENT_KEY=$dir/c2.key client_start "$dir" "$1" \
        "auth-retry none"
}
# server_conf_write, then the ca/cert/key lines replaced by "$@"
conf_with() {
    server_conf_write "$dir"
    grep -v -E '^(ca|cert|key) ' "$dir/server.conf" >"$dir/server.conf.new"
    printf '%s\n' "$@" >>"$dir/server.conf.new"
    mv "$dir/server.conf.new" "$dir/server.conf"
}

# 1. a CA bundle and a certificate chain
conf_with "ca $dir/bundle.crt" "cert $dir/chain.crt" "key $dir/srvint.key"
server_start "$dir"
client_start "$dir" 1
ca2_client 2
wait_tunnel 1
wait_tunnel 2
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 3 0.1 0 "chain: client1 (root CA only)"
assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 3 0.1 0 "bundle: the second CA's client"
client_stop 1
client_stop 2
server_stop
ovt_log "ca bundle and cert chain: both CAs' clients connect, the chain is sent"

# 2. extra-certs, and the same without it
conf_with "ca $dir/bundle.crt" "cert $dir/srvint.crt" "key $dir/srvint.key" \
    "extra-certs $dir/int.crt"
server_start "$dir"
client_start "$dir" 1
wait_tunnel 1
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 3 0.1 0 "extra-certs: client1 (root CA only)"
client_stop 1
server_stop
conf_with "ca $dir/bundle.crt" "cert $dir/srvint.crt" "key $dir/srvint.key"
server_start "$dir"
client_start "$dir" 1 "auth-retry none"
wait_for 30 grep -q "VERIFY ERROR" "$dir/client1.log" ||
    fail "without extra-certs the client still verified the server (the intermediate was sent?)"
[ -z "$(client_tun_ip 1)" ] || fail "without extra-certs client1 got an address"
client_stop 1
server_stop
ovt_log "extra-certs: the intermediate is sent with it, and only with it"

# 3. crl-verify DIR dir
mkdir -p "$dir/crldir"
: >"$dir/crldir/987654321"
chmod 755 "$dir" "$dir/crldir"
chmod 644 "$dir/crldir/987654321"
conf_with "ca $dir/bundle.crt" "cert $dir/chain.crt" "key $dir/srvint.key" \
    "crl-verify $dir/crldir dir" "reneg-sec 10"
server_start "$dir"
client_start "$dir" 1
ca2_client 2
wait_tunnel 1
# (2.6: "VERIFY CRL: depth=0, CN=fromca2, serial=987654321 is revoked")
wait_server_log "198\.18\.0\.3:[0-9]+.*987654321.*revoked|serial=987654321 is revoked" 30 ||
    fail "the client whose serial is in the CRL directory was not refused with it in the log"
[ -z "$(client_tun_ip 2)" ] || fail "the revoked client got an address"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 3 0.1 0 "crl dir: client1 (not revoked)"
client_stop 2
ovt_log "crl-verify dir: the listed serial refused, the other admitted"
# Revoking client1 while it is connected: its next renegotiation (reneg-sec 10) refuses it.
serial1=$(python3 -c "print(int('$(openssl x509 -in "$pki/client1.crt" -noout -serial |
    sed 's/^serial=//')', 16))")
: >"$dir/crldir/$serial1"
chmod 644 "$dir/crldir/$serial1"
wait_server_log "198\.18\.0\.2:[0-9]+.*serial=$serial1.*revoked|serial=$serial1 is revoked" 30 ||
    fail "client1, revoked while connected, was not refused at its renegotiation"
client_stop 1
server_stop
ovt_log "crl-verify dir: a serial added while the client is connected refuses it at renegotiation"

