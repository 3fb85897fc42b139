#!/usr/bin/env bash
# A renegotiation that never happens, and the lifetime of the key it replaces:
#   1. a client that ignores the server's P_CONTROL_SOFT_RESET_V1 (the load generator answers no
#      control packet with a key_id other than 0) is disconnected within reneg-sec + hand-window:
#      the status file drops it, the server says why, and the client is told RESTART on the
#      control channel it still reads, so it reconnects and is checked afresh;
#   2. tran-window: after a renegotiation that succeeded, the old key is still taken for
#      tran-window seconds after the new key was due, then no more. A P_DATA_V2 datagram the
#      stock client sent with key_id 0 is captured and replayed twice from its address: just
#      after the renegotiation the server drops it as a replay (the key is there), after
#      tran-window for want of a key.
# OVPN_SERVER_IMPL=openvpn runs both against openvpn 2.6. Over UDP 2.6 does not end a session
# whose renegotiation fails while the old key is still valid: it keeps that key (the lame duck)
# until tran-window runs out, so in part 1 it is checked that 2.6 still lists the client.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init reneg_fail
command -v tcpdump >/dev/null || ovt_skip "tcpdump not installed (run scripts/install-deps.sh)"
loadgen_find
case "$OVT_WRAP" in
tls-crypt | tls-auth) ;;
*) ovt_skip "the load generator needs tls-crypt or tls-auth, not OVT_WRAP=$OVT_WRAP" ;;
esac

netns_setup 1
pki_make "$OVT_DIR" --clients 1
dir=$OVT_DIR
pki=$dir/pki
ns=$(client_ns 1)

not_listed() { ! status_lists_once "$1"; }
n_counter_lines() { server_log_since | grep -c "worker 0: packets in" || true; }
more_counter_lines() { [ "$(n_counter_lines)" -gt "$1" ]; }
# The client logs each TLS handshake, the first and each renegotiation ("Control Channel: TLS...").
renegotiated() { [ "$(grep -c "Control Channel: TLS" "$dir/client1.log" || true)" -ge 2 ]; }
elapsed_over() { [ $((SECONDS - $1)) -gt "$2" ]; } # elapsed_over T0 S: more than S s since T0

# --- 1. the load generator ignores the soft reset
reneg_s=4
hand_s=5
server_conf_write "$dir" "reneg-sec $reneg_s" "hand-window $hand_s"
server_start "$dir"
loadgen_args "$pki" client1
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
    wait_for "$limit" not_listed client1 ||
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

# --- 2. tran-window: the old key is refused once it has run out
tran_s=10
sport=40001
extra=()
[ "$OVPN_SERVER_IMPL" = ovpnd ] && extra+=("workers 1") # one worker's counters to read
server_conf_write "$dir" "reneg-sec 20" "hand-window 10" "tran-window $tran_s" "${extra[@]}"
server_start "$dir"
cap=$dir/key0.pcap
# P_DATA_V2 (opcode 9) with key_id 0: first byte 0x48.
ovt_spawn "$NS_SRV" "$dir/tcpdump.log" tcpdump -i br0 -n -U --immediate-mode -s 0 -c 1 \
    -w "$cap" "udp and src port $sport and dst port $OVT_PORT and udp[8] = 0x48"
wait_for 10 grep -q "listening on" "$dir/tcpdump.log" || fail "tcpdump did not start"
OVT_CLIENT_BIND="lport $sport" client_start "$dir" 1 "reneg-sec 0"
wait_tunnel 1
assert_ping "$ns" "$OVT_SERVER_TUN_IP" 3 0.2 0 "key_id 0"
wait_for 10 test -s "$cap" || fail "no key_id 0 data packet captured"

# The server's counts of dropped data packets into SNAP_REPLAY and SNAP_NOKEY: "replay" and "no
# key" (ovpnd's SIGUSR2 counters; openvpn 2.6's log lines).
snapshot() {
    if [ "$OVPN_SERVER_IMPL" = openvpn ]; then
        SNAP_REPLAY=$(server_log_since | grep -c "bad packet ID (may be a replay)" || true)
        SNAP_NOKEY=$(server_log_since | grep -c "TLS keys are out of sync" || true)
        return 0
    fi
    local pid n line
    pid=$(server_process_pid) || fail "no server process"
    n=$(n_counter_lines)
    kill -USR2 "$pid"
    wait_for 5 more_counter_lines "$n" || fail "no counters after SIGUSR2"
    line=$(server_log_since | grep "worker 0: packets in" | tail -n 1)
    [[ $line =~ " replay "([0-9]+) ]] || fail "no replay counter in: $line"
    SNAP_REPLAY=${BASH_REMATCH[1]}
    [[ $line =~ " no key "([0-9]+) ]] || fail "no 'no key' counter in: $line"
    SNAP_NOKEY=${BASH_REMATCH[1]}
}
more_replays() { snapshot && [ "$SNAP_REPLAY" -gt "$1" ]; }
more_nokeys() { snapshot && [ "$SNAP_NOKEY" -gt "$1" ]; }
replay_key0() {
    ovt_run 30 "$ns" "$OVT_PY" "$OVT_LIB_DIR/forge_session.py" --host "$OVT_SERVER_IP" \
        --port "$OVT_PORT" --from-port "$sport" --replay-pcap "$cap" >"$dir/replay.log" 2>&1 || {
        cat "$dir/replay.log" >&2
        fail "could not replay the captured key_id 0 packet"
    }
}
wait_for 30 renegotiated || fail "no renegotiation within 30 s (reneg-sec 20)"
t_reneg=$SECONDS
ovt_log "renegotiated: key_id 1 in use"
snapshot
r0=$SNAP_REPLAY
k0=$SNAP_NOKEY
replay_key0
wait_for 3 more_replays "$r0" ||
    fail "the replayed key_id 0 packet, within tran-window, was not dropped as a replay (replay $SNAP_REPLAY, no key $SNAP_NOKEY)"
[ "$SNAP_NOKEY" = "$k0" ] || fail "key_id 0 was gone before tran-window ran out"
ovt_log "within tran-window: key_id 0 still known (the replay was dropped as a replay)"
# tran-window runs from when the new key was due, a little before the client saw it.
wait_for $((tran_s + 5)) elapsed_over "$t_reneg" $((tran_s + 2))
snapshot
r1=$SNAP_REPLAY
replay_key0
wait_for 3 more_nokeys "$k0" ||
    fail "key_id 0 is still taken $((SECONDS - t_reneg)) s after the renegotiation (tran-window $tran_s; replay $SNAP_REPLAY, no key $SNAP_NOKEY)"
[ "$SNAP_REPLAY" = "$r1" ] || fail "the late replay met key_id 0 after all"
ovt_log "after tran-window: key_id 0 is gone (the replay was dropped for want of a key)"
assert_ping "$ns" "$OVT_SERVER_TUN_IP" 5 0.2 0 "the new key after tran-window"
