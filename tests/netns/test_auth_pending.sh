#!/usr/bin/env bash
# Pending authentication from an auth-user-pass-verify script (openvpn 2.6 auth_pending_file):
# the script writes "30 / webauth / WEB_AUTH::URL" into $auth_pending_file, exits 2 (deferred)
# and writes 1 into $auth_control_file 3 s later.
#  - client1 announces `setenv IV_SSO webauth,crtext`: it logs AUTH_PENDING and the INFO_PRE
#    text, and connects once the answer comes;
#  - client2 announces no IV_SSO: it is refused with 2.6's client reason ("required pending auth
#    method 'webauth' not supported");
#  - client3 (user3) gets a CR_TEXT challenge instead (method crtext, no answer from the verify
#    script); it answers through its own management interface (`cr-response`), and the
#    client-crresponse script, which gets the answer in a file and $auth_control_file, writes 1
#    there when the code is right: client3 connects.
# Runs against OVPN_SERVER_IMPL=openvpn as well.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init auth-pending

netns_setup 3
pki_make "$OVT_DIR"
for u in 1 2 3; do printf 'user%s\npass%s\n' "$u" "$u" >"$OVT_DIR/up$u.txt"; done
chmod 600 "$OVT_DIR"/up*.txt
cat >"$OVT_DIR/verify.sh" <<'EOF'
#!/bin/sh
if [ "$username" = user3 ]; then
    printf '30\ncrtext\nCR_TEXT:R,E:Enter your code\n' >"$auth_pending_file"
    exit 2
fi
printf '30\nwebauth\nWEB_AUTH::https://auth.example/y\n' >"$auth_pending_file"
(sleep 3; echo 1 >"$auth_control_file") </dev/null >/dev/null 2>&1 &
exit 2
EOF
cat >"$OVT_DIR/crresponse.sh" <<'EOF'
#!/bin/sh
echo "$script_type $username $(cat "$1")" >>"${0%/*}/crresponse.log"
[ "$(base64 -d <"$1")" = 424242 ] && echo 1 >"$auth_control_file"
exit 0
EOF
chmod 755 "$OVT_DIR/verify.sh" "$OVT_DIR/crresponse.sh"

server_conf_write "$OVT_DIR" "script-security 3" \
    "auth-user-pass-verify $OVT_DIR/verify.sh via-env" "client-crresponse $OVT_DIR/crresponse.sh"
server_start "$OVT_DIR"

client_start "$OVT_DIR" 1 "auth-user-pass $OVT_DIR/up1.txt" "setenv IV_SSO webauth,crtext"
wait_for 30 grep -q 'AUTH_PENDING' "$OVT_DIR/client1.log" || fail "client1 did not get AUTH_PENDING"
wait_for 10 grep -q 'WEB_AUTH::https://auth.example/y' "$OVT_DIR/client1.log" ||
    fail "client1 did not get the INFO_PRE text"
client_up 1 && fail "client1 was connected before the script's answer"
wait_tunnel 1 30
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 10 0.1 0 "client1 after its pending auth"

client_start "$OVT_DIR" 2 "auth-user-pass $OVT_DIR/up2.txt"
wait_for 30 grep -q "AUTH_FAILED,Authentication failed, required pending auth method 'webauth' not supported" \
    "$OVT_DIR/client2.log" || fail "client2 (no IV_SSO) was not refused with the pending method reason"
! client_up 2 || fail "client2 has a tunnel"
ovt_log "client2 without IV_SSO refused: pending method not supported"

client_start "$OVT_DIR" 3 "auth-user-pass $OVT_DIR/up3.txt" "setenv IV_SSO webauth,crtext" \
    "management $OVT_DIR/client3-mgmt.sock unix"
wait_for 30 grep -q 'CR_TEXT:R,E:Enter your code' "$OVT_DIR/client3.log" ||
    fail "client3 did not get the CR_TEXT challenge"
ovt_run 30 "$(client_ns 3)" "$OVT_PY" "$OVT_LIB_DIR/mgmt_client.py" run "$OVT_DIR/client3-mgmt.sock" \
    "cr-response $(printf 424242 | base64)" >/dev/null
wait_tunnel 3 30
grep -q "^client-crresponse user3 $(printf 424242 | base64)\$" "$OVT_DIR/crresponse.log" ||
    fail "client-crresponse did not get the answer: $(cat "$OVT_DIR/crresponse.log" 2>/dev/null)"
ovt_log "client3 answered its CR_TEXT challenge; client-crresponse admitted it"

client_stop 1
client_stop 2
client_stop 3
server_stop
