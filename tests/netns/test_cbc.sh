#!/usr/bin/env bash
# The CBC data channel, for clients that cannot negotiate an AEAD cipher. A stock 2.6 client
# limited to one CBC cipher (`data-ciphers AES-256-CBC`) stands in for such a client. `auth` is
# not negotiated in openvpn 2.6, so each digest needs its own server; both run at once in the
# server namespace (one /25 of the test pool each), each with one client:
#   server A (port 1194, 198.19.0.0/25): `auth SHA256`; client 1 `data-ciphers AES-256-CBC`,
#          `auth SHA256`; 20 MiB from the server to the client.
#   server B (port 1195, 198.19.0.128/25): the default `auth` (SHA1); client 2 `data-ciphers
#          AES-128-CBC` and `pull-filter ignore "peer-id"`: it uses no peer-id, so it sends
#          P_DATA_V1 (a stock 2.6 client always announces P_DATA_V2 in IV_PROTO, so the server's
#          P_DATA_V1 sending for clients that do not is covered by tests/unit/test_data_cbc.c
#          instead); 20 MiB from the client to the server.
# For each client: its log names the cipher and digest (and, for client 2, no peer-id), pings
# pass, the transfer (both at once) arrives intact (sha256), and the servers' `reneg-sec 3` renegotiates the
# keys at least once with the tunnel still carrying pings afterwards.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init cbc

netns_setup 2
pki_make "$OVT_DIR"
head -c $((20 * 1024 * 1024)) /dev/urandom >"$OVT_DIR/data.bin"
DATA_SUM=$(sha256sum <"$OVT_DIR/data.bin")

# handshakes I: the TLS handshakes client I completed (the first and each renegotiation).
handshakes() {
    grep -c "Control Channel: TLS" "$OVT_DIR/client$1.log" || true
}

handshakes_at_least() {
    [ "$(handshakes "$1")" -ge "$2" ]
}

# transfer_listen I UP|DOWN PORT SERVER_TUN_IP, transfer_connect I, transfer_check I: 20 MiB
# through client I's tunnel over TCP, up (client to server) or down: the listening side, then,
# once it listens, the connecting one; the check waits for both and fails the test unless the
# data arrived intact. Both clients' transfers run at the same time.
declare -A LPID=() CPID=() DIR=() CNS=() HOST=() CSIDE=() PORT=()
transfer_listen() {
    local i=$1 dir=$2 port=$3 srv_ip=$4 lns
    local send="--send $OVT_DIR/data.bin" recv="--recv $OVT_DIR/data.recv$i" lside
    DIR[$i]=$dir
    if [ "$dir" = up ]; then
        lns=$NS_SRV CNS[$i]=$(client_ns "$i") HOST[$i]=$srv_ip lside=$recv CSIDE[$i]=$send
    else
        lns=$(client_ns "$i") CNS[$i]=$NS_SRV HOST[$i]=${CLIENT_TUN_IP[$i]} lside=$send
        CSIDE[$i]=$recv
    fi
    # shellcheck disable=SC2086 # lside is an option and its file name (no blanks in either)
    ovt_spawn "$lns" "$OVT_DIR/listen$i.log" "$OVT_PY" "$OVT_LIB_DIR/tcpxfer.py" listen \
        --bind "${HOST[$i]}" --port "$port" --ready "$OVT_DIR/ready$i" $lside --timeout 60
    LPID[$i]=$OVT_LAST_PID
    PORT[$i]=$port
}

transfer_connect() {
    local i=$1
    wait_for 20 test -e "$OVT_DIR/ready$i" || fail "client $i: TCP listener did not start"
    # shellcheck disable=SC2086 # as above
    ovt_spawn "${CNS[$i]}" "$OVT_DIR/connect$i.log" "$OVT_PY" "$OVT_LIB_DIR/tcpxfer.py" connect \
        --host "${HOST[$i]}" --port "${PORT[$i]}" ${CSIDE[$i]} --timeout 60
    CPID[$i]=$OVT_LAST_PID
}

transfer_check() {
    local i=$1
    ovt_wait "${CPID[$i]}" && ovt_wait "${LPID[$i]}" || {
        cat "$OVT_DIR/connect$i.log" "$OVT_DIR/listen$i.log" >&2
        fail "client $i: 20 MiB transfer (${DIR[$i]}) failed or stalled"
    }
    [ "$DATA_SUM" = "$(sha256sum <"$OVT_DIR/data.recv$i")" ] ||
        fail "client $i: the 20 MiB changed on the way (${DIR[$i]})"
    ovt_log "client $i: 20 MiB ${DIR[$i]}, sha256 matches: $(cat "$OVT_DIR/connect$i.log")"
}

# The second server, beside the one lib.sh runs: its own directory (sharing the PKI), port,
# half of the pool; its log goes into the same server.log, which the cleanup checks for
# sanitizer reports.
B_DIR=$OVT_DIR/b
B_PORT=1195
B_TUN_IP=198.19.0.129
B_PID=
b_ready() {
    kill -0 "$B_PID" 2>/dev/null || return 1
    out_has "inet ${B_TUN_IP}[/ ]" ip -n "$NS_SRV" -4 addr show || return 1
    case "${OVT_PROTO:-udp}" in
    tcp*) out_has . ip netns exec "$NS_SRV" ss -Hltn "sport = :$B_PORT" || return 1 ;;
    *) out_has . ip netns exec "$NS_SRV" ss -Hlun "sport = :$B_PORT" || return 1 ;;
    esac
    if [ "$OVPN_SERVER_IMPL" = openvpn ]; then
        grep -q "Initialization Sequence Completed" "$B_DIR/openvpn.log" || return 1
    fi
}

mkdir -p "$B_DIR"
ln -s "$OVT_DIR/pki" "$B_DIR/pki"
OVT_PORT=$B_PORT OVT_SERVER_LINE="server 198.19.0.128 255.255.255.128" \
    server_conf_write "$B_DIR" "reneg-sec 3" "data-ciphers AES-256-GCM:AES-128-CBC"
# openvpn's readiness line is looked for in a log of its own
[ "$OVPN_SERVER_IMPL" = openvpn ] && echo "log-append $B_DIR/openvpn.log" >>"$B_DIR/server.conf"
echo "===== server B start $(date +%T) ($OVPN_SERVER_IMPL) =====" >>"$OVT_DIR/server.log"
case "$OVPN_SERVER_IMPL" in
ovpnd) ovt_spawn "$NS_SRV" "$OVT_DIR/server.log" "$OVPND" --config "$B_DIR/server.conf" ;;
openvpn) ovt_spawn "$NS_SRV" "$OVT_DIR/server.log" openvpn --config "$B_DIR/server.conf" ;;
esac
B_PID=$OVT_LAST_PID

OVT_SERVER_LINE="server 198.19.0.0 255.255.255.128" \
    server_conf_write "$OVT_DIR" "reneg-sec 3" "data-ciphers AES-256-GCM:AES-256-CBC" "auth SHA256"
server_start "$OVT_DIR"
wait_for 20 b_ready || fail "server B not ready within 20 s"
ovt_log "server B up (pid $B_PID)"

client_start "$OVT_DIR" 1 disable-dco "data-ciphers AES-256-CBC" "auth SHA256"
OVT_CLIENT_REMOTE="remote $OVT_SERVER_IP $B_PORT ${OVT_CLIENT_PROTO:-udp4}" \
    client_start "$OVT_DIR" 2 disable-dco "data-ciphers AES-128-CBC" 'pull-filter ignore "peer-id"'
wait_tunnel 1
wait_tunnel 2

declare -A WHAT=([1]="AES-256-CBC/SHA256" [2]="AES-128-CBC/SHA1, no peer-id")
declare -A EXPECT=([1]="cipher 'AES-256-CBC', auth 'SHA256', peer-id: [0-9]*"
    [2]="cipher 'AES-128-CBC', auth 'SHA1'")
declare -A SRV_TUN=([1]=$OVT_SERVER_TUN_IP [2]=$B_TUN_IP)
for i in 1 2; do
    grep -q "Data Channel: ${EXPECT[$i]}\$" "$OVT_DIR/client$i.log" ||
        fail "${WHAT[$i]}: the client did not log 'Data Channel: ${EXPECT[$i]}' ($(grep \
            'Data Channel:' "$OVT_DIR/client$i.log" | tail -n 1))"
    assert_ping "$(client_ns "$i")" "${SRV_TUN[$i]}" 10 0.1 0 "${WHAT[$i]}: ping"
done
transfer_listen 1 down 5001 "$OVT_SERVER_TUN_IP"
transfer_listen 2 up 5002 "$B_TUN_IP"
transfer_connect 1
transfer_connect 2
transfer_check 1
transfer_check 2
for i in 1 2; do
    wait_for 10 handshakes_at_least "$i" 2 ||
        fail "${WHAT[$i]}: no renegotiation within 10 s of the transfers (reneg-sec 3)"
    if grep -Eq "TLS Error|SIGUSR1|packet HMAC authentication failed" \
        "$OVT_DIR/client$i.log"; then
        fail "${WHAT[$i]}: the client saw errors: $(grep -Em3 "TLS Error|SIGUSR1|HMAC" \
            "$OVT_DIR/client$i.log")"
    fi
    assert_ping "$(client_ns "$i")" "${SRV_TUN[$i]}" 10 0.1 0 \
        "${WHAT[$i]}: ping after $(($(handshakes "$i") - 1)) renegotiation(s)"
done
client_stop 1
client_stop 2
ovt_signal "$B_PID" TERM
wait_for 10 pid_gone "$B_PID" || fail "server B did not exit on SIGTERM within 10 s"
ovt_wait "$B_PID" || true
server_stop

if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    grep -Eq "client connected: .*cipher AES-256-CBC" "$OVT_DIR/server.log" ||
        fail "ovpnd did not log the AES-256-CBC client"
    grep -Eq "client connected: .*cipher AES-128-CBC" "$OVT_DIR/server.log" ||
        fail "ovpnd did not log the AES-128-CBC client"
fi
