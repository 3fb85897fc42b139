#!/usr/bin/env bash
# management-external-key: the server has its certificate but not its key; a management client
# (pk_signer.py, signing with the real key through openssl) makes the server's signature in each
# TLS handshake (openvpn 2.6 doc/management-notes.txt, >PK_SIGN and pk-sig).
#  - EC key (PKI default): a stock client connects, the request is ">PK_SIGN:DATA,ECDSA" (the
#    signer said `version 3`), the tunnel carries pings;
#  - an answer that is not a signature fails that handshake (server log says why, management
#    gets "ERROR: pk-sign command failed"); the client's next attempt is signed and connects;
#  - no answer: that handshake fails after 5 s, and meanwhile the connected client's tunnel
#    carries pings (ovpnd does not stop while it waits; openvpn 2.6 does, so this part is
#    skipped for it);
#  - RSA key: ">PK_SIGN:DATA,RSA_PKCS1_PADDING", the data a SHA-256 DigestInfo (51 bytes); the
#    client's renegotiation (reneg-sec 3) is signed the same way and the tunnel goes on.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init mgmt_external_key

netns_setup 2
MADDR=$OVT_DIR/mgmt.sock
MODES=$OVT_DIR/modes
SLOG=$OVT_DIR/signer.log

# start_server PKI-DIR-NAME [FLAG...]: the config without `key`, management on a unix socket,
# management-external-key FLAGs, the signer
start_server() {
    local pki=$1
    shift
    server_conf_write "$OVT_DIR" "management $MADDR unix" "management-external-key $*"
    sed -i "s|^key .*||; s|$OVT_DIR/pki/|$OVT_DIR/$pki/|g" "$OVT_DIR/server.conf"
    ! grep -q '^key ' "$OVT_DIR/server.conf" || fail "server.conf still has a key"
    : >"$SLOG"
    server_start "$OVT_DIR"
    wait_for 10 test -S "$MADDR" || fail "no management socket"
    ovt_spawn "$NS_SRV" "$OVT_DIR/signer.stderr" "$OVT_PY" "$OVT_LIB_DIR/pk_signer.py" "$MADDR" \
        --key "$OVT_DIR/$pki/server.key" --modes "$MODES" --out "$SLOG"
    wait_for 20 grep -q "^>INFO:" "$SLOG" || fail "signer not connected: $(cat "$OVT_DIR/signer.stderr")"
}

pki_make "$OVT_DIR" --clients 2
mkdir -p "$OVT_DIR/rsa" # (made meanwhile, for the last part)
timeout 120 bash "$OVT_SRC/scripts/pki.sh" --rsa --clients 1 "$OVT_DIR/rsa" >"$OVT_DIR/pki-rsa.log" 2>&1 &
rsa_pki_pid=$!
echo "good garbage silent good" >"$MODES"
start_server pki
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    server_log_grep "management-external-key" || fail "start-up does not mention management-external-key"
fi

client_start "$OVT_DIR" 1
wait_tunnel 1
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.2 0 "client 1, EC key signed by management"
grep -Eq '^>PK_SIGN:[A-Za-z0-9+/=]+,ECDSA$' "$SLOG" || fail "no >PK_SIGN:DATA,ECDSA request: $(cat "$SLOG")"
grep -qx 'SUCCESS: pk-sign command succeeded' "$SLOG" || fail "no SUCCESS for pk-sig: $(cat "$SLOG")"

# Garbage: that handshake fails.
client_start "$OVT_DIR" 2
wait_for 15 grep -q $'^SENT\tgarbage' "$SLOG" || fail "no second request"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    wait_server_log "management-external-key: the management client's answer is not a valid signature" 10 ||
        fail "no log line for the bad signature"
    wait_for 10 grep -qx 'ERROR: pk-sign command failed' "$SLOG" || fail "no ERROR for the garbage: $(cat "$SLOG")"
    ovt_log "garbage answer: handshake refused, management told"
fi
client_up 2 && fail "client 2 connected with a garbage signature"

# No answer: the handshake waits, the connected client does not.
ovt_signal "${CLIENT_PID[2]}" USR1 # a new session at once (not after the client's hand-window)
wait_for 15 grep -q $'^SENT\tsilent' "$SLOG" || fail "no third request"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    # (openvpn 2.6 waits for the answer in its only thread: nothing moves until it comes)
    t0=$SECONDS
    assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.2 0 "client 1 while a signature is awaited"
    server_log_grep "no signature from the management client" &&
        fail "the request timed out before the pings were done (they took $((SECONDS - t0)) s)"
    wait_server_log "no signature from the management client within 5 s" 10 ||
        fail "the unanswered request did not time out"
    ovt_log "unanswered request: timed out after $((SECONDS - t0)) s or less, client 1 kept its tunnel"
    ovt_signal "${CLIENT_PID[2]}" USR1
    wait_tunnel 2
    assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 3 0.2 0 "client 2 after a refused and a lost signature"
fi
client_stop 2
client_stop 1
server_stop

# RSA: PKCS#1 v1.5 with a DigestInfo (ovpnd speaks TLS 1.2: it never asks for PSS). openvpn 2.6
# with OpenSSL 3 asks for RSA-PSS, which the `pss` flag allows.
wait "$rsa_pki_pid" || fail "pki.sh --rsa failed: $(cat "$OVT_DIR/pki-rsa.log")"
echo good >"$MODES"
start_server rsa pkcs1 pss
OVT_CLIENT_CERT=$OVT_DIR/rsa/client1.crt OVT_CLIENT_KEY=$OVT_DIR/rsa/client1.key client_start "$OVT_DIR" 1 \
    "ca $OVT_DIR/rsa/ca.crt" "tls-crypt $OVT_DIR/rsa/ta.key" "reneg-sec 3"
wait_tunnel 1
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 3 0.2 0 "client 1, RSA key signed by management"
# the client renegotiates after 3 s: that handshake is signed by the management client too
n_signed() { test "$(grep -c 'SUCCESS: pk-sign command succeeded' "$SLOG")" -ge "$1"; }
wait_for 20 n_signed 2 ||
    fail "no signature for the renegotiation: $(cat "$SLOG")"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 3 0.2 0 "client 1 after a renegotiation"
req=$(sed -n 's/^>PK_SIGN:\([^,]*\),\(.*\)$/\1 \2/p' "$SLOG" | head -n 1)
alg=${req#* }
len=$(printf '%s' "${req%% *}" | base64 -d | wc -c)
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    [ "$alg" = RSA_PKCS1_PADDING ] && [ "$len" = 51 ] ||
        fail "RSA request: algorithm '$alg', $len bytes (RSA_PKCS1_PADDING, 51 expected)"
else
    case "$alg" in
    RSA_PKCS1_PSS_PADDING,hashalg=*) ;;
    *) fail "openvpn 2.6 asked for '$alg'" ;;
    esac
fi
ovt_log "RSA: $alg, $len bytes"
client_stop 1
server_stop
ovt_log "PASS"
