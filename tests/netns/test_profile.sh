#!/usr/bin/env bash
# `ovpnd profile`: inline client profiles made from the server's own config connect the stock
# openvpn 2.6 client, used unchanged (`openvpn --config NAME.ovpn`), and it pings through the
# tunnel.
#   run 1: tls-crypt, its key line in a file the server config includes (`config FILE`), and
#          `data-ciphers AES-192-GCM` (not among a 2.6 client's defaults: without the profile's
#          data-ciphers line the client could not connect)
#   run 2: tls-crypt-v2 beside tls-crypt: the profile carries a client key made from the server
#          key, with user metadata that tls-crypt-v2-verify sees (not the shared key); with
#          --no-tls-crypt-v2 the shared tls-crypt key instead, and that connects too
# Both profiles name the server (verify-x509-name, checked by the client). The generator refuses
# a key that is not the certificate's and a certificate of another CA, and writes the profile
# mode 0600. With OVPN_SERVER_IMPL=openvpn the server is openvpn 2.6 on the same config (the
# profiles are still ovpnd's).
# ovt: optimised build only: the generator runs under the sanitizers in unit test_profile; the connects are the usual ones
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init profile
OVPND_BIN=${OVPND:-$OVT_SRC/build/ovpnd}
[ -x "$OVPND_BIN" ] || fail "ovpnd binary not found at $OVPND_BIN (it makes the profiles)"

netns_setup 2
pki_make "$OVT_DIR" --clients 2
dir=$OVT_DIR
pki=$dir/pki

# profile_client I PROFILE: the stock client on PROFILE as it is, in client namespace I.
profile_client() {
    local i=$1 profile=$2
    : >"$dir/client$i.log"
    ovt_spawn "$(client_ns "$i")" "$dir/client$i.log" openvpn --config "$profile"
    CLIENT_PID[$i]=$OVT_LAST_PID
    CLIENT_TUN_IP[$i]=
}

# --- run 1: tls-crypt from an included file, a cipher 2.6 clients do not offer by default
echo "tls-crypt $pki/ta.key" >"$dir/wrap.conf"
OVT_WRAP=none server_conf_write "$dir" "config $dir/wrap.conf" "data-ciphers AES-192-GCM"
server_start "$dir"

"$OVPND_BIN" profile --config "$dir/server.conf" --remote "$OVT_SERVER_IP" \
    --cert "$pki/client1.crt" --key "$pki/client1.key" --out "$dir/client1.ovpn" ||
    fail "ovpnd profile failed for the tls-crypt server"
[ "$(stat -c %a "$dir/client1.ovpn")" = 600 ] || fail "the profile is not mode 0600"
for line in "^client$" "^remote $OVT_SERVER_IP $OVT_PORT udp$" "^data-ciphers AES-192-GCM$" \
    "^verify-x509-name server name$" "^remote-cert-tls server$" "^<tls-crypt>$" "^<ca>$" \
    "^<cert>$" "^<key>$"; do
    grep -q "$line" "$dir/client1.ovpn" || fail "the tls-crypt profile has no line '$line'"
done
grep -q "^key-direction\|^<tls-auth>\|^<tls-crypt-v2>" "$dir/client1.ovpn" &&
    fail "the tls-crypt profile carries another wrapper's key"

profile_client 1 "$dir/client1.ovpn"
wait_tunnel 1
grep -q "VERIFY X509NAME OK: CN=server" "$dir/client1.log" ||
    fail "the client did not check the server's name"
grep -q "Data Channel: cipher 'AES-192-GCM'" "$dir/client1.log" ||
    fail "the client does not use the server's cipher: $(grep 'Data Channel' "$dir/client1.log")"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client 1 (tls-crypt profile)"
client_stop 1
ovt_log "the tls-crypt profile connects the stock client"

# the generator's own checks: a key that is not the certificate's, a certificate of another CA
if "$OVPND_BIN" profile --config "$dir/server.conf" --remote "$OVT_SERVER_IP" \
    --cert "$pki/client1.crt" --key "$pki/client2.key" >"$dir/bad.ovpn" 2>"$dir/bad.err"; then
    fail "ovpnd profile took client2's key for client1's certificate"
fi
grep -q "is not the key of" "$dir/bad.err" || fail "no reason for the key refusal: $(cat "$dir/bad.err")"
[ -s "$dir/bad.ovpn" ] && fail "a refused profile was still written"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=stranger \
    -days 1 -keyout "$dir/stranger.key" -out "$dir/stranger.crt" >/dev/null 2>&1
if "$OVPND_BIN" profile --config "$dir/server.conf" --remote "$OVT_SERVER_IP" \
    --cert "$dir/stranger.crt" --key "$dir/stranger.key" >/dev/null 2>"$dir/bad.err"; then
    fail "ovpnd profile took a certificate of another CA"
fi
grep -q "not a valid client certificate of the server's ca" "$dir/bad.err" ||
    fail "no reason for the CA refusal: $(cat "$dir/bad.err")"
server_stop

# --- run 2: tls-crypt-v2, a fresh client key in the profile
"$OVPND_BIN" --genkey tls-crypt-v2-server "$dir/v2server.key"
cat >"$dir/v2verify.sh" <<SH
#!/bin/sh
[ "\$metadata_type" = 0 ] && cat "\$metadata_file" >"$dir/v2verify.out"
exit 0
SH
chmod 755 "$dir/v2verify.sh"
OVT_WRAP=none server_conf_write "$dir" "tls-crypt-v2 $dir/v2server.key" "script-security 2" \
    "tls-crypt-v2-verify $dir/v2verify.sh" "tls-crypt $pki/ta.key"
server_start "$dir"
"$OVPND_BIN" profile "$dir/server.conf" --remote "$OVT_SERVER_IP" --cert "$pki/client2.crt" \
    --key "$pki/client2.key" --tls-crypt-v2-metadata "$(printf laptop2 | base64)" \
    >"$dir/client2.ovpn" || fail "ovpnd profile failed for the tls-crypt-v2 server"
grep -q "^<tls-crypt-v2>$" "$dir/client2.ovpn" || fail "the tls-crypt-v2 profile has no client key"
grep -q "^-----BEGIN OpenVPN tls-crypt-v2 client key-----$" "$dir/client2.ovpn" ||
    fail "the tls-crypt-v2 profile's key is not a client key"
grep -q "server key" "$dir/client2.ovpn" && fail "the profile leaks the tls-crypt-v2 server key"
grep -q "^<tls-crypt>$" "$dir/client2.ovpn" && fail "the tls-crypt-v2 profile also has the shared key"
grep -q "^data-ciphers" "$dir/client2.ovpn" && fail "a data-ciphers line for the default ciphers"

profile_client 2 "$dir/client2.ovpn"
wait_tunnel 2
assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client 2 (tls-crypt-v2 profile)"
assert_ping "$NS_SRV" "${CLIENT_TUN_IP[2]}" 5 0.05 0 "server -> client 2"
[ "$(cat "$dir/v2verify.out" 2>/dev/null)" = laptop2 ] ||
    fail "tls-crypt-v2-verify did not see the profile key's metadata"
ovt_log "the tls-crypt-v2 profile connects the stock client (metadata 'laptop2' reached the server)"

"$OVPND_BIN" profile "$dir/server.conf" --remote "$OVT_SERVER_IP" --cert "$pki/client1.crt" \
    --key "$pki/client1.key" --no-tls-crypt-v2 --out "$dir/client1-shared.ovpn" ||
    fail "ovpnd profile --no-tls-crypt-v2 failed"
if ! grep -q "^<tls-crypt>$" "$dir/client1-shared.ovpn" ||
    grep -q "^<tls-crypt-v2>$" "$dir/client1-shared.ovpn"; then
    fail "the --no-tls-crypt-v2 profile does not carry the shared tls-crypt key alone"
fi
profile_client 1 "$dir/client1-shared.ovpn"
wait_tunnel 1
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client 1 (shared tls-crypt key beside tls-crypt-v2)"
