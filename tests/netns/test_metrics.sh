#!/usr/bin/env bash
# The server as an admin watches it, in one server run:
#   - systemd's notification protocol: READY=1 reaches a notify socket the test listens on
#     (NOTIFY_SOCKET) once the server serves, STATUS= carries the client count, WATCHDOG=1 comes
#     while the control thread runs (WATCHDOG_USEC) and stops while it is frozen, STOPPING=1 at
#     the end. The server runs with exactly the capability set of contrib/ovpnd@.service.
#   - `metrics HOST PORT` with metrics-per-client: two stock clients (one with double quotes in
#     its common name, escaped in the label) ping through two workers; Debian's Prometheus server
#     scrapes the endpoint every second; through its HTTP API the connected-client count is 2,
#     each worker's bytes in and out equal the status file's rows, both clients have their
#     series, client 1's renegotiations and certificate checks are counted; a scrape passes
#     `promtool check metrics`; the endpoint listens on its address only; other paths and
#     methods are refused and junk requests change nothing; a frozen control thread makes a
#     scrape fail (503) in bounded time and does not stop the clients' traffic.
#   - draining, for taking a node of a cluster out of service (docs/scale-out.md): /health says
#     200 "serving"; after the management command `ovpnd-drain on` it says 503 "draining",
#     ovpnd_draining is 1, client 1 keeps pinging, client 2's restart is not answered (its hard
#     resets are counted as dropped, reason "draining"); after `ovpnd-drain off` /health is 200
#     again and client 2 comes back.
# openvpn 2.6 has no metrics endpoint and no watchdog, and its STATUS= does not count clients:
# against it only READY=1 is checked.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init metrics

is_ovpnd=0
[ "$OVPN_SERVER_IMPL" = ovpnd ] && is_ovpnd=1
if [ "$is_ovpnd" = 1 ]; then
    for tool in prometheus promtool curl; do
        command -v "$tool" >/dev/null || ovt_skip "$tool not installed (run scripts/install-deps.sh)"
    done
fi
check=$OVT_LIB_DIR/metrics_check.py
METRICS_PORT=9176
MGMT_PORT=7505
metrics_url=http://$OVT_SERVER_IP:$METRICS_PORT
prom_url=http://127.0.0.1:9090

netns_setup 2
pki_make "$OVT_DIR" --clients 1
# client 2: double quotes in its common name, which the label value must escape
pki_sign_client "$OVT_DIR/quote" '"quoted" first' "ec -pkeyopt ec_paramgen_curve:P-256" -days 30
extra=()
if [ "$is_ovpnd" = 1 ]; then
    extra=("workers 2" "metrics $OVT_SERVER_IP $METRICS_PORT" "metrics-per-client"
        "management 127.0.0.1 $MGMT_PORT")
    # The unit's capability bounding set, for the server run below (as systemd would set it).
    unit=$(dirname "$OVPND")/contrib/ovpnd@.service
    [ -f "$unit" ] || fail "no rendered unit at $unit (the build writes it)"
    caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit" | tr '[:upper:]' '[:lower:]' |
        sed 's/cap_/+/g; s/ /,/g')
    [ -n "$caps" ] || fail "no CapabilityBoundingSet in $unit"
    mkdir -p "$OVT_DIR/bin"
    printf '#!/bin/sh\nexec setpriv --bounding-set=-all,%s -- %s "$@"\n' "$caps" "$OVPND" \
        >"$OVT_DIR/bin/ovpnd"
    chmod 755 "$OVT_DIR/bin/ovpnd"
    ovt_log "server capabilities as in the unit: $caps"
fi
# No keepalive pings while the counters are compared.
OVT_KEEPALIVE="60 300" server_conf_write "$OVT_DIR" "${extra[@]}"

# The notify socket, as systemd's.
ovt_spawn - "$OVT_DIR/notify.out" "$OVT_PY" "$check" notify-listen "$OVT_DIR/notify.sock" \
    "$OVT_DIR/notify.log"
wait_for 10 grep -q listening "$OVT_DIR/notify.log" || fail "notify listener did not start: $(cat "$OVT_DIR/notify.out")"
real_ovpnd=$OVPND
[ "$is_ovpnd" = 1 ] && OVPND=$OVT_DIR/bin/ovpnd
NOTIFY_SOCKET=$OVT_DIR/notify.sock WATCHDOG_USEC=1000000 server_start "$OVT_DIR"
OVPND=$real_ovpnd
wait_for 5 grep -q " READY=1$" "$OVT_DIR/notify.log" || {
    cat "$OVT_DIR/notify.log" >&2
    fail "READY=1 did not reach the notify socket"
}
ovt_log "READY=1 received"
if [ "$is_ovpnd" = 0 ]; then
    ovt_log "openvpn 2.6 sent: $(grep -v listening "$OVT_DIR/notify.log" | cut -d' ' -f2- | sort -u | tr '\n' ';')"
    ovt_log "openvpn 2.6 has no metrics endpoint, watchdog or client count in STATUS=: rest skipped"
    exit 0
fi
server_log_grep "the kernel refused" &&
    fail "with the unit's capabilities the kernel refused something: $(grep 'refused' "$OVT_DIR/server.log" | head -3)"

# Prometheus in the server namespace, scraping every second, its storage in the work dir.
cat >"$OVT_DIR/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: ovpnd
    scrape_timeout: 1s
    static_configs:
      - targets: ['$OVT_SERVER_IP:$METRICS_PORT']
EOF
ovt_spawn "$NS_SRV" "$OVT_DIR/prometheus.log" prometheus --config.file="$OVT_DIR/prometheus.yml" \
    --storage.tsdb.path="$OVT_DIR/prometheus" --web.listen-address=127.0.0.1:9090 \
    --log.level=warn

client_start "$OVT_DIR" 1 "reneg-sec 3" # renegotiates during the test
OVT_CLIENT_CERT=$OVT_DIR/quote/client.crt OVT_CLIENT_KEY=$OVT_DIR/quote/client.key \
    client_start "$OVT_DIR" 2
wait_tunnel 1
wait_tunnel 2
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 20 0.02 0 "client 1 -> server tun"
assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 20 0.02 0 "client 2 -> server tun"

wait_for 5 grep -q " STATUS=2 clients connected$" "$OVT_DIR/notify.log" || {
    cat "$OVT_DIR/notify.log" >&2
    fail "STATUS= did not say 2 clients connected"
}
ovt_log "STATUS=2 clients connected received"

# The endpoint listens on the configured address only.
listeners=$(ip netns exec "$NS_SRV" ss -Hltn "sport = :$METRICS_PORT" | awk '{ print $4 }')
[ "$listeners" = "$OVT_SERVER_IP:$METRICS_PORT" ] ||
    fail "the metrics port listens on '$listeners', not only $OVT_SERVER_IP:$METRICS_PORT"

# One scrape by hand: the text format as promtool reads it.
scrape() { # scrape [CURL-OPTION...]: the endpoint's /metrics, body to stdout
    ovt_run 10 "$NS_SRV" curl -sS --max-time 5 "$@" "$metrics_url/metrics"
}
scrape -o "$OVT_DIR/scrape.txt" -w '%{http_code} %{content_type}\n' >"$OVT_DIR/scrape.code" ||
    fail "scrape failed"
read -r code ctype <"$OVT_DIR/scrape.code"
[ "$code" = 200 ] || fail "scrape answered $code"
case "$ctype" in
"text/plain; version=0.0.4"*) ;;
*) fail "scrape's content type is '$ctype'" ;;
esac
if ! promtool check metrics <"$OVT_DIR/scrape.txt" >"$OVT_DIR/promtool.log" 2>&1; then
    cat "$OVT_DIR/promtool.log" >&2
    fail "promtool check metrics found problems in the scrape"
fi
[ -s "$OVT_DIR/promtool.log" ] && {
    cat "$OVT_DIR/promtool.log" >&2
    fail "promtool check metrics printed warnings"
}
ovt_log "promtool check metrics: $(grep -c '^# TYPE' "$OVT_DIR/scrape.txt") families, no problems"
grep -qF 'ovpnd_client_receive_bytes_total{common_name="\"quoted\" first",' "$OVT_DIR/scrape.txt" ||
    fail "client 2's common name (double quotes) is not escaped as expected: $(grep '^ovpnd_client_receive' "$OVT_DIR/scrape.txt")"

# Through Prometheus: its own scrapes, read back with its HTTP API.
prom_query() { ovt_run 10 "$NS_SRV" "$OVT_PY" "$check" query "$prom_url" "$1"; }
clients_is_2() { [ "$(prom_query ovpnd_clients_connected 2>/dev/null | awk '{ print $NF }')" = 2 ]; }
wait_for 20 clients_is_2 || {
    ovt_tail "$OVT_DIR/prometheus.log"
    fail "Prometheus does not have ovpnd_clients_connected 2: $(prom_query ovpnd_clients_connected 2>&1)"
}
ovt_log "Prometheus: ovpnd_clients_connected 2"
# Traffic has stopped (keepalive 60): once the status file (every second) and Prometheus'
# latest scrape are both newer than the last packet, each worker's bytes agree.
workers_match() {
    ovt_run 10 "$NS_SRV" "$OVT_PY" "$check" workers-match "$prom_url" "$OVT_DIR/status.log" 2 \
        >"$OVT_DIR/workers.txt" 2>&1
}
wait_for 10 workers_match || {
    cat "$OVT_DIR/workers.txt" "$OVT_DIR/status.log" >&2
    fail "per-worker bytes in Prometheus do not match the status file"
}
ovt_log "per-worker bytes match the status file: $(tr '\n' ';' <"$OVT_DIR/workers.txt")"
# The other families, as Prometheus stored them.
ovt_run 10 "$NS_SRV" "$OVT_PY" "$check" expect "$prom_url" \
    'ovpnd_handshakes_total{result="ok"} == 2' \
    'ovpnd_handshake_duration_seconds_count == 2' \
    'ovpnd_auth_results_total{method="certificate",result="ok"} >= 3' \
    'ovpnd_renegotiations_total{result="ok"} >= 1' \
    'ovpnd_renegotiations_total{result="failed"} == 0' \
    'ovpnd_client_transmit_bytes_total{common_name="client1"} > 0' \
    'ovpnd_client_receive_bytes_total{common_name="\"quoted\" first"} > 0' \
    'count(ovpnd_worker_sessions == 1) == 2' \
    'ovpnd_build_info == 1' >"$OVT_DIR/expect.txt" 2>&1 || {
    cat "$OVT_DIR/expect.txt" >&2
    fail "Prometheus does not hold what the server did"
}

# What is not /metrics, or not GET, is refused; junk does not hurt.
code=$(scrape -o /dev/null -w '%{http_code}' -X POST -d x) || true
[ "$code" = 405 ] || fail "POST /metrics answered $code, not 405"
code=$(ovt_run 10 "$NS_SRV" curl -s -o /dev/null -w '%{http_code}' "$metrics_url/") || true
[ "$code" = 404 ] || fail "GET / answered $code, not 404"
ovt_run 10 "$NS_SRV" "$OVT_PY" - "$OVT_SERVER_IP" "$METRICS_PORT" <<'EOF' || fail "junk sender failed"
import os, socket, sys, time
host, port = sys.argv[1], int(sys.argv[2])
junk = [os.urandom(3000), b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"X: " + b"a" * 100000 + b"\r\n\r\n",
        b"\x00\xff\r\n\r\n", b"GET " + b"/" * 70000 + b" HTTP/1.0\r\n\r\n"]
for data in junk:
    t0 = time.monotonic()
    s = socket.create_connection((host, port), timeout=1)
    try:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        while s.recv(65536):
            pass
    except OSError:
        pass
    s.close()
    print("junk %d bytes: %.2f s" % (len(data), time.monotonic() - t0), file=sys.stderr)
EOF
server_alive || fail "the server died of junk HTTP requests"
code=$(scrape -o /dev/null -w '%{http_code}') || true
[ "$code" = 200 ] || fail "after the junk a scrape answered $code"
ovt_log "POST 405, GET / 404, junk requests refused, scrapes go on"

# A frozen control thread: the scrape fails within its bound, WATCHDOG=1 stops, the clients'
# traffic goes on (the workers carry it).
pid=$(server_process_pid) || fail "no server process"
ovt_spawn - "$OVT_DIR/freeze.log" "$OVT_PY" "$OVT_LIB_DIR/freeze_threads.py" --pid "$pid" \
    --thread ovpnd-acceptor --release "$OVT_DIR/release" --max-seconds 60
wait_for 10 grep -q "frozen 1 thread" "$OVT_DIR/freeze.log" || {
    cat "$OVT_DIR/freeze.log" >&2
    fail "could not stop the control thread"
}
n_wd=$(grep -c " WATCHDOG=1$" "$OVT_DIR/notify.log" || true)
t0=$SECONDS
code=$(scrape -o /dev/null -w '%{http_code}') || true
[ "$code" = 503 ] || fail "with the control thread frozen a scrape answered $code, not 503"
[ $((SECONDS - t0)) -le 6 ] || fail "the 503 took $((SECONDS - t0)) s"
loss=$(ping_loss "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 10 0.05)
[ "$loss" = 0 ] || fail "client 1 lost $loss% of its pings while the control thread was frozen"
n_wd2=$(grep -c " WATCHDOG=1$" "$OVT_DIR/notify.log" || true)
[ "$n_wd2" -le $((n_wd + 1)) ] || fail "WATCHDOG=1 went on while the control thread was frozen ($n_wd -> $n_wd2)"
[ "$n_wd" -ge 3 ] || fail "only $n_wd WATCHDOG=1 before the freeze (WATCHDOG_USEC=1000000)"
touch "$OVT_DIR/release"
wait_for 10 grep -q "released" "$OVT_DIR/freeze.log" || true
watchdogs_over() { [ "$(grep -c " WATCHDOG=1$" "$OVT_DIR/notify.log" || true)" -gt "$1" ]; }
wait_for 5 watchdogs_over "$n_wd2" ||
    fail "WATCHDOG=1 did not resume after the control thread ran again"
code=$(scrape -o /dev/null -w '%{http_code}') || true
[ "$code" = 200 ] || fail "after the freeze a scrape answered $code"
ovt_log "frozen control thread: scrape 503, watchdog paused ($n_wd -> $n_wd2), pings went on"

# Draining: new clients are not answered, connected ones stay; /health tells the edge.
health() { # health: "CODE BODY" of GET /health
    ovt_run 10 "$NS_SRV" curl -s --max-time 5 -w ' %{http_code}' "$metrics_url/health" |
        tr -d '\n' | awk '{ print $NF, $1 }' || true
}
mgmt() { ovt_run 10 "$NS_SRV" "$OVT_PY" "$OVT_LIB_DIR/mgmt_client.py" run "127.0.0.1:$MGMT_PORT" "$@"; }
drained() { # drained: the draining drops the endpoint shows (0 if none)
    scrape 2>/dev/null | awk '/^ovpnd_control_dropped_packets_total\{reason="draining"\}/ { n = $2 }
        END { print n + 0 }'
}
drained_over() { [ "$(drained)" -gt "$1" ]; }
[ "$(health)" = "200 serving" ] || fail "/health while serving: $(health)"
out=$(mgmt "ovpnd-drain on") || fail "management: $out"
grep -q "SUCCESS: draining=on nclients=2" <<<"$out" || fail "ovpnd-drain on answered: $out"
[ "$(health)" = "503 draining" ] || fail "/health while draining: $(health)"
grep -qx "ovpnd_draining 1" <<<"$(scrape)" || fail "ovpnd_draining is not 1 while draining"
n_drained=$(drained)
n_init2=$(grep -c "Initialization Sequence Completed" "$OVT_DIR/client2.log" || true)
kill -USR1 "$(client_process_pid 2)"
wait_for 10 drained_over "$n_drained" || fail "client 2's new hard reset was not dropped as draining"
loss=$(ping_loss "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 10 0.05)
[ "$loss" = 0 ] || fail "client 1 lost $loss% of its pings while the server drained"
client_inits_at_least 2 $((n_init2 + 1)) && fail "client 2 was let in while the server drained"
server_log_grep "draining: new connection not answered" || fail "no log line for the refused reset"
out=$(mgmt "ovpnd-drain off") || fail "management: $out"
grep -q "SUCCESS: draining=off nclients=" <<<"$out" || fail "ovpnd-drain off answered: $out"
[ "$(health)" = "200 serving" ] || fail "/health after draining: $(health)"
# (restarted at once rather than waiting for its reset's next retransmission, up to 8 s away)
client_restart 2 20
ovt_log "draining: /health 503, client 1 pinged on, client 2's resets dropped ($(drained)); off: client 2 back"

client_stop 1
client_stop 2
server_stop
grep -q " STOPPING=1$" "$OVT_DIR/notify.log" || fail "no STOPPING=1 at the end"
ovt_log "PASS"
