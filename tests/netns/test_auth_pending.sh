#!/usr/bin/env bash
# Pending authentication from an auth-user-pass-verify script (openvpn 2.6 auth_pending_file):
# the script writes "30 / webauth / WEB_AUTH::URL" into $auth_pending_file, exits 2 (deferred)
# and writes 1 into $auth_control_file 3 s later.
#  - client1 announces `setenv IV_SSO webauth,crtext`: it logs AUTH_PENDING and the INFO_PRE
#    text, and connects once the answer comes;
#  - client2 announces no IV_SSO: it is refused with 2.6's client reason ("required pending auth
#    method 'webauth' not supported").
# Runs against OVPN_SERVER_IMPL=openvpn as well.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init auth-pending

netns_setup 2
pki_make "$OVT_DIR"
for u in 1 2; do printf 'user%s\npass%s\n' "$u" "$u" >"$OVT_DIR/up$u.txt"; done
chmod 600 "$OVT_DIR"/up*.txt
cat >"$OVT_DIR/verify.sh" <<'EOF'
#!/bin/sh
printf '30\nwebauth\nWEB_AUTH::https://auth.example/y\n' >"$auth_pending_file"
(sleep 3; echo 1 >"$auth_control_file") </dev/null >/dev/null 2>&1 &
exit 2
EOF
chmod 755 "$OVT_DIR/verify.sh"

server_conf_write "$OVT_DIR" "script-security 3" \
    "auth-user-pass-verify $OVT_DIR/verify.sh via-env"
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

client_stop 1
client_stop 2
server_stop
