#!/usr/bin/env bash
# client-to-client towards a client whose framing needs a byte in front of every packet. Client A
# (the stock client, no compression) pings client B, whose profile has comp-lzo but who does not
# announce IV_COMP_STUBv2 (ovpnd-loadgen --comp-lzo, as clients before 2.4 do): the server pushes B
# "comp-lzo no" (compress migrate), so every packet to B gets a 0xFA byte in front, including
# A's packets, which arrive unframed and are framed again for B inside the server. With
# `workers 1` both are on one worker. Pings of 56, 1000 and 1400 bytes go from A to B and B
# answers them; B's own echoes to the server come back; the server (run it with
# OVPND=<build-asan>/ovpnd) reports no memory error: that framing once wrote one byte in front of
# the buffer A's packet was decrypted into.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init c2c_comp_lzo
loadgen_find

netns_setup 2
pki_make "$OVT_DIR"
pki=$OVT_DIR/pki
extra=("client-to-client" "compress migrate")
[ "$OVPN_SERVER_IMPL" = ovpnd ] && extra+=("workers 1")
OVT_STATUS_VERSION=2 server_conf_write "$OVT_DIR" "${extra[@]}"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1
wait_tunnel 1

# Client B: one simulated client with client2's certificate, alive for 60 s at most.
ovt_spawn "$(client_ns 2)" "$OVT_DIR/loadgen.log" "$LOADGEN" --server "$OVT_SERVER_IP:$OVT_PORT" \
    --ca "$pki/ca.crt" --cert "$pki/client2.crt" --key "$pki/client2.key" \
    --tls-crypt "$pki/ta.key" --comp-lzo --clients 1 --rate 0 --duration 60 --data-rate 2 \
    --json "$OVT_DIR/lg.json"
lg_pid=$OVT_LAST_PID
b_ip=
b_listed() {
    b_ip=$(sed -n 's/^CLIENT_LIST,client2,[^,]*,\(198\.19\.0\.[0-9]*\),.*/\1/p' "$OVT_DIR/status.log" \
        2>/dev/null | head -n 1)
    [ -n "$b_ip" ]
}
wait_for 30 b_listed || {
    cat "$OVT_DIR/loadgen.log" >&2
    fail "client B (load generator) is not in the status file"
}
ovt_log "client B connected as $b_ip"

ans=$(client_ns 1)
for size in 56 1000 1400; do
    assert_ping "$ans" "$b_ip" 10 0.05 0 "client A -> client B, ping -s $size" -s "$size"
done
server_alive || fail "the server died forwarding A's packets to B"

# Let B leave (explicit exit), then check what it saw.
kill -INT "$lg_pid" 2>/dev/null || true
rc=0
ovt_wait "$lg_pid" || rc=$?
cat "$OVT_DIR/loadgen.log" >&2
[ -f "$OVT_DIR/lg.json" ] || fail "the load generator wrote no report (exit $rc)"
"$OVT_PY" - "$OVT_DIR/lg.json" <<'EOF' || fail "client B's report is not as expected"
import json, sys
c = json.load(open(sys.argv[1]))["per_client"][0]
print("client B: framing %s, %d echo requests answered, %d of its echoes came back"
      % (c["framing"], c["echo_answers"], c["echoed"]), file=sys.stderr)
sys.exit(0 if c["framing"] == "comp-lzo no" and c["echo_answers"] >= 30 and c["echoed"] > 0 else 1)
EOF
server_alive || fail "the server died"
