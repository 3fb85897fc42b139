#!/usr/bin/env bash
# management-client-auth: an external authentication daemon (tests/netns/mgmt_client.py authd)
# on the management interface decides who connects, with stock 2.6 clients that send a
# username and password:
#  - client1 (user1) is admitted by `client-auth` with a config block (`ifconfig-push` and
#    `push "route ..."`): the stock client gets that address and that route; the daemon saw
#    >CLIENT:CONNECT with the client's variables (username, password, common_name,
#    untrusted_ip, IV_VER), >CLIENT:ADDRESS and >CLIENT:ESTABLISHED, and >CLIENT:DISCONNECT
#    when it leaves;
#  - client2 (user2) is refused by `client-deny` with a client reason the stock client logs;
#  - client3 (user3) is answered 3 s later, while client1 pings through the tunnel without a
#    loss;
#  - client4 (user4) gets `client-pending-auth` (AUTH_PENDING and INFO_PRE reach the stock
#    client) and connects once client-auth-nt follows 4 s later; then user5 gets a pending
#    auth with a 5 s timeout and no answer: it is refused at its timeout; user6 gets a CR_TEXT
#    challenge, answers it through its own management interface (`cr-response`), and the
#    daemon admits it once >CLIENT:CR_RESPONSE carries the right code;
#  - bad input (the daemon's first commands): client-auth / client-deny / client-pending-auth
#    for a CID that does not exist, an unparsable CID: errors, and the session goes on;
#  - client1 renegotiates (reneg-sec 20 in its profile): >CLIENT:REAUTH with a new KID, answered,
#    and its traffic goes on;
#  - ovpnd only (2.6 takes one management client): a second management client watching at the
#    same time gets the same >CLIENT:CONNECT notifications; only the daemon answers.
# Every step runs against OVPN_SERVER_IMPL=openvpn as well, where 2.6 supports it.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init management-client-auth

netns_setup 4
pki_make "$OVT_DIR"
mc=$OVT_LIB_DIR/mgmt_client.py
MADDR=$OVT_DIR/mgmt.sock
is_ovpnd() { [ "$OVPN_SERVER_IMPL" = ovpnd ]; }
for u in 1 2 3 4 5 6; do printf 'user%s\npass%s\n' "$u" "$u" >"$OVT_DIR/up$u.txt"; done
chmod 600 "$OVT_DIR"/up*.txt

OVT_STATUS_VERSION=2 server_conf_write "$OVT_DIR" "management $MADDR unix" \
    "management-client-auth" "hand-window 30"
server_start "$OVT_DIR"

AUTHD=$OVT_DIR/authd.log
: >"$AUTHD"
ovt_spawn "$NS_SRV" "$OVT_DIR/authd.err" "$OVT_PY" "$mc" authd "$MADDR" --out "$AUTHD" \
    --rule 'user1=auth:ifconfig-push 198.19.0.77 255.255.255.0|push "route 198.19.77.0 255.255.255.0"' \
    --rule 'user2=deny:user2 is locked:go away client2' \
    --rule 'user3=defer:3' \
    --rule 'user4=pending:30:4:WEB_AUTH::https://auth.example/x' \
    --rule 'user5=pending:5:-1:CR_TEXT:R,E:Enter your code' \
    --rule 'user6=crtext:30:424242:CR_TEXT:R,E:Enter your code' \
    --cmd "client-auth-nt 99999 0" --cmd 'client-deny 99999 0 "nobody"' \
    --cmd 'client-pending-auth 99999 0 "x" 10' --cmd "client-auth-nt x 0" --cmd pid
wait_for 10 grep -q '^>INFO:OpenVPN Management Interface' "$AUTHD" || fail "the daemon did not log in"
if is_ovpnd; then
    WATCH=$OVT_DIR/watch.log
    : >"$WATCH"
    ovt_spawn "$NS_SRV" "$OVT_DIR/watch.err" "$OVT_PY" "$mc" watch "$MADDR" --out "$WATCH"
    wait_for 10 grep -q '^>INFO:' "$WATCH" || fail "the second management client did not log in"
fi

authd_has() { grep -Eq -- "$1" "$AUTHD"; }
cid_of_user() { # the CID of user $1's >CLIENT:CONNECT, from the daemon's log
    awk -v u="username=$1" '/^>CLIENT:CONNECT,/ { split($0, f, ","); c = f[2] }
        $0 == ">CLIENT:ENV," u { print c; exit }' "$AUTHD"
}

# --- client1: admitted with a config block
client_start "$OVT_DIR" 1 "auth-user-pass $OVT_DIR/up1.txt" "reneg-sec 20"
wait_tunnel 1
[ "${CLIENT_TUN_IP[1]}" = 198.19.0.77 ] || fail "client1 got ${CLIENT_TUN_IP[1]}, not the client-auth ifconfig-push 198.19.0.77"
wait_for 10 ovt_run 5 "$(client_ns 1)" sh -c 'ip route show 198.19.77.0/24 | grep -q dev' ||
    fail "client1 has no route to 198.19.77.0/24 pushed by client-auth"
cid1=$(cid_of_user user1)
[ -n "$cid1" ] || fail "no >CLIENT:CONNECT for user1"
kid1=$(sed -n "s/^>CLIENT:CONNECT,$cid1,\([0-9]*\)\$/\1/p" "$AUTHD" | head -n 1)
for want in "^>CLIENT:CONNECT,$cid1,$kid1$" '^>CLIENT:ENV,password=pass1$' '^>CLIENT:ENV,common_name=client1$' \
    '^>CLIENT:ENV,untrusted_ip=198\.18\.0\.2$' '^>CLIENT:ENV,IV_VER=2\.6' \
    "^SENT	client-auth $cid1 $kid1$" '^SUCCESS: client-auth command succeeded$' \
    "^>CLIENT:ADDRESS,$cid1,198\.19\.0\.77,1$" "^>CLIENT:ESTABLISHED,$cid1$"; do
    wait_for 10 authd_has "$want" || {
        tail -n 60 "$AUTHD" >&2
        fail "the daemon's log has no line matching $want"
    }
done
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 10 0.1 0 "client1 admitted by client-auth"

# --- client2: refused with a client reason
client_start "$OVT_DIR" 2 "auth-user-pass $OVT_DIR/up2.txt"
wait_for 30 grep -q "AUTH_FAILED,go away client2" "$OVT_DIR/client2.log" ||
    fail "client2 did not log the client-deny reason"
wait_for 10 authd_has '^SUCCESS: client-deny command succeeded$' || fail "client-deny did not succeed"
! client_up 2 || fail "client2 has a tunnel after client-deny"
ovt_log "client2 refused by client-deny; it logged the client reason"
client_stop 2

# --- client3: answered 3 s later; client1 keeps its traffic meanwhile
client_start "$OVT_DIR" 3 "auth-user-pass $OVT_DIR/up3.txt"
wait_for 30 authd_has '^>CLIENT:ENV,username=user3$' || fail "no >CLIENT:CONNECT for user3"
loss=$(ping_loss "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 20 0.1)
[ "$loss" = 0 ] || fail "client1 lost $loss% of its pings while user3 waited for the daemon"
wait_tunnel 3 30
cid3=$(cid_of_user user3)
authd_has "^SENT	client-auth-nt $cid3 [0-9]+$" || fail "client3 connected without the daemon's answer"
ovt_log "client3 connected after its deferred answer; client1 lost no ping meanwhile"

# --- client4: pending auth, then admitted
client_start "$OVT_DIR" 4 "auth-user-pass $OVT_DIR/up4.txt"
wait_for 30 grep -q 'AUTH_PENDING' "$OVT_DIR/client4.log" ||
    fail "client4 did not get AUTH_PENDING"
wait_for 10 grep -q 'WEB_AUTH::https://auth.example/x' "$OVT_DIR/client4.log" ||
    fail "client4 did not get the INFO_PRE text"
wait_for 10 authd_has '^SUCCESS: client-pending-auth command succeeded$' ||
    fail "client-pending-auth failed"
wait_tunnel 4 30
ovt_log "client4: AUTH_PENDING and INFO_PRE reached it, then client-auth-nt admitted it"

# --- user5 on client2's namespace: pending, never answered, dropped at its timeout
client_start "$OVT_DIR" 2 "auth-user-pass $OVT_DIR/up5.txt"
wait_for 30 grep -q 'AUTH_PENDING' "$OVT_DIR/client2.log" || fail "user5 did not get AUTH_PENDING"
t0=$SECONDS
wait_for 30 grep -Eq 'AUTH_FAILED|Connection reset|SIGUSR1' "$OVT_DIR/client2.log" ||
    fail "user5 was not refused after its 5 s pending timeout"
! client_up 2 || fail "user5 has a tunnel without an answer"
ovt_log "user5: pending without an answer, refused after $((SECONDS - t0)) s more"
client_stop 2

# --- user6 on client2's namespace: a CR_TEXT challenge answered through the client's own
# management interface (`cr-response`), which the daemon checks in >CLIENT:CR_RESPONSE
client_start "$OVT_DIR" 2 "auth-user-pass $OVT_DIR/up6.txt" "setenv IV_SSO webauth,crtext" \
    "management $OVT_DIR/client2-mgmt.sock unix"
wait_for 30 grep -q 'CR_TEXT:R,E:Enter your code' "$OVT_DIR/client2.log" ||
    fail "user6 did not get the CR_TEXT challenge"
ovt_run 30 "$(client_ns 2)" "$OVT_PY" "$mc" run "$OVT_DIR/client2-mgmt.sock" \
    "cr-response $(printf 424242 | base64)" >/dev/null
wait_for 30 authd_has "^>CLIENT:CR_RESPONSE,[0-9]+,[0-9]+,$(printf 424242 | base64)$" ||
    fail "no >CLIENT:CR_RESPONSE with user6's answer"
wait_tunnel 2 30
ovt_log "user6: CR_TEXT challenge, the answer reached the daemon, admitted"
client_stop 2

# --- bad input (sent by the daemon first thing)
expected='ERROR: client-auth command failed
ERROR: client-deny command failed
ERROR: client-pending-auth command failed. Extra parameter might be too long
ERROR: cannot parse CID
SUCCESS: pid='
got=$(grep -E '^(ERROR|SUCCESS: pid=)' "$AUTHD" | sed 's/^SUCCESS: pid=.*/SUCCESS: pid=/' | head -n 5)
[ "$got" = "$expected" ] || fail "unexpected replies to commands for an unknown CID: $got"
ovt_log "unknown CIDs and a bad CID: errors, and the session went on"

if is_ovpnd; then
    for u in user1 user3 user4; do
        grep -q "^>CLIENT:ENV,username=$u$" "$WATCH" || fail "the second management client missed $u's >CLIENT:CONNECT"
    done
    if grep -q '^client-auth' "$WATCH"; then fail "the watcher answered"; fi
    ovt_log "a second management client got the same >CLIENT notifications"
fi

# --- client1 renegotiates every 20 s: each new key is asked about with REAUTH and admitted
# (openvpn 2.6 loses such a client at its third or fourth 10-s renegotiation, "TLS ERROR:
# local/remote key IDs out of sync", a key left KS_AUTH_DEFERRED although answered)
wait_for 30 authd_has "^>CLIENT:REAUTH,$cid1,[0-9]+$" || fail "no >CLIENT:REAUTH for client1's renegotiation"
kid2=$(sed -n "s/^>CLIENT:REAUTH,$cid1,\([0-9]*\)\$/\1/p" "$AUTHD" | head -n 1)
[ "$kid2" != "$kid1" ] || fail "the renegotiated key has the first key's KID $kid1"
wait_for 15 authd_has "^SENT	client-auth-nt $cid1 $kid2$" || fail "the daemon did not answer the REAUTH"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 10 0.1 0 "client1 after its REAUTH"

# (client4: client1 renegotiates every 20 s, and a stop that meets a renegotiation may leave
# its EXIT unread)
cid4=$(cid_of_user user4)
client_stop 4
wait_for 15 authd_has "^>CLIENT:DISCONNECT,$cid4$" || fail "no >CLIENT:DISCONNECT for client4"
# its EXIT (explicit-exit-notify) is told too, as 2.6 push.c receive_exit_message does
authd_has "^>NOTIFY:info,remote-exit,EXIT$" || fail "no >NOTIFY:info,remote-exit,EXIT for client4's EXIT"
ovt_log "client4 left: >NOTIFY:info,remote-exit,EXIT and >CLIENT:DISCONNECT,$cid4"
client_stop 1
client_stop 3
server_stop
