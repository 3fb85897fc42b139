#!/usr/bin/env bash
# management-hold: the server starts, but serves no client until a management client says
# `hold release` (openvpn 2.6 --management-hold). On a unix socket, with a password file:
#  - the welcome carries ">HOLD:Waiting for hold release:0" and `hold` answers "hold=1";
#  - a stock client started meanwhile does not get a tunnel (its handshake is not answered);
#  - after "SUCCESS: hold release succeeded" it connects and pings through the tunnel, and
#    `state` shows CONNECTED;
#  - with management-client-user nobody, a management client running as root is refused on the
#    unix socket (closed without a welcome), and one running as nobody is served.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init management_hold

netns_setup 1
pki_make "$OVT_DIR"
mc=$OVT_LIB_DIR/mgmt_client.py
MADDR=$OVT_DIR/mgmt.sock
PW=hold-Pass
printf '%s\n' "$PW" >"$OVT_DIR/mgmt.pw"
mrun() { ovt_run 30 "$NS_SRV" "$OVT_PY" "$mc" run --password "$PW" "$MADDR" "$@"; }
reply_of() { printf '%s\n' "$1" | awk -F'\t' -v t="$2" '$1 == t { sub(/^[^\t]*\t/, ""); print }'; }

server_conf_write "$OVT_DIR" "management $MADDR unix $OVT_DIR/mgmt.pw" "management-hold"
server_spawn "$OVT_DIR" # (held: server_start would wait for it to be ready)
wait_for 20 test -S "$MADDR" || fail "no management socket within 20 s"

out=$(mrun hold state)
[ "$(reply_of "$out" W)" = ">INFO:OpenVPN Management Interface Version 5 -- type 'help' for more info" ] ||
    fail "welcome: $out"
grep -qx $'N\t>HOLD:Waiting for hold release:0' <<<"$out" || fail "no >HOLD line: $out"
[ "$(reply_of "$out" 0)" = "SUCCESS: hold=1" ] || fail "hold: '$(reply_of "$out" 0)'"
ovt_log "held: >HOLD shown, hold=1"

client_start "$OVT_DIR" 1
# Nothing may answer the client while the server is held: give it a few seconds to try.
if wait_for 4 client_inits_at_least 1 1; then
    fail "the client connected before hold release"
fi
ovt_log "no tunnel while held"

out=$(mrun "hold release" hold)
[ "$(reply_of "$out" 0)" = "SUCCESS: hold release succeeded" ] || fail "hold release: '$(reply_of "$out" 0)'"
# (the flag stays set after the release, as 2.6's MF_HOLD)
[ "$(reply_of "$out" 1)" = "SUCCESS: hold=1" ] || fail "hold after release: '$(reply_of "$out" 1)'"
wait_tunnel 1
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 3 0.2 0 "ping after hold release"
out=$(mrun state)
grep -Eq "^[0-9]+,CONNECTED,SUCCESS,$OVT_SERVER_TUN_IP," <<<"$(reply_of "$out" 0)" ||
    fail "state after release: '$(reply_of "$out" 0)'"
ovt_log "released: the client connected, state CONNECTED"
client_stop 1
server_stop

server_conf_write "$OVT_DIR" "management $MADDR unix" "management-client-user nobody"
server_start "$OVT_DIR"
wait_for 10 test -S "$MADDR" || fail "no management socket"
chmod 0755 "$OVT_DIR" # (the work directory is root's: let nobody reach the socket)
chmod 0666 "$MADDR"
out=$(ovt_run 30 "$NS_SRV" "$OVT_PY" "$mc" run "$MADDR" pid)
[ -z "$(reply_of "$out" W)" ] && grep -qx EOF <<<"$out" ||
    fail "a root management client was served despite management-client-user nobody: $out"
# (as nobody: the system python and a copy of the script nobody can read)
cp "$mc" "$OVT_DIR/mgmt_client.py"
chmod 0644 "$OVT_DIR/mgmt_client.py"
out=$(ovt_run 30 "$NS_SRV" setpriv --reuid nobody --regid nogroup --clear-groups \
    /usr/bin/python3 "$OVT_DIR/mgmt_client.py" run "$MADDR" pid)
grep -Eq '^SUCCESS: pid=[0-9]+$' <<<"$(reply_of "$out" 0)" ||
    fail "management client running as nobody not served: $out"
ovt_log "management-client-user: root refused, nobody served"
server_stop
