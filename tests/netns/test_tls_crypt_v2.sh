#!/usr/bin/env bash
# tls-crypt-v2: each client has its own control-channel key Kc, which the server learns from the
# wrapped key (WKc) the client appends to its first packets (P_CONTROL_HARD_RESET_CLIENT_V3, and
# P_CONTROL_WKC_V1 after the server's stateless cookie reset).
#   The server key is made by `ovpnd --genkey tls-crypt-v2-server`; client keys:
#   client 1: made by `openvpn --genkey tls-crypt-v2-client` (from ovpnd's server key)
#   client 2: made by `ovpnd --genkey tls-crypt-v2-client` (metadata: its creation time)
#   client 3: made by ovpnd with user metadata "blocked": tls-crypt-v2-verify refuses it
#   client 4: made by openvpn with another server key: its WKc does not authenticate
#   client 5: client 2's key with one byte of its WKc changed (a tampered WKc)
# and hand-made V3 resets (forge_v2.py): client 2's WKc in a packet wrapped with another Kc, and
# a truncated WKc; neither is answered. Then a flood of replayed honest V3 resets from many
# source ports while client 2 reconnects: it connects, and (ovpnd) nothing is kept for them.
# Clients 1 and 2 connect and ping both ways. Clients 3, 4 and 5 never get a tunnel; the server
# logs each refusal with the client's address and the reason. tls-crypt-v2-verify gets 2.6's
# environment: metadata_type (1 for a timestamp, 0 for user data) and metadata_file (the metadata
# without its type byte). ovpnd only: refused WKc leave no session behind (its counters, SIGUSR2),
# and under tls-crypt-v2-max-age 1 a key without a timestamp is refused while a fresh one works
# (openvpn 2.6 has no tls-crypt-v2-max-age; it came in 2.7).
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init tls_crypt_v2
# shellcheck disable=SC2034 # read by lib.sh: the wrapper lines are written here
OVT_WRAP=none
OVPND_BIN=${OVPND:-$OVT_SRC/build/ovpnd}
[ -x "$OVPND_BIN" ] || fail "ovpnd binary not found at $OVPND_BIN (it makes the keys)"

netns_setup 5
pki_make "$OVT_DIR" --clients 5
k=$OVT_DIR/keys
mkdir -p "$k"
"$OVPND_BIN" --genkey tls-crypt-v2-server "$k/server.key" || fail "ovpnd could not make a server key"
openvpn --genkey tls-crypt-v2-client "$k/c1.key" --tls-crypt-v2 "$k/server.key" >/dev/null ||
    fail "openvpn cannot wrap a client key with ovpnd's server key"
"$OVPND_BIN" --tls-crypt-v2 "$k/server.key" --genkey tls-crypt-v2-client "$k/c2.key" ||
    fail "ovpnd could not make a client key"
"$OVPND_BIN" --genkey tls-crypt-v2-client "$k/c3.key" "$(printf blocked | base64)" \
    --tls-crypt-v2 "$k/server.key" || fail "ovpnd could not make a client key with metadata"
openvpn --genkey tls-crypt-v2-server "$k/other-server.key" >/dev/null
openvpn --genkey tls-crypt-v2-client "$k/c4.key" --tls-crypt-v2 "$k/other-server.key" >/dev/null
# client 5: flip one byte inside the WKc's encrypted client key (after Kc and the WKc's tag)
"$OVT_PY" - "$k/c2.key" "$k/c5.key" <<'PY'
import base64, sys
text = open(sys.argv[1]).read().splitlines()
raw = bytearray(base64.b64decode("".join(text[1:-1])))
raw[256 + 32 + 10] ^= 0x01
b64 = base64.b64encode(bytes(raw)).decode()
lines = [b64[i:i + 64] for i in range(0, len(b64), 64)]
open(sys.argv[2], "w").write("\n".join([text[0]] + lines + [text[-1]]) + "\n")
PY
chmod 600 "$k"/*.key

# tls-crypt-v2-verify: refuse user metadata "blocked"; record what it was given
cat >"$OVT_DIR/v2verify.sh" <<SH
#!/bin/sh
echo "type=\$metadata_type script_type=\$script_type data=\$(cat "\$metadata_file" | od -An -tx1 | tr -d ' \n')" >>"$OVT_DIR/v2verify.log"
[ "\$metadata_type" = 0 ] && [ "\$(cat "\$metadata_file")" = blocked ] && exit 1
exit 0
SH
chmod 755 "$OVT_DIR/v2verify.sh"

server_conf_write "$OVT_DIR" "tls-crypt-v2 $k/server.key" "script-security 2" \
    "tls-crypt-v2-verify $OVT_DIR/v2verify.sh"
server_start "$OVT_DIR"

client_start "$OVT_DIR" 1 "tls-crypt-v2 $k/c1.key" "reneg-sec 4"
client_start "$OVT_DIR" 2 "tls-crypt-v2 $k/c2.key"
wait_tunnel 1
wait_tunnel 2
for i in 1 2; do
    assert_ping "$(client_ns "$i")" "$OVT_SERVER_TUN_IP" 50 0.02 0 "client $i (tls-crypt-v2)"
    assert_ping "$NS_SRV" "${CLIENT_TUN_IP[$i]}" 10 0.05 0 "server -> client $i"
done
# 2.6 clients announce early negotiation and resend the WKc in P_CONTROL_WKC_V1
grep -q "^type=1 script_type=tls-crypt-v2-verify data=[0-9a-f]\{16\}$" "$OVT_DIR/v2verify.log" ||
    fail "tls-crypt-v2-verify did not get a timestamp key's metadata as 2.6 gives it: $(cat "$OVT_DIR/v2verify.log")"

client_start "$OVT_DIR" 3 "tls-crypt-v2 $k/c3.key"
client_start "$OVT_DIR" 4 "tls-crypt-v2 $k/c4.key"
client_start "$OVT_DIR" 5 "tls-crypt-v2 $k/c5.key"
c3=$(client_ip 3)
c4=$(client_ip 4)
c5=$(client_ip 5)
wait_for 20 grep -q "^type=0 script_type=tls-crypt-v2-verify data=$(printf blocked | od -An -tx1 | tr -d ' \n')$" \
    "$OVT_DIR/v2verify.log" || fail "tls-crypt-v2-verify never saw client 3's metadata"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    wait_server_log "$c3:[0-9]+.*tls-crypt-v2-verify refused the client key" 20 ||
        fail "no refusal by tls-crypt-v2-verify logged for client 3"
    wait_server_log "$c4:[0-9]+: dropped packet: tls-crypt-v2: wrapped client key \(WKc\) did not authenticate" 20 ||
        fail "no refusal of client 4's WKc (another server key) logged"
    wait_server_log "$c5:[0-9]+: dropped packet: tls-crypt-v2: wrapped client key \(WKc\) did not authenticate" 20 ||
        fail "no refusal of client 5's tampered WKc logged"
else
    wait_server_log "TLS CRYPT V2 VERIFY SCRIPT ERROR" 20 || fail "openvpn: no verify refusal logged"
    wait_server_log "can not extract tls-crypt-v2 client key from \[AF_INET\]$c4" 20 ||
        fail "openvpn: client 4's WKc refusal not logged"
    wait_server_log "can not extract tls-crypt-v2 client key from \[AF_INET\]$c5" 20 ||
        fail "openvpn: client 5's WKc refusal not logged"
fi
# The refused clients keep retrying (connect-retry 1): none of them ever gets a tunnel.
for i in 3 4 5; do
    ! grep -q "Initialization Sequence Completed" "$OVT_DIR/client$i.log" ||
        fail "client $i got a tunnel"
done
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    # Nothing is kept for a WKc that does not authenticate: only clients 1 and 2 have sessions
    # (client 3's key authenticated; its session ends when the script refuses it). Counted.
    spid=$(server_process_pid) || fail "no server process"
    stats_ok() {
        kill -USR2 "$spid"
        server_log_since | grep -E "control: 2 clients, 2 sessions;.*tls-crypt-v2 client key [1-9][0-9]*, refused by tls-crypt-v2-verify [1-9]" >/dev/null
    }
    wait_for 20 stats_ok || fail "the refused clients left sessions behind, or the refusals were not counted ($(server_log_since | grep 'control:' | tail -n 1))"
fi
# Client 1 renegotiates every 4 s: the server pushed it dyn-tls-crypt, so the later key_ids are
# wrapped with the dynamic key made from the first TLS session and its Kc (a client that got the
# flag accepts no other key for them).
grep -q "PUSH_REPLY,.*protocol-flags [a-z -]*dyn-tls-crypt" "$OVT_DIR/client1.log" ||
    fail "client 1 was not pushed dyn-tls-crypt"
wait_for 30 sh -c "[ \$(grep -c 'TLS: soft reset' '$OVT_DIR/client1.log') -ge 2 ]" ||
    fail "client 1 did not renegotiate twice"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client 1 after the refusals"
n_init=$(grep -c "Initialization Sequence Completed" "$OVT_DIR/client1.log" || true)
[ "$n_init" = 1 ] || fail "client 1 restarted instead of renegotiating ($n_init initialisations)"
for i in 3 4 5; do
    client_stop "$i"
done

# Hand-made first packets from client 5's namespace: the honest one is answered (so the packets
# are built right); client 2's WKc in a packet wrapped with another key (a WKc lifted from
# another client's packet) and a truncated WKc are not, and are logged with the reason.
forge() {
    ovt_run 20 "$(client_ns 5)" "$OVT_PY" "$OVT_LIB_DIR/forge_v2.py" --host "$OVT_SERVER_IP" \
        --port "$OVT_PORT" --key "$k/c2.key" --mode "$1"
}
forge good || fail "the server did not answer an honest hand-made V3 reset"
rc=0
forge other-kc || rc=$?
[ "$rc" = 3 ] || fail "a V3 reset carrying another client's WKc was answered (or failed: $rc)"
rc=0
forge truncated || rc=$?
[ "$rc" = 3 ] || fail "a V3 reset with a truncated WKc was answered (or failed: $rc)"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    wait_server_log "$c5:[0-9]+: dropped packet: tls-crypt-v2: packet did not authenticate with the client key" 10 ||
        fail "the lifted WKc was not logged"
    wait_server_log "$c5:[0-9]+: dropped packet: tls-crypt-v2: wrapped client key \(WKc\) did not authenticate" 10 ||
        fail "the truncated WKc was not logged"
    kill -USR2 "$spid"
    wait_for 10 server_log_grep "control: 2 clients, 2 sessions;" ||
        fail "hand-made packets left sessions behind"
else
    wait_server_log "tls-crypt unwrapping failed from \[AF_INET\]$c5" 10 ||
        fail "openvpn: the lifted WKc was not logged"
fi

# A flood of replayed honest V3 resets (client 2's, from 256 source ports, 8 s: every one
# carries a WKc that authenticates) while client 2 reconnects: the server answers them
# statelessly, keeps nothing for them, and the real client connects.
ovt_spawn "$(client_ns 5)" "$OVT_DIR/flood.log" "$OVT_PY" "$OVT_LIB_DIR/forge_v2.py" \
    --host "$OVT_SERVER_IP" --port "$OVT_PORT" --key "$k/c2.key" --mode good --flood 8
flood_pid=$OVT_LAST_PID
client_restart 2 30
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client 2 reconnected during a V3 reset flood"
else
    # (openvpn 2.6, one thread, connects the client but loses most of its pings while the
    # flood lasts: 30-80% measured)
    ovt_log "openvpn: $(ping_loss "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 10 0.05)% loss during the flood"
fi
ovt_wait "$flood_pid" || true
grep -q "flooded [1-9][0-9]* packets" "$OVT_DIR/flood.log" || fail "the flood did not run: $(cat "$OVT_DIR/flood.log")"
server_alive || fail "the server died under the V3 reset flood"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    kill -USR2 "$spid"
    wait_for 10 server_log_grep "control: 2 clients, 2 sessions;" ||
        fail "the replayed V3 resets left sessions behind"
fi
ovt_log "client 2 reconnected while $(sed -n 's/.*flooded \([0-9]*\).*/\1/p' "$OVT_DIR/flood.log") replayed V3 resets arrived; nothing kept for them"

if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    # tls-crypt-v2-max-age (openvpn 2.7): a fresh timestamp key works, a key without one does not
    client_stop 1
    client_stop 2
    server_stop
    server_conf_write "$OVT_DIR" "tls-crypt-v2 $k/server.key" "tls-crypt-v2-max-age 1"
    server_start "$OVT_DIR"
    client_start "$OVT_DIR" 2 "tls-crypt-v2 $k/c2.key"
    client_start "$OVT_DIR" 3 "tls-crypt-v2 $k/c3.key"
    wait_tunnel 2
    wait_server_log "$c3:[0-9]+: dropped packet: tls-crypt-v2 client key has no timestamp" 20 ||
        fail "tls-crypt-v2-max-age did not refuse a key without a timestamp"
    ! grep -q "Initialization Sequence Completed" "$OVT_DIR/client3.log" || fail "client 3 got a tunnel"
    assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client 2 under tls-crypt-v2-max-age"
fi
server_alive || fail "server died"
