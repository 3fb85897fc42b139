#!/usr/bin/env bash
# peer-fingerprint (openvpn 2.6): without `ca`, self-signed client certificates whose SHA-256
# fingerprint is listed (as a `peer-fingerprint` line or in a <peer-fingerprint> block) connect
# and ping; an unlisted one is refused, the server log naming its address and fingerprint. With
# `ca` as well, the fingerprint is checked on top of the CA chain (2.6 ssl_verify.c: the hash is
# one more condition; only without a CA does it stand in for the chain): a CA-signed listed
# certificate connects, a CA-signed unlisted one and a listed self-signed one are refused.
# verify-hash: the CA at depth 1 listed (SHA-1 line) admits client1, an unlisted one (SHA-256
# block) refuses it. ns-cert-type client: client certificates (the usual one, one with only
# nsCertType=client) admitted, a server certificate refused.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init peer_fingerprint

netns_setup 3
pki_make "$OVT_DIR" --clients 2
dir=$OVT_DIR

# self_signed NAME: a self-signed EC P-256 client certificate DIR/NAME.crt with its key.
self_signed() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
        -subj "/CN=$1" -addext "extendedKeyUsage=clientAuth" \
        -addext "keyUsage=critical,digitalSignature" \
        -keyout "$dir/$1.key" -out "$dir/$1.crt" >"$dir/openssl-$1.log" 2>&1 ||
        fail "openssl could not make $1: $(cat "$dir/openssl-$1.log")"
}
# fp FILE: the certificate's SHA-256 fingerprint as AB:CD:... (upper case, as openssl prints it)
fp() { openssl x509 -in "$1" -noout -fingerprint -sha256 | sed 's/^.*=//'; }
# fp_re FP: an ERE matching FP in upper or lower case (2.6 logs it in lower case)
fp_re() { echo "($1|$(echo "$1" | tr 'A-F' 'a-f'))"; }

self_signed fpa
self_signed fpb
self_signed fpc
FPA=$(fp "$dir/fpa.crt")
FPB=$(fp "$dir/fpb.crt")
FPC=$(fp "$dir/fpc.crt")
FP1=$(fp "$dir/pki/client1.crt")

# 1. No CA: the fingerprints alone decide. fpa is listed on a line of its own, fpc in the block
# (with a comment line, a blank line and another certificate's fingerprint); fpb nowhere.
server_conf_write "$dir" "peer-fingerprint $FPA" "<peer-fingerprint>" "# listed clients" \
    "$FP1" "" "  $FPC" "</peer-fingerprint>"
sed -i '/^ca /d' "$dir/server.conf"
grep -q '^ca ' "$dir/server.conf" && fail "the server config still names a CA"
server_start "$dir"

OVT_CLIENT_CERT=$dir/fpa.crt OVT_CLIENT_KEY=$dir/fpa.key client_start "$dir" 1
OVT_CLIENT_CERT=$dir/fpb.crt OVT_CLIENT_KEY=$dir/fpb.key client_start "$dir" 2 "auth-retry none"
OVT_CLIENT_CERT=$dir/fpc.crt OVT_CLIENT_KEY=$dir/fpc.key client_start "$dir" 3
wait_tunnel 1
wait_tunnel 3
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "listed self-signed fpa (option line)"
assert_ping "$(client_ns 3)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "listed self-signed fpc (inline block)"
wait_server_log "198\.18\.0\.3:[0-9]+.*fingerprint.*$(fp_re "$FPB")" 30 ||
    fail "the unlisted fpb was not refused with a log line naming its address and fingerprint"
[ -z "$(client_tun_ip 2)" ] || fail "the unlisted self-signed client got an address"
client_up 2 && fail "the unlisted client's tunnel came up"
ovt_log "no ca: listed self-signed certificates admitted, the unlisted one refused"
client_stop 1
client_stop 2
client_stop 3
server_stop

# 2. With the CA as well: a listed fingerprint must also chain to the CA.
server_conf_write "$dir" "peer-fingerprint $FP1" "peer-fingerprint $FPA"
server_start "$dir"
client_start "$dir" 1
wait_tunnel 1
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "CA-signed, listed client1"
client_start "$dir" 2 "auth-retry none"
FP2=$(fp "$dir/pki/client2.crt")
wait_server_log "198\.18\.0\.3:[0-9]+.*fingerprint.*$(fp_re "$FP2")" 30 ||
    fail "the CA-signed but unlisted client2 was not refused with its fingerprint in the log"
[ -z "$(client_tun_ip 2)" ] || fail "the unlisted CA-signed client got an address"
OVT_CLIENT_CERT=$dir/fpa.crt OVT_CLIENT_KEY=$dir/fpa.key client_start "$dir" 3 "auth-retry none"
# (ovpnd: "certificate verification failed: ... (CN 'fpa')"; 2.6: "VERIFY ERROR: ... CN=fpa")
wait_server_log "198\.18\.0\.4:[0-9]+.*(certificate verification failed|VERIFY ERROR).*fpa" 30 ||
    fail "the listed self-signed fpa, not signed by the CA, was not refused"
[ -z "$(client_tun_ip 3)" ] || fail "a self-signed client got an address although a CA is set"
ovt_log "with ca: the fingerprint is checked in addition to the chain"
client_stop 1
client_stop 2
client_stop 3
server_stop

# 3. verify-hash (deprecated in 2.6): the certificate at depth 1 (the CA that signed the
# client's) must be listed; SHA-1 on a line without an algorithm, SHA-256 in a block.
CA_SHA1=$(openssl x509 -in "$dir/pki/ca.crt" -noout -fingerprint -sha1 | sed 's/^.*=//')
CA_SHA256=$(fp "$dir/pki/ca.crt")
server_conf_write "$dir" "verify-hash $CA_SHA1"
server_start "$dir"
client_start "$dir" 1
wait_tunnel 1
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "client1 under verify-hash with its CA's SHA-1"
client_stop 1
server_stop
server_conf_write "$dir" "<verify-hash>" "# not this CA" "$FPA" "</verify-hash>"
server_start "$dir"
client_start "$dir" 1 "auth-retry none"
# (ovpnd names the CA's fingerprint; 2.6: "certificate hash verification failed. (got
# certificate fingerprint: ...)", in lower case)
wait_server_log "198\.18\.0\.2:[0-9]+.*(verify-hash|hash verification failed).*$(fp_re "$CA_SHA256")|198\.18\.0\.2:[0-9]+.*$(fp_re "$CA_SHA256").*verify-hash" 30 ||
    fail "a client whose CA is not in the verify-hash block was not refused with the CA's fingerprint"
[ -z "$(client_tun_ip 1)" ] || fail "a client whose CA is not listed got an address"
ovt_log "verify-hash: a listed CA admits its clients, an unlisted one does not"
client_stop 1
server_stop

# 4. ns-cert-type client (2.6 built with OpenSSL: the certificate must be fit for TLS client
# use; a Netscape cert type saying so is enough): the usual client certificate and one with only
# nsCertType=client connect; one with only nsCertType=server is refused.
printf '%s\n' '[nsclient]' 'basicConstraints = CA:FALSE' 'nsCertType = client' \
    '[nsserver]' 'basicConstraints = CA:FALSE' 'nsCertType = server' >"$dir/ns.cnf"
pki_sign_client "$dir/nsclient" nsclient "ec -pkeyopt ec_paramgen_curve:P-256" -days 30 \
    -extfile "$dir/ns.cnf" -extensions nsclient
pki_sign_client "$dir/nsserver" nsserver "ec -pkeyopt ec_paramgen_curve:P-256" -days 30 \
    -extfile "$dir/ns.cnf" -extensions nsserver
server_conf_write "$dir" "ns-cert-type client"
server_start "$dir"
client_start "$dir" 1
OVT_CLIENT_CERT=$dir/nsclient/client.crt OVT_CLIENT_KEY=$dir/nsclient/client.key client_start "$dir" 2
OVT_CLIENT_CERT=$dir/nsserver/client.crt OVT_CLIENT_KEY=$dir/nsserver/client.key \
    client_start "$dir" 3 "auth-retry none"
wait_tunnel 1
wait_tunnel 2
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "client1 under ns-cert-type client"
assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "nsCertType=client under ns-cert-type client"
# (2.6 with OpenSSL refuses it in the TLS handshake already, whose default purpose check is the
# same: "VERIFY ERROR: depth=0, error=unsuitable certificate purpose: CN=nsserver")
wait_server_log "198\.18\.0\.4:[0-9]+.*(ns-cert-type client: the client certificate is not fit|unsuitable certificate purpose.*nsserver)" 30 ||
    fail "a server certificate was not refused under ns-cert-type client"
[ -z "$(client_tun_ip 3)" ] || fail "a server certificate got an address under ns-cert-type client"
ovt_log "ns-cert-type client: client certificates admitted, a server certificate refused"
