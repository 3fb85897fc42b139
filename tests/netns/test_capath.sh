#!/usr/bin/env bash
# capath DIR (openvpn 2.6 built with OpenSSL, ssl_openssl.c tls_ctx_load_ca): a directory made by
# `openssl rehash` with two CAs and the CRL of the first, and no `ca` line at all:
#  1. a client of the first CA connects; one that its CRL lists is refused, with a log line
#     naming it;
#  2. a client of the second CA, which has no CRL in the directory, connects (on a profile made
#     by `ovpnd profile` from this capath-only config: its <ca> is the first CA alone, the one
#     that issued the server's certificate, and the generator checks the client's certificate
#     against the second CA from the directory): 2.6 asks OpenSSL
#     for CRL checks on the whole chain (X509_V_FLAG_CRL_CHECK_ALL) but its verify callback
#     (ssl_verify_openssl.c) lets X509_V_ERR_UNABLE_TO_GET_CRL through;
#  3. a CRL of the second CA listing that client, put into the directory while the server runs
#     (and `openssl rehash` run again), refuses it at its next connection, without a restart;
#     the first client stays connected. ovpnd also disconnects that client at once if it is
#     connected, as it does for crl-verify (2.6 keeps it until its next renegotiation: not
#     asserted against openvpn);
#  4. `ca` (the first CA) and `capath` together, as 2.6 takes them (one OpenSSL store): the
#     directory's CRL applies to the `ca` file's CA too, and the second CA still comes from it.
# ovpnd also logs a hashed file it cannot use (a junk deadbeef.0) and carries on. The same
# outcomes against openvpn 2.6 (OVPN_SERVER_IMPL=openvpn), which is what they are checked by.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init capath
OVPND_BIN=${OVPND:-$OVT_SRC/build/ovpnd} # makes the profile, whichever server runs

netns_setup 3
pki_make "$OVT_DIR" --clients 2
dir=$OVT_DIR
pki=$dir/pki
bash "$OVT_SRC/scripts/pki.sh" --revoke client2 "$pki" >>"$dir/pki.log" 2>&1 ||
    fail "could not revoke client2"

# The second CA, its client certificate fromca2, and its (empty) revocation database.
ca2=$dir/ca2
mkdir -p "$ca2"
{
    printf '%s\n' 'basicConstraints = CA:FALSE' 'keyUsage = critical, digitalSignature' \
        'extendedKeyUsage = clientAuth' >"$ca2/ext.cnf" &&
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
            -keyout "$ca2/ca.key" -subj "/CN=ovpnd capath second CA" -days 2 \
            -addext 'keyUsage = critical, keyCertSign, cRLSign' -out "$ca2/ca.crt" &&
        openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
            -keyout "$ca2/fromca2.key" -subj "/CN=fromca2" -out "$ca2/fromca2.csr" &&
        openssl x509 -req -in "$ca2/fromca2.csr" -CA "$ca2/ca.crt" -CAkey "$ca2/ca.key" \
            -set_serial 4242 -days 2 -sha256 -extfile "$ca2/ext.cnf" -out "$ca2/fromca2.crt" &&
        : >"$ca2/index.txt" && echo 01 >"$ca2/crlnumber"
} >"$dir/openssl.log" 2>&1 || fail "could not make the second CA: $(cat "$dir/openssl.log")"

# The directory: both CA certificates and the first CA's CRL, hashed by openssl rehash.
cap=$dir/capath
mkdir -p "$cap"
cp "$pki/ca.crt" "$cap/ca1.pem"
cp "$pki/crl.pem" "$cap/ca1-crl.pem"
cp "$ca2/ca.crt" "$cap/ca2.pem"
openssl rehash "$cap" >>"$dir/openssl.log" 2>&1 || fail "openssl rehash failed"
echo "not a certificate" >"$cap/deadbeef.0"
chmod -R a+rX "$dir"

server_conf_write "$dir" "capath $cap"
grep -v '^ca ' "$dir/server.conf" >"$dir/server.conf.new"
mv "$dir/server.conf.new" "$dir/server.conf"
server_start "$dir"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    server_log_grep "capath: $cap/deadbeef.0: no PEM CERTIFICATE in it" ||
        fail "the junk hashed file was not named in the log"
    server_log_grep "capath $cap: 2 CA certificates and 1 CRL from 3 hashed files" ||
        fail "the directory's two CAs and one CRL were not read"
fi

ca2_client() { # ca2_client I: client I with the second CA's certificate
    OVT_CLIENT_CERT=$ca2/fromca2.crt OVT_CLIENT_KEY=$ca2/fromca2.key client_start "$dir" "$1" \
        "auth-retry none"
}
# refused_log IP CN: the server's line for a client refused because a CRL lists it (ovpnd:
# "... certificate has been revoked ... (CN 'X')"; 2.6: "VERIFY ERROR: ... certificate revoked:
# CN=X")
refused_log() {
    echo "${1//./\\.}:[0-9]+.*(certificate has been revoked.*CN '$2'|certificate revoked: CN=$2)"
}

# 1 and 2
"$OVPND_BIN" profile --config "$dir/server.conf" --remote "$OVT_SERVER_IP" \
    --cert "$ca2/fromca2.crt" --key "$ca2/fromca2.key" --out "$dir/fromca2.ovpn" ||
    fail "ovpnd profile failed for a server with capath and no ca"
profile_ca=$(sed -n '/^<ca>$/,/^<\/ca>$/p' "$dir/fromca2.ovpn" | grep -v '^</\?ca>$')
[ "$(grep -c 'BEGIN CERTIFICATE' <<<"$profile_ca")" = 1 ] ||
    fail "the profile's <ca> does not hold exactly one certificate (the server's CA)"
[ "$(openssl x509 -noout -fingerprint -sha256 <<<"$profile_ca")" = \
    "$(openssl x509 -noout -fingerprint -sha256 -in "$pki/ca.crt")" ] ||
    fail "the profile's <ca> is not the CA that issued the server's certificate"
client_start "$dir" 1
client_start "$dir" 2 "auth-retry none"
: >"$dir/client3.log" # fromca2 on its profile, as it is
ovt_spawn "$(client_ns 3)" "$dir/client3.log" openvpn --config "$dir/fromca2.ovpn"
CLIENT_PID[3]=$OVT_LAST_PID
wait_tunnel 1
wait_tunnel 3
wait_server_log "$(refused_log 198.18.0.3 client2)" 30 ||
    fail "client2, on the first CA's CRL in the directory, was not refused with a log line"
[ -z "$(client_tun_ip 2)" ] || fail "the revoked client2 got an address"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 3 0.1 0 "capath: client1 (first CA)"
assert_ping "$(client_ns 3)" "$OVT_SERVER_TUN_IP" 3 0.1 0 "capath: fromca2 (CA without a CRL)"
client_stop 2
[ "$OVPN_SERVER_IMPL" = ovpnd ] || client_stop 3
ovt_log "capath: both CAs trusted, the first CA's CRL applied, a CA without a CRL admitted"

# 3. the second CA's CRL appears while the server runs
bash "$OVT_SRC/scripts/pki.sh" --revoke fromca2 "$ca2" >>"$dir/pki.log" 2>&1 ||
    fail "could not revoke fromca2"
cp "$ca2/crl.pem" "$cap/ca2-crl.pem"
chmod 644 "$cap/ca2-crl.pem"
openssl rehash "$cap" >>"$dir/openssl.log" 2>&1 || fail "openssl rehash failed"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    wait_server_log "capath $cap: 2 CA certificates and 2 CRLs" 10 ||
        fail "the CRL added to the directory was not read"
    wait_server_log "fromca2.*refused: certificate revoked: a CRL in force now lists it" 10 ||
        fail "the connected fromca2 was not disconnected when its CA's new CRL listed it"
    client_stop 3
fi
ca2_client 3
wait_server_log "$(refused_log 198.18.0.4 fromca2)" 30 ||
    fail "fromca2, revoked by a CRL added to the directory at run time, was not refused"
[ -z "$(client_tun_ip 3)" ] || fail "fromca2 got an address after its CA's CRL listed it"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 3 0.1 0 "capath: client1 after the change"
ovt_log "capath: a CRL added to the directory at run time refuses the client it lists"

# 4. ca and capath together
client_stop 1
server_stop
server_conf_write "$dir" "capath $cap"
server_start "$dir"
client_start "$dir" 1
client_start "$dir" 2 "auth-retry none"
ca2_client 3
wait_tunnel 1
wait_server_log "$(refused_log 198.18.0.3 client2)" 30 ||
    fail "with ca and capath, client2 (on the directory's CRL of the ca file's CA) was admitted"
wait_server_log "$(refused_log 198.18.0.4 fromca2)" 30 ||
    fail "with ca and capath, fromca2 (on the directory's second CRL) was admitted"
[ -z "$(client_tun_ip 2)" ] || fail "with ca and capath, the revoked client2 got an address"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 3 0.1 0 "ca and capath: client1"
ovt_log "ca and capath together: the directory's CRLs apply to the ca file's CA as well"
