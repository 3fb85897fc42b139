#!/usr/bin/env bash
# `ovpnd --test-config` answers as start-up would, and names every problem in one run:
#  - a config with five refused lines: five errors, each with its line, exit status 1;
#  - plugins are loaded and opened: a shared library that is not an OpenVPN plugin, and a
#    plugin that asks for an event ovpnd does not run (CLIENT_CONNECT_DEFER), are refused; a
#    good plugin passes;
#  - verify-client-cert none with a plugin that checks no passwords is refused (the check
#    start-up makes once the plugins say what they handle);
#  - script paths must be executable regular files (a directory, a file without x bits);
#  - a `log` file that cannot be opened is a warning naming its line (start-up logs on to
#    stderr, as 2.6 does);
#  - every client-config-dir file is parsed, a bad line named as FILE:LINE: directive: reason;
#  - start-up without the right to create the TUN device says it needs root or CAP_NET_ADMIN;
#  - a management port in use stops start-up with the line and the address;
#  - the certificate and key checks run (a key that does not match its certificate).
# ovpnd only: openvpn 2.6 has no --test-config.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init test_config

[ "$OVPN_SERVER_IMPL" = ovpnd ] || ovt_skip "ovpnd's --test-config"
pki_make "$OVT_DIR"
pki=$OVT_DIR/pki
bindir=${OVT_BUILD_DIR:-$(dirname "$OVPND")} # where the test plugins were built
test_plugin=$bindir/tests/test_plugin.so
not_plugin=$bindir/tests/pam_test_otp.so
[ -f "$test_plugin" ] && [ -f "$not_plugin" ] || fail "no $test_plugin or $not_plugin (build the tests)"

conf=$OVT_DIR/t.conf
write_conf() { # the harness's server config with LINEs appended
    server_conf_write "$OVT_DIR" "$@"
    cp "$OVT_DIR/server.conf" "$conf"
}
test_config() { # prints the output; returns ovpnd's exit status
    timeout 20 "$OVPND" --config "$conf" --test-config 2>&1
}
must_pass() { # must_pass WHAT
    local out
    out=$(test_config) || fail "$1: --test-config refused it: $out"
    ovt_log "$1: configuration OK"
}
must_fail() { # must_fail WHAT REGEX
    local out rc=0
    out=$(test_config) || rc=$?
    [ "$rc" = 1 ] || fail "$1: --test-config exited with $rc, not 1: $out"
    grep -Eq -- "$2" <<<"$out" || fail "$1: the output does not say '$2': $out"
    ovt_log "$1: refused: $(grep -E -- "$2" <<<"$out" | head -n 1)"
}

# ---- five bad lines, five errors ----
write_conf "port 70000" "frobnicate" "verb x" "secret $pki/ta.key" "tls-timeout -1"
out=$(test_config) && fail "five bad lines: --test-config passed: $out"
n=$(grep -cE "^$conf:[0-9]+: " <<<"$out" || true)
[ "$n" = 5 ] || fail "five bad lines: $n errors reported, not 5: $out"
for d in port frobnicate verb secret tls-timeout; do
    grep -Eq "^$conf:[0-9]+: $d: " <<<"$out" || fail "five bad lines: no error for $d: $out"
done
ovt_log "five bad lines: five errors in one run"

# ---- plugins ----
write_conf "plugin $test_plugin ok"
must_pass "a plugin"
write_conf "plugin $not_plugin"
must_fail "a library that is not a plugin" "plugin: .*pam_test_otp.so.* is not an OpenVPN plugin"
write_conf "plugin $test_plugin want-ipchange"
must_fail "a plugin asking for IPCHANGE" "plugin: .*IPCHANGE"
write_conf "verify-client-cert none" "plugin $test_plugin ok"
must_pass "verify-client-cert none with a password-checking plugin"
write_conf "verify-client-cert none" "plugin $test_plugin hooks $OVT_DIR/hooks.log client1 198.19.0.9"
must_fail "verify-client-cert none without a password check" \
    "verify-client-cert: 'none' lets clients connect without a certificate"

# ---- scripts ----
mkdir -p "$OVT_DIR/adir"
printf '#!/bin/sh\nexit 0\n' >"$OVT_DIR/noexec.sh"
chmod 644 "$OVT_DIR/noexec.sh"
write_conf "script-security 2" "client-connect $OVT_DIR/adir" "learn-address $OVT_DIR/noexec.sh"
must_fail "client-connect naming a directory" "client-connect: cannot execute '$OVT_DIR/adir': "
must_fail "learn-address without x bits" "learn-address: cannot execute '$OVT_DIR/noexec.sh': "
chmod 755 "$OVT_DIR/noexec.sh"
write_conf "script-security 2" "learn-address $OVT_DIR/noexec.sh"
must_pass "an executable learn-address script"

# ---- a log file that cannot be opened: a warning with its line, as 2.6 (which runs on) ----
write_conf "log-append /nonexistent/ovpnd-test.log"
out=$(test_config) || fail "an unopenable log file: --test-config refused it: $out"
grep -Eq "^WARNING: $conf:[0-9]+: log-append: cannot open '/nonexistent/ovpnd-test.log': " <<<"$out" ||
    fail "an unopenable log file: no warning naming its line: $out"
ovt_log "an unopenable log file: $(grep -E 'log: cannot open' <<<"$out")"
# a symbolic link is not a file that cannot be opened: start-up refuses it (test_odd_names)
ln -sf "$OVT_DIR/elsewhere.log" "$OVT_DIR/link.log"
write_conf "log $OVT_DIR/link.log"
must_fail "a log file that is a symbolic link" "^$conf:[0-9]+: log: '$OVT_DIR/link.log' is a symbolic link"

# ---- client-config-dir files are parsed as a connect parses them ----
mkdir -p "$OVT_DIR/ccd"
printf 'ifconfig-push 198.19.0.50 255.255.255.0\npussh "route 198.19.70.0 255.255.255.0"\n' \
    >"$OVT_DIR/ccd/client1"
write_conf "client-config-dir $OVT_DIR/ccd"
must_fail "a misspelled directive in a ccd file" "^$OVT_DIR/ccd/client1:2: pussh: "
printf 'ifconfig-push 198.19.0.50 255.255.255.0\n' >"$OVT_DIR/ccd/client1"
must_pass "a good ccd file"

# ---- certificate and key ----
write_conf "key $pki/client1.key"
must_fail "a key that does not match the certificate" "key: .*does not match the certificate"

# ---- start-up without the right to create the TUN device says what it needs ----
# (as nobody, without capabilities, in a network namespace of its own with only loopback)
data=$(cd "$(dirname "$0")/../unit/data/config" && pwd)
rc=0
out=$(unshare -n timeout 10 setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
    "$OVPND" --dev tun --topology subnet --server 198.19.0.0 255.255.255.0 --ca "$data/ca.crt" \
    --cert "$data/server.crt" --key "$data/server.key" --port 11941 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "start-up as nobody: exit status $rc, not 1: $out"
grep -q "cannot open TUN device 'tun': .* (ovpnd must start as root, or with the CAP_NET_ADMIN" \
    <<<"$out" || fail "start-up as nobody: the error does not say what is needed: $out"
ovt_log "start-up as nobody: $(grep -o 'cannot open TUN.*' <<<"$out")"

# ---- a management port in use: the error names the line and the address ----
write_conf "management 127.0.0.1 7505"
out=$(unshare -n bash -c "ip link set lo up
    python3 -c 'import socket, time; s = socket.socket(); s.bind((\"127.0.0.1\", 7505)); s.listen(); time.sleep(20)' &
    for i in \$(seq 100); do ss -Hltn 'sport = :7505' | grep -q . && break; sleep 0.1; done
    timeout 10 \"\$0\" --config \"\$1\" 2>&1; kill %1" "$OVPND" "$conf") || true
grep -Eq "$conf:[0-9]+: management: cannot listen on 127.0.0.1:7505: address already in use" \
    <<<"$out" || fail "management port in use: the error does not name the line and address: $out"
grep -Eq "$conf:[0-9]+: management: a TCP port WITHOUT a password file" <<<"$out" ||
    fail "management without a password: the warning does not name the line: $out"
ovt_log "management port in use: $(grep -o 'management: cannot listen.*' <<<"$out")"
ovt_log "PASS"
