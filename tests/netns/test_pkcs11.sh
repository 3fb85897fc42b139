#!/usr/bin/env bash
# The server's certificate and key on a PKCS#11 token (openvpn 2.6 pkcs11-providers,
# pkcs11-id; doc/man-sections/pkcs11-options.rst), a SoftHSM2 token in the test's directory:
#  - the id a user copies from `openvpn --show-pkcs11-ids PROVIDER` names the certificate; ovpnd
#    --show-pkcs11-ids lists the same ids;
#  - the token PIN comes from the management client (management-query-passwords,
#    ">PASSWORD:Need 'LABEL token' password"), answered by pk_signer.py; with
#    pkcs11-id-management the id too (">NEED-STR", after pkcs11-id-count and pkcs11-id-get);
#  - a stock client connects and pings, with an EC (P-256) key and with an RSA key;
#  - pkcs11-pin-cache 1: the PIN is asked again at a handshake after the log-in ran out;
#  - SIGHUP (ovpnd: a reload) asks nothing again and keeps the client;
#  - a certificate whose key is not on the token: no client gets through (ovpnd: the server
#    exits at start-up saying so, not blaming the PIN; 2.6: the handshake fails);
#  - a wrong PIN: asked again, and no client gets through (2.6: the handshake fails; ovpnd: the
#    server exits at start-up).
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init pkcs11

PROVIDER=${OVT_PKCS11_PROVIDER:-/usr/lib/softhsm/libsofthsm2.so}
for tool in softhsm2-util pkcs11-tool; do
    command -v "$tool" >/dev/null || ovt_skip "$tool not installed (run scripts/install-deps.sh)"
done
[ -f "$PROVIDER" ] || ovt_skip "no PKCS#11 provider $PROVIDER (softhsm2)"

netns_setup 1
pki_make "$OVT_DIR" --clients 1
PIN=4711
LABEL=ovt-token
N_START=0

# An RSA server key and certificate from the same CA, for the second token object.
{
    openssl req -new -newkey rsa:2048 -nodes -keyout "$OVT_DIR/server-rsa.key" -subj "/CN=server-rsa" \
        -out "$OVT_DIR/server-rsa.csr" &&
        printf '%s\n' 'basicConstraints = CA:FALSE' 'keyUsage = critical, digitalSignature, keyEncipherment' \
            'extendedKeyUsage = serverAuth' >"$OVT_DIR/server-rsa.ext" &&
        openssl x509 -req -in "$OVT_DIR/server-rsa.csr" -CA "$OVT_DIR/pki/ca.crt" \
            -CAkey "$OVT_DIR/pki/ca.key" -set_serial 4242 -days 2 -sha256 \
            -extfile "$OVT_DIR/server-rsa.ext" -out "$OVT_DIR/server-rsa.crt" &&
        openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
            -keyout "$OVT_DIR/server-nokey.key" -subj "/CN=server-nokey" -out "$OVT_DIR/server-nokey.csr" &&
        openssl x509 -req -in "$OVT_DIR/server-nokey.csr" -CA "$OVT_DIR/pki/ca.crt" \
            -CAkey "$OVT_DIR/pki/ca.key" -set_serial 4343 -days 2 -sha256 \
            -extfile "$OVT_DIR/server-rsa.ext" -outform der -out "$OVT_DIR/server-nokey.der"
} >"$OVT_DIR/openssl.log" 2>&1 || fail "cannot make the RSA server certificate: $(cat "$OVT_DIR/openssl.log")"

# The token: SoftHSM2 keeps it in the test's directory (SOFTHSM2_CONF, which the server inherits).
export SOFTHSM2_CONF=$OVT_DIR/softhsm2.conf
mkdir -p "$OVT_DIR/tokens"
printf '%s\n' "directories.tokendir = $OVT_DIR/tokens" 'objectstore.backend = file' 'log.level = ERROR' \
    >"$SOFTHSM2_CONF"
# token_put ID NAME KEY CERT: KEY (PKCS#8) and CERT (DER) as objects ID labelled NAME
token_put() {
    openssl pkcs8 -topk8 -nocrypt -in "$3" -out "$OVT_DIR/$2.p8" &&
        openssl x509 -in "$4" -outform der -out "$OVT_DIR/$2.der" &&
        softhsm2-util --import "$OVT_DIR/$2.p8" --token "$LABEL" --label "$2" --id "$1" --pin "$PIN" &&
        pkcs11-tool --module "$PROVIDER" --token-label "$LABEL" --login --pin "$PIN" \
            --write-object "$OVT_DIR/$2.der" --type cert --id "$1" --label "$2"
}
{
    softhsm2-util --init-token --free --label "$LABEL" --pin "$PIN" --so-pin 98765 &&
        token_put 01 server-ec "$OVT_DIR/pki/server.key" "$OVT_DIR/pki/server.crt" &&
        token_put 02 server-rsa "$OVT_DIR/server-rsa.key" "$OVT_DIR/server-rsa.crt" &&
        pkcs11-tool --module "$PROVIDER" --token-label "$LABEL" --login --pin "$PIN" \
            --write-object "$OVT_DIR/server-nokey.der" --type cert --id 03 --label server-nokey
} >"$OVT_DIR/token.log" 2>&1 || fail "cannot make the token: $(cat "$OVT_DIR/token.log")"

# The ids as 2.6 users get them.
openvpn --show-pkcs11-ids "$PROVIDER" >"$OVT_DIR/ids.openvpn" 2>&1 ||
    fail "openvpn --show-pkcs11-ids failed: $(cat "$OVT_DIR/ids.openvpn")"
# id_of CN: the serialized id of the certificate with that CN in FILE $2
id_of() {
    awk -v dn="CN=$1" '$1 == "DN:" { hit = ($2 == dn) } hit && /Serialized id:/ { print $3; exit }' "$2"
}
ID_EC=$(id_of server "$OVT_DIR/ids.openvpn")
ID_RSA=$(id_of server-rsa "$OVT_DIR/ids.openvpn")
ID_NOKEY=$(id_of server-nokey "$OVT_DIR/ids.openvpn")
[ -n "$ID_EC" ] && [ -n "$ID_RSA" ] && [ -n "$ID_NOKEY" ] || fail "no ids in openvpn --show-pkcs11-ids: $(cat "$OVT_DIR/ids.openvpn")"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    "$OVPND" --show-pkcs11-ids "$PROVIDER" >"$OVT_DIR/ids.ovpnd" 2>&1 ||
        fail "ovpnd --show-pkcs11-ids failed: $(cat "$OVT_DIR/ids.ovpnd")"
    [ "$(id_of server "$OVT_DIR/ids.ovpnd")" = "$ID_EC" ] &&
        [ "$(id_of server-rsa "$OVT_DIR/ids.ovpnd")" = "$ID_RSA" ] ||
        fail "ovpnd --show-pkcs11-ids does not list openvpn's ids: $(cat "$OVT_DIR/ids.ovpnd")"
    # --test-config loads the providers and finds the certificate (no PIN asked); a provider
    # that does not load and an id that names nothing are errors naming their line
    # test_config ID [PROVIDER]: ovpnd --test-config's output, its status in TC_RC
    test_config() {
        server_conf_write "$OVT_DIR" "pkcs11-providers ${2:-$PROVIDER}" "pkcs11-id '$1'"
        sed -i '/^cert /d; /^key /d' "$OVT_DIR/server.conf"
        TC_RC=0
        "$OVPND" --test-config --config "$OVT_DIR/server.conf" </dev/null >"$OVT_DIR/tc.log" 2>&1 || TC_RC=$?
    }
    test_config "$ID_EC"
    [ "$TC_RC" = 0 ] && grep -q "pkcs11-id: the certificate is on the token" "$OVT_DIR/tc.log" ||
        fail "--test-config with the token's id: $(cat "$OVT_DIR/tc.log")"
    test_config "${ID_EC%/*}/nosuchid"
    [ "$TC_RC" != 0 ] && grep -q "server\.conf:[0-9]*: pkcs11-id: " "$OVT_DIR/tc.log" ||
        fail "--test-config with an id that names nothing: status $TC_RC, $(cat "$OVT_DIR/tc.log")"
    test_config "$ID_EC" "$OVT_DIR/no-such-provider.so"
    [ "$TC_RC" != 0 ] && grep -q "server\.conf:[0-9]*: pkcs11-providers: cannot load" "$OVT_DIR/tc.log" ||
        fail "--test-config with a provider that does not load: status $TC_RC, $(cat "$OVT_DIR/tc.log")"
    ovt_log "--test-config: the token's certificate found; a wrong id and a wrong provider named by line"
fi

# The management clients answering the PIN, one per server start below, made ready first:
# Python starts slowly. answerer N PIN: the Nth, on socket mgmtN.sock, logging to answererN.log;
# it connects once goN exists.
# answerer N PIN [ARG...]: the Nth, on socket mgmtN.sock, logging to answererN.log; it connects
# once goN exists.
answerer() {
    local n=$1 pin=$2
    shift 2
    ovt_spawn "$NS_SRV" "$OVT_DIR/answerer.stderr" "$OVT_PY" "$OVT_LIB_DIR/pk_signer.py" \
        "$OVT_DIR/mgmt$n.sock" --out "$OVT_DIR/answerer$n.log" --go "$OVT_DIR/go$n" --password "$pin" "$@"
}
answerer 1 "$PIN"
answerer 2 "$PIN" --needstr "$ID_RSA"
answerer 3 0000
answerer 4 "$PIN"

# start N ID [LINE...]: the server with the certificate and key of ID on the token (its cert and
# key lines removed; ID "-": pkcs11-id-management) and LINEs, the PIN from answerer N
# (management-query-passwords)
start() {
    N_START=$1
    ALOG=$OVT_DIR/answerer$1.log
    local idline="pkcs11-id '$2'"
    [ "$2" != - ] || idline=pkcs11-id-management
    server_conf_write "$OVT_DIR" "management $OVT_DIR/mgmt$1.sock unix" "management-query-passwords" \
        "pkcs11-providers $PROVIDER" "$idline" "${@:3}"
    sed -i '/^cert /d; /^key /d' "$OVT_DIR/server.conf"
    server_spawn "$OVT_DIR"
    wait_for 15 test -S "$OVT_DIR/mgmt$1.sock" || fail "no management socket mgmt$1.sock"
    touch "$OVT_DIR/go$1"
}

# Right PIN, EC key then RSA key: the PIN is asked (ovpnd: at start-up; 2.6: at the first
# handshake), a client connects and pings. The EC run has pkcs11-pin-cache 1: the log-in runs out
# and the next handshake (the client restarted 2 s later) gets the PIN asked again, while the
# server serves. The RSA run keeps the log-in (the default, -1): the PIN is asked once; its id
# comes from the management client (pkcs11-id-management), which lists the ids first.
for kind in ec rsa; do
    if [ $kind = ec ]; then start 1 "$ID_EC" "pkcs11-pin-cache 1"; else start 2 -; fi
    wait_server_log "Initialization Sequence Completed" 15 || fail "$kind: the server does not start"
    client_start "$OVT_DIR" 1
    wait_tunnel 1
    assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 3 0.2 0 "client 1, $kind key on the token"
    grep -qx ">PASSWORD:Need '$LABEL token' password" "$ALOG" ||
        fail "$kind: the PIN was not asked as 2.6 asks: $(cat "$ALOG")"
    if [ $kind = ec ]; then
        n=$(grep -c "^>PASSWORD:Need" "$ALOG")
        sleep 2
        client_restart 1
        wait_tunnel 1
        assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 2 0.2 0 "client 1 after the PIN cache ran out"
        [ "$(grep -c "^>PASSWORD:Need" "$ALOG")" -gt "$n" ] ||
            fail "pkcs11-pin-cache 1: the PIN was not asked again: $(cat "$ALOG")"
    else
        if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
            # SIGHUP keeps the token open: nothing is asked again, the client stays
            ovt_signal "$(server_process_pid)" HUP
            wait_server_log "reload: (applied|no change)" 10 || fail "no reload after SIGHUP"
            assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 2 0.2 0 "client 1 after SIGHUP"
            count_lines "^>NEED-STR:" "$ALOG" 1 || fail "the id was asked again after SIGHUP"
        fi
        count_lines "^>PASSWORD:Need" "$ALOG" 1 || fail "$kind: the PIN was asked more than once: $(cat "$ALOG")"
    fi
    if [ $kind = rsa ]; then
        grep -qx ">NEED-STR:Need 'pkcs11-id-request' string MSG:Please specify PKCS#11 id to use" "$ALOG" &&
            grep -qx ">PKCS11ID-COUNT:3" "$ALOG" &&
            grep -qF ", ID:'$ID_RSA', BLOB:'" "$ALOG" &&
            grep -qx "SUCCESS: 'pkcs11-id-request' needstr-string entered, but not yet verified" "$ALOG" ||
            fail "pkcs11-id-management: not asked or listed as 2.6 does: $(cat "$ALOG")"
    fi
    ovt_log "$kind key on the token: PIN from management, client connected"
    client_stop 1
    server_stop
done

# A certificate whose key is not on the token, the PIN right: no client gets through. ovpnd logs
# in at start-up and exits saying the key is missing (not that the PIN was refused); 2.6 fails
# the handshake.
start 4 "$ID_NOKEY"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    wait_for 15 pid_gone "$SERVER_PID" || fail "the server did not exit with no key on the token"
    rc=0
    ovt_wait "$SERVER_PID" || rc=$?
    SERVER_PID=
    [ "$rc" != 0 ] || fail "the server exited with status 0 with no key on the token"
    server_log_grep "server\.conf:[0-9]*: .*no private key with the certificate's id" ||
        fail "the server log does not say that the key is missing (at the pkcs11-id line)"
    ! server_log_grep "server\.conf: .*server\.conf:[0-9]*: " || fail "the config file is named twice in an error"
    ! server_log_grep "refused the PIN" || fail "the server blames the PIN for a missing key"
else
    wait_server_log "Initialization Sequence Completed" 15 || fail "the server does not start"
    client_start "$OVT_DIR" 1
    wait_server_log "TLS handshake failed" 15 || fail "no failed handshake with no key on the token"
    ! client_up 1 || fail "a client got through with no key on the token"
    client_stop 1
    server_stop
fi
ovt_log "certificate without its key on the token: refused"

# A wrong PIN: asked three times in all (pkcs11-helper's tries), and no client gets through.
# ovpnd asks at start-up and exits; 2.6 asks at the client's handshake and fails it.
start 3 "$ID_EC"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    wait_for 15 pid_gone "$SERVER_PID" || fail "the server did not exit after a wrong PIN"
    rc=0
    ovt_wait "$SERVER_PID" || rc=$?
    SERVER_PID=
    [ "$rc" != 0 ] || fail "the server exited with status 0 after a wrong PIN"
    server_log_grep "the token refused the PIN" || fail "the server log does not say why it exited"
    ! server_log_grep "Initialization Sequence Completed" || fail "the server served with a wrong PIN"
else
    wait_server_log "Initialization Sequence Completed" 15 || fail "the server does not start"
    client_start "$OVT_DIR" 1
    wait_server_log "TLS handshake failed" 15 || fail "no failed handshake with a wrong PIN"
    ! client_up 1 || fail "a client got through with a wrong PIN"
fi
count_lines "^>PASSWORD:Need '$LABEL token' password" "$ALOG" 3 ||
    fail "the wrong PIN was not asked for three times: $(cat "$ALOG")"
ovt_log "wrong PIN: asked three times, refused"
ovt_log "PASS"
