#!/usr/bin/env bash
# A PKI made with Debian's easy-rsa, as docs/pki.md describes it (batch mode, its defaults: RSA
# 2048, SHA-256): init-pki, build-ca nopass, build-server-full, build-client-full, gen-crl.
# ovpnd runs on its ca.crt, server certificate and key and `crl-verify pki/crl.pem`; the client
# connects on a profile made by `ovpnd profile` from its easy-rsa certificate and pings. Then
# the client leaves, its certificate is revoked (`easyrsa revoke`, `easyrsa gen-crl`), and on
# reconnecting it is refused at the TLS handshake: the server reads the new crl.pem without a
# restart and logs the refusal with the client's address and name.
# ovt: optimised build only: an easy-rsa PKI (RSA 2048 key generation) around the CRL checks that test_crl_verify runs under the sanitizers
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init easyrsa
EASYRSA_BIN=${EASYRSA_BIN:-/usr/share/easy-rsa/easyrsa}
[ -x "$EASYRSA_BIN" ] || ovt_skip "easy-rsa not installed (run scripts/install-deps.sh)"
OVPND_BIN=${OVPND:-$OVT_SRC/build/ovpnd}
[ -x "$OVPND_BIN" ] || fail "ovpnd binary not found at $OVPND_BIN (it makes the profile)"
dir=$OVT_DIR
export EASYRSA_BATCH=1 EASYRSA_PKI=$dir/easyrsa

easyrsa() {
    "$EASYRSA_BIN" "$@" >>"$dir/easyrsa.log" 2>&1 ||
        fail "easyrsa $*: $(tail -n 5 "$dir/easyrsa.log")"
}

# RSA key generation takes a few seconds: build the PKI while the namespaces are made.
(
    t0=$SECONDS
    easyrsa init-pki
    EASYRSA_REQ_CN="ovpnd test CA" easyrsa build-ca nopass
    easyrsa build-server-full server nopass
    easyrsa build-client-full client1 nopass
    easyrsa gen-crl
    ovt_log "easy-rsa PKI (CA, server, client1, CRL) made in $((SECONDS - t0)) s"
) &
pki_job=$!
netns_setup 1
wait "$pki_job" || fail "easy-rsa could not make the PKI"

# The names the other tests' config uses, pointing into easy-rsa's layout.
mkdir -p "$dir/pki"
ln -s "$EASYRSA_PKI/ca.crt" "$dir/pki/ca.crt"
ln -s "$EASYRSA_PKI/issued/server.crt" "$dir/pki/server.crt"
ln -s "$EASYRSA_PKI/private/server.key" "$dir/pki/server.key"
"$OVPND_BIN" --genkey tls-crypt "$dir/pki/ta.key"
grep -q "Public-Key: (2048 bit)" <(openssl x509 -in "$dir/pki/server.crt" -noout -text) ||
    fail "easy-rsa's default key is not RSA 2048 any more: update docs/pki.md"
server_conf_write "$dir" "crl-verify $EASYRSA_PKI/crl.pem"
server_start "$dir"

"$OVPND_BIN" profile --config "$dir/server.conf" --remote "$OVT_SERVER_IP" \
    --cert "$EASYRSA_PKI/issued/client1.crt" --key "$EASYRSA_PKI/private/client1.key" \
    --out "$dir/client1.ovpn" || fail "ovpnd profile failed on easy-rsa's certificate"
: >"$dir/client1.log"
ovt_spawn "$(client_ns 1)" "$dir/client1.log" openvpn --config "$dir/client1.ovpn"
CLIENT_PID[1]=$OVT_LAST_PID
wait_tunnel 1
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client1 (easy-rsa certificate)"
client_stop 1

easyrsa revoke client1
easyrsa gen-crl
ovt_log "client1 revoked, CRL written"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    # (openvpn 2.6 reads the file again at each new TLS session and logs nothing about it)
    wait_server_log "crl-verify: .*crl.pem changed, CRL reloaded" 10 || fail "the new CRL was not read"
fi
: >"$dir/client1.log"
ovt_spawn "$(client_ns 1)" "$dir/client1.log" openvpn --config "$dir/client1.ovpn"
CLIENT_PID[1]=$OVT_LAST_PID
wait_server_log "(198\.18\.0\.2:[0-9]+.*certificate has been revoked.*CN 'client1'|VERIFY ERROR: depth=0, error=certificate revoked: .*CN=client1)" 20 ||
    fail "the revoked client1 was not refused with a log line naming it"
grep -q "Initialization Sequence Completed" "$dir/client1.log" && fail "the revoked client connected"
[ -z "$(client_tun_ip 1)" ] || fail "the revoked client got an address"
ovt_log "the revoked easy-rsa certificate is refused on reconnect"
