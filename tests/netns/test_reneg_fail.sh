#!/usr/bin/env bash
# A renegotiation that never happens:
#   1. a client that ignores the server's P_CONTROL_SOFT_RESET_V1 (the load generator answers no
#      control packet with a key_id other than 0) is disconnected within reneg-sec + hand-window:
#      the status file drops it, the server says why, and the client is told RESTART on the
#      control channel it still reads, so it reconnects and is checked afresh.
# OVPN_SERVER_IMPL=openvpn runs it against openvpn 2.6. Over UDP 2.6 does not end a session
# whose renegotiation fails while the old key is still valid: it keeps that key (the lame duck)
# until tran-window runs out, so it is checked that 2.6 still lists the client.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init reneg_fail
LOADGEN=${OVPND_LOADGEN:-$(dirname "$OVPND")/ovpnd-loadgen}
[ -x "$LOADGEN" ] || fail "load generator not found at $LOADGEN (build it, or set OVPND_LOADGEN)"
case "$OVT_WRAP" in
tls-crypt | tls-auth) ;;
*) ovt_skip "the load generator needs tls-crypt or tls-auth, not OVT_WRAP=$OVT_WRAP" ;;
esac

netns_setup 1
pki_make "$OVT_DIR" --clients 1
dir=$OVT_DIR
pki=$dir/pki
ns=$(client_ns 1)

# --- 1. the load generator ignores the soft reset
reneg_s=4
hand_s=5
server_conf_write "$dir" "reneg-sec $reneg_s" "hand-window $hand_s"
server_start "$dir"
lg_args=(--server "$OVT_SERVER_IP:$OVT_PORT" --ca "$pki/ca.crt" --cert "$pki/client1.crt"
    --key "$pki/client1.key")
case "$OVT_WRAP" in
tls-crypt) lg_args+=(--tls-crypt "$pki/ta.key") ;;
tls-auth) lg_args+=(--tls-auth "$pki/tls-auth.key" --key-direction 1) ;;
esac
ovt_spawn "$ns" "$dir/loadgen.log" "$LOADGEN" "${lg_args[@]}" --clients 1 --rate 0 \
    --duration 14 --data-rate 5 --json "$dir/loadgen.json"
lg=$OVT_LAST_PID
wait_for 20 status_lists_once client1 || fail "the load generator's client did not connect"
t0=$SECONDS
ovt_log "load generator connected; it will not answer the soft reset after reneg-sec $reneg_s"
# A second of slack for the reneg-sec timer, a tick and the status file (written every second).
limit=$((reneg_s + hand_s + 2))
if [ "$OVPN_SERVER_IMPL" = openvpn ]; then
    # 2.6 keeps the old key after the failed renegotiation (ssl.c tls_multi_process: a TLS error
    # with an active lame duck key is no hard error) until tran-window ends: the client stays.
    wait_for $((limit + 3)) server_log_grep "TLS key negotiation failed to occur" ||
        fail "openvpn 2.6 did not give up the renegotiation at hand-window"
    status_lists_once client1 ||
        fail "openvpn 2.6 dropped the client at once (it used to keep it for tran-window)"
    ovt_log "openvpn 2.6 differs: the renegotiation failed and the client stays on its old key"
    kill -TERM "$lg" 2>/dev/null || true
    ovt_wait "$lg" || true
else
    wait_for "$limit" eval '! status_lists_once client1' ||
        fail "the client that ignores the soft reset is still connected $((SECONDS - t0)) s after it connected (reneg-sec $reneg_s + hand-window $hand_s)"
    ovt_log "the client was dropped $((SECONDS - t0)) s after it connected"
    server_log_grep "renegotiation of key_id 1 did not finish within $hand_s seconds" ||
        fail "the server did not log why the client was dropped"
    ovt_wait "$lg" || true
    "$OVT_PY" - "$dir/loadgen.json" <<'PY' || fail "the client was not told RESTART: $(cat "$dir/loadgen.json")"
import json, sys
c = json.load(open(sys.argv[1]))["per_client"][0]
sys.exit(0 if c["state"] == "failed" and c.get("fail_reason") == "server sent RESTART" else 1)
PY
    ovt_log "the client was told RESTART"
fi
server_stop

