#!/usr/bin/env bash
# x509-username-field FIELD... (openvpn 2.6 options.c, ssl_verify.c verify_cert): the client is
# known by those certificate fields instead of its CN, for client-config-dir, the address pool,
# the status file and scripts:
#  1. `x509-username-field emailAddress`: a client whose certificate has
#     emailAddress=alice@example.com gets the fixed address of ccd/alice@example.com; the
#     client-connect script sees common_name=alice@example.com; the status file lists it by
#     that name. A certificate without an emailAddress is refused, the log naming the field.
#  2. `x509-username-field ext:subjectAltName`: the e-mail address of the subjectAltName
#     extension (bob@example.com) names the client for client-config-dir.
#  3. `x509-username-field ou` (all lower case): 2.6 upper-cases it to OU (with a deprecation
#     warning); the client is named by its OU.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init x509_username_field

netns_setup 2
pki_make "$OVT_DIR" --clients 2
dir=$OVT_DIR
pki=$dir/pki

# A client certificate with emailAddress, OU and an e-mail subjectAltName, from the test CA.
printf '%s\n' 'basicConstraints = CA:FALSE' \
    'keyUsage = critical, digitalSignature, keyEncipherment, keyAgreement' \
    'extendedKeyUsage = clientAuth' 'subjectAltName = email:bob@example.com' >"$dir/mail.ext"
{
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$dir/mail.key" \
        -subj "/OU=Sales/CN=mailuser/emailAddress=alice@example.com" -out "$dir/mail.csr" &&
        openssl x509 -req -in "$dir/mail.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" \
            -set_serial 4242 -days 2 -sha256 -extfile "$dir/mail.ext" -out "$dir/mail.crt"
} >"$dir/openssl.log" 2>&1 || fail "could not make the test certificate: $(cat "$dir/openssl.log")"

mkdir -p "$dir/ccd"
chmod 755 "$dir" "$dir/ccd"
printf 'ifconfig-push 198.19.0.77 255.255.255.0\n' >"$dir/ccd/alice@example.com"
printf 'ifconfig-push 198.19.0.78 255.255.255.0\n' >"$dir/ccd/bob@example.com"
printf 'ifconfig-push 198.19.0.79 255.255.255.0\n' >"$dir/ccd/Sales"
printf 'ifconfig-push 198.19.0.80 255.255.255.0\n' >"$dir/ccd/mailuser"
chmod 644 "$dir/ccd"/*
cat >"$dir/connect.sh" <<EOF
#!/bin/sh
printf '%s\n' "\$common_name" >>"$dir/connect.out"
exit 0
EOF
chmod 755 "$dir/connect.sh"

mail_client() { # client_start with the mail certificate in client namespace $1
    OVT_CLIENT_CERT=$dir/mail.crt OVT_CLIENT_KEY=$dir/mail.key client_start "$dir" "$1" \
        "auth-retry none"
}

# 1. emailAddress
server_conf_write "$dir" "x509-username-field emailAddress" "client-config-dir $dir/ccd" \
    "script-security 2" "client-connect $dir/connect.sh"
server_start "$dir"
mail_client 1
client_start "$dir" 2 "auth-retry none"
wait_tunnel 1
[ "$(client_tun_ip 1)" = 198.19.0.77 ] ||
    fail "emailAddress: the client got $(client_tun_ip 1), not ccd/alice@example.com's 198.19.0.77"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 3 0.1 0 "emailAddress: the mail client"
grep -qx "alice@example.com" "$dir/connect.out" ||
    fail "client-connect did not see common_name=alice@example.com: $(cat "$dir/connect.out")"
wait_for 10 grep -q "^alice@example.com,198\.18\.0\.2:" "$dir/status.log" ||
    fail "the status file does not list the client as alice@example.com"
# (2.6: "VERIFY ERROR: could not extract emailAddress from X509 subject string ('CN=client2')")
wait_server_log "198\.18\.0\.3:[0-9]+.*could not extract emailAddress|could not extract emailAddress.*CN=client2" 30 ||
    fail "client2 (no emailAddress) was not refused with the field named in the log"
[ -z "$(client_tun_ip 2)" ] || fail "client2 (no emailAddress) got an address"
client_stop 1
client_stop 2
server_stop
ovt_log "emailAddress: ccd, client-connect and status use it; a certificate without one refused"

# 2. ext:subjectAltName
server_conf_write "$dir" "x509-username-field ext:subjectAltName" "client-config-dir $dir/ccd"
server_start "$dir"
mail_client 1
wait_tunnel 1
[ "$(client_tun_ip 1)" = 198.19.0.78 ] ||
    fail "ext:subjectAltName: got $(client_tun_ip 1), not ccd/bob@example.com's 198.19.0.78"
client_stop 1
server_stop
ovt_log "ext:subjectAltName: the extension's e-mail address names the client"

# 3. ou, upper-cased to OU as 2.6 does
server_conf_write "$dir" "x509-username-field ou" "client-config-dir $dir/ccd"
server_start "$dir"
server_log_grep "upcased.*OU" || fail "no deprecation warning for the upper-cased 'ou'"
mail_client 1
wait_tunnel 1
[ "$(client_tun_ip 1)" = 198.19.0.79 ] ||
    fail "x509-username-field ou: got $(client_tun_ip 1), not ccd/Sales's 198.19.0.79"
client_stop 1
server_stop
ovt_log "ou: upper-cased to OU, the client named by its OU"
