#!/usr/bin/env bash
# The CBC data channel, for clients that cannot negotiate an AEAD cipher. A stock 2.6 client
# limited to one CBC cipher (`data-ciphers AES-256-CBC`) stands in for such a client; `auth` is
# not negotiated in openvpn 2.6, so each digest needs its own server run:
#   run 1: server `auth SHA256`, client `data-ciphers AES-256-CBC`, `auth SHA256`; 20 MiB from
#          the server to the client.
#   run 2: server with the default `auth` (SHA1), client `data-ciphers AES-128-CBC` and
#          `pull-filter ignore "peer-id"`: it uses no peer-id, so it sends P_DATA_V1 (a stock
#          2.6 client always announces P_DATA_V2 in IV_PROTO, so the server's P_DATA_V1 sending
#          for clients that do not is covered by tests/unit/test_data_cbc.c instead); 20 MiB from
#          the client to the server.
# Each run: the client's log names the cipher and digest (and, in run 2, no peer-id), pings pass,
# the transfer arrives intact (sha256), and the server's `reneg-sec 3` renegotiates the keys at
# least once with the tunnel still carrying pings afterwards.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init cbc

netns_setup 2
pki_make "$OVT_DIR"
head -c $((20 * 1024 * 1024)) /dev/urandom >"$OVT_DIR/data.bin"

# handshakes I: the TLS handshakes client I completed (the first and each renegotiation).
handshakes() {
    grep -c "Control Channel: TLS" "$OVT_DIR/client$1.log" || true
}

handshakes_at_least() {
    [ "$(handshakes "$1")" -ge "$2" ]
}

# transfer I UP|DOWN PORT: 20 MiB through client I's tunnel over TCP, up (client to server) or
# down; fails the test unless it arrives intact.
transfer() {
    local i=$1 dir=$2 port=$3 lns cns lpid
    local send=(--send "$OVT_DIR/data.bin") recv=(--recv "$OVT_DIR/data.recv$i")
    rm -f "$OVT_DIR/ready$i" "$OVT_DIR/data.recv$i"
    if [ "$dir" = up ]; then
        lns=$NS_SRV cns=$(client_ns "$i")
        ovt_spawn "$lns" "$OVT_DIR/listen$i.log" "$OVT_PY" "$OVT_LIB_DIR/tcpxfer.py" listen \
            --bind "$OVT_SERVER_TUN_IP" --port "$port" --ready "$OVT_DIR/ready$i" "${recv[@]}" \
            --timeout 60
    else
        lns=$(client_ns "$i") cns=$NS_SRV
        ovt_spawn "$lns" "$OVT_DIR/listen$i.log" "$OVT_PY" "$OVT_LIB_DIR/tcpxfer.py" listen \
            --bind "${CLIENT_TUN_IP[$i]}" --port "$port" --ready "$OVT_DIR/ready$i" "${send[@]}" \
            --timeout 60
    fi
    lpid=$OVT_LAST_PID
    wait_for 10 test -e "$OVT_DIR/ready$i" || fail "client $i: TCP listener did not start"
    local host=$OVT_SERVER_TUN_IP other=("${send[@]}")
    if [ "$dir" = down ]; then
        host=${CLIENT_TUN_IP[$i]} other=("${recv[@]}")
    fi
    ovt_run 70 "$cns" "$OVT_PY" "$OVT_LIB_DIR/tcpxfer.py" connect --host "$host" \
        --port "$port" "${other[@]}" --timeout 60 >"$OVT_DIR/connect$i.log" 2>&1 || {
        cat "$OVT_DIR/connect$i.log" "$OVT_DIR/listen$i.log" >&2
        fail "client $i: 20 MiB transfer ($dir) failed or stalled"
    }
    ovt_wait "$lpid" || fail "client $i: the listening side of the transfer failed"
    [ "$(sha256sum <"$OVT_DIR/data.bin")" = "$(sha256sum <"$OVT_DIR/data.recv$i")" ] ||
        fail "client $i: the 20 MiB changed on the way ($dir)"
    ovt_log "client $i: 20 MiB $dir, sha256 matches: $(cat "$OVT_DIR/connect$i.log")"
}

# run_case I WHAT DATA_CHANNEL_LINE DIRECTION SERVER_LINES... -- CLIENT_LINES...
run_case() {
    local i=$1 what=$2 expect=$3 dir=$4 srv=() cli=()
    shift 4
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        srv+=("$1")
        shift
    done
    shift
    cli=("$@")
    server_conf_write "$OVT_DIR" "reneg-sec 3" "${srv[@]}"
    server_start "$OVT_DIR"
    client_start "$OVT_DIR" "$i" disable-dco "${cli[@]}"
    wait_tunnel "$i"
    grep -q "Data Channel: $expect\$" "$OVT_DIR/client$i.log" ||
        fail "$what: the client did not log 'Data Channel: $expect' ($(grep 'Data Channel:' \
            "$OVT_DIR/client$i.log" | tail -n 1))"
    assert_ping "$(client_ns "$i")" "$OVT_SERVER_TUN_IP" 10 0.1 0 "$what: ping"
    transfer "$i" "$dir" $((5000 + i))
    wait_for 10 handshakes_at_least "$i" 2 ||
        fail "$what: no renegotiation within 10 s of the transfer (reneg-sec 3)"
    if grep -Eq "TLS Error|SIGUSR1|packet HMAC authentication failed" \
        "$OVT_DIR/client$i.log"; then
        fail "$what: the client saw errors: $(grep -Em3 "TLS Error|SIGUSR1|HMAC" \
            "$OVT_DIR/client$i.log")"
    fi
    assert_ping "$(client_ns "$i")" "$OVT_SERVER_TUN_IP" 10 0.1 0 \
        "$what: ping after $(($(handshakes "$i") - 1)) renegotiation(s)"
    client_stop "$i"
    server_stop
}

run_case 1 "AES-256-CBC/SHA256" "cipher 'AES-256-CBC', auth 'SHA256', peer-id: [0-9]*" down \
    "data-ciphers AES-256-GCM:AES-256-CBC" "auth SHA256" -- \
    "data-ciphers AES-256-CBC" "auth SHA256"

run_case 2 "AES-128-CBC/SHA1, no peer-id" "cipher 'AES-128-CBC', auth 'SHA1'" up \
    "data-ciphers AES-256-GCM:AES-128-CBC" -- \
    "data-ciphers AES-128-CBC" 'pull-filter ignore "peer-id"'

if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    grep -Eq "client connected: .*cipher AES-256-CBC" "$OVT_DIR/server.log" ||
        fail "ovpnd did not log the AES-256-CBC client"
    grep -Eq "client connected: .*cipher AES-128-CBC" "$OVT_DIR/server.log" ||
        fail "ovpnd did not log the AES-128-CBC client"
fi

