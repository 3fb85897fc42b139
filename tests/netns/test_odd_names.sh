#!/usr/bin/env bash
# Names a client chooses (certificate CNs a CA signed, usernames) with characters that files and
# string compares must not take raw (scripts/pki.sh --odd-names makes the certificates):
#   0. (ovpnd) the files the server creates as root (log, ifconfig-pool-persist, and status when
#      it drops privileges) are not opened through a symbolic link: the server refuses to start
#      and the file the link points to is untouched (openvpn 2.6 follows such links: skipped);
#   1. with ifconfig-pool-persist, CNs holding a TAB and a newline, a comma and a double quote,
#      and a leading double quote connect; control characters come out as '_' as in openvpn 2.6
#      (ssl_verify.c string_mod_remap_name), in the status file, the script's environment and
#      everywhere else; a username and password with control characters (sent by the load
#      generator: the stock client drops them from its auth-user-pass file) reach the
#      auth-user-pass-verify script the same way, and the status file's Username column shows
#      the username (UNDEF for a client that sent none);
#   2. after a restart each of those clients gets its persisted address back, and the CN
#      "nl<TAB>line<LF>client2,198.19.0.9," has not made the server hand 198.19.0.9 to the
#      certificate "client2" (a line written raw would say so);
#   3. a certificate whose CN is "client1<NUL>evil" is refused (it would otherwise be "client1"
#      for ccd, the pool and duplicate-cn); the real client1 keeps its tunnel.
# openvpn 2.6 differs in 2 (it writes CNs raw into the file: a comma breaks the line) and 3 (it
# cuts the CN at the NUL and takes it for client1); for OVPN_SERVER_IMPL=openvpn those checks
# log what 2.6 did instead of failing.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init odd_names

netns_setup 6
pki_make "$OVT_DIR" --odd-names
dir=$OVT_DIR
pki=$dir/pki
ipp=$dir/ipp.txt
is_ovpnd() { [ "$OVPN_SERVER_IMPL" = ovpnd ]; }

# ---- 0. no symbolic links for the files created as root
if is_ovpnd; then
    # start_refused WHAT LINE...: with LINE... the server must stop at start-up, naming the link,
    # and leave the victim as it was.
    start_refused() {
        local what=$1 rc=0
        shift
        printf 'precious\n' >"$dir/victim"
        server_conf_write "$dir" "$@"
        ovt_run 8 "$NS_SRV" "$OVPND" --config "$dir/server.conf" >"$dir/refused.log" 2>&1 || rc=$?
        if [ "$rc" = 0 ] || [ "$rc" = 124 ]; then
            fail "$what through a symbolic link: the server did not refuse to start (exit $rc)"
        fi
        ! grep -q "Sanitizer" "$dir/refused.log" || fail "$what: $(cat "$dir/refused.log")"
        grep -q "symbolic link" "$dir/refused.log" ||
            fail "$what: the refusal does not name the symbolic link: $(cat "$dir/refused.log")"
        [ "$(cat "$dir/victim")" = precious ] || fail "$what: the file behind the link was changed"
        ovt_log "$what through a symbolic link refused: $(grep "symbolic link" "$dir/refused.log" | head -n 1)"
    }
    ln -sf "$dir/victim" "$dir/link"
    start_refused "log" "log $dir/link"
    start_refused "ifconfig-pool-persist" "ifconfig-pool-persist $dir/link 1"
    start_refused "status with user nobody" "status $dir/link 1" "user nobody"
    rm -f "$dir/link" "$dir/victim"
else
    ovt_log "openvpn 2.6 opens its files through symbolic links: part 0 is ovpnd-only"
fi

# ---- 1. odd names connect, and come out remapped as in 2.6
nl_cn='nl_line_client2,198.19.0.9,'
odd_cn=$(cat "$pki/odd.cn") # 'odd, "quoted" client'
quote_cn='"quoted" first'
cat >"$dir/verify.sh" <<EOF
#!/bin/sh
{
    printf 'cn=%s\n' "\$common_name"
    printf 'file_user=%s\n' "\$(sed -n 1p "\$1")"
    printf 'file_pass=%s\n' "\$(sed -n 2p "\$1")"
    printf 'env_user=%s\n' "\$username"
} >>"$dir/calls.log"
exit 0
EOF
chmod 755 "$dir/verify.sh"
printf '%s\n%s\n' 'quote user' 'pw' >"$dir/up3.txt"
chmod 600 "$dir/up3.txt"

start_as() { # start_as I CERT [LINE...]: client I with pki/CERT.{crt,key}
    local i=$1 cert=$2
    shift 2
    OVT_CLIENT_CERT=$pki/$cert.crt OVT_CLIENT_KEY=$pki/$cert.key client_start "$dir" "$i" "$@"
}
OVT_STATUS_VERSION=2 server_conf_write "$dir" "ifconfig-pool-persist $ipp 1" \
    "script-security 2" "auth-user-pass-verify $dir/verify.sh via-file" \
    "auth-user-pass-optional" "tmp-dir $dir"
server_start "$dir"
start_as 1 nl
wait_tunnel 1
start_as 2 odd
wait_tunnel 2
start_as 3 quote "auth-user-pass $dir/up3.txt" "auth-retry none"
wait_tunnel 3
declare -A first=([1]=${CLIENT_TUN_IP[1]} [2]=${CLIENT_TUN_IP[2]} [3]=${CLIENT_TUN_IP[3]})
ovt_log "addresses: nl ${first[1]}, odd ${first[2]}, quote ${first[3]}"

calls_have() { # calls_have LINE WHY: the script wrote LINE
    grep -qxF "$1" "$dir/calls.log" || fail "the script did not get $1 ($2): $(cat -A "$dir/calls.log")"
}
calls_have "cn=$nl_cn" "TAB and newline in a CN as '_'"
calls_have "file_user=quote user" "a username as the client sent it"
status_ok() {
    "$OVT_PY" "$OVT_LIB_DIR/status_check.py" "$dir/status.log" --version 2 "$@"
}
status_args=(--cn "$nl_cn" --cn "$odd_cn" --cn "$quote_cn" --username "$quote_cn" "quote user"
    --username "$nl_cn" UNDEF --username "$odd_cn" UNDEF)
if is_ovpnd; then
    wait_for 5 status_ok --quiet "${status_args[@]}" || {
        status_ok "${status_args[@]}" || true
        cat "$dir/status.log" >&2
        fail "the status file does not list the three names and their usernames"
    }
else
    # 2.6 writes these CNs unquoted, so its rows are no CSV; look for the username in the raw row.
    quote_row() { grep -F "CLIENT_LIST,$quote_cn,198.18.0.4:" "$dir/status.log" | grep -qF ",quote user,"; }
    wait_for 5 quote_row || fail "the status file does not show 'quote user' for '$quote_cn'"
    ovt_log "openvpn 2.6: status rows for comma/quote CNs are not CSV (known), Username checked raw"
fi

# The stock client drops control characters from its auth-user-pass file; the load generator
# sends them as they are: a TAB in the username, a newline in the password (which would be a
# third line in the script's via-file file).
loadgen_find
loadgen_args "$pki" client4
ovt_spawn "$(client_ns 4)" "$dir/loadgen.log" "$LOADGEN" "${lg_args[@]}" --clients 1 --rate 0 --duration 4 --username $'lg\tuser' --password $'pw\nnext'
lg=$OVT_LAST_PID
lg_listed() {
    if is_ovpnd; then
        status_ok --quiet --cn client4 --username client4 lg_user
    else
        grep -q "^CLIENT_LIST,client4,.*,lg_user," "$dir/status.log"
    fi
}
wait_for 15 lg_listed || fail "the status file does not show lg_user for client4: $(cat "$dir/status.log")"
rc=0
ovt_wait "$lg" || rc=$?
[ "$rc" = 0 ] || fail "ovpnd-loadgen exited with $rc: $(cat "$dir/loadgen.log")"
calls_have "file_user=lg_user" "a TAB in a username as '_'"
calls_have "env_user=lg_user" "a TAB in a username as '_'"
calls_have "file_pass=pw_next" "a newline in a password as '_'"
server_stop
[ "$(wc -l <"$ipp")" = 4 ] || fail "the persist file should have 4 lines: $(cat -A "$ipp")"
ovt_log "persist file: $(cat -A "$ipp" | tr '\n' ' ')"
lg_ip=$(sed -n 's/^client4,\([0-9.]*\),.*/\1/p' "$ipp")
for i in 1 2 3; do
    client_stop "$i"
done

# ---- 2. after a restart: the same addresses, and nothing for client2 from the nl CN
server_start "$dir"
start_as 4 client2
wait_tunnel 4
errors=()
case "${CLIENT_TUN_IP[4]}" in
198.19.0.9 | "${first[1]}" | "${first[2]}" | "${first[3]}" | "$lg_ip")
    errors+=("client2 got ${CLIENT_TUN_IP[4]}, an address the file keeps for another name") ;;
esac
names=([1]="nl CN" [2]="comma/quote CN" [3]="leading-quote CN")
start_as 2 odd
start_as 3 quote "auth-user-pass $dir/up3.txt" "auth-retry none"
start_as 1 nl
for i in 2 3 1; do
    wait_tunnel "$i"
    [ "${CLIENT_TUN_IP[$i]}" = "${first[$i]}" ] ||
        errors+=("${names[$i]} got ${CLIENT_TUN_IP[$i]} after the restart, not its ${first[$i]}")
done
if [ "${#errors[@]}" -gt 0 ]; then
    if is_ovpnd; then
        fail "$(printf '%s; ' "${errors[@]}")persist file: $(cat -A "$ipp" | tr '\n' ' ')"
    fi
    ovt_log "openvpn 2.6 differs (it writes CNs raw): $(printf '%s; ' "${errors[@]}")"
else
    ovt_log "after the restart every name got its address back; client2 got ${CLIENT_TUN_IP[4]}"
fi
for i in 1 2 3 4; do
    client_stop "$i"
done

# ---- 3. a CN with a NUL byte is refused, not taken for client1
start_as 5 client1
wait_tunnel 5
start_as 6 nul "auth-retry none"
if wait_for 20 grep -q "AUTH_FAILED" "$dir/client6.log"; then
    client_up 6 && fail "the NUL-CN client has a tunnel after AUTH_FAILED"
    is_ovpnd && { server_log_grep "NUL" || fail "the server log does not say the CN holds a NUL"; }
    ovt_log "the CN 'client1<NUL>evil' was refused"
else
    is_ovpnd && fail "the CN 'client1<NUL>evil' was not refused"
    ovt_log "openvpn 2.6 accepted the CN 'client1<NUL>evil' (it cuts it at the NUL:" \
        "$(grep -c '^CLIENT_LIST,client1,' "$dir/status.log" || true) row(s) for client1)"
fi
if is_ovpnd; then
    assert_ping "$(client_ns 5)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "client1 after the NUL-CN attempt"
fi
server_stop
