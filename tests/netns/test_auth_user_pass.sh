#!/usr/bin/env bash
# Username/password with an auth-user-pass-verify script, as a laptop user sets it up: the
# stock client with `auth-user-pass FILE`.
#   1. certificate + password (via-file, username-as-common-name): the right password
#      connects and the status file lists the username; a wrong one gets AUTH_FAILED and no
#      address; a script that takes 5 s neither delays another client's handshake nor its pings
#      (each under 10 ms); a script that never answers is killed at hand-window and its client
#      gets AUTH_FAILED; a deferred answer (exit 2, then auth_control_file) connects; the
#      script's auth_failed_reason_file text reaches the client without its trailing newline.
#   2. password only (verify-client-cert none, via-env): no client certificate, right and wrong
#      passwords; the credentials are checked again when the client renegotiates.
# ovt: lock pam (see tests/CMakeLists.txt)
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init auth_user_pass

netns_setup 7
pki_make "$OVT_DIR" --clients 7
dir=$OVT_DIR

# The operator's script: the password of USER is "secret-USER"; a few users behave specially.
cat >"$dir/verify.sh" <<'EOF'
#!/bin/sh
if [ "$#" -ge 1 ]; then
    user=$(sed -n 1p "$1")
    pass=$(sed -n 2p "$1")
else
    user=$username
    pass=$password
fi
echo "$script_type $user $common_name $untrusted_ip ${IV_VER:-noiv}" >>"$AUTH_TEST_DIR/calls.log"
case "$user" in
slow) sleep 5 ;;
hang)
    echo $$ >"$AUTH_TEST_DIR/hang.pid"
    sleep 600 &
    echo $! >"$AUTH_TEST_DIR/hang-child.pid"
    wait
    ;;
deferred)
    (
        sleep 1
        echo 1 >"$auth_control_file"
    ) &
    exit 2
    ;;
expired)
    printf 'Password expired, call the help desk\n' >"$auth_failed_reason_file"
    exit 1
    ;;
esac
[ "$pass" = "secret-$user" ] && exit 0
exit 1
EOF
chmod 755 "$dir/verify.sh"

creds() { # creds I USER PASS: the client's auth-user-pass file
    printf '%s\n%s\n' "$2" "$3" >"$dir/up$1.txt"
    chmod 600 "$dir/up$1.txt"
}
got_auth_failed() { grep -q "AUTH_FAILED" "$dir/client$1.log"; }
start_with() { # start_with I USER PASS [LINE...]
    local i=$1 user=$2 pass=$3
    shift 3
    creds "$i" "$user" "$pass"
    client_start "$dir" "$i" "auth-user-pass $dir/up$i.txt" "auth-retry none" "$@"
}

OVT_STATUS_VERSION=2 server_conf_write "$dir" "script-security 2" "auth-user-pass-verify '$dir/verify.sh' via-file" \
    "username-as-common-name" "hand-window 10" "setenv AUTH_TEST_DIR $dir" "tmp-dir $dir"
server_start "$dir"

start_with 1 alice secret-alice
wait_tunnel 1
ip1=${CLIENT_TUN_IP[1]}
wait_for 5 grep -q "^CLIENT_LIST,alice," "$dir/status.log" ||
    fail "status file does not list the username as common name"
grep -q "^user-pass-verify alice client1 198.18.0.2 2\." "$dir/calls.log" ||
    fail "the script did not get script_type, common_name, untrusted_ip and IV_VER"
ls "$dir"/ovpnd-up-* >/dev/null 2>&1 && fail "the username/password file was not removed"

start_with 2 alice wrong-password
wait_for 30 got_auth_failed 2 || fail "a wrong password did not get AUTH_FAILED"
server_log_grep "198\.18\.0\.3:[0-9]+.*refused: username 'alice'.*exited with 1" ||
    fail "server log does not name the refused client and why"
[ -z "$(client_tun_ip 2)" ] || fail "the client with a wrong password got an address"
ovt_log "wrong password refused with AUTH_FAILED"

# A slow check (5 s) and a hanging one: meanwhile another client connects at once and the
# first one's pings stay fast.
start_with 3 slow secret-slow
start_with 5 hang secret-hang
wait_for 10 test -s "$dir/hang.pid" || fail "the hanging script did not start"
t0=$SECONDS
start_with 4 bob secret-bob
wait_tunnel 4 20
# Had the 5 s check held up the handshake, the slow client would be up first.
client_up 3 && fail "bob came up only after the slow check ($((SECONDS - t0)) s)"
ovt_log "bob connected in $((SECONDS - t0)) s while the slow check ran"
read -r median max n_rx < <(ping_rtt "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 20 0.1)
[ "$n_rx" -ge 19 ] || fail "only $n_rx of 20 pings came back during the slow check"
awk -v m="$median" 'BEGIN { exit !(m < 10) }' || fail "pings took $median ms (median) during the slow check"
ovt_log "20 pings during the slow check: median $median ms, max $max ms"
client_alive 3 || fail "the slow client gave up"
wait_tunnel 3 20
ovt_log "the slow (5 s) check connected its client"

wait_for 20 got_auth_failed 5 || fail "the hanging check did not end in AUTH_FAILED at hand-window"
server_log_grep "198\.18\.0\.6:[0-9]+.*did not finish within hand-window" ||
    fail "server log does not say the check timed out"
# Ended: gone, or a zombie that init has not reaped yet.
ended() { ! grep -q '^State:[[:space:]]*[^Z]' "/proc/$1/status" 2>/dev/null; }
hang_pid=$(cat "$dir/hang.pid")
hang_child=$(cat "$dir/hang-child.pid")
wait_for 5 ended "$hang_pid" || fail "the hanging script still runs after hand-window"
wait_for 5 ended "$hang_child" || fail "the hanging script's child still runs"
ovt_log "hanging check: AUTH_FAILED at hand-window, script and its child killed"

start_with 6 deferred secret-deferred
wait_tunnel 6 20
ovt_log "deferred answer through auth_control_file connected"

start_with 7 expired whatever
wait_for 30 got_auth_failed 7 || fail "the expired user did not get AUTH_FAILED"
grep -q "AUTH_FAILED,Password expired, call the help desk'\?$" "$dir/client7.log" ||
    grep -q "AUTH_FAILED,Password expired, call the help desk$" "$dir/client7.log" ||
    fail "the client did not get the script's reason as 'AUTH_FAILED,<text>' without a newline"
ovt_log "auth_failed_reason_file text reached the client"

# Every address went to a connected client only: 4 clients up, 4 distinct addresses.
wait_for 15 count_lines '^CLIENT_LIST,' "$dir/status.log" 4 ||
    fail "status file should list exactly the 4 connected clients: $(grep '^CLIENT_LIST,' "$dir/status.log" | cut -d, -f2-4 | tr '\n' ' ')"
ls "$dir"/ovpnd-acf-* >/dev/null 2>&1 && fail "auth control files were left behind"
for i in 1 3 4 6; do client_stop "$i"; done
server_stop

# 2. Password only: no client certificate, the password in the environment.
OVT_STATUS_VERSION=2 server_conf_write "$dir" "script-security 3" "auth-user-pass-verify '$dir/verify.sh' via-env" \
    "verify-client-cert none" "setenv AUTH_TEST_DIR $dir"
server_start "$dir"
OVT_CLIENT_CERT=none start_with 1 carol secret-carol "reneg-sec 4"
wait_tunnel 1
[ "${CLIENT_TUN_IP[1]}" != "$OVT_SERVER_TUN_IP" ] || fail "bad address"
wait_for 5 grep -q "^CLIENT_LIST,UNDEF," "$dir/status.log" ||
    fail "a client without certificate should be listed as UNDEF (as in openvpn 2.6)"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "password-only client"
# At a renegotiation the client sends its credentials again and they are checked again.
wait_server_log "username 'carol' authenticated again" 20 ||
    fail "the renegotiation did not check the credentials again"
wait_server_log "renegotiation done: data channel key_id 1" 10 || fail "renegotiation failed"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "after the renegotiation"
OVT_CLIENT_CERT=none start_with 2 carol nope
wait_for 30 got_auth_failed 2 || fail "password-only client with a wrong password not refused"
[ -z "$(client_tun_ip 2)" ] || fail "refused password-only client got an address"
ovt_log "verify-client-cert none: right password connects, wrong one refused"
: "${ip1:?}"
