#!/usr/bin/env bash
# verify-x509-name NAME [subject|name|name-prefix] (openvpn 2.6 ssl_verify.c): a client whose
# certificate does not match is refused, the server log naming its address, what the
# certificate holds and what was required; a matching one connects and pings. subject (the
# default) compares the whole subject as 2.6 prints it ("CN=client2" for the test PKI), name the
# common name, name-prefix the start of the common name.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init verify_x509_name

netns_setup 2
pki_make "$OVT_DIR" --clients 2
dir=$OVT_DIR
# (2.6 logs "VERIFY X509NAME ERROR: <found>, must be <wanted>"; ovpnd "verify-x509-name: ...")
refused_re() { echo "198\.18\.0\.$(($1 + 1)):[0-9]+.*(verify-x509-name|X509NAME ERROR).*$2"; }

# 1. name: the common name must be client1.
server_conf_write "$dir" "verify-x509-name client1 name"
server_start "$dir"
client_start "$dir" 1
client_start "$dir" 2 "auth-retry none"
wait_tunnel 1
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "name client1: client1"
wait_server_log "$(refused_re 2 "client2.*client1")" 30 ||
    fail "client2 was not refused by 'verify-x509-name client1 name' with a reason in the log"
[ -z "$(client_tun_ip 2)" ] || fail "client2 got an address"
client_stop 1
client_stop 2
server_stop
ovt_log "name: the matching common name admitted, the other refused"

# 2. subject (the default type): the whole subject.
server_conf_write "$dir" "verify-x509-name CN=client2"
server_start "$dir"
client_start "$dir" 2
client_start "$dir" 1 "auth-retry none"
wait_tunnel 2
assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "subject CN=client2: client2"
wait_server_log "$(refused_re 1 "CN=client1.*CN=client2")" 30 ||
    fail "client1 was not refused by 'verify-x509-name CN=client2' with a reason in the log"
[ -z "$(client_tun_ip 1)" ] || fail "client1 got an address"
client_stop 1
client_stop 2
server_stop
ovt_log "subject: the matching subject admitted, the other refused"

# 3. name-prefix: the common name starts with NAME.
server_conf_write "$dir" "verify-x509-name clie name-prefix"
server_start "$dir"
client_start "$dir" 1
wait_tunnel 1
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "name-prefix clie: client1"
client_stop 1
server_stop
server_conf_write "$dir" "verify-x509-name client1 name-prefix"
server_start "$dir"
client_start "$dir" 2 "auth-retry none"
wait_server_log "$(refused_re 2 "client2.*client1")" 30 ||
    fail "client2 was not refused by 'verify-x509-name client1 name-prefix'"
[ -z "$(client_tun_ip 2)" ] || fail "client2 got an address"
ovt_log "name-prefix: a common name starting with NAME admitted, another refused"
