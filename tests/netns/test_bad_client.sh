#!/usr/bin/env bash
# A client whose certificate was signed by another CA is refused: it holds the right tls-crypt
# key and trusts the right CA, so it gets as far as the TLS handshake, where the server must
# reject its certificate. Its log shows a TLS failure, it never gets a tunnel address, and the
# server log names its address and the reason. A good client connects and works meanwhile.
# Then the same for a certificate from the right CA that has expired: the server log says so.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init bad_client

netns_setup 2 # 1: the client with the foreign certificate (198.18.0.2), 2: a good client
pki_make "$OVT_DIR"
bash "$OVT_SRC/scripts/pki.sh" --clients 1 "$OVT_DIR/rogue" >"$OVT_DIR/rogue.log" 2>&1 ||
    fail "scripts/pki.sh failed for the second CA"
server_conf_write "$OVT_DIR"
server_start "$OVT_DIR"

bad_ip=$(client_ip 1)
# hand-window 10: a server that drops the handshake silently still makes the client log a TLS
# failure within seconds instead of after the default 60 s.
OVT_CLIENT_CERT=$OVT_DIR/rogue/client1.crt OVT_CLIENT_KEY=$OVT_DIR/rogue/client1.key \
    client_start "$OVT_DIR" 1 "hand-window 10"
client_start "$OVT_DIR" 2

tls_failed() {
    grep -Eq 'TLS Error|TLS_ERROR|TLS handshake failed|TLS key negotiation failed' \
        "$OVT_DIR/client1.log"
}
wait_for 40 tls_failed || fail "the client with a foreign certificate logged no TLS failure in 40 s"
ovt_log "bad client: $(grep -m1 -E 'TLS Error|TLS_ERROR|TLS handshake failed|TLS key negotiation' \
    "$OVT_DIR/client1.log" | cut -c21-)"

wait_tunnel 2
assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 50 0.01 0 "good client"

# The bad client never got an address or completed initialisation.
grep -q "Initialization Sequence Completed" "$OVT_DIR/client1.log" &&
    fail "the client with a foreign certificate completed initialisation"
grep -q "PUSH_REPLY" "$OVT_DIR/client1.log" && fail "the client with a foreign certificate got a PUSH_REPLY"
[ -z "$(client_tun_ip 1)" ] || fail "the client with a foreign certificate has tunnel address $(client_tun_ip 1)"

# The server log names the peer and the reason on one line.
reason_re="$bad_ip.*(certificate|verify|VERIFY|unknown ca|issuer|TLS)"
wait_server_log "$reason_re" 10 ||
    fail "server log has no line naming $bad_ip with a certificate/TLS reason"
ovt_log "server log: $(server_log_since | grep -E -m1 "$reason_re" | cut -c1-200)"
grep -E "$bad_ip" <<<"$(server_log_since)" | grep -iE 'Peer Connection Initiated|Learn:' >/dev/null &&
    fail "server log shows the foreign-certificate client as connected"

client_stop 1
server_alive || fail "server died"
assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 20 0.02 0 "good client afterwards"

# An expired certificate from the right CA (valid in January 2020 only).
e=$OVT_DIR/expired
pki_sign_client "$e" expired "ec -pkeyopt ec_paramgen_curve:P-256" \
    -startdate 20200101000000Z -enddate 20200201000000Z
rm -f "$OVT_DIR/client1.log"
OVT_CLIENT_CERT=$e/client.crt OVT_CLIENT_KEY=$e/client.key client_start "$OVT_DIR" 1 "hand-window 10"
wait_for 40 tls_failed || fail "the client with an expired certificate logged no TLS failure in 40 s"
wait_server_log "$bad_ip.*certificate verification failed: .*expired.*CN 'expired'" 10 ||
    fail "server log does not say the client's certificate expired: $(server_log_since | grep -m2 "$bad_ip")"
ovt_log "server log: $(server_log_since | grep -E -m1 "$bad_ip.*expired" | cut -c1-200)"
[ -z "$(client_tun_ip 1)" ] || fail "the client with an expired certificate has tunnel address $(client_tun_ip 1)"
client_stop 1
assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 10 0.02 0 "good client after the expired one"
