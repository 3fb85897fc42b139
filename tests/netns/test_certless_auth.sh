#!/usr/bin/env bash
# verify-client-cert optional|none: a client that comes without a certificate is known by its
# username and password alone, so something must check them. With the stock client:
#  1. the reported bypass: `verify-client-cert optional` and `plugin ovpnd-auth-cert.so cn=alice`
#     (it checks certificates, not passwords). ovpnd refuses to start, naming both lines
#     (before: a client without a certificate and a made-up username/password got a tunnel).
#     ovpnd's plugin interface only: openvpn cannot load that plugin.
#  2. the same with an OpenVPN plugin whose arguments leave out the password check (the test
#     plugin's "hooks" mode: TLS_VERIFY and the client hooks, no AUTH_USER_PASS_VERIFY).
#     ovpnd refuses to start. openvpn 2.6 starts (options.c counts any plugin as a check) and
#     refuses the client at run time instead (ssl.c key_method_2_read: with no username/password
#     check a key needs a verified certificate, "Certificate verification failed
#     (key-method 2)"); the client gets no tunnel either way.
#  3. the same plugin plus an auth-user-pass-verify script: a client without a certificate and
#     with the right password connects and pings, listed as UNDEF; a wrong password gets
#     AUTH_FAILED and no address.
# The run-time refusal (a client without a certificate whose key no username/password check
# accepted) has no stock path once start-up refuses such configs: tests/unit/test_auth.c
# (certless_admission) covers that decision.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init certless_auth

bindir=$(dirname "$OVPND")
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    auth_cert=$bindir/plugins/ovpnd-auth-cert.so
    [ -f "$auth_cert" ] || fail "$auth_cert not built"
fi
plugin=${OVT_TEST_PLUGIN:-$OVT_SRC/build/tests/test_plugin.so}
[ "$OVPN_SERVER_IMPL" = ovpnd ] && plugin=${OVT_TEST_PLUGIN:-$bindir/tests/test_plugin.so}
[ -f "$plugin" ] || fail "test plugin not found at $plugin (build the test_plugin target)"

netns_setup 2
pki_make "$OVT_DIR"
d=$OVT_DIR

# The operator's script: the password of USER is "secret-USER".
cat >"$d/verify.sh" <<'EOF'
#!/bin/sh
user=$(sed -n 1p "$1")
pass=$(sed -n 2p "$1")
[ "$pass" = "secret-$user" ] && exit 0
exit 1
EOF
chmod 755 "$d/verify.sh"

start_certless() { # start_certless I USER PASS: a stock client without a certificate
    printf '%s\n%s\n' "$2" "$3" >"$d/up$1.txt"
    chmod 600 "$d/up$1.txt"
    OVT_CLIENT_CERT=none client_start "$d" "$1" "auth-user-pass $d/up$1.txt" "auth-retry none"
}
conf_line() { grep -n -- "^$1" "$d/server.conf" | head -n 1 | cut -d: -f1; }
hooks_plugin="plugin $plugin hooks $d/plugin.log nobody 198.19.0.9"

# expect_refused_start WHAT: ovpnd must stop at start-up, its error naming the verify-client-cert
# line and the plugin's. Should it run instead, show what that lets in, and fail.
expect_refused_start() {
    local what=$1 name=$2 vline pline rc=0 pid
    vline=$(conf_line verify-client-cert)
    pline=$(conf_line plugin)
    echo "===== start, to be refused ($what) =====" >>"$d/server.log"
    OVT_SERVER_LOG_OFF=$(stat -c %s "$d/server.log")
    ovt_spawn "$NS_SRV" "$d/server.log" "$OVPND" --config "$d/server.conf"
    pid=$OVT_LAST_PID
    if ! wait_for 15 pid_gone "$pid"; then
        SERVER_PID=$pid
        wait_for 10 server_ready || fail "$what: ovpnd neither stopped nor became ready"
        start_certless 1 mallory made-up
        if wait_for 30 client_up 1; then
            fail "$what: ovpnd started, and a client without a certificate and with a made-up username/password got a tunnel (${CLIENT_TUN_IP[1]:-$(client_tun_ip 1)})"
        fi
        fail "$what: ovpnd started with a config that checks no password of a client without a certificate"
    fi
    ovt_wait "$pid" || rc=$?
    [ "$rc" != 0 ] || fail "$what: ovpnd exited with 0"
    server_log_grep "$d/server.conf:$vline: verify-client-cert: 'optional' lets clients connect without a certificate, but nothing would check their username and password: there is no auth-user-pass-verify, and the plugin at $d/server.conf:$pline \\($name\\) does not handle AUTH_USER_PASS_VERIFY" ||
        fail "$what: the start-up error does not name the lines and the reason: $(server_log_since | tail -n 3)"
    ovt_log "$what: start-up refused, naming $d/server.conf:$vline and :$pline"
}

# 1. The reported config.
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    server_conf_write "$d" "verify-client-cert optional" "plugin $auth_cert cn=alice"
    expect_refused_start "ovpnd-auth-cert.so only" ovpnd-auth-cert.so
else
    ovt_log "1. skipped for openvpn: ovpnd-auth-cert.so is a plugin on ovpnd's own interface"
fi

# 2. A plugin whose arguments leave out the password check.
server_conf_write "$d" "verify-client-cert optional" "$hooks_plugin"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    expect_refused_start "a plugin without AUTH_USER_PASS_VERIFY" test_plugin.so
else
    # openvpn 2.6 starts with this config and refuses the client at run time.
    server_start "$d"
    start_certless 1 mallory made-up
    wait_server_log "Certificate verification failed \\(key-method 2\\)" 30 ||
        fail "openvpn did not refuse the client without a certificate"
    client_up 1 && fail "openvpn gave the client without a certificate a tunnel"
    ovt_log "2. openvpn 2.6: started, and refused the client at run time (no tunnel)"
    client_stop 1
    server_stop
fi

# 3. With a password check as well: a client without a certificate and the right password
# connects; a wrong password is refused.
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    cert_plugin="plugin $auth_cert cn=alice"
else
    cert_plugin=$hooks_plugin
fi
OVT_STATUS_VERSION=2 server_conf_write "$d" "verify-client-cert optional" "$cert_plugin" \
    "script-security 2" "auth-user-pass-verify $d/verify.sh via-file" "tmp-dir $d"
server_start "$d"
start_certless 1 carol secret-carol
wait_tunnel 1
wait_for 5 grep -q "^CLIENT_LIST,UNDEF," "$d/status.log" ||
    fail "the client without a certificate is not listed as UNDEF"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "client without a certificate, right password"
start_certless 2 carol wrong
wait_for 30 grep -q AUTH_FAILED "$d/client2.log" || fail "a wrong password was not refused"
[ -z "$(client_tun_ip 2)" ] || fail "the client with a wrong password got an address"
ovt_log "3. right password connects without a certificate, a wrong one gets AUTH_FAILED"
client_stop 1
server_stop
