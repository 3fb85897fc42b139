#!/usr/bin/env bash
# What start-up asks the management client for (openvpn 2.6 doc/management-notes.txt, manage.c
# management_query_user_pass and management_query_cert), answered by pk_signer.py:
#  - management-query-passwords with an encrypted key: the server logs that it waits, asks
#    ">PASSWORD:Need 'Private Key' password" (after management-hold is released), and serves
#    clients only after `password`; a stock client connects. SIGHUP asks nothing again (2.6
#    keeps the password; ovpnd reloads with the key it decrypted at start-up, and refuses a
#    reload once the key file's encrypted text changed);
#  - a wrong password: ">PASSWORD:Verification Failed: 'Private Key'" and the server exits, as
#    2.6 does ("private key password verification failed");
#  - `--test-config` on that config does not wait for a management client (ovpnd only);
#  - management-external-cert TAG with management-external-key: ">NEED-CERTIFICATE:TAG" answered
#    by `certificate` and the PEM lines, the signatures by pk-sig; a stock client connects. SIGHUP:
#    2.6 restarts and asks for the certificate again, ovpnd keeps the one it was given;
#  - a certificate that does not read ends start-up ("Cannot load inline certificate file").
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init mgmt_startup

netns_setup 1
ALOG=$OVT_DIR/answerer.log
PASS='s3cret "pass" \word'
N_START=0

pki_make "$OVT_DIR" --clients 1
openssl pkey -in "$OVT_DIR/pki/server.key" -aes256 -passout "pass:$PASS" \
    -out "$OVT_DIR/server-enc.key" 2>"$OVT_DIR/openssl.log" ||
    fail "cannot encrypt the server key: $(cat "$OVT_DIR/openssl.log")"
printf '%s\n' '-----BEGIN CERTIFICATE-----' 'bm90IGEgY2VydGlmaWNhdGU=' \
    '-----END CERTIFICATE-----' >"$OVT_DIR/bad.crt"

# conf LINE...: server.conf with a fresh management socket (MADDR) and LINEs; "key FILE" and
# "cert FILE" lines replace the shared config's, "key -" and "cert -" remove them.
conf() {
    N_START=$((N_START + 1))
    MADDR=$OVT_DIR/mgmt$N_START.sock
    local -a extra=()
    local line key="" cert=""
    for line in "$@"; do
        case "$line" in
        "key "*) key=${line#key } ;;
        "cert "*) cert=${line#cert } ;;
        *) extra+=("$line") ;;
        esac
    done
    server_conf_write "$OVT_DIR" "management $MADDR unix" "${extra[@]}"
    [ -z "$key" ] || sed -i "s|^key .*|key $key|; s|^key -$||" "$OVT_DIR/server.conf"
    [ -z "$cert" ] || sed -i "s|^cert .*|cert $cert|; s|^cert -$||" "$OVT_DIR/server.conf"
}

# start_asking REGEX ANSWER-ARG...: the management client (pk_signer.py with ANSWER-ARGs) made ready
# first (Python starts slowly), then the server, which must log what it waits for (REGEX) and
# not serve yet; then the management client connects (openvpn 2.6 logs the wait only while no
# management client is connected)
start_asking() {
    local re=$1
    shift
    : >"$ALOG"
    ovt_spawn "$NS_SRV" "$OVT_DIR/answerer.stderr" "$OVT_PY" "$OVT_LIB_DIR/pk_signer.py" "$MADDR" \
        --out "$ALOG" --go "$OVT_DIR/go$N_START" "$@"
    server_spawn "$OVT_DIR"
    wait_server_log "$re" 15 || fail "the server does not log that it waits ($re)"
    test -S "$MADDR" || fail "no management socket $MADDR"
    ! server_log_grep "Initialization Sequence Completed" || fail "serving before the answer"
    touch "$OVT_DIR/go$N_START"
}

# server_exits_failing REGEX: the server ends with a non-zero status, its log matching REGEX
server_exits_failing() {
    local rc=0
    wait_for 15 pid_gone "$SERVER_PID" || fail "the server did not exit ($1)"
    ovt_wait "$SERVER_PID" || rc=$?
    SERVER_PID=
    [ "$rc" != 0 ] || fail "the server exited with status 0 ($1)"
    server_log_grep "$1" || fail "the server log does not say '$1'"
}

# inits_at_least N: the server log since its start says N times that it serves (2.6 restarts)
inits_at_least() {
    [ "$(server_log_since | grep -c "Initialization Sequence Completed" || true)" -ge "$1" ]
}

# --test-config: nothing to ask, nobody to wait for
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    conf "key $OVT_DIR/server-enc.key" "management-query-passwords"
    out=$(timeout 10 "$OVPND" --config "$OVT_DIR/server.conf" --test-config 2>&1) ||
        fail "--test-config failed (or waited): $out"
    grep -q "configuration OK" <<<"$out" || fail "--test-config: $out"
    grep -q "not checked" <<<"$out" || fail "--test-config does not say the key is not checked: $out"
fi

# A wrong password: told, and the server exits.
conf "key $OVT_DIR/server-enc.key" "management-query-passwords"
start_asking "Need password\(s\) from management interface, waiting" --password "not the password"
wait_for 10 grep -qx ">PASSWORD:Verification Failed: 'Private Key'" "$ALOG" ||
    fail "no >PASSWORD:Verification Failed: $(cat "$ALOG")"
server_exits_failing "private key password verification failed"
ovt_log "wrong password: verification failed, the server exited"

# The right password: the server starts, a client connects. With management-hold, the hold
# comes first, then the question (2.6 order). A service manager (a notify socket, as systemd's)
# hears what the wait is for and that it extends the unit's start-up timeout (ovpnd).
conf "key $OVT_DIR/server-enc.key" "management-query-passwords" "management-hold"
ovt_spawn - "$OVT_DIR/notify.out" "$OVT_PY" "$OVT_LIB_DIR/metrics_check.py" notify-listen \
    "$OVT_DIR/notify.sock" "$OVT_DIR/notify.log"
wait_for 10 grep -q listening "$OVT_DIR/notify.log" || fail "notify listener did not start"
NOTIFY_SOCKET=$OVT_DIR/notify.sock start_asking "Need hold release from management interface, waiting" \
    --password "$PASS" --hold-release
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    grep -q " STATUS=waiting for the management client: hold release" "$OVT_DIR/notify.log" &&
        grep -q " EXTEND_TIMEOUT_USEC=30000000$" "$OVT_DIR/notify.log" || {
        cat "$OVT_DIR/notify.log" >&2
        fail "the notify socket did not hear of the wait"
    }
fi
wait_server_log "Initialization Sequence Completed" 15 || fail "not serving after the password"
grep -qx ">PASSWORD:Need 'Private Key' password" "$ALOG" || fail "no >PASSWORD request: $(cat "$ALOG")"
[ "$(grep -m1 -E '^>(HOLD|PASSWORD):' "$ALOG")" = ">HOLD:Waiting for hold release:0" ] ||
    fail "the password was asked before the hold was released: $(cat "$ALOG")"
grep -qx "SUCCESS: 'Private Key' password entered, but not yet verified" "$ALOG" ||
    fail "no SUCCESS for the password: $(cat "$ALOG")"
client_start "$OVT_DIR" 1
wait_tunnel 1
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 3 0.2 0 "client 1, key decrypted with the management password"
# SIGHUP: the password is not asked again
ovt_signal "$(server_process_pid)" HUP
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    wait_server_log "reload: (applied|no change)" 10 || fail "no reload after SIGHUP"
    assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 3 0.2 0 "client 1 after SIGHUP"
else
    wait_for 20 inits_at_least 2 || fail "openvpn did not restart after SIGHUP"
fi
count_lines "^>PASSWORD:Need" "$ALOG" 1 || fail "the password was asked again after SIGHUP: $(cat "$ALOG")"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    # the key file encrypted again (a new salt): ovpnd cannot decrypt it without asking, and
    # refuses the reload (2.6 would decrypt it with the password it kept)
    openssl pkey -in "$OVT_DIR/pki/server.key" -aes256 -passout "pass:$PASS" \
        -out "$OVT_DIR/server-enc.key" 2>"$OVT_DIR/openssl.log" || fail "cannot encrypt the key again"
    ovt_signal "$(server_process_pid)" HUP
    wait_server_log "the encrypted key is not the one start-up decrypted" 10 ||
        fail "a reload with a changed encrypted key was not refused"
    server_log_grep "reload: refused, nothing changed" || fail "no 'reload: refused' line"
    assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 2 0.2 0 "client 1 after the refused reload"
fi
ovt_log "password from management: client connected; SIGHUP asked nothing"
client_stop 1
server_stop

# A certificate that is not one: the server exits.
conf "cert -" "key -" "management-external-cert srvcert" "management-external-key"
start_asking "Need information from management interface, waiting" \
    --cert "$OVT_DIR/bad.crt" --key "$OVT_DIR/pki/server.key"
server_exits_failing "Cannot load inline certificate file"
grep -qx ">NEED-CERTIFICATE:srvcert" "$ALOG" || fail "no >NEED-CERTIFICATE:srvcert: $(cat "$ALOG")"
ovt_log "bad certificate: the server exited"

# The certificate and the signatures from management: a client connects.
conf "cert -" "key -" "management-external-cert srvcert" "management-external-key"
start_asking "Need information from management interface, waiting" \
    --cert "$OVT_DIR/pki/server.crt" --key "$OVT_DIR/pki/server.key"
wait_server_log "Initialization Sequence Completed" 15 || fail "not serving after the certificate"
grep -qx "SUCCESS: certificate command succeeded" "$ALOG" || fail "no SUCCESS for the certificate: $(cat "$ALOG")"
client_start "$OVT_DIR" 1
wait_tunnel 1
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 3 0.2 0 "client 1, certificate and signature from management"
grep -q "^SENT.good" "$ALOG" || fail "no signature was asked for: $(cat "$ALOG")"
ovt_signal "$(server_process_pid)" HUP
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    # ovpnd keeps the certificate it was given (its reload keeps the clients)
    wait_server_log "reload: (applied|no change)" 10 || fail "no reload after SIGHUP"
    assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 3 0.2 0 "client 1 after SIGHUP"
    count_lines "^>NEED-CERTIFICATE:" "$ALOG" 1 || fail "the certificate was asked again: $(cat "$ALOG")"
else
    # openvpn 2.6 restarts and asks again (init_ssl runs again)
    wait_for 20 count_lines "^>NEED-CERTIFICATE:" "$ALOG" 2 || fail "openvpn did not ask again after SIGHUP"
    wait_for 20 inits_at_least 2 || fail "openvpn did not restart after SIGHUP"
fi
ovt_log "certificate from management: client connected; SIGHUP handled"
client_stop 1
server_stop
ovt_log "PASS"
