#!/usr/bin/env bash
# Eight stock openvpn clients, each in its own namespace behind the bridge, connected at once
# with client-to-client, for workers 1, 2 and 4 with kernel steering, and workers 2 with steering
# forced off (OVPND_STEERING=off, the fallback):
#  - every client pings the server and every other client (client-to-client inside ovpnd, also
#    between sessions of different workers);
#  - every client sends 5 MB to the server over TCP, all at once; sha256 matches;
#  - the status file's per-worker rows match the client list: each session's bytes were handled
#    by exactly one worker (its owner), sessions spread over the workers, nothing handed over
#    with steering and some without (workers_check.py).
# In the sanitizer pass of scripts/test.sh (OVT_SANITIZER_PASS=1) only workers 2 without
# steering runs (hand-over and client-to-client between workers), to keep that pass short.
# Then without client-to-client (and IP forwarding off in the server namespace) clients do not
# reach each other, while they still reach the server.
# OVT_RENEG_SEC=N adds `reneg-sec N` to the worker runs: renegotiations in the middle of the
# pings and transfers (scripts/test.sh --tsan uses it).
# ovt: timeout 600
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init workers_clients
[ "$OVPN_SERVER_IMPL" = ovpnd ] || ovt_skip "workers are ovpnd's own"

N=8
netns_setup $N
pki_make "$OVT_DIR" --clients $N
ip netns exec "$NS_SRV" sysctl -q -w net.ipv4.ip_forward=0
xfer=$OVT_LIB_DIR/tcpxfer.py
head -c $((5 * 1024 * 1024)) /dev/urandom >"$OVT_DIR/data.bin"
sent_sha=$(sha256sum "$OVT_DIR/data.bin" | cut -d' ' -f1)
# Long keepalive: no pings between the last transfer and the status check.
export OVT_KEEPALIVE="60 300"
OVT_STATUS_VERSION=2

start_all() {
    local i
    for i in $(seq 1 $N); do
        client_start "$OVT_DIR" "$i"
    done
    for i in $(seq 1 $N); do
        wait_tunnel "$i" 60
    done
}

stop_all() {
    local i
    for i in $(seq 1 $N); do
        ovt_signal "${CLIENT_PID[$i]}" TERM
    done
    for i in $(seq 1 $N); do
        client_stop "$i"
    done
    server_stop
}

# ping_mesh: every client pings the server and every other client (in parallel per client), 3
# pings each; a pair passes with at least one reply (a pair with none gets one more try of 5).
# The loss over the whole mesh is reported, not judged: with nine openvpn processes on two
# busy cores some echoes miss their deadline in the client namespaces, and the same mesh
# against openvpn 2.6 as the server loses about as many.
ping_mesh() {
    local i j pids=() rc=0 lost=0 total=0 targets
    for i in $(seq 1 $N); do
        targets=$OVT_SERVER_TUN_IP
        for j in $(seq 1 $N); do
            [ "$i" = "$j" ] || targets="$targets ${CLIENT_TUN_IP[$j]}"
        done
        # one namespace entry per client; its pings run side by side
        ovt_run 60 "$(client_ns "$i")" bash -c 'for t in '"$targets"'; do
                (out=$(ping -n -q -c 3 -i 0.1 -W 2 "$t" 2>&1); echo "$t $(echo "$out" | sed -n "s/.* \([0-9]*\) received.*/\1/p")") &
            done; wait' >"$OVT_DIR/mesh.$i" 2>&1 &
        pids+=($!)
    done
    for j in "${pids[@]}"; do
        wait "$j" || rc=1
    done
    [ $rc = 0 ] || fail "$1: ping mesh failed to run"
    for i in $(seq 1 $N); do
        [ "$(wc -l <"$OVT_DIR/mesh.$i")" = "$N" ] || fail "$1: client $i's ping mesh: $(cat "$OVT_DIR/mesh.$i")"
        while read -r dst got; do
            total=$((total + 3))
            case "$got" in
            1 | 2 | 3) lost=$((lost + 3 - got)) ;;
            *)
                lost=$((lost + 3))
                loss=$(ping_loss "$(client_ns "$i")" "$dst" 5 0.2)
                [ "$loss" != 100 ] || fail "$1: client $i cannot reach $dst (no reply to 3 + 5 pings)"
                ;;
            esac
        done <"$OVT_DIR/mesh.$i"
    done
    ovt_log "$1: all $N clients reach the server and each other ($lost of $total pings lost)"
}

# transfer_all: each client sends 5 MB to its own listener on the server's tunnel address.
transfer_all() {
    local i cpids=() lpid
    rm -f "$OVT_DIR"/ready.* "$OVT_DIR"/recv.*
    # all listeners from one namespace entry
    ovt_spawn "$NS_SRV" "$OVT_DIR/listen.log" bash -c 'rc=0; for i in $(seq 1 '$N'); do
            "$0" "$1" listen --bind "$2" --port $((5000 + i)) --ready "$3/ready.$i" \
                --recv "$3/recv.$i" --timeout 120 &
        done; for p in $(jobs -p); do wait "$p" || rc=1; done; exit $rc' \
        "$OVT_PY" "$xfer" "$OVT_SERVER_TUN_IP" "$OVT_DIR"
    lpid=$OVT_LAST_PID
    for i in $(seq 1 $N); do
        wait_for 20 test -e "$OVT_DIR/ready.$i" || fail "listener $i did not start"
    done
    for i in $(seq 1 $N); do
        ovt_run 130 "$(client_ns "$i")" "$OVT_PY" "$xfer" connect --host "$OVT_SERVER_TUN_IP" \
            --port $((5000 + i)) --send "$OVT_DIR/data.bin" --timeout 120 \
            >"$OVT_DIR/connect.$i.log" 2>&1 &
        cpids+=($!)
    done
    for i in $(seq 1 $N); do
        wait "${cpids[$((i - 1))]}" || fail "$1: client $i's transfer failed: $(cat "$OVT_DIR/connect.$i.log")"
    done
    ovt_wait "$lpid" || fail "$1: a receiver failed: $(cat "$OVT_DIR/listen.log")"
    for i in $(seq 1 $N); do
        got=$(sha256sum "$OVT_DIR/recv.$i" | cut -d' ' -f1)
        [ "$got" = "$sent_sha" ] || fail "$1: client $i's 5 MB arrived with sha256 $got, sent $sent_sha"
    done
    ovt_log "$1: $N x 5 MB client -> server, sha256 matches"
}

run() { # run WORKERS STEERING
    local what="workers $1, steering $2"
    server_conf_write "$OVT_DIR" "workers $1" "client-to-client" \
        ${OVT_RENEG_SEC:+"reneg-sec $OVT_RENEG_SEC"}
    OVPND_STEERING=$2 server_start "$OVT_DIR"
    start_all
    ping_mesh "$what"
    transfer_all "$what"
    sleep 2.5 # one more status period, with all traffic done
    cp "$OVT_DIR/status.log" "$OVT_DIR/status.w$1.$2"
    "$OVT_PY" "$OVT_LIB_DIR/workers_check.py" "$OVT_DIR/status.w$1.$2" "$1" $N "$2" >&2 ||
        fail "$what: per-worker counters do not match the client list"
    server_alive || fail "$what: the server died"
    stop_all
}

default_runs="1:on 2:on 4:on 2:off"
[ "${OVT_SANITIZER_PASS:-0}" = 1 ] && default_runs="2:off"
for r in ${OVT_WORKER_RUNS:-$default_runs}; do # e.g. OVT_WORKER_RUNS="2:off" for one
    run "${r%:*}" "${r#*:}"
done

# Without client-to-client: clients 1 and 2 reach the server, not each other.
N=2
server_conf_write "$OVT_DIR" "workers 2"
server_start "$OVT_DIR"
start_all
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "no client-to-client: client 1 -> server"
loss=$(ping_loss "$(client_ns 1)" "${CLIENT_TUN_IP[2]}" 5 0.1)
[ "$loss" = 100 ] || fail "without client-to-client client 1 still reached client 2 ($loss% loss)"
ovt_log "without client-to-client: client 1 cannot reach client 2"
stop_all
ovt_log "PASS"
