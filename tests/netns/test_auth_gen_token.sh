#!/usr/bin/env bash
# auth-gen-token: a laptop is asked for its password once, not at every renegotiation.
# The stock client with `auth-user-pass FILE` against a server with an auth-user-pass-verify
# script that counts its calls, `auth-gen-token`, `auth-gen-token-secret` and reneg-sec 10:
#   1. the client gets a token in PUSH_REPLY, stays up across two renegotiations in which the
#      server accepts the token, the script ran exactly once (with session_state=Initial and a
#      session_id), and ping works after the renegotiations;
#   2. the server restarts with the same secret: the client reconnects with its token and the
#      script is not asked; client-connect sees session_state=Authenticated and the same
#      session_id as at the first connect;
#   3. the server restarts with a random secret and `external-auth`: the token fails its HMAC,
#      the script is asked anyway with session_state=Invalid and refuses it, the client is told
#      AUTH_FAILED, drops the token and reconnects with its password (session_state=Initial).
# OVPN_SERVER_IMPL=openvpn runs the same checks against openvpn 2.6 as the server.
#
# renewal-time is 120 s (a token lives 240 s unrenewed), not reneg-sec: an openvpn 2.6.14 server
# writes the renewed token after a renegotiation but sends it only at its next control-channel
# event, so its client keeps the first token, which 2 * reneg-sec would expire at the second
# renegotiation ("AUTH_FAILED,SESSION: token expired"). ovpnd sends the renewed token at once;
# that the client got it is checked for ovpnd only.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init auth_gen_token

netns_setup 1
pki_make "$OVT_DIR" --clients 1
dir=$OVT_DIR

cat >"$dir/verify.sh" <<'EOF'
#!/bin/sh
user=$(sed -n 1p "$1")
pass=$(sed -n 2p "$1")
echo "$user state=${session_state:-unset} id=${session_id:-unset}" >>"$AUTH_TEST_DIR/calls.log"
[ "$pass" = "secret-$user" ] && exit 0
exit 1
EOF
chmod 755 "$dir/verify.sh"
cat >"$dir/connect.sh" <<'EOF'
#!/bin/sh
echo "$username state=${session_state:-unset} id=${session_id:-unset}" >>"$AUTH_TEST_DIR/connects.log"
EOF
chmod 755 "$dir/connect.sh"
# ovpnd's key file, which openvpn 2.6 reads too when it is the server.
"$OVPND" --genkey auth-token "$dir/token.key" || fail "ovpnd --genkey auth-token failed"
printf 'alice\nsecret-alice\n' >"$dir/up1.txt"
chmod 600 "$dir/up1.txt"
: >"$dir/calls.log"
: >"$dir/connects.log"

conf() { # conf AUTH_GEN_TOKEN_ARGS [LINE...]: the server config with the scripts, and the lines
    local args=$1
    shift
    server_conf_write "$dir" "script-security 2" "auth-user-pass-verify '$dir/verify.sh' via-file" \
        "client-connect '$dir/connect.sh'" "setenv AUTH_TEST_DIR $dir" "tmp-dir $dir" \
        "reneg-sec 10" "auth-gen-token $args" "$@"
}
n_calls() { wc -l <"$dir/calls.log"; }
renewed() { grep -c "PUSH: Received control message: 'PUSH_REPLY,auth-token" "$dir/client1.log" || true; }
has_renewed() { [ "$(renewed)" -ge "$1" ]; }
# The server's log line for a renegotiation or reconnect authenticated by the token alone.
case "$OVPN_SERVER_IMPL" in
ovpnd) token_ok="username 'alice' authenticated by its auth-token" ;;
openvpn) token_ok="Username/auth-token authentication succeeded for username 'alice'" ;;
esac
token_oks() { server_log_since | grep -c -- "$token_ok" || true; }
has_token_oks() { [ "$(token_oks)" -ge "$1" ]; }

conf "0 120" "auth-gen-token-secret $dir/token.key"
server_start "$dir"
client_start "$dir" 1 "auth-user-pass $dir/up1.txt" "auth-retry none"
wait_tunnel 1
# 2.6 clients log the pushed token's name and hide its value below verb 7.
grep -Eq "PUSH: Received control message: 'PUSH_REPLY,.*auth-token" "$dir/client1.log" ||
    fail "the client's PUSH_REPLY has no auth-token"
grep -Eq "^alice state=Initial id=[A-Za-z0-9+/]{16}$" "$dir/calls.log" ||
    fail "the script did not get session_state=Initial and a session_id: $(cat "$dir/calls.log")"
ovt_log "token received; the script saw $(cat "$dir/calls.log")"
sid=$(sed -n 's/.* id=//p' "$dir/calls.log")
grep -qx "alice state=Initial id=$sid" "$dir/connects.log" ||
    fail "client-connect did not get the same session_id/state: $(cat "$dir/connects.log")"

# reneg-sec 10 on the server: two renegotiations within about 22 s.
t0=$SECONDS
wait_for 30 has_token_oks 2 || fail "no two renegotiations authenticated by the token ($(token_oks))"
ovt_log "two renegotiations in $((SECONDS - t0)) s, both authenticated by the token"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    wait_for 5 has_renewed 2 || fail "the client did not get two renewed tokens ($(renewed))"
fi
ovt_log "renewed tokens the client logged: $(renewed)"
[ "$(n_calls)" -eq 1 ] || fail "the script ran $(n_calls) times, not once: $(cat "$dir/calls.log")"
client_alive 1 || fail "the client gave up during the renegotiations"
grep -q "AUTH_FAILED" "$dir/client1.log" && fail "the client got AUTH_FAILED"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 10 0.1 10 "after two renegotiations"

# 2. Same secret after a restart: the token still opens the tunnel.
server_stop
server_start "$dir"
wait_for 30 count_lines "Initialization Sequence Completed" "$dir/client1.log" 2 ||
    fail "the client did not reconnect after the server restart"
wait_tunnel 1
wait_for 5 has_token_oks 1 || fail "the server did not log the reconnect by token"
[ "$(n_calls)" -eq 1 ] ||
    fail "the reconnect with a token ran the script: $(tail -n 1 "$dir/calls.log")"
grep -q "AUTH_FAILED" "$dir/client1.log" && fail "the client got AUTH_FAILED after the restart"
wait_for 5 count_lines . "$dir/connects.log" 2 || fail "client-connect did not run at the reconnect"
[ "$(tail -n 1 "$dir/connects.log")" = "alice state=Authenticated id=$sid" ] ||
    fail "client-connect after the reconnect: $(tail -n 1 "$dir/connects.log"), not the same session"
ovt_log "client-connect after the reconnect: $(tail -n 1 "$dir/connects.log")"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.1 20 "reconnected with the token"

# 3. A random secret, external-auth: the script judges the failed token, then the password.
server_stop
conf "0 120 external-auth"
server_start "$dir"
wait_for 30 grep -q "AUTH_FAILED" "$dir/client1.log" ||
    fail "the token from the old secret was not refused with AUTH_FAILED"
wait_for 30 count_lines "Initialization Sequence Completed" "$dir/client1.log" 3 ||
    fail "the client did not reconnect with its password after the refused token"
wait_tunnel 1
[ "$(n_calls)" -eq 3 ] || fail "the script ran $(n_calls) times, expected 3: $(cat "$dir/calls.log")"
# A token that fails its HMAC gives no session id: the script sees a new one.
sed -n 2p "$dir/calls.log" | grep -Eqx "alice state=Invalid id=[A-Za-z0-9+/]{16}" ||
    fail "external-auth: the script was not told the token is invalid: $(sed -n 2p "$dir/calls.log")"
sed -n 2p "$dir/calls.log" | grep -q "id=$sid" &&
    fail "external-auth: the session id of the invalid token was kept: $(sed -n 2p "$dir/calls.log")"
sed -n 3p "$dir/calls.log" | grep -Eqx "alice state=Initial id=[A-Za-z0-9+/]{16}" ||
    fail "the password after the refused token is not state=Initial: $(sed -n 3p "$dir/calls.log")"
ovt_log "external-auth, token from another secret: $(sed -n 2p "$dir/calls.log" | cut -d' ' -f2), AUTH_FAILED, then the password ($(sed -n 3p "$dir/calls.log" | cut -d' ' -f2))"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.1 20 "after the password fallback"
