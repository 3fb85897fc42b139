#!/usr/bin/env bash
# 200 load-generator clients sharing one certificate (duplicate-cn) get 200 distinct addresses
# from the pool of `server 198.19.0.0 255.255.255.0`: the status file lists 200 different
# virtual addresses, all of them pool addresses. ifconfig-pool-persist is configured too: with
# duplicate-cn the server says at start-up that it ignores it (as openvpn 2.6 warns) and leaves
# the file alone.
# ovt: serial (200 simulated clients)
# ovt: optimised build only: 200 simulated clients: a scale test
set -euo pipefail
. "$(dirname "$0")/lib.sh"
ovt_init pool_loadgen

loadgen_find
[ "$OVPN_SERVER_IMPL" = ovpnd ] || ovt_skip "checks ovpnd's log lines"

netns_setup 1
pki_make "$OVT_DIR"
ns=$(client_ns 1)
for i in 50 51 52 53; do
    ip -n "$ns" addr add "198.18.0.$i/24" dev eth0
done
printf 'client1,198.19.0.200,\n' >"$OVT_DIR/ipp.txt"
server_conf_write "$OVT_DIR" "duplicate-cn" "max-clients 250" \
    "ifconfig-pool-persist $OVT_DIR/ipp.txt 1"
server_start "$OVT_DIR"
server_log_grep "ifconfig-pool-persist does not work with duplicate-cn" ||
    fail "the server did not say that duplicate-cn turns ifconfig-pool-persist off"

pki=$OVT_DIR/pki
loadgen_args "$pki" client1

# Virtual addresses of the version-1 status file's routing table.
routing_addrs() {
    awk -F, '/^ROUTING TABLE/ { f = 1; next } /^GLOBAL STATS/ { f = 0 } f && $2 == "client1" { print $1 }' \
        "$OVT_DIR/status.log" 2>/dev/null
}
lists_200() { [ "$(routing_addrs | sort -u | wc -l)" = 200 ]; }

ovt_log "200 clients at 100/s"
ovt_spawn "$ns" "$OVT_DIR/loadgen.log" "$LOADGEN" "${lg_args[@]}" --clients 200 --rate 100 \
    --duration 2 --data-rate 1 --bind-range 198.18.0.50-53 --json "$OVT_DIR/run.json"
lg=$OVT_LAST_PID
if ! wait_for 40 lists_200; then
    routing_addrs | head -n 5 >&2 || true
    fail "the status file never listed 200 distinct virtual addresses (last: $(routing_addrs | sort -u | wc -l))"
fi
bad=$(routing_addrs | awk -F. '!($1 == 198 && $2 == 19 && $3 == 0 && $4 >= 2 && $4 <= 254)' | head -n 3)
[ -z "$bad" ] || fail "addresses outside the pool 198.19.0.2-254: $bad"
# duplicate-cn: lowest first, so exactly 198.19.0.2 .. 198.19.0.201
[ "$(routing_addrs | sort -t. -k4 -n | tail -n 1)" = 198.19.0.201 ] ||
    fail "with duplicate-cn the 200 addresses are not the lowest 200 of the pool"
ovt_log "status file: 200 distinct virtual addresses, 198.19.0.2 - 198.19.0.201"
rc=0
ovt_wait "$lg" || rc=$?
[ "$rc" = 0 ] || {
    cat "$OVT_DIR/loadgen.log" >&2
    fail "ovpnd-loadgen exited with $rc"
}
[ "$(cat "$OVT_DIR/ipp.txt")" = "client1,198.19.0.200," ] ||
    fail "with duplicate-cn the persist file was changed: $(cat "$OVT_DIR/ipp.txt")"
server_alive || fail "server died"
