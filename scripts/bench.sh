#!/usr/bin/env bash
# Benchmark ovpnd side by side with the stock openvpn 2.6 server, in network namespaces.
#
# usage: sudo scripts/bench.sh [--quick] [--json FILE] [--png FILE] [--clients N] [--workers N]
#                              [--time SECS] [--ciphers A,B,...] [--ovpnd PATH] [--clients-only]
#                              [--hold SECS] [--data-rate PPS] [--concurrency N] [--servers LIST]
#                              [--other-backend] [--rate MBIT] [--churn ROUNDS [--settle SECS]]
#                              [--proto udp|tcp] [--pki ec|rsa] [--latency-under-load]
#                              [--storm N] [--repeat N]
#
#   --quick         one cipher (AES-256-GCM), 3 s TCP runs, no UDP search (under a minute)
#   --json FILE     write every raw figure (and the comparison) as JSON
#   --png FILE      draw throughput per cipher per server with gnuplot (installs gnuplot-nox
#                   with apt-get when it is missing)
#   --clients N     also run ovpnd-loadgen with N (1..50000) simulated clients against each
#                   server: handshakes/s, time to connect all, server RSS per connected client,
#                   the rate over the first and the last 1,000 connects, the EXITs acknowledged
#   --clients-only  only the load-generator runs (no throughput, latency or UDP runs)
#   --hold SECS     load generator: how long every client stays connected (default 5)
#   --data-rate PPS load generator: echo requests per second per client (default 100, and
#                   20000 / N above 200 clients; 0 for keepalives only)
#   --concurrency N load generator: at most N handshakes in flight (default 64; 0: every client
#                   starts at once)
#   --churn ROUNDS  load generator: instead of one run, ROUNDS rounds of the --clients N
#                   clients against one server process, each connecting, holding, and leaving
#                   with an explicit exit; the server's RSS and open descriptors with nobody
#                   connected, --settle SECS (default 8) after each round (memory that comes
#                   and goes with clients must not pile up over the rounds)
#   --servers LIST  ovpnd,openvpn (default both), in that order
#   --workers N     add "workers N" to the config (openvpn is told to ignore it)
#   --time SECS     length of each TCP run (default 10, 3 with --quick)
#   --rate MBIT     TCP runs at this fixed rate (iperf3 -b) instead of as fast as they go:
#                   both servers then carry the same load, so their CPU per GB compares at
#                   equal load, and varies far less from run to run than at full speed
#   --ciphers LIST  data-channel ciphers to measure (default AES-256-GCM,AES-128-GCM,
#                   CHACHA20-POLY1305)
#   --ovpnd PATH    the ovpnd binary (default: $OVPND, else build/ovpnd)
#   --other-backend also measure ovpnd on its other data-channel crypto backend: the
#                   ovpnd-mbedtls (or ovpnd-openssl) binary beside the ovpnd binary
#   --storm N       a reconnect storm instead of everything else: per server, first the steady
#                   handshake rate (ovpnd-loadgen, --concurrency handshakes in flight, N
#                   clients, at most 1000), then N clients (1..50000) started at once with
#                   --retry (stock 2.6 clients: the hard reset retransmitted with 2.6's backoff,
#                   restart after hand-window 60 s, connect-retry); reports the time to connect
#                   all, what the steady rate predicts (N / rate) and their ratio, and for
#                   ovpnd the TLS handshakes it started and finished (SIGUSR2's statistics)
#   --proto tcp     the tunnel over TCP: both servers `proto tcp-server`, the client
#                   `proto tcp-client` and ovpnd-loadgen `--proto tcp` (default udp); no UDP
#                   search then (the TCP transport retransmits what the UDP search counts
#                   as lost)
#   --pki ec|rsa    the certificates and keys of CA, server and clients: EC P-256 (default)
#                   or RSA 2048 (scripts/pki.sh --rsa), as easy-rsa makes by default
#   --latency-under-load
#                   ping through the tunnel every 20 ms during each TCP run (after its first
#                   second): RTT median and p95 under a saturating download and upload, beside
#                   that run's throughput and server CPU per GB, and the queues the pings wait
#                   in (UDP socket receive queues and TUN qdisc backlogs, sampled every 0.5 s);
#                   no UDP search, one cipher (AES-256-GCM) unless --ciphers
#   --repeat N      run the whole comparison N (2..50) times in a row and print, after each
#                   run's own table, one line per run with its ovpnd / openvpn ratios and
#                   their medians over the runs (the figures move by tens of percent between
#                   identical runs on a small shared machine; judge the medians); --json FILE
#                   then gets every run's figures and the medians
#
# For each server (ovpnd, then openvpn with the very same config file) and each cipher (the
# server's "data-ciphers X"), with the stock openvpn client in its own namespace: iperf3 TCP
# throughput client->server and server->client, the CPU seconds the server and client processes
# spent per GB carried, ping RTT through the tunnel, and (unless --quick) the highest UDP rate
# client->server with less than 1% loss. The underlay's own TCP throughput and RTT are measured
# once. Prints a markdown table on stdout; progress goes to stderr. Exit status 77 when it
# cannot run here (not root, a tool missing), 1 on failure.
#
# Only namespaces this script creates are touched, with 198.18.0.0/24 (underlay) and
# 198.19.0.0/16 (tunnel) addresses in them; every process runs under a time limit.
set -euo pipefail

BENCH_SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_SRC=$(cd "$BENCH_SCRIPTS/.." && pwd)

usage() {
    sed -n '3,59p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit "${1:-2}"
}

quick=0
json_out=
png_out=
n_clients=0
workers=
tcp_secs=
tcp_rate=
ciphers_arg=
clients_only=0
lg_secs=5
lg_pps=
lg_conc=64
servers=(ovpnd openvpn)
other_backend=0
churn_rounds=0
churn_settle=8
storm_n=0
proto=udp
pki_type=ec
latency_under_load=0
repeat=1
all_args=("$@")
need_arg() { [ "$2" -ge 2 ] || {
    echo "bench.sh: $1 needs an argument" >&2
    usage
}; }
in_range() { # in_range VALUE MIN MAX: VALUE is a decimal integer in [MIN, MAX]
    [[ $1 =~ ^[0-9]{1,6}$ ]] || return 1
    [ "$((10#$1))" -ge "$2" ] && [ "$((10#$1))" -le "$3" ]
}
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) quick=1 ;;
    --repeat)
        need_arg "$1" $#
        in_range "$2" 2 50 || {
            echo "bench.sh: --repeat wants 2..50 runs" >&2
            exit 2
        }
        repeat=$((10#$2))
        shift
        ;;
    --json)
        need_arg "$1" $#
        json_out=$(realpath -m -- "$2")
        shift
        ;;
    --png)
        need_arg "$1" $#
        png_out=$(realpath -m -- "$2")
        shift
        ;;
    --clients)
        need_arg "$1" $#
        in_range "$2" 1 50000 || {
            echo "bench.sh: --clients wants 1..50000" >&2
            exit 2
        }
        n_clients=$2
        shift
        ;;
    --workers)
        need_arg "$1" $#
        in_range "$2" 0 1024 || {
            echo "bench.sh: --workers wants 0..1024" >&2
            exit 2
        }
        workers=$2
        shift
        ;;
    --time)
        need_arg "$1" $#
        in_range "$2" 1 600 || {
            echo "bench.sh: --time wants 1..600 seconds" >&2
            exit 2
        }
        tcp_secs=$2
        shift
        ;;
    --rate)
        need_arg "$1" $#
        in_range "$2" 1 100000 || {
            echo "bench.sh: --rate wants 1..100000 Mbit/s" >&2
            exit 2
        }
        tcp_rate=$((10#$2))
        shift
        ;;
    --ciphers)
        need_arg "$1" $#
        ciphers_arg=$2
        shift
        ;;
    --clients-only) clients_only=1 ;;
    --hold)
        need_arg "$1" $#
        in_range "$2" 1 86400 || {
            echo "bench.sh: --hold wants 1..86400 seconds" >&2
            exit 2
        }
        lg_secs=$((10#$2))
        shift
        ;;
    --data-rate)
        need_arg "$1" $#
        [[ $2 =~ ^[0-9]{1,6}(\.[0-9]{1,3})?$ ]] || {
            echo "bench.sh: --data-rate wants a number of packets per second" >&2
            exit 2
        }
        lg_pps=$2
        shift
        ;;
    --concurrency)
        need_arg "$1" $#
        in_range "$2" 0 50000 || {
            echo "bench.sh: --concurrency wants 0..50000" >&2
            exit 2
        }
        lg_conc=$((10#$2))
        shift
        ;;
    --servers)
        need_arg "$1" $#
        case "$2" in
        ovpnd | openvpn) servers=("$2") ;;
        ovpnd,openvpn) servers=(ovpnd openvpn) ;;
        *)
            echo "bench.sh: --servers wants ovpnd, openvpn or ovpnd,openvpn" >&2
            exit 2
            ;;
        esac
        shift
        ;;
    --ovpnd)
        need_arg "$1" $#
        OVPND=$(realpath -m -- "$2")
        export OVPND
        shift
        ;;
    --other-backend) other_backend=1 ;;
    --churn)
        need_arg "$1" $#
        in_range "$2" 1 1000 || {
            echo "bench.sh: --churn wants 1..1000 rounds" >&2
            exit 2
        }
        churn_rounds=$((10#$2))
        shift
        ;;
    --settle)
        need_arg "$1" $#
        in_range "$2" 0 3600 || {
            echo "bench.sh: --settle wants 0..3600 seconds" >&2
            exit 2
        }
        churn_settle=$((10#$2))
        shift
        ;;
    --storm)
        need_arg "$1" $#
        in_range "$2" 1 50000 || {
            echo "bench.sh: --storm wants 1..50000 clients" >&2
            exit 2
        }
        storm_n=$((10#$2))
        clients_only=1
        shift
        ;;
    --proto)
        need_arg "$1" $#
        case "$2" in
        udp | tcp) proto=$2 ;;
        *)
            echo "bench.sh: --proto wants udp or tcp" >&2
            exit 2
            ;;
        esac
        shift
        ;;
    --pki)
        need_arg "$1" $#
        case "$2" in
        ec | rsa) pki_type=$2 ;;
        *)
            echo "bench.sh: --pki wants ec or rsa" >&2
            exit 2
            ;;
        esac
        shift
        ;;
    --latency-under-load) latency_under_load=1 ;;
    -h | --help) usage 0 ;;
    *)
        echo "bench.sh: unknown argument '$1'" >&2
        usage
        ;;
    esac
    shift
done

if [ "$storm_n" -gt 0 ]; then
    n_clients=$storm_n # the source addresses and the pool below are made for them
fi
if [ "$clients_only" = 1 ] && [ "$n_clients" = 0 ]; then
    echo "bench.sh: --clients-only needs --clients N" >&2
    exit 2
fi
if [ "$churn_rounds" -gt 0 ] && { [ "$n_clients" = 0 ] || [ "$n_clients" -gt 15000 ]; }; then
    echo "bench.sh: --churn needs --clients N (at most 15000)" >&2
    exit 2
fi
if [ "$repeat" -gt 1 ]; then
    # The same arguments without --repeat, --json and --png, once per run, each run's figures
    # kept as JSON for the summary.
    run_args=()
    for ((i = 0; i < ${#all_args[@]}; i++)); do
        case "${all_args[i]}" in
        --repeat | --json | --png) i=$((i + 1)) ;;
        *) run_args+=("${all_args[i]}") ;;
        esac
    done
    runs_dir=$(mktemp -d)
    trap 'rm -rf "$runs_dir"' EXIT
    run_jsons=()
    for ((r = 1; r <= repeat; r++)); do
        echo "[bench] ----- run $r of $repeat" >&2
        "${BASH_SOURCE[0]}" "${run_args[@]}" --json "$runs_dir/run$r.json" || exit $?
        run_jsons+=("$runs_dir/run$r.json")
    done
    python3 "$BENCH_SCRIPTS/bench_report.py" repeat ${json_out:+--json "$json_out"} \
        "${run_jsons[@]}"
    exit $?
fi
if [ "$proto" = tcp ]; then
    export OVT_PROTO=tcp-server OVT_CLIENT_PROTO=tcp4-client # tests/netns/lib.sh
fi
if [ "$quick" = 1 ]; then
    ciphers=(AES-256-GCM)
    tcp_secs=${tcp_secs:-3}
    udp_secs=0
else
    ciphers=(AES-256-GCM AES-128-GCM CHACHA20-POLY1305)
    tcp_secs=${tcp_secs:-10}
    udp_secs=2
    [ "$proto" = tcp ] && udp_secs=0
fi
if [ "$latency_under_load" = 1 ]; then
    ciphers=(AES-256-GCM)
    udp_secs=0
fi
if [ -n "$ciphers_arg" ]; then
    IFS=, read -r -a ciphers <<<"$ciphers_arg"
fi
for c in "${ciphers[@]}"; do
    case "$c" in
    AES-256-GCM | AES-128-GCM | CHACHA20-POLY1305) ;;
    *)
        echo "bench.sh: cipher '$c' is not one of AES-256-GCM, AES-128-GCM, CHACHA20-POLY1305" >&2
        exit 2
        ;;
    esac
done
UDP_STEPS=4          # iperf3 -u runs per UDP search, the first one a probe above capacity
UDP_MAX_LOSS=1       # percent
PING_COUNT=50        # pings per RTT figure, PING_INTERVAL apart
PING_INTERVAL=0.02   # seconds
IPERF_PORT=5201
IPERF_BUF=4M         # iperf3 -w: socket buffers big enough that iperf3 itself drops nothing
UDP_LEN=1400         # iperf3 -u datagram size: fits the tunnel MTU without fragmenting
LG_SECS=$lg_secs     # ovpnd-loadgen: seconds every client stays connected (echo traffic)
# ovpnd-loadgen: echo requests per second per client; above 200 clients, 20000 in all
LG_PPS=${lg_pps:-$(awk -v n="$n_clients" 'BEGIN { printf "%g", (n > 200 ? 20000 / n : 100) }')}
# clients per ovpnd-loadgen process: one UDP socket each, under its open-file limit
LG_PER_PROC=${BENCH_CLIENTS_PER_PROCESS:-15000}

# Every process's last-resort lifetime; a long --hold or many clients need more than an hour.
OVT_PROC_TIMEOUT_S=${OVT_PROC_TIMEOUT_S:-$((3600 + lg_secs + n_clients / 20))}
OVT_WRAP=tls-crypt
# shellcheck source=tests/netns/lib.sh
. "$BENCH_SRC/tests/netns/lib.sh"
ovt_init bench

for tool in iperf3 ss; do
    command -v "$tool" >/dev/null || ovt_skip "$tool not installed (run scripts/install-deps.sh)"
done
LOADGEN=${OVPND_LOADGEN:-$(dirname "$OVPND")/ovpnd-loadgen}
if [ "$n_clients" -gt 0 ] && [ ! -x "$LOADGEN" ]; then
    fail "--clients: load generator not found at $LOADGEN (build it, or set OVPND_LOADGEN)"
fi
if grep -q '__asan_init' "$OVPND" 2>/dev/null; then
    ovt_log "WARNING: $OVPND is a sanitizer build; its figures mean little"
fi
# The data-channel crypto library a binary was built on ("ovpnd --version", second line).
data_crypto_of() {
    "$1" --version 2>/dev/null | sed -n 's/^data channel crypto: //p' | head -n 1
}
OVPND_MAIN=$OVPND
OVPND_OTHER=
if [ "$other_backend" = 1 ]; then
    for b in mbedtls openssl; do
        cand=$(dirname "$OVPND")/ovpnd-$b
        if [ -x "$cand" ] && [ "$(data_crypto_of "$cand")" != "$(data_crypto_of "$OVPND")" ]; then
            OVPND_OTHER=$cand
        fi
    done
    [ -n "$OVPND_OTHER" ] ||
        fail "--other-backend: no ovpnd-mbedtls or ovpnd-openssl on another backend beside $OVPND"
fi
gnuplot_ok=0
if [ -n "$png_out" ]; then
    if ! command -v gnuplot >/dev/null; then
        ovt_log "--png: installing gnuplot-nox"
        apt_get() {
            DEBIAN_FRONTEND=noninteractive timeout 600 apt-get "$@" >>"$OVT_DIR/apt.log" 2>&1
        }
        apt_get install -y -qq --no-install-recommends gnuplot-nox ||
            { apt_get update -qq && apt_get install -y -qq --no-install-recommends gnuplot-nox; } ||
            ovt_tail "$OVT_DIR/apt.log" 10
    fi
    if command -v gnuplot >/dev/null; then
        gnuplot_ok=1
    else
        ovt_log "WARNING: gnuplot not available, no PNG will be drawn"
    fi
fi

BD=$OVT_DIR/bench
mkdir -p "$BD"
RECORDS=$BD/records.tsv
: >"$RECORDS"
report() { "$OVT_PY" "$BENCH_SCRIPTS/bench_report.py" "$@"; }

# rec SECTION SERVER CIPHER KEY VALUE: one raw figure for bench_report.py.
rec() {
    printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" >>"$RECORDS"
}

t_start=$SECONDS
rec meta - - date "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
rec meta - - cpus "$(nproc)"
rec meta - - kernel "$(uname -r)"
rec meta - - clk_tck "$(getconf CLK_TCK)"
rec meta - - quick "$quick"
rec meta - - proto "$proto"
rec meta - - pki "$pki_type"
rec meta - - tcp_secs "$tcp_secs"
rec meta - - tcp_rate_mbps "${tcp_rate:-0}"
rec meta - - udp_secs "$udp_secs"
rec meta - - udp_steps "$([ "$udp_secs" -gt 0 ] && echo "$UDP_STEPS" || echo 0)"
rec meta - - ping_count "$PING_COUNT"
rec meta - - ping_interval_s "$PING_INTERVAL"
rec meta - - latency_under_load "$latency_under_load"
rec meta - - workers "${workers:--}"
# ovpnd's tuning switches from the environment, when set (README, docs/benchmarks.md)
rec meta - - ovpnd_env "$(env | grep -E '^(OVPND_(MODERATION_US|TUN_OFFLOAD|UDP_GSO|STEERING)|UV_THREADPOOL_SIZE)=' | sort | tr '\n' ' ' | sed 's/ $//' || true)"
rec meta - - clients "$n_clients"
rec meta - - loadgen_secs "$LG_SECS"
rec meta - - loadgen_pps_per_client "$LG_PPS"
rec meta - - loadgen_concurrency "$lg_conc"
rec meta - - clients_only "$clients_only"
rec meta - - churn_rounds "$churn_rounds"
rec meta - - churn_settle_s "$churn_settle"
rec meta - - ciphers "$(
    IFS=,
    echo "${ciphers[*]}"
)"
rec meta - - openvpn_version "$(openvpn --version 2>/dev/null | awk 'NR==1 {print $2}')"
rec meta - - iperf3_version "$(iperf3 --version 2>/dev/null | awk 'NR==1 {print $2}')"
rec meta - - ovpnd_version "$("$OVPND" --version 2>/dev/null | head -n 1 | tr '\t' ' ' || true)"
rec meta - - ovpnd_data_crypto "$(data_crypto_of "$OVPND" | tr '\t' ' ')"
if [ -n "$OVPND_OTHER" ]; then
    rec meta - - other_server "$(basename "$OVPND_OTHER")"
    rec meta - - other_data_crypto "$(data_crypto_of "$OVPND_OTHER" | tr '\t' ' ')"
fi
rec meta - - git_commit "$(git -C "$BENCH_SRC" rev-parse --short HEAD 2>/dev/null || echo -)"
rec meta - - rmem_max "$(cat /proc/sys/net/core/rmem_max 2>/dev/null || echo -)"
# Other work on the machine moves every figure: the 1-minute load average before and after.
rec meta - - loadavg_start "$(cut -d' ' -f1 /proc/loadavg)"

netns_setup 1
if [ "$pki_type" = rsa ]; then
    pki_make "$OVT_DIR" --rsa
else
    pki_make "$OVT_DIR"
fi
CNS=$(client_ns 1)

# cpu_ticks PID: utime + stime of the whole process (all its threads), in clock ticks.
cpu_ticks() {
    local s
    s=$(cat "/proc/$1/stat" 2>/dev/null) || {
        echo 0
        return 0
    }
    # Fields after "PID (comm) ": state is the 1st, utime the 12th, stime the 13th.
    printf '%s\n' "${s##*) }" | awk '{ print $12 + $13 }'
}

iperf_listening() {
    ip netns exec "$NS_SRV" ss -Hltn "sport = :$IPERF_PORT" 2>/dev/null | grep -q .
}

# iperf_once OUT DST SECS [IPERF3 CLIENT OPTIONS...]: a one-off iperf3 server in the server
# namespace, the client in the client namespace against DST; the client's JSON result in OUT.
# Returns non-zero when the run did not give a result.
iperf_once() {
    local out=$1 dst=$2 secs=$3
    shift 3
    ovt_spawn "$NS_SRV" "$BD/iperf3-server.log" iperf3 -s -1 -p "$IPERF_PORT"
    local spid=$OVT_LAST_PID rc=0
    if ! wait_for 10 iperf_listening; then
        ovt_wait "$spid" || true
        ovt_log "iperf3 server did not start"
        return 1
    fi
    ovt_run $((secs + 30)) "$CNS" iperf3 -c "$dst" -p "$IPERF_PORT" -t "$secs" -w "$IPERF_BUF" \
        --json "$@" >"$out" 2>>"$BD/iperf3-client.log" || rc=$?
    if ! wait_for 10 pid_gone "$spid"; then
        kill -TERM "$spid" 2>/dev/null || true
    fi
    ovt_wait "$spid" || true
    [ "$rc" = 0 ] && report iperf "$out" >/dev/null
}

# iperf_run OUT DST SECS [OPTIONS...]: iperf_once, tried twice before it fails the benchmark.
iperf_run() {
    local try
    for try in 1 2; do
        if iperf_once "$@"; then
            return 0
        fi
        ovt_log "iperf3 run failed (try $try): $(head -c 300 "$1" | tr '\n' ' ')"
        sleep 1
    done
    fail "iperf3 $* failed twice"
}

# ping_rtt NS DST: PING_COUNT pings, PING_INTERVAL apart; sets PING_AVG, PING_MIN, PING_MEDIAN,
# PING_MAX (ms) and PING_LOSS (%). Functions that start processes or may fail set globals like
# this one: they must not run in $(...), where fail would only end the subshell.
ping_rtt() {
    local out rtt
    out=$(ovt_run 60 "$1" ping -n -c "$PING_COUNT" -i "$PING_INTERVAL" -W 2 "$2" 2>&1) || true
    rtt=$(printf '%s\n' "$out" |
        sed -n 's|^rtt [^=]*= \([0-9.]*\)/\([0-9.]*\)/\([0-9.]*\)/.*|\1 \2 \3|p')
    [ -n "$rtt" ] || fail "ping $2 from $1 gave no RTT: $(printf '%s\n' "$out" | tail -n 3)"
    read -r PING_MIN PING_AVG PING_MAX <<<"$rtt"
    PING_MEDIAN=$(printf '%s\n' "$out" | sed -n 's/.* time=\([0-9.]*\) ms$/\1/p' | sort -n |
        awk '{ a[NR] = $1 }
             END {
                 if (NR % 2) print a[(NR + 1) / 2]
                 else if (NR) print (a[NR / 2] + a[NR / 2 + 1]) / 2
             }')
    PING_LOSS=$(printf '%s\n' "$out" | sed -n 's/.* \([0-9.]*\)% packet loss.*/\1/p')
}

# rec_ping SECTION SERVER CIPHER: the figures of the last ping_rtt.
rec_ping() {
    rec "$1" "$2" "$3" rtt_ms "$PING_AVG"
    rec "$1" "$2" "$3" rtt_min_ms "$PING_MIN"
    rec "$1" "$2" "$3" rtt_median_ms "$PING_MEDIAN"
    rec "$1" "$2" "$3" rtt_max_ms "$PING_MAX"
    rec "$1" "$2" "$3" ping_loss_pct "$PING_LOSS"
}

mbps_of() { report iperf "$1" | awk '{ print $1 }'; }

# ----- the underlay alone, once
if [ "$clients_only" = 0 ]; then
    ovt_log "direct (no VPN): RTT"
    ping_rtt "$CNS" "$OVT_SERVER_IP"
    rec_ping direct - -
fi
if [ "$clients_only" = 0 ] && [ "$latency_under_load" = 0 ]; then
    ovt_log "direct (no VPN): TCP both ways, $tcp_secs s each"
    iperf_run "$BD/direct.tcp_c2s.json" "$OVT_SERVER_IP" "$tcp_secs"
    rec direct - - tcp_c2s "$BD/direct.tcp_c2s.json"
    iperf_run "$BD/direct.tcp_s2c.json" "$OVT_SERVER_IP" "$tcp_secs" -R
    rec direct - - tcp_s2c "$BD/direct.tcp_s2c.json"
    ovt_log "direct: c->s $(mbps_of "$BD/direct.tcp_c2s.json") Mbit/s," \
        "s->c $(mbps_of "$BD/direct.tcp_s2c.json") Mbit/s"
fi

# The config both servers read. openvpn has no "workers": it is told to ignore that line.
# disable-dco: openvpn stays in user space like ovpnd even where the ovpn-dco module is loaded.
bench_conf() { # bench_conf CIPHER [EXTRA LINE...]
    local cipher=$1
    shift
    local -a extra=("data-ciphers $cipher" "disable-dco")
    if [ -n "$workers" ]; then
        extra+=("ignore-unknown-option workers" "workers $workers")
    fi
    server_conf_write "$OVT_DIR" "${extra[@]}" "$@"
}

# queue_sample: once, what the queues on the pings' way hold now, raw, for bench_report.py:
# each namespace's UDP sockets (Recv-Q, skmem), TCP sockets (ss -i: the iperf3 sender's srtt,
# cwnd and unacked segments) and the packets its TUN devices dropped so far (their queue full).
queue_sample() {
    local ns side
    for ns in "$CNS" "$NS_SRV"; do
        side=$([ "$ns" = "$CNS" ] && echo client || echo server)
        echo "@ $side udp"
        ip netns exec "$ns" ss -Huanm 2>/dev/null || true
        echo "@ $side tcp"
        ip netns exec "$ns" ss -Htin 2>/dev/null || true
        echo "@ $side tun"
        ip netns exec "$ns" sh -c 'cat /sys/class/net/tun*/statistics/tx_dropped' 2>/dev/null ||
            true
    done
    echo "@ end"
}

# load_probes_start PREFIX: for a TCP run about to start, a ping every PING_INTERVAL from its
# second 1 to 0.5 s before its end (PREFIX.ping; the first second is the sender's slow start)
# and a queue_sample every 0.5 s over the same time (PREFIX.queues). Sets LOAD_PING_PID (an
# ovt_spawn process) and LOAD_SAMPLER_PID (a background job of this shell).
load_probes_start() {
    local prefix=$1 secs count
    secs=$(awk -v t="$tcp_secs" 'BEGIN { printf "%.1f", (t > 2 ? t - 1.5 : 0.5) }')
    count=$(awk -v s="$secs" -v i="$PING_INTERVAL" 'BEGIN { printf "%d", s / i }')
    : >"$prefix.ping"
    : >"$prefix.queues"
    # a fixed delay on purpose: the probes measure a phase of the run, they wait for no state
    ovt_spawn "$CNS" "$prefix.ping" sh -c "sleep 1; exec ping -n -i $PING_INTERVAL -c $count \
        -W 2 $OVT_SERVER_TUN_IP"
    LOAD_PING_PID=$OVT_LAST_PID
    (
        sleep 1
        end=$(awk -v s="$secs" -v n="$(date +%s.%N)" 'BEGIN { printf "%.3f", n + s }')
        while awk -v e="$end" -v n="$(date +%s.%N)" 'BEGIN { exit !(n < e) }'; do
            queue_sample >>"$prefix.queues"
            sleep 0.5
        done
    ) &
    LOAD_SAMPLER_PID=$!
}

# tcp_measure SERVER CIPHER DIR SRV_PID CLI_PID OPTIONS...: one TCP run with CPU accounting
# (and with --latency-under-load the pings and queue samples during it); TCP_MBPS = its
# throughput.
tcp_measure() {
    local server=$1 cipher=$2 dir=$3 spid=$4 cpid=$5
    shift 5
    local out=$BD/$server.$cipher.tcp_$dir.json s0 c0 s1 c1
    [ -n "$tcp_rate" ] && set -- "$@" -b "${tcp_rate}M"
    local ping_pid='' sampler_pid=''
    if [ "$latency_under_load" = 1 ]; then
        load_probes_start "$BD/$server.$cipher.load_$dir"
        ping_pid=$LOAD_PING_PID
        sampler_pid=$LOAD_SAMPLER_PID
    fi
    s0=$(cpu_ticks "$spid")
    c0=$(cpu_ticks "$cpid")
    iperf_run "$out" "$OVT_SERVER_TUN_IP" "$tcp_secs" "$@"
    s1=$(cpu_ticks "$spid")
    c1=$(cpu_ticks "$cpid")
    if [ -n "$ping_pid" ]; then
        ovt_wait "$ping_pid" || true
        wait "$sampler_pid" || true
        rec run "$server" "$cipher" "load_${dir}_ping" "$BD/$server.$cipher.load_$dir.ping"
        rec run "$server" "$cipher" "load_${dir}_queues" "$BD/$server.$cipher.load_$dir.queues"
    fi
    rec run "$server" "$cipher" "tcp_$dir" "$out"
    rec run "$server" "$cipher" "tcp_${dir}_server_ticks" $((s1 - s0))
    rec run "$server" "$cipher" "tcp_${dir}_client_ticks" $((c1 - c0))
    TCP_MBPS=$(mbps_of "$out")
}

# awk_run PROGRAM [NAME=VALUE...]: run the awk BEGIN block PROGRAM over the variables.
awk_run() {
    local prog=$1 a
    shift
    local -a vars=()
    for a in "$@"; do
        vars+=(-v "$a")
    done
    awk "${vars[@]}" "BEGIN { $prog }"
}

# icalc EXPR [NAME=VALUE...]: the integer part of the awk expression EXPR over the variables.
icalc() {
    local e=$1
    shift
    awk_run "printf \"%d\", ($e)" "$@"
}

# fcond EXPR [NAME=VALUE...]: true when the awk expression EXPR holds.
fcond() {
    local e=$1
    shift
    awk_run "exit !($e)" "$@"
}

# udp_search SERVER CIPHER TCP_MBPS: the highest iperf3 -u rate client->server with less than
# UDP_MAX_LOSS % loss, in UDP_STEPS runs: a probe at twice the TCP rate, then a search between
# the best rate without loss so far (lo) and the lowest with loss (hi). bench_report.py picks
# the best run from the records.
udp_search() {
    local server=$1 cipher=$2 tcp=$3
    local target hi lo=0 step out got loss
    target=$(icalc '2 * t > 200 ? 2 * t : 200' t="$tcp")
    hi=$target
    for step in $(seq 1 "$UDP_STEPS"); do
        out=$BD/$server.$cipher.udp$step.json
        iperf_run "$out" "$OVT_SERVER_TUN_IP" "$udp_secs" -u -b "${target}M" -l "$UDP_LEN"
        rec run "$server" "$cipher" udp_step "$target $out"
        read -r got loss _ < <(report iperf "$out")
        ovt_log "  UDP at $target Mbit/s: received $got Mbit/s, $loss% loss"
        if fcond 'l < m' l="$loss" m="$UDP_MAX_LOSS"; then
            # Go up, at most 15% and never as far as a rate that lost.
            lo=$target
            target=$(icalc '(lo + hi) / 2 < lo * 1.15 ? (lo + hi) / 2 : lo * 1.15' \
                lo="$lo" hi="$hi")
        elif [ "$step" = 1 ]; then
            # The probe shows what gets through: just under that is the first real guess.
            hi=$(icalc 'g * 1.05 < t ? g * 1.05 : t' g="$got" t="$target")
            target=$(icalc 'g * 0.9' g="$got")
        else
            hi=$target
            target=$(icalc 'lo > 0 ? (lo + hi) / 2 : hi * 0.75' lo="$lo" hi="$hi")
        fi
        [ "$target" -ge 1 ] || target=1
        if fcond 'lo > 0 && hi - lo < 0.05 * hi' lo="$lo" hi="$hi"; then
            break
        fi
    done
}

# measure_server SERVER [BINARY]: every cipher against OVPN_SERVER_IMPL=SERVER, or against the
# ovpnd binary BINARY reported as SERVER.
measure_server() {
    local server=$1 cipher spid cpid c2s s2c rtt
    OVPN_SERVER_IMPL=$server
    local comm=$server
    if [ -n "${2:-}" ]; then
        OVPN_SERVER_IMPL=ovpnd
        OVPND=$2
        comm=$(basename "$2" | cut -c1-15) # what /proc/PID/comm holds
    fi
    for cipher in "${ciphers[@]}"; do
        ovt_log "----- $server, $cipher"
        bench_conf "$cipher"
        server_start "$OVT_DIR"
        client_start "$OVT_DIR" 1 "disable-dco"
        wait_tunnel 1
        if ! grep -q "Data Channel: cipher '$cipher'" "$OVT_DIR/client1.log"; then
            fail "the client did not negotiate $cipher:" \
                "$(grep -m1 'Data Channel: cipher' "$OVT_DIR/client1.log" || echo 'no cipher line')"
        fi
        rec run "$server" "$cipher" negotiated_cipher "$cipher"
        spid=$(ns_pid "$NS_SRV" "$comm") || fail "no $comm process in $NS_SRV"
        cpid=$(ns_pid "$CNS" openvpn) || fail "no openvpn client process in $CNS"
        ping_rtt "$CNS" "$OVT_SERVER_TUN_IP"
        rtt=$PING_AVG
        rec_ping run "$server" "$cipher"
        tcp_measure "$server" "$cipher" c2s "$spid" "$cpid"
        c2s=$TCP_MBPS
        tcp_measure "$server" "$cipher" s2c "$spid" "$cpid" -R
        s2c=$TCP_MBPS
        ovt_log "$server $cipher: RTT $rtt ms, TCP c->s $c2s Mbit/s, s->c $s2c Mbit/s"
        if [ "$udp_secs" -gt 0 ]; then
            udp_search "$server" "$cipher" "$c2s"
        fi
        server_alive || fail "$server died during the measurements"
        client_stop 1
        server_stop
    done
    OVPND=$OVPND_MAIN
}

# loadgen_server SERVER: N simulated clients against SERVER. At most lg_conc handshakes are in
# flight at a time (a closed loop: the server's handshake rate without a pile-up that outlives
# hand-window), spread over ceil(N / LG_PER_PROC) ovpnd-loadgen processes, each with its own
# two source addresses (198.18.0.100 and up: one address has about 28,000 ephemeral ports) and
# its own open-file limit; a barrier file makes them hold every client connected together for
# --hold seconds. Each process samples the server's RSS at the end of that time.
loadgen_server() {
    local server=$1 spid p n_procs rcs=() pids=() lines=()
    OVPN_SERVER_IMPL=$server
    # connect-freq-initial: openvpn 2.6 answers 100 new resets per 10 s by default and ovpnd
    # does the same; both are told to allow far more, so the figure is the servers' capacity.
    lines=("duplicate-cn" "max-clients $((n_clients + 16))" "connect-freq-initial 1000000 10")
    bench_conf "${ciphers[0]}" "${lines[@]}"
    if [ "$n_clients" -gt 250 ]; then # more clients than a /24 pool holds
        sed -i 's/^server 198\.19\.0\.0 255\.255\.255\.0$/server 198.19.0.0 255.255.0.0/' \
            "$OVT_DIR/server.conf"
    fi
    n_procs=$(((n_clients + LG_PER_PROC - 1) / LG_PER_PROC))
    ovt_log "----- $server, ovpnd-loadgen with $n_clients clients ($n_procs processes," \
        "concurrency $lg_conc, hold $LG_SECS s, $LG_PPS echo/s per client)"
    server_start "$OVT_DIR"
    spid=$(ns_pid "$NS_SRV" "$server") || fail "no $server process in $NS_SRV"
    local pki=$OVT_DIR/pki barrier=$BD/$server.barrier conc
    rm -f "$barrier"
    conc=$(((lg_conc + n_procs - 1) / n_procs))
    # Each load generator runs one thread per CPU it gets (its TLS is Mbed TLS too and would
    # otherwise cap the handshake rate of a fast server on one core).
    local lg_threads=$(($(nproc) / n_procs))
    [ "$lg_threads" -ge 1 ] || lg_threads=1
    [ "$lg_conc" = 0 ] && conc=0
    # Connecting everyone takes N / rate; allow for a rate as low as 20/s.
    local limit=$((n_clients / 20 + LG_SECS + 300)) ticks0 sampler
    ticks0=$(cpu_ticks "$spid")
    # the server's threads' CPU every half second: CPU per connect early and late in the ramp
    "$OVT_PY" "$BENCH_SCRIPTS/bench_report.py" sample-threads "$spid" "$BD/$server.threads.jsonl" &
    sampler=$!
    wait_for 10 test -s "$BD/$server.threads.jsonl" || ovt_log "WARNING: no thread samples of $server"
    for p in $(seq 0 $((n_procs - 1))); do
        local n=$(((n_clients - p + n_procs - 1) / n_procs)) a=$((100 + 2 * p))
        local -a args=(--server "$OVT_SERVER_IP:$OVT_PORT" --ca "$pki/ca.crt"
            --cert "$pki/client1.crt" --key "$pki/client1.key" --tls-crypt "$pki/ta.key"
            --clients "$n" --rate 0 --concurrency "$conc" --duration "$LG_SECS"
            --data-rate "$LG_PPS" --bind-range "198.18.0.$a-$((a + 1))" --server-pid "$spid"
            --threads "$lg_threads" --proto "$proto"
            --json "$BD/$server.loadgen.$p.json")
        if [ "$n_procs" -gt 1 ]; then
            args+=(--barrier "$barrier" --barrier-count "$n_procs")
        fi
        # At the limit, SIGTERM: the load generator ends the run and still writes its report.
        ovt_spawn "$CNS" "$BD/$server.loadgen.$p.log" timeout --kill-after=60 "$limit" \
            "$LOADGEN" "${args[@]}"
        pids+=("$OVT_LAST_PID")
    done
    for p in "${!pids[@]}"; do
        local rc=0
        ovt_wait "${pids[$p]}" || rc=$?
        rcs+=("$rc")
        [ "$rc" = 0 ] || ovt_log "WARNING: ovpnd-loadgen $p against $server exited with $rc"
        ovt_log "$server, loadgen $p: $(grep -m1 -E '^(all connected|not all)' \
            "$BD/$server.loadgen.$p.log" || echo 'no summary')"
        rec loadgen "$server" - "json.$p" "$BD/$server.loadgen.$p.json"
    done
    kill "$sampler" 2>/dev/null || true
    wait "$sampler" 2>/dev/null || true
    rec loadgen "$server" - thread_samples "$BD/$server.threads.jsonl"
    # The server's CPU over the whole run (handshakes, then the hold): with --data-rate 0 and a
    # short hold nearly all of it is handshakes, so CPU per connected client approximates the
    # CPU cost of one handshake, a figure that does not depend on how fast the load generator is.
    rec loadgen "$server" - server_cpu_s \
        "$(awk -v a="$ticks0" -v b="$(cpu_ticks "$spid")" -v hz="$(getconf CLK_TCK)" \
            'BEGIN { printf "%.3f", (b - a) / hz }')"
    # (grep -c reads the whole log: grep -q could end the pipe early and fail it under pipefail)
    if [ "$(server_log_since | grep -c 'connect-freq-initial.*exceeded' || true)" -gt 0 ]; then
        rec loadgen "$server" - rate_limited 1
    fi
    if [ "$server" = ovpnd ]; then
        rec loadgen "$server" - server_ping_timeouts \
            "$(server_log_since | grep -c 'ping-restart), dropping client' || true)"
    fi
    rec loadgen "$server" - exit_status "$(printf '%s\n' "${rcs[@]}" | sort -n | tail -n 1)"
    server_alive || fail "$server died under the load generator"
    server_stop
}

# storm_run SERVER NAME N ARGS...: one ovpnd-loadgen process with N clients against the running
# SERVER (keepalives only, hold 2 s), its report in $BD/SERVER.NAME.json; prints its
# connect_all_secs (or "-" when not every client connected).
storm_run() {
    local server=$1 name=$2 n=$3 pki=$OVT_DIR/pki rc=0
    shift 3
    timeout --kill-after=30 $((n / 20 + 180)) ip netns exec "$CNS" "$LOADGEN" \
        --server "$OVT_SERVER_IP:$OVT_PORT" --ca "$pki/ca.crt" --cert "$pki/client1.crt" \
        --key "$pki/client1.key" --tls-crypt "$pki/ta.key" --clients "$n" --rate 0 \
        --duration 2 --data-rate 0 --bind-range 198.18.0.100-101 --threads "$(nproc)" \
        --json "$BD/$server.$name.json" "$@" >"$BD/$server.$name.log" 2>&1 || rc=$?
    [ "$rc" = 0 ] || ovt_log "WARNING: ovpnd-loadgen ($name) against $server exited with $rc"
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))
print(r["connect_all_secs"] if r["connected"] == r["clients"] and r["connect_all_secs"] else "-")' \
        "$BD/$server.$name.json" 2>/dev/null || echo -
}

# udp_rcvbuf_errors NS: UDP datagrams the kernel dropped in namespace NS for a full receive
# buffer (both address families), since the namespace was made.
udp_rcvbuf_errors() {
    ip netns exec "$1" awk '$1 == "Udp:" && !h++ { for (i = 2; i <= NF; i++) col[$i] = i; next }
        $1 == "Udp:" { n += $(col["RcvbufErrors"]) } $1 == "Udp6RcvbufErrors" { n += $2 }
        END { print n + 0 }' /proc/net/snmp /proc/net/snmp6 2>/dev/null || echo 0
}

# storm_server SERVER: the steady handshake rate (lg_conc in flight), then a storm of storm_n
# --retry clients started at once, each against a fresh SERVER process with the same config
# (hand-window 60, connect-freq-initial raised as in loadgen_server). One line of results on
# stdout.
storm_server() {
    local server=$1 spid n_steady secs_steady secs rate predicted ratio started=- finished=- line
    OVPN_SERVER_IMPL=$server
    bench_conf "${ciphers[0]}" "duplicate-cn" "max-clients $((storm_n + 16))" \
        "connect-freq-initial 1000000 10"
    sed -i 's/^server 198\.19\.0\.0 255\.255\.255\.0$/server 198.19.0.0 255.255.0.0/' \
        "$OVT_DIR/server.conf"
    n_steady=$((storm_n < 1000 ? storm_n : 1000))
    ovt_log "----- $server: steady rate ($n_steady clients, $lg_conc in flight) (load $(cat /proc/loadavg))"
    server_start "$OVT_DIR"
    secs_steady=$(storm_run "$server" steady "$n_steady" --concurrency "$lg_conc")
    server_stop
    ovt_log "----- $server: storm of $storm_n clients with --retry (load $(cat /proc/loadavg))"
    server_start "$OVT_DIR"
    spid=$(ns_pid "$NS_SRV" "$server") || fail "no $server process in $NS_SRV"
    rcvbuf_errors0=$(udp_rcvbuf_errors "$NS_SRV")
    secs=$(storm_run "$server" storm "$storm_n" --retry)
    ovt_log "$server storm: datagrams the server's UDP sockets dropped (receive buffer full):" \
        "$(($(udp_rcvbuf_errors "$NS_SRV") - rcvbuf_errors0))"
    if [ "$server" = ovpnd ]; then
        kill -USR2 "$spid"
        stats_line() { server_log_since | grep -E 'TLS handshakes started [0-9]+' | tail -n 1; }
        wait_for 10 stats_line >/dev/null || true
        line=$(stats_line || true)
        ovt_log "$server storm: $line"
        started=$(sed -nE 's/.*TLS handshakes started ([0-9]+).*/\1/p' <<<"$line")
        finished=$(sed -nE 's/.*TLS handshakes started [0-9]+, finished ([0-9]+).*/\1/p' <<<"$line")
    fi
    server_alive || fail "$server died in the storm"
    server_stop
    read -r rate predicted ratio < <(awk -v n="$n_steady" -v s="$secs_steady" -v N="$storm_n" \
        -v t="$secs" 'BEGIN {
            if (s == "-" || s <= 0) { print "- - -"; exit }
            r = n / s; p = N / r
            printf "%.1f %.1f %s\n", r, p, (t == "-" ? "-" : sprintf("%.2f", t / p)) }')
    rec storm "$server" - steady_rate "$rate"
    rec storm "$server" - connect_all_secs "$secs"
    rec storm "$server" - predicted_secs "$predicted"
    printf '| %s | %s | %s/s | %s s | %s s | %s | %s | %s | %s |\n' "$server" "$storm_n" "$rate" \
        "$predicted" "$secs" "$ratio" "$started" "$finished" "$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1])); print(r["restarts"], "restarts,", r["resets_sent"], "resets")' \
            "$BD/$server.storm.json" 2>/dev/null || echo -)"
    ovt_log "$server storm: steady $rate/s predicts $predicted s; all connected in $secs s" \
        "(ratio $ratio); TLS handshakes started $started, finished $finished (load $(cat /proc/loadavg))"
}

# churn_server SERVER: churn_rounds rounds of n_clients clients against one SERVER process, one
# ovpnd-loadgen process a round (closed loop, lg_conc handshakes in flight, every client held
# for LG_SECS, then an explicit exit). churn_settle s after each round ends: the server's RSS
# (VmRSS) and open file descriptors, and how many clients its status file still lists.
churn_server() {
    local server=$1 spid r rc pki=$OVT_DIR/pki
    OVPN_SERVER_IMPL=$server
    bench_conf "${ciphers[0]}" "duplicate-cn" "max-clients $((n_clients + 16))" \
        "connect-freq-initial 1000000 10"
    if [ "$n_clients" -gt 250 ]; then # more clients than a /24 pool holds
        sed -i 's/^server 198\.19\.0\.0 255\.255\.255\.0$/server 198.19.0.0 255.255.0.0/' \
            "$OVT_DIR/server.conf"
    fi
    ovt_log "----- $server, $churn_rounds rounds of $n_clients clients (concurrency $lg_conc," \
        "hold $LG_SECS s, $LG_PPS echo/s per client), measured $churn_settle s after each"
    server_start "$OVT_DIR"
    spid=$(ns_pid "$NS_SRV" "$server") || fail "no $server process in $NS_SRV"
    local rss fds listed
    churn_rec() { # churn_rec ROUND: the figures now, also in rss, fds and listed
        rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$spid/status")
        fds=$(find "/proc/$spid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
        listed=$(awk '/^Common Name,Real Address/ { f = 1; next } /^ROUTING TABLE/ { f = 0 }
            f { n++ } END { print n + 0 }' "$OVT_DIR/status.log" 2>/dev/null || echo -)
        rec churn "$server" - "rss_kb.$1" "$rss"
        rec churn "$server" - "fds.$1" "$fds"
        rec churn "$server" - "listed.$1" "$listed"
    }
    churn_rec 0
    for r in $(seq 1 "$churn_rounds"); do
        rc=0
        ovt_run $((n_clients / 20 + LG_SECS + 300)) "$CNS" "$LOADGEN" \
            --server "$OVT_SERVER_IP:$OVT_PORT" --ca "$pki/ca.crt" --cert "$pki/client1.crt" \
            --key "$pki/client1.key" --tls-crypt "$pki/ta.key" --clients "$n_clients" --rate 0 --proto "$proto" \
            --concurrency "$lg_conc" --duration "$LG_SECS" --data-rate "$LG_PPS" \
            --bind-range 198.18.0.100-101 --threads "$(nproc)" \
            --json "$BD/$server.churn.$r.json" >"$BD/$server.churn.$r.log" 2>&1 || rc=$?
        [ "$rc" = 0 ] || ovt_log "WARNING: round $r: ovpnd-loadgen against $server exited with $rc"
        server_alive || fail "$server died in round $r"
        sleep "$churn_settle" # the measurement is "so long after the round", not a wait for state
        churn_rec "$r"
        rec churn "$server" - "json.$r" "$BD/$server.churn.$r.json"
        ovt_log "$server round $r: RSS $rss kB, $fds fds, $listed clients listed"
    done
    server_stop
}

if [ "$n_clients" -gt 0 ]; then
    # Source addresses for the load generators, two per process (see loadgen_server).
    for p in $(seq 0 $(((n_clients + LG_PER_PROC - 1) / LG_PER_PROC - 1))); do
        ip -n "$CNS" addr add "198.18.0.$((100 + 2 * p))/24" dev eth0
        ip -n "$CNS" addr add "198.18.0.$((101 + 2 * p))/24" dev eth0
    done
fi
if [ "$storm_n" -gt 0 ]; then
    echo "| server | clients | steady rate | predicted | all connected | ratio | TLS started | TLS finished | client side |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---|"
fi
for server in "${servers[@]}"; do
    if [ "$clients_only" = 0 ]; then
        measure_server "$server"
    fi
    if [ "$storm_n" -gt 0 ]; then
        storm_server "$server"
    elif [ "$churn_rounds" -gt 0 ]; then
        churn_server "$server"
    elif [ "$n_clients" -gt 0 ]; then
        loadgen_server "$server"
    fi
    if [ "$server" = ovpnd ] && [ -n "$OVPND_OTHER" ] && [ "$clients_only" = 0 ]; then
        measure_server "$(basename "$OVPND_OTHER")" "$OVPND_OTHER"
    fi
done
if [ "$storm_n" -gt 0 ]; then # its table is printed as it goes (storm_server)
    ovt_log "done in $((SECONDS - t_start)) s (load $(cat /proc/loadavg))"
    exit 0
fi
rec meta - - elapsed_secs $((SECONDS - t_start))
rec meta - - loadavg_end "$(cut -d' ' -f1 /proc/loadavg)"

report_args=(report --records "$RECORDS")
if [ -n "$json_out" ]; then
    report_args+=(--json "$json_out")
fi
if [ "$gnuplot_ok" = 1 ]; then
    report_args+=(--plot "$BD/throughput")
fi
report "${report_args[@]}" || fail "bench_report.py could not build the report"
if [ "$gnuplot_ok" = 1 ]; then
    if timeout 60 gnuplot "$BD/throughput.gp" >"$BD/gnuplot.log" 2>&1 &&
        [ -s "$BD/throughput.png" ]; then
        cp "$BD/throughput.png" "$png_out"
        ovt_log "chart written to $png_out"
    else
        ovt_tail "$BD/gnuplot.log" 10
        ovt_log "WARNING: gnuplot failed, no PNG"
    fi
fi
if [ -n "$json_out" ]; then
    ovt_log "raw figures written to $json_out"
fi
ovt_log "done in $((SECONDS - t_start)) s"
