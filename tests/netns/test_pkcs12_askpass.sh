#!/usr/bin/env bash
# The server's key and certificate in the forms deployments keep them (openvpn 2.6 options.c,
# ssl_openssl.c tls_ctx_load_pkcs12, pem_password_callback):
#  1. `pkcs12 FILE` with `askpass FILE`: key, certificate and CA from a PKCS#12 file encrypted
#     as OpenSSL 3 writes it by default (AES-256-CBC, PBKDF2 with HMAC-SHA256), with no
#     ca/cert/key lines: a client connects and pings.
#  2. an encrypted `key` (PKCS#8, AES-256-CBC) with `askpass FILE`: a client connects.
#  3. a wrong password in the askpass file: the server does not start.
#  4. (ovpnd only: it has --test-config) `askpass` without FILE reads the password from the
#     terminal when standard input is one, and refuses to start without one.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init pkcs12_askpass

netns_setup 1
pki_make "$OVT_DIR" --clients 1
dir=$OVT_DIR
pki=$dir/pki
pass='correct horse'
printf '%s\n' "$pass" >"$dir/pass.txt"
printf 'wrong\n' >"$dir/wrong.txt"
{
    openssl pkcs12 -export -inkey "$pki/server.key" -in "$pki/server.crt" -certfile "$pki/ca.crt" \
        -passout "pass:$pass" -out "$dir/server.p12" &&
        openssl pkcs8 -topk8 -v2 aes-256-cbc -v2prf hmacWithSHA256 -in "$pki/server.key" \
            -passout "pass:$pass" -out "$dir/server-enc.key"
} >"$dir/openssl.log" 2>&1 || fail "could not make the test files: $(cat "$dir/openssl.log")"
chmod 600 "$dir/pass.txt" "$dir/server.p12" "$dir/server-enc.key"

# server_conf_write, then the ca/cert/key lines replaced by "$@"
conf_with() {
    server_conf_write "$dir"
    grep -v -E '^(ca|cert|key) ' "$dir/server.conf" >"$dir/server.conf.new"
    printf '%s\n' "$@" >>"$dir/server.conf.new"
    mv "$dir/server.conf.new" "$dir/server.conf"
}

# 1. pkcs12 + askpass FILE
conf_with "pkcs12 $dir/server.p12" "askpass $dir/pass.txt"
server_start "$dir"
client_start "$dir" 1
wait_tunnel 1
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 3 0.1 0 "pkcs12"
client_stop 1
server_stop
ovt_log "pkcs12 with askpass FILE: key, certificate and CA from the file"

# 2. encrypted key + askpass FILE
conf_with "ca $pki/ca.crt" "cert $pki/server.crt" "key $dir/server-enc.key" "askpass $dir/pass.txt"
server_start "$dir"
client_start "$dir" 1
wait_tunnel 1
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 3 0.1 0 "encrypted key"
client_stop 1
server_stop
ovt_log "encrypted key with askpass FILE"

# 3. a wrong password stops start-up (both servers exit; their words differ)
for conf in "pkcs12 $dir/server.p12" "key $dir/server-enc.key"; do
    if [ "${conf%% *}" = key ]; then
        conf_with "ca $pki/ca.crt" "cert $pki/server.crt" "$conf" "askpass $dir/wrong.txt"
    else
        conf_with "$conf" "askpass $dir/wrong.txt"
    fi
    server_spawn "$dir"
    wait_for 20 pid_gone "$SERVER_PID" || fail "${conf%% *} with a wrong askpass password: started"
    if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
        server_log_grep "wrong password" || fail "${conf%% *}: no reason for the refusal in the log"
    fi
    SERVER_PID=
done
ovt_log "a wrong askpass password: the server does not start"

# 4. askpass from the terminal (ovpnd --test-config under a pseudo-terminal from script(1))
if [ "$OVPN_SERVER_IMPL" = ovpnd ] && command -v script >/dev/null; then
    conf_with "ca $pki/ca.crt" "cert $pki/server.crt" "key $dir/server-enc.key" "askpass"
    out=$(printf '%s\n' "$pass" | timeout 20 script -qec \
        "$OVPND --config $dir/server.conf --test-config" /dev/null 2>&1) ||
        fail "askpass at the terminal: the config was refused: $out"
    grep -q "Enter Private Key Password" <<<"$out" || fail "no password prompt: $out"
    out=$("$OVPND" --config "$dir/server.conf" --test-config </dev/null 2>&1) &&
        fail "askpass without a terminal: accepted"
    grep -q "not a terminal" <<<"$out" || fail "askpass without a terminal: no reason: $out"
    ovt_log "askpass: the password typed at the terminal; without one, refused with the reason"
fi
