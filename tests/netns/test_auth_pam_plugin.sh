#!/usr/bin/env bash
# Debian's openvpn-plugin-auth-pam.so, loaded unchanged, against a real PAM service made here
# (pam_unix and a test user with a password, both removed at the end):
#   1. certificate + password: the right password connects, a wrong one gets AUTH_FAILED and
#      no address, and the log names the client and the plugin;
#   2. with `setenv deferred_auth_pam 1` (the plugin answers through auth_control_file): a PAM
#      stack that takes 5 s for one client does not hold up another client's handshake, and
#      the first client's pings stay under 10 ms;
#   3. ovpnd's own plugins/auth-pam, password only (verify-client-cert none), with a
#      two-question PAM stack (pam_unix, then a stand-in OTP module asking "Verification code"
#      with echo on): a client whose password is in the static-challenge form
#      "SCRV1:<base64 password>:<base64 code>" connects with the right code and is refused
#      with a wrong one or none.
# ovt: lock pam (it adds a user and PAM files to the host)
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init auth_pam_plugin

plugin=$(ls /usr/lib/*/openvpn/plugins/openvpn-plugin-auth-pam.so 2>/dev/null | head -n 1)
[ -n "$plugin" ] || ovt_skip "openvpn-plugin-auth-pam.so not installed (Debian package openvpn)"
for tool in useradd userdel chpasswd; do
    command -v "$tool" >/dev/null || ovt_skip "$tool not installed"
done

netns_setup 4
pki_make "$OVT_DIR"
dir=$OVT_DIR
user=ovt$$
service=ovpnd-test-$$
password="pam-pw-$$"

useradd --no-create-home --shell /usr/sbin/nologin --comment "ovpnd test user" "$user"
OVT_CLEANUP+=("userdel '$user' 2>/dev/null")
printf '%s:%s\n' "$user" "$password" | chpasswd

# The slow part of the stack: 5 s for the client at 198.18.0.4 (PAM_RHOST is the client's
# address, set by the plugin), nothing for the others.
cat >"$dir/slow.sh" <<'EOF'
#!/bin/sh
[ "$PAM_RHOST" = 198.18.0.4 ] && sleep 5
exit 0
EOF
chmod 755 "$dir/slow.sh"
OVT_CLEANUP+=("rm -f '/etc/pam.d/$service'")
cat >"/etc/pam.d/$service" <<EOF
auth requisite pam_exec.so quiet $dir/slow.sh
auth required pam_unix.so nodelay
account required pam_unix.so
EOF

creds() { # creds I USER PASS
    printf '%s\n%s\n' "$2" "$3" >"$dir/up$1.txt"
    chmod 600 "$dir/up$1.txt"
}
got_auth_failed() { grep -q "AUTH_FAILED" "$dir/client$1.log"; }
start_with() { # start_with I USER PASS [LINE...]
    local i=$1
    creds "$i" "$2" "$3"
    shift 3
    client_start "$dir" "$i" "auth-user-pass $dir/up$i.txt" "auth-retry none" "$@"
}

# 1. The plugin's blocking mode: its call runs on the plugin's own thread.
OVT_STATUS_VERSION=2 server_conf_write "$dir" "plugin $plugin $service" "username-as-common-name"
server_start "$dir"
server_log_grep "plugin .*openvpn-plugin-auth-pam.so loaded" || fail "the plugin was not loaded"
start_with 1 "$user" "$password"
wait_tunnel 1
wait_for 5 grep -q "^CLIENT_LIST,$user," "$dir/status.log" ||
    fail "status file does not list the PAM user"
start_with 2 "$user" wrong-password
wait_for 30 got_auth_failed 2 || fail "a wrong PAM password did not get AUTH_FAILED"
server_log_grep "198\.18\.0\.3:[0-9]+.*refused: username '$user': plugin .*auth-pam.so refused" ||
    fail "server log does not name the client and the refusing plugin"
[ -z "$(client_tun_ip 2)" ] || fail "the client with a wrong password got an address"
ovt_log "PAM through Debian's auth-pam plugin: right password connects, wrong one refused"
client_stop 1
server_stop

# 2. Deferred mode, with a slow PAM stack for one client.
OVT_STATUS_VERSION=2 server_conf_write "$dir" "plugin $plugin $service" "setenv deferred_auth_pam 1"
server_start "$dir"
start_with 1 "$user" "$password"
wait_tunnel 1
start_with 3 "$user" "$password"
wait_server_log "198\.18\.0\.4:[0-9]+: TLS handshake done" 20 || fail "client 3 did not reach auth"
t0=$SECONDS
start_with 4 "$user" "$password" # duplicate-cn is off, but the CN is the certificate's
wait_tunnel 4 20
t_conn=$((SECONDS - t0))
# Had the 5 s check held up the handshake, client 3 would be up first.
client_up 3 && fail "client 4 came up only after the slow PAM check ($t_conn s)"
read -r median max n_rx < <(ping_rtt "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 20 0.1)
[ "$n_rx" -ge 19 ] || fail "only $n_rx of 20 pings came back during the slow PAM check"
awk -v m="$median" 'BEGIN { exit !(m < 10) }' || fail "pings took $median ms (median) during the slow PAM check"
ovt_log "during a 5 s PAM check: client 4 connected in $t_conn s, pings median $median ms, max $max ms"
wait_tunnel 3 20
ovt_log "the slow PAM check (deferred) connected its client"
for i in 1 3 4; do client_stop "$i"; done
server_stop

# 3. Password and one-time code through ovpnd-auth-pam.so, without client certificates.
bin_dir=$(cd "$(dirname "$OVPND")" && pwd)
own_plugin=$bin_dir/plugins/ovpnd-auth-pam.so
otp_module=$bin_dir/tests/pam_test_otp.so
[ -f "$own_plugin" ] && [ -f "$otp_module" ] || fail "build the plugins first ($own_plugin, $otp_module)"
cat >"/etc/pam.d/$service" <<EOF
auth requisite pam_unix.so nodelay
auth required $otp_module code=424242
account required pam_unix.so
EOF
scrv1() { printf 'SCRV1:%s:%s' "$(printf '%s' "$1" | base64 -w0)" "$(printf '%s' "$2" | base64 -w0)"; }
OVT_STATUS_VERSION=2 server_conf_write "$dir" "plugin $own_plugin $service" "verify-client-cert none"
server_start "$dir"
OVT_CLIENT_CERT=none start_with 1 "$user" "$(scrv1 "$password" 424242)"
wait_tunnel 1
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "password-and-code client without certificate"
OVT_CLIENT_CERT=none start_with 2 "$user" "$(scrv1 "$password" 111111)"
OVT_CLIENT_CERT=none start_with 3 "$user" "$password"
wait_for 30 got_auth_failed 2 || fail "a wrong one-time code did not get AUTH_FAILED"
[ -z "$(client_tun_ip 2)" ] || fail "the client with a wrong code got an address"
wait_for 30 got_auth_failed 3 || fail "a password without the one-time code was not refused"
server_log_grep "ovpnd-auth-pam: PAM asks 'Verification code: ' but the client sent no static-challenge response" ||
    fail "the plugin did not say why the client without a code was refused"
ovt_log "ovpnd-auth-pam: password and one-time code from SCRV1 answer PAM's two questions"
