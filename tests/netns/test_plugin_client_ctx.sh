#!/usr/bin/env bash
# Per-client plugin contexts (openvpn_plugin_client_constructor_v1 / _destructor_v1), as
# openvpn 2.6 has them, with tests/plugin/client_ctx_plugin.c and two stock clients:
#  - client 1 (user alice) connects and later leaves: one context is made for it before its first
#    event; TLS_VERIFY, AUTH_USER_PASS_VERIFY, TLS_FINAL, CLIENT_CONNECT_V2, LEARN_ADDRESS "add"
#    and CLIENT_DISCONNECT all get that context (the CN stored in it at TLS_VERIFY matches their
#    common_name); it is destroyed once, after CLIENT_DISCONNECT (here at shutdown, which comes
#    before its session's linger ends);
#  - client 2 (user bad) is refused by the plugin's AUTH_USER_PASS_VERIFY: its own context saw
#    TLS_VERIFY and the refusal, no CLIENT_CONNECT_V2 or CLIENT_DISCONNECT, and is destroyed;
#  - the server's own context (made when the plugin opens) goes with UP and with LEARN_ADDRESS
#    "delete" (2.6 calls it without the client); every context is destroyed by the plugin's close.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init plugin_client_ctx

plugin=${OVT_CTX_PLUGIN:-$(dirname "$OVPND")/tests/client_ctx_plugin.so}
[ -f "$plugin" ] || fail "test plugin not found at $plugin (build the client_ctx_plugin target)"

netns_setup 2
pki_make "$OVT_DIR" --clients 2
d=$OVT_DIR
log=$d/ctx.log

creds() { # creds I USER
    printf '%s\nsecret\n' "$2" >"$d/up$1.txt"
    chmod 600 "$d/up$1.txt"
}
creds 1 alice
creds 2 bad
server_conf_write "$d" "plugin $plugin $log" "hand-window 10"
server_start "$d"
client_start "$d" 1 "auth-user-pass $d/up1.txt"
client_start "$d" 2 "auth-user-pass $d/up2.txt" "auth-retry none"
wait_tunnel 1
wait_for 20 grep -q AUTH_FAILED "$d/client2.log" || fail "client 2 (user bad) was not refused"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 3 0.05 0 "client 1 -> server"

# The contexts of client 1's session that connected and of client 2's that was refused (a
# session the client gave up on a slow machine and restarted would have one of its own).
c1=$(sed -n 's/^CLIENT_CONNECT_V2 ctx=\([0-9]*\) cn=client1$/\1/p' "$log" | tail -n1)
c2=$(sed -n 's/^AUTH_USER_PASS_VERIFY ctx=\([0-9]*\) cn=client2$/\1/p' "$log" | tail -n1)
[ -n "$c1" ] || fail "client 1's CLIENT_CONNECT_V2 had no context of its own: $(grep -m3 CLIENT_CONNECT_V2 "$log" | tr '\n' '|')"
[ -n "$c2" ] || fail "client 2's AUTH_USER_PASS_VERIFY had no context of its own"
grep -qE "^TLS_VERIFY ctx=$c1 0 CN=client1 cn=client1\$" "$log" || fail "client 1's TLS_VERIFY did not get its context ($c1)"
grep -qE "^TLS_VERIFY ctx=$c2 0 CN=client2 cn=client2\$" "$log" || fail "client 2's TLS_VERIFY did not get its context ($c2)"
[ "$c1" != "$c2" ] || fail "clients 1 and 2 got the same context ($c1)"
srv=$(sed -n 's/^UP ctx=\([0-9]*\) .*/\1/p' "$log" | head -n1)
[ -n "$srv" ] || fail "UP had no context (2.6 gives it the server's own)"
for c in "$c1" "$c2" "$srv"; do
    count_lines "^CONSTRUCT ctx=$c\$" "$log" 1 || fail "context $c was not made exactly once"
done
# line N of the first line matching RE
line_of() { grep -n -m1 -E "$1" "$log" | cut -d: -f1; }
[ "$(line_of "^CONSTRUCT ctx=$c1\$")" -lt "$(line_of "^TLS_VERIFY ctx=$c1 ")" ] ||
    fail "client 1's context was made after its first event"

for ev in AUTH_USER_PASS_VERIFY TLS_FINAL; do
    grep -qE "^$ev ctx=$c1 cn=client1\$" "$log" || fail "$ev for client 1 did not get its context ($c1)"
done
grep -qE "^LEARN_ADDRESS ctx=$c1 add 198\.19\.0\.[0-9]+ client1 cn=client1\$" "$log" ||
    fail "LEARN_ADDRESS add for client 1 did not get its context"
grep -qE "^AUTH_USER_PASS_VERIFY ctx=$c2 cn=client2\$" "$log" ||
    fail "AUTH_USER_PASS_VERIFY for client 2 did not get its context"
grep -qE "ctx=$c2 .*cn=client2" "$log" || fail "nothing logged for client 2's context"
grep -qE "^(CLIENT_CONNECT_V2|CLIENT_DISCONNECT|LEARN_ADDRESS) ctx=$c2 " "$log" &&
    fail "the refused client 2 reached client-connect, client-disconnect or learn-address"

# client 2's context goes once it is refused (2.6: with its instance, a few seconds later).
wait_for 15 grep -qE "^DESTRUCT ctx=$c2 cn=client2 seen=TLS_VERIFY,AUTH_USER_PASS_VERIFY" "$log" ||
    fail "client 2's context was not destroyed, or saw other events: $(grep "^DESTRUCT ctx=$c2 " "$log")"

client_stop 1
wait_for 15 grep -qE "^CLIENT_DISCONNECT ctx=$c1 cn=client1\$" "$log" || fail "CLIENT_DISCONNECT for client 1 did not get its context"
server_stop # (sooner than waiting for the session's linger; 2.6 too ends it a few seconds later)
grep -qE "^DESTRUCT ctx=$c1 cn=client1 seen=" "$log" || fail "client 1's context was not destroyed"
seen1=$(sed -n "s/^DESTRUCT ctx=$c1 cn=client1 seen=//p" "$log")
for ev in TLS_VERIFY AUTH_USER_PASS_VERIFY TLS_FINAL CLIENT_CONNECT_V2 LEARN_ADDRESS CLIENT_DISCONNECT; do
    grep -q "$ev" <<<"$seen1" || fail "client 1's context did not see $ev (saw $seen1)"
done
[ "$(line_of "^CLIENT_DISCONNECT ctx=$c1 ")" -lt "$(line_of "^DESTRUCT ctx=$c1 ")" ] ||
    fail "client 1's context was destroyed before CLIENT_DISCONNECT"

# (2.6 runs the "delete" when it reaps the address, at the latest at shutdown)
grep -qE "^LEARN_ADDRESS ctx=$srv delete 198\.19\.0\.[0-9]+ cn=\$" "$log" ||
    fail "LEARN_ADDRESS delete did not get the server's context ($srv): $(grep 'LEARN_ADDRESS.*delete' "$log")"
grep -qE "^DESTRUCT ctx=$srv cn= seen=UP" "$log" || fail "the server's context was not destroyed at shutdown"
[ "$(tail -n1 "$log")" = CLOSE ] || fail "the plugin was not closed last"
[ "$(grep -c '^CONSTRUCT' "$log")" = "$(grep -c '^DESTRUCT' "$log")" ] ||
    fail "$(grep -c '^CONSTRUCT' "$log") contexts made, $(grep -c '^DESTRUCT' "$log") destroyed"
grep -qE 'ctx=(none|BAD)|^MISMATCH' "$log" && fail "a call without its context: $(grep -m3 -E 'ctx=(none|BAD)|^MISMATCH' "$log" | tr '\n' '|')"
ovt_log "PASS"
