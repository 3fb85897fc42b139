#!/usr/bin/env bash
# Rerun a corpus of real-world openvpn server configs against openvpn 2.6 and ovpnd.
#
# usage: sudo scripts/compat-corpus.sh [--ovpnd PATH] [--keep] DIR
#
# For each DIR/*.conf: rewrite it to run here (scripts/compat_corpus.py: test PKI, addresses in
# 198.19.0.0/16 and 2001:2::/48, paths in a work dir, scripts that succeed; every rewrite is
# printed), start it as the server in a network namespace with openvpn 2.6 and then with ovpnd
# (tests/netns/lib.sh), connect a stock openvpn 2.6 client, ping the server's tunnel address and
# compare the PUSH_REPLYs. Prints one row per config; exits 0 unless the tool itself fails.
set -uo pipefail

SELF_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
keep=0
while [ $# -gt 0 ]; do
    case "$1" in
    --ovpnd)
        export OVPND=$2
        shift
        ;;
    --keep) keep=1 ;;
    -*)
        echo "usage: $0 [--ovpnd PATH] [--keep] DIR" >&2
        exit 2
        ;;
    *) break ;;
    esac
    shift
done
[ $# = 1 ] && [ -d "$1" ] || {
    echo "usage: $0 [--ovpnd PATH] [--keep] DIR" >&2
    exit 2
}
CORPUS=$(cd "$1" && pwd)
export OVT_KEEP=$keep
# shellcheck source=../tests/netns/lib.sh
source "$SELF_DIR/../tests/netns/lib.sh"
ovt_init compat-corpus
netns_setup 1
CNS=$(client_ns 1)

PKI=$OVT_DIR/pki
pki_make "$OVT_DIR" --clients 1
{
    openssl dhparam -dsaparam -out "$PKI/dh.pem" 2048
    openvpn --genkey tls-crypt-v2-server "$PKI/tls-crypt-v2-server.key"
    openvpn --tls-crypt-v2 "$PKI/tls-crypt-v2-server.key" --genkey tls-crypt-v2-client \
        "$PKI/tls-crypt-v2-client.key"
    openvpn --genkey secret "$PKI/static.key"
    openvpn --genkey auth-token "$PKI/auth-token.key"
} >"$OVT_DIR/pki-extra.log" 2>&1 || fail "extra keys: $(cat "$OVT_DIR/pki-extra.log")"
chmod -R a+rX "$PKI"

# port_bound PROTO PORT: something listens on PORT in the server namespace.
port_bound() {
    if [ "$1" = tcp ]; then
        out_has . ip netns exec "$NS_SRV" ss -Hltn "sport = :$2"
    else
        out_has . ip netns exec "$NS_SRV" ss -Hlun "sport = :$2"
    fi
}

# run_one IMPL W: start server IMPL on W/server.conf, a client on W/client.conf; sets START
# (yes/no), CONN (yes/no), PING (ok/fail/-), ERR (first error line), and W/IMPL.push.
run_one() {
    local impl=$1 w=$2 deadline
    START=no CONN=no PING=- ERR=
    OVPN_SERVER_IMPL=$impl
    rm -f "$OVT_DIR/server.conf"
    cp "$w/server.conf" "$OVT_DIR/server.conf"
    : >"$OVT_DIR/server.log"
    server_spawn "$OVT_DIR"
    deadline=$((SECONDS + 15))
    while [ "$SECONDS" -lt "$deadline" ]; do
        server_alive || break
        if port_bound "$PROTO" "$PORT"; then
            if [ "$impl" = ovpnd ] || grep -q "Initialization Sequence Completed" "$OVT_DIR/server.log"; then
                START=yes
                break
            fi
        fi
        sleep 0.2
    done
    cp "$OVT_DIR/server.log" "$w/$impl.server.log"
    if [ "$START" = no ]; then
        ERR=$(grep -m1 -E ':[0-9]+: ' "$OVT_DIR/server.log" | sed "s|$OVT_DIR/||" | cut -c1-160)
        [ -n "$ERR" ] || ERR=$(grep -m1 -iE 'error|fatal|cannot|invalid|unknown|not supported|refus' "$OVT_DIR/server.log" |
            sed 's/^[0-9-]* [0-9:]* //' | cut -c1-160)
        [ -n "$ERR" ] || ERR=$(grep -v '^=====' "$OVT_DIR/server.log" | tail -n 1 | cut -c1-160)
        server_stop
        return
    fi
    # a tap bridge: give the tap the bridge address (as brctl + the bridge would)
    if [ -n "$BRIDGE_IP" ]; then
        local tap
        tap=$(ip -n "$NS_SRV" -o link show type tun | awk -F': ' 'NR==1 {print $2}' | cut -d@ -f1)
        [ -n "$tap" ] && ip -n "$NS_SRV" addr add "$BRIDGE_IP/$BRIDGE_BITS" dev "$tap" 2>/dev/null
        [ -n "$tap" ] && ip -n "$NS_SRV" link set "$tap" up
    fi
    : >"$w/$impl.client.log"
    ovt_spawn "$CNS" "$w/$impl.client.log" openvpn --config "$w/client.conf"
    local cpid=$OVT_LAST_PID
    deadline=$((SECONDS + 25))
    while [ "$SECONDS" -lt "$deadline" ]; do
        kill -0 "$cpid" 2>/dev/null || break
        if grep -q "Initialization Sequence Completed" "$w/$impl.client.log"; then
            CONN=yes
            break
        fi
        sleep 0.2
    done
    if [ "$CONN" = yes ] && [ -n "$PING_IP" ]; then
        if ovt_run 10 "$CNS" ping -c 3 -i 0.3 -W 2 -q "$PING_IP" >/dev/null 2>&1; then PING=ok; else PING=fail; fi
    fi
    "$OVT_PY" "$SELF_DIR/compat_corpus.py" push "$w/$impl.client.log" >"$w/$impl.push"
    ovt_signal "$cpid" TERM
    wait_for 10 pid_gone "$cpid" || kill -KILL "$cpid" 2>/dev/null
    ovt_wait "$cpid" || true
    server_stop
    cp "$OVT_DIR/server.log" "$w/$impl.server.log"
}

rows=()
details=()
for conf in "$CORPUS"/*.conf; do
    [ -f "$conf" ] || continue
    name=$(basename "$conf" .conf)
    W=$OVT_DIR/run/$name
    mkdir -p "$W"
    chmod 755 "$OVT_DIR/run" "$W"
    if ! "$OVT_PY" "$SELF_DIR/compat_corpus.py" rewrite "$conf" "$W" "$PKI" "$CORPUS" 2>"$W/rewrite.err"; then
        rows+=("$name|rewrite failed: $(tail -n 1 "$W/rewrite.err")||||")
        continue
    fi
    PROTO=udp PORT=1194 PING_IP= BRIDGE_IP= BRIDGE_BITS=
    # shellcheck disable=SC1091
    source "$W/meta"
    run_one openvpn "$W"
    o_start=$START o_conn=$CONN o_ping=$PING o_err=$ERR
    # (to a file: a pipe closed early would kill it before it closes its plugins, and the
    # auth-pam plugin's helper process would be left behind)
    timeout 20 "$OVPND" --test-config --config "$W/server.conf" >"$W/test-config.log" 2>&1
    tc=$(grep -m1 -E ':[0-9]+: ' "$W/test-config.log" | sed "s|$W/||" | cut -c1-160)
    run_one ovpnd "$W"
    d_start=$START d_conn=$CONN d_ping=$PING d_err=${ERR:-$tc}
    push=-
    if [ "$o_conn" = yes ] && [ "$d_conn" = yes ]; then
        # peer-id: each server has had one client; a different number is not a difference
        # in behaviour, so it is masked (and the row says so)
        sed 's/^peer-id [0-9]*$/peer-id N/' "$W/openvpn.push" >"$W/openvpn.push.cmp"
        sed 's/^peer-id [0-9]*$/peer-id N/' "$W/ovpnd.push" >"$W/ovpnd.push.cmp"
        pid_note=
        if ! diff -q "$W/openvpn.push" "$W/ovpnd.push" >/dev/null &&
            diff -q <(grep -v '^peer-id' "$W/openvpn.push") <(grep -v '^peer-id' "$W/ovpnd.push") >/dev/null; then
            pid_note=" (peer-id $(sed -n 's/^peer-id //p' "$W/openvpn.push") vs $(sed -n 's/^peer-id //p' "$W/ovpnd.push"), masked)"
        fi
        if diff -q "$W/openvpn.push.cmp" "$W/ovpnd.push.cmp" >/dev/null; then
            push="equal$pid_note"
        else
            push=differ
            details+=("== $name: push reply (< openvpn 2.6, > ovpnd; peer-id masked)" "$(diff "$W/openvpn.push.cmp" "$W/ovpnd.push.cmp" | grep '^[<>]')")
        fi
    fi
    o_cell=$o_start
    [ "$o_start" = no ] && o_cell="no ($o_err)"
    d_cell=$d_start
    [ "$d_start" = no ] && d_cell="no ($d_err)"
    rows+=("$name|$o_cell|$d_cell|$o_conn/$o_ping|$d_conn/$d_ping|$push")
    if [ -s "$W/notes" ]; then
        details+=("== $name: rewrites" "$(sed 's/^/  /' "$W/notes")")
    fi
done

printf '%s\n' "config|2.6 starts|ovpnd starts|2.6 client/ping|ovpnd client/ping|push reply"
printf '%s\n' "${rows[@]}"
echo
printf '%s\n' "${details[@]}"
[ "$keep" = 1 ] && echo "work directory: $OVT_DIR"
exit 0
