#!/usr/bin/env bash
# contrib/cluster/bgp-health.sh: the health check of the BGP form, run on each ovpnd node beside
# FRR (contrib/cluster/frr/node-bgpd.conf). Every INTERVAL seconds it asks the local ovpnd's
# /health and announces the service address while ovpnd answers, withdraws it when it does not:
#   200 (serving)   announce `network SERVICE/32`;
#   503 (draining)  keep announcing (default): the node's clients keep their flows, and new
#                   clients that the edge hashes onto it are not answered, so a stock client
#                   moves on after its server-poll-timeout (its next attempt comes from a new
#                   source port and hashes again); with -w, withdraw instead: every client of the
#                   node is hashed onto the others and reconnects there after its ping-restart;
#   no answer       withdraw.
#
#   bgp-health.sh [-i INTERVAL] [-w] [-s VTY_SOCKET_DIR] ASN SERVICE_PREFIX HEALTH_URL
#   e.g. bgp-health.sh 65011 198.18.0.200/32 http://198.18.0.66:9176/health
#
# Needs FRR's vtysh and curl. Logs one line per change to stdout.
set -euo pipefail

interval=1
withdraw_on_drain=0
vty=()
while getopts "i:ws:" opt; do
    case $opt in
    i) interval=$OPTARG ;;
    w) withdraw_on_drain=1 ;;
    s) vty=(--vty_socket "$OPTARG") ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 3 ] || {
    echo "usage: $0 [-i S] [-w] [-s VTY_SOCKET_DIR] ASN SERVICE_PREFIX HEALTH_URL" >&2
    exit 2
}
asn=$1 prefix=$2 url=$3
state=unknown

log() { printf '%s bgp-health: %s\n' "$(date +%T.%3N)" "$*"; }
announce() { # announce yes|no
    local neg=""
    [ "$1" = no ] && neg="no "
    vtysh "${vty[@]}" -c "configure terminal" -c "router bgp $asn" \
        -c "address-family ipv4 unicast" -c "${neg}network $prefix" >/dev/null
}

while true; do
    code=$(curl -s -o /dev/null --max-time 1 -w '%{http_code}' "$url" || true)
    case $code in
    200) s=up ;;
    503) s=drain ;;
    *) s=down ;;
    esac
    if [ "$s" != "$state" ]; then
        # (a change that FRR did not take, bgpd not running yet, is tried again next round)
        if [ "$s" = up ] || { [ "$s" = drain ] && [ "$withdraw_on_drain" = 0 ]; }; then
            announce yes && log "$url: $state -> $s: announcing $prefix" && state=$s
        else
            announce no && log "$url: $state -> $s: withdrawing $prefix" && state=$s
        fi
    fi
    sleep "$interval"
done
