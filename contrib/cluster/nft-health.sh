#!/usr/bin/env bash
# contrib/cluster/nft-health.sh: the health check of the nftables form (contrib/cluster/nft-edge.nft),
# run on the edge router. Every INTERVAL seconds it asks each node's /health (ovpnd's metrics
# listener) and rewrites the bucket map that the DNAT rule reads:
#   200 (serving)            the node keeps its own buckets (bucket b belongs to node b mod N);
#   503 (draining, not ready) its buckets go to the serving nodes for new flows, but the
#                            connection-tracking entries of its clients stay: they keep their node;
#   no answer                its buckets go to the serving nodes and its clients' tracking entries
#                            are deleted, so that their next packet is hashed onto a serving node,
#                            where the client's ping-restart reconnects it (with its auth-gen-token).
# When a node comes back its buckets return to it for new flows; tracked flows stay where they are.
#
#   nft-health.sh [-i INTERVAL] [-p METRICS_PORT] [-P SERVICE_PORT] SERVICE_ADDR NODE_ADDR...
#
# It owns chain `prerouting` of table `ip ovpnd_cluster` (nft-edge.nft creates both).
#
# Needs nft, conntrack (Debian: nftables, conntrack) and curl. Logs one line per change to stdout.
set -euo pipefail

interval=1
port=9176
sport=1194
while getopts "i:p:P:" opt; do
    case $opt in
    i) interval=$OPTARG ;;
    p) port=$OPTARG ;;
    P) sport=$OPTARG ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || {
    echo "usage: $0 [-i S] [-p PORT] [-P SERVICE_PORT] SERVICE_ADDR NODE_ADDR..." >&2
    exit 2
}
service=$1
shift
nodes=("$@")
n=${#nodes[@]}
buckets=$((n * 4)) # four per node (nft-edge.nft: mod 12 for three nodes)
declare -A state=()

log() { printf '%s nft-health: %s\n' "$(date +%T.%3N)" "$*"; }

# The map for the current states: each bucket to its own node if that serves, else round-robin
# over the serving nodes; with none serving, every bucket keeps its own node (nothing better).
apply() {
    local -a up=()
    local i b elems="" target
    for i in "${!nodes[@]}"; do
        [ "${state[$i]}" = up ] && up+=("$i")
    done
    for ((b = 0; b < buckets; b++)); do
        i=$((b % n))
        if [ "${state[$i]}" = up ] || [ ${#up[@]} -eq 0 ]; then
            target=${nodes[$i]}
        else
            target=${nodes[${up[$((b % ${#up[@]}))]}]}
        fi
        elems+="${elems:+, }$b : $target"
    done
    nft -f - <<EOF
flush chain ip ovpnd_cluster prerouting
add rule ip ovpnd_cluster prerouting ip daddr $service udp dport $sport dnat to jhash ip saddr . udp sport mod $buckets seed 0x5eed map { $elems }
EOF
}

probe() { # probe ADDR: up, drain or down
    local code
    code=$(curl -s -o /dev/null --max-time 1 -w '%{http_code}' "http://$1:$port/health" || true)
    case $code in
    200) echo up ;;
    503) echo drain ;;
    *) echo down ;;
    esac
}

for i in "${!nodes[@]}"; do
    state[$i]=unknown
done
while true; do
    changed=0
    declare -a went_down=()
    for i in "${!nodes[@]}"; do
        s=$(probe "${nodes[$i]}")
        if [ "$s" != "${state[$i]}" ]; then
            log "node ${nodes[$i]}: ${state[$i]} -> $s"
            [ "$s" = down ] && went_down+=("${nodes[$i]}")
            state[$i]=$s
            changed=1
        fi
    done
    if [ "$changed" = 1 ]; then
        apply
        for a in "${went_down[@]}"; do
            # its clients' flows: hashed again on their next packet
            conntrack -D -p udp --orig-dst "$service" --reply-src "$a" >/dev/null 2>&1 || true
            log "flows to $a forgotten"
        done
    fi
    unset went_down
    sleep "$interval"
done
