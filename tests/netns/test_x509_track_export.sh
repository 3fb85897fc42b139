#!/usr/bin/env bash
# x509-track and tls-export-cert (openvpn 2.6 ssl_verify.c verify_cert, verify_cert_set_env;
# ssl_verify_openssl.c x509_setenv_track):
#  1. `x509-track CN`, `x509-track +SHA256`, `x509-track extendedKeyUsage`: the tls-verify and
#     client-connect scripts get X509_0_CN, X509_0_SHA256 and X509_1_SHA256 (the CA's, '+'
#     means every depth), X509_0_extendedKeyUsage as OpenSSL prints it, and none of the
#     per-field variables 2.6 sets without x509-track (X509_1_CN is not there).
#  2. `tls-export-cert DIR`: tls-verify finds the certificate of its depth as PEM in the file
#     $peer_cert names (client1's at depth 0, the CA's at depth 1), and the file is gone once
#     the client is in.
#  3. Without x509-track, the default variables (X509_0_CN, X509_1_CN) are back and
#     X509_0_SHA256 is not set.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init x509_track_export

netns_setup 1
pki_make "$OVT_DIR" --clients 1
dir=$OVT_DIR
pki=$dir/pki
mkdir -p "$dir/export"
chmod 755 "$dir" "$dir/export"
cat >"$dir/verify.sh" <<SCRIPT
#!/bin/sh
# \$1 = depth
env | grep '^X509_' | sort >"$dir/verify-\$1.env"
if [ -n "\${peer_cert:-}" ]; then
    echo "\$peer_cert" >"$dir/verify-\$1.path"
    cp "\$peer_cert" "$dir/verify-\$1.pem"
fi
exit 0
SCRIPT
cat >"$dir/connect.sh" <<SCRIPT
#!/bin/sh
env | grep '^X509_' | sort >"$dir/connect.env"
exit 0
SCRIPT
chmod 755 "$dir/verify.sh" "$dir/connect.sh"
fp() { openssl x509 -in "$1" -noout -fingerprint -sha256 | sed 's/^.*=//'; }

# 1 and 2
server_conf_write "$dir" "script-security 2" "tls-verify $dir/verify.sh" \
    "client-connect $dir/connect.sh" "x509-track CN" "x509-track +SHA256" \
    "x509-track extendedKeyUsage" "tls-export-cert $dir/export"
server_start "$dir"
client_start "$dir" 1
wait_tunnel 1
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 3 0.1 0 "x509-track"
for f in verify-0.env verify-1.env connect.env; do
    [ -s "$dir/$f" ] || fail "$f: the script did not run or saw no X509_ variables"
done
e=$dir/connect.env
grep -qx "X509_0_CN=client1" "$e" || fail "no X509_0_CN=client1: $(cat "$e")"
grep -qx "X509_0_SHA256=$(fp "$pki/client1.crt")" "$e" || fail "X509_0_SHA256 wrong: $(cat "$e")"
grep -qx "X509_1_SHA256=$(fp "$pki/ca.crt")" "$e" || fail "X509_1_SHA256 wrong: $(cat "$e")"
grep -qx "X509_0_extendedKeyUsage=TLS Web Client Authentication" "$e" ||
    fail "X509_0_extendedKeyUsage wrong: $(cat "$e")"
if grep -q "^X509_1_CN=" "$e"; then
    fail "X509_1_CN set although CN is tracked at depth 0 only: $(cat "$e")"
fi
grep -qx "X509_1_SHA256=$(fp "$pki/ca.crt")" "$dir/verify-1.env" ||
    fail "tls-verify at depth 1 has no X509_1_SHA256: $(cat "$dir/verify-1.env")"
ovt_log "x509-track: the tracked variables, and only those, at the depths asked"
[ "$(fp "$dir/verify-0.pem")" = "$(fp "$pki/client1.crt")" ] ||
    fail "tls-export-cert: \$peer_cert at depth 0 did not hold client1's certificate"
[ "$(fp "$dir/verify-1.pem")" = "$(fp "$pki/ca.crt")" ] ||
    fail "tls-export-cert: \$peer_cert at depth 1 did not hold the CA's certificate"
case "$(cat "$dir/verify-0.path")" in
"$dir/export/"*) ;;
*) fail "tls-export-cert: \$peer_cert is not in the directory: $(cat "$dir/verify-0.path")" ;;
esac
[ ! -e "$(cat "$dir/verify-0.path")" ] || fail "tls-export-cert: the file was not removed"
[ -z "$(ls -A "$dir/export")" ] || fail "tls-export-cert: files left: $(ls "$dir/export")"
client_stop 1
server_stop
ovt_log "tls-export-cert: the certificate of each depth in \$peer_cert, removed after"

# 3. without x509-track
rm -f "$dir/connect.env"
server_conf_write "$dir" "script-security 2" "client-connect $dir/connect.sh"
server_start "$dir"
client_start "$dir" 1
wait_tunnel 1
wait_for 10 test -s "$dir/connect.env" || fail "client-connect did not run"
e=$dir/connect.env
grep -qx "X509_0_CN=client1" "$e" && grep -q "^X509_1_CN=" "$e" ||
    fail "without x509-track the subject variables are missing: $(cat "$e")"
if grep -q "^X509_0_SHA256=" "$e"; then
    fail "X509_0_SHA256 set without x509-track"
fi
ovt_log "without x509-track: the default subject variables"
