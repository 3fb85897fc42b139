#!/usr/bin/env bash
# Key renegotiation keeps the tunnel up: first the server renegotiates every few seconds
# (reneg-sec 3), then the client does (client reneg-sec 3, server reneg-sec 0). Each time the
# data channel moves to the new key_id, and a steady ping sees no loss. Then a paced 12 MiB TCP
# transfer (about 12 s) runs across at least 3 renegotiations and arrives intact, without a
# stall. The stock 2.6 client is pushed dyn-tls-crypt, so every renegotiation is wrapped with the
# session's dynamic tls-crypt key (the client accepts no other for key_id > 0); the three runs
# start from tls-crypt, tls-auth and no wrapper, whose keys go into the dynamic one.
# ovt: serial (see tests/CMakeLists.txt)
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init renegotiation

netns_setup 1
pki_make "$OVT_DIR"

# TLS handshakes the client finished (the first one and each renegotiation), as it logs them
# with either server.
client_tls_count() { grep -c "Control Channel: TLS" "$OVT_DIR/client1.log" || true; }

run_case() { # run_case WHAT SERVER_LINE CLIENT_LINE
    local what=$1 srv_line=$2 cli_line=$3 n
    server_conf_write "$OVT_DIR" "$srv_line"
    server_start "$OVT_DIR"
    local pcap=$OVT_DIR/client.pcap tcpdump_pid=
    if [ "$OVT_WRAP" = tls-crypt ] && command -v tcpdump >/dev/null; then
        ovt_spawn "$(client_ns 1)" "$OVT_DIR/tcpdump.log" tcpdump -i eth0 -n -U --immediate-mode \
            -s 0 -w "$pcap" udp port "$OVT_PORT"
        tcpdump_pid=$OVT_LAST_PID
        wait_for 10 grep -q "listening on" "$OVT_DIR/tcpdump.log" || fail "tcpdump did not start"
    fi
    client_start "$OVT_DIR" 1 "$cli_line"
    wait_tunnel 1
    grep -q "PUSH_REPLY,.*protocol-flags [a-z -]*dyn-tls-crypt" "$OVT_DIR/client1.log" ||
        fail "$what: the client was not pushed dyn-tls-crypt"
    # 9 s of pings, across about three renegotiations.
    assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 45 0.2 0 "$what: ping during renegotiations"
    n=$(($(client_tls_count) - 1))
    [ "$n" -ge 2 ] || fail "$what: only $n renegotiations completed in 9 s"
    grep -q "Initialization Sequence Completed" "$OVT_DIR/client1.log" || fail "$what: no init"
    if grep -Eq "TLS Error|SIGUSR1" "$OVT_DIR/client1.log"; then
        fail "$what: the client restarted (TLS error) instead of renegotiating"
    fi
    ovt_log "$what: $n renegotiations, no loss, no client restart"
    if [ -n "$tcpdump_pid" ]; then
        # On the wire: key_id 0's control packets open with the tls-crypt key file, those of the
        # renegotiations (key_id > 0, both ways) do not: they use the dynamic key.
        kill -INT "$tcpdump_pid" 2>/dev/null || true
        ovt_wait "$tcpdump_pid" || true
        local c k0 k0_open kn kn_open
        c=$("$OVT_PY" "$OVT_LIB_DIR/tls_crypt_check.py" "$pcap" "$OVT_DIR/pki/ta.key" "$OVT_PORT" \
            "$OVT_LIB_DIR")
        read -r k0 k0_open kn kn_open <<<"$c"
        if [ "$k0" -eq 0 ] || [ "$k0_open" -ne "$k0" ]; then
            fail "$what: key_id 0 control packets that open with ta.key: $k0_open of $k0"
        fi
        if [ "$kn" -eq 0 ] || [ "$kn_open" -ne 0 ]; then
            fail "$what: key_id > 0 control packets that open with ta.key: $kn_open of $kn"
        fi
        ovt_log "$what: on the wire, $k0 key_id 0 control packets open with ta.key, none of $kn later ones"
    fi
    client_stop 1
    server_stop
}

run_case "server-initiated" "reneg-sec 3" "reneg-sec 0"
OVT_WRAP=tls-auth run_case "client-initiated, tls-auth" "reneg-sec 0" "reneg-sec 3"

# A TCP transfer spanning renegotiations (server reneg-sec 3), without a wrapper.
export OVT_WRAP=none
server_conf_write "$OVT_DIR" "reneg-sec 3"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1 "reneg-sec 0"
wait_tunnel 1
head -c $((12 * 1024 * 1024)) /dev/urandom >"$OVT_DIR/data.bin"
ovt_spawn "$NS_SRV" "$OVT_DIR/listen.log" "$OVT_PY" "$OVT_LIB_DIR/tcpxfer.py" listen \
    --bind "$OVT_SERVER_TUN_IP" --port 5003 --ready "$OVT_DIR/ready" --recv "$OVT_DIR/data.recv" \
    --timeout 60
lpid=$OVT_LAST_PID
wait_for 10 test -s "$OVT_DIR/ready" || fail "TCP listener did not start"
before=$(client_tls_count)
ovt_run 70 "$(client_ns 1)" "$OVT_PY" "$OVT_LIB_DIR/tcpxfer.py" connect --host \
    "$OVT_SERVER_TUN_IP" --port 5003 --send "$OVT_DIR/data.bin" --rate $((1024 * 1024)) \
    --timeout 60 >"$OVT_DIR/connect.log" 2>&1 || {
    cat "$OVT_DIR/connect.log" "$OVT_DIR/listen.log" >&2
    fail "TCP transfer across renegotiations failed or stalled"
}
ovt_wait "$lpid" || fail "TCP receiver failed"
n=$(($(client_tls_count) - before))
[ "$n" -ge 3 ] || fail "only $n renegotiations happened during the transfer"
[ "$(sha256sum <"$OVT_DIR/data.bin")" = "$(sha256sum <"$OVT_DIR/data.recv")" ] ||
    fail "the data changed on its way across $n renegotiations"
ovt_log "12 MiB across $n renegotiations, sha256 matches: $(cat "$OVT_DIR/connect.log")"
