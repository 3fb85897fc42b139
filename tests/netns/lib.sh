# shellcheck shell=bash
# Shared harness for the network-namespace integration tests. Source it, then call ovt_init.
#
# Topology made by netns_setup N:
#   server namespace  ovt-s-<pid>   bridge br0 198.18.0.1/24, the server, its tun (198.19.0.1)
#   client namespace  ovt-cI-<pid>  eth0 198.18.0.(I+1)/24, veth into br0, the stock openvpn client
# Tunnel pool 198.19.0.0/24. Nothing is created outside these namespaces and $OVT_DIR.
#
# Environment:
#   OVPN_SERVER_IMPL  ovpnd (default) or openvpn: which server runs the shared config
#   OVPND             ovpnd binary (default <repo>/build/ovpnd)
#   OVPND_SOURCE_DIR  repo root (default: two levels above this file)
#   OVT_WRAP          tls-crypt (default), tls-auth or none: the control channel wrapper
#   OVT_PROTO         the server's `proto` (default udp; tcp-server etc.: readiness waits for TCP)
#   OVT_CLIENT_PROTO  the protocol of the client's `remote` line (default udp4; tcp4-client...)
#   OVT_KEEP=1        keep the work directory after the test (namespaces are always removed)
#   OVT_KEEP_ON_FAIL=1  the same, only when the test fails
#   OVT_VERBOSE=1     print more progress
#
# CTest runs these tests several at a time; a test that must run alone (timing-sensitive, CPU-heavy,
# or changing the host: users, PAM files) carries the line "# ovt: serial" (tests/CMakeLists.txt).
# Tests that only must not meet each other (the same PAM user and files) carry "# ovt: lock NAME".
# "# ovt: optimised build only: REASON" skips a test in the sanitizer pass (OVT_SANITIZER_PASS=1).
#
# Every process started here runs under `timeout` and with a parent-death signal, so it dies
# with the test even if the test is killed; the EXIT trap stops them all and deletes the
# namespaces. Waits poll with a deadline, never a fixed sleep. A test that passed still fails if
# the server log holds an ASan/LSan/UBSan report (run with OVPND=<build-asan>/ovpnd).

OVT_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OVT_SRC=${OVPND_SOURCE_DIR:-$(cd "$OVT_LIB_DIR/../.." && pwd)}
OVPN_SERVER_IMPL=${OVPN_SERVER_IMPL:-ovpnd}
OVPND=${OVPND:-$OVT_SRC/build/ovpnd}
OVT_WRAP=${OVT_WRAP:-tls-crypt}
OVT_PY=${OVT_PY:-python3}
OVT_PROC_TIMEOUT_S=${OVT_PROC_TIMEOUT_S:-900} # last-resort lifetime of any process we start

OVT_ID=$$
NS_SRV=ovt-s-$OVT_ID
OVT_SERVER_IP=198.18.0.1
OVT_SERVER_TUN_IP=198.19.0.1
OVT_PORT=1194
OVT_N_CLIENTS=0
OVT_NAMESPACES=()
OVT_PIDS=()
OVT_DIR=
OVT_NAME="test"
SERVER_PID=
OVT_SERVER_LOG_OFF=0
OVT_CLEANUP=() # commands (strings) the EXIT trap runs first, e.g. to remove a test user
declare -A CLIENT_PID=()
declare -A CLIENT_TUN_IP=()

ovt_log() {
    printf '[%s %s] %s\n' "$OVT_NAME" "$(date +%T)" "$*" >&2
}

ovt_skip() {
    ovt_log "SKIP: $*"
    exit 77
}

# ovt_init NAME: check that the test can run here (else exit 77), make the work dir, set traps.
ovt_init() {
    OVT_NAME=$1
    if [ "$(id -u)" != 0 ]; then
        ovt_skip "needs root (network namespaces, tun devices)"
    fi
    if [ ! -c /dev/net/tun ]; then
        ovt_skip "no /dev/net/tun"
    fi
    local tool
    for tool in ip openvpn openssl ping setpriv timeout "$OVT_PY"; do
        command -v "$tool" >/dev/null || ovt_skip "$tool not installed (run scripts/install-deps.sh)"
    done
    case "$OVPN_SERVER_IMPL" in
    ovpnd)
        [ -x "$OVPND" ] || {
            ovt_log "FAIL: ovpnd binary not found at $OVPND (build it, or set OVPND)"
            exit 1
        }
        ;;
    openvpn) ;;
    *)
        ovt_log "FAIL: OVPN_SERVER_IMPL must be ovpnd or openvpn, not '$OVPN_SERVER_IMPL'"
        exit 1
        ;;
    esac
    # The sanitizer pass of scripts/test.sh skips tests about scale, rates or the other
    # data-channel backend: they add minutes there and no code path the other tests miss.
    if [ "${OVT_SANITIZER_PASS:-0}" = 1 ] && grep -q "^# ovt: optimised build only" "$0"; then
        ovt_skip "$(sed -n 's/^# ovt: optimised build only: *//p' "$0" | head -n 1) (runs in the optimised build)"
    fi
    if ! ip netns add "ovt-probe-$OVT_ID" 2>/dev/null; then
        ovt_skip "cannot create network namespaces here"
    fi
    ip netns del "ovt-probe-$OVT_ID"
    OVT_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ovt-$OVT_NAME.XXXXXX")
    chmod 755 "$OVT_DIR"
    trap cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    ovt_log "server implementation: $OVPN_SERVER_IMPL$([ "$OVPN_SERVER_IMPL" = ovpnd ] && echo " ($OVPND)")"
}

# cleanup: stop every process we started, delete our namespaces and (unless OVT_KEEP=1) the work
# dir. Installed as the EXIT trap by ovt_init; safe to call twice.
cleanup() {
    local rc=$? pid ns i
    trap - EXIT
    for i in "${OVT_CLEANUP[@]}"; do
        eval "$i" || true
    done
    for pid in "${OVT_PIDS[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for i in $(seq 1 50); do
        local alive=0
        for pid in "${OVT_PIDS[@]}"; do
            if kill -0 "$pid" 2>/dev/null; then
                alive=1
            fi
        done
        [ "$alive" = 0 ] && break
        sleep 0.1
    done
    for pid in "${OVT_PIDS[@]}"; do
        kill -KILL "$pid" 2>/dev/null || true
    done
    # Anything still inside our namespaces was started by this test (directly or not).
    for ns in "${OVT_NAMESPACES[@]}"; do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do
            kill -KILL "$pid" 2>/dev/null || true
        done
    done
    wait 2>/dev/null || true
    # A server built with -DOVPND_SANITIZE=ON reports leaks and errors on its way out.
    if [ "$rc" = 0 ] && [ -n "$OVT_DIR" ] &&
        grep -Eq 'ERROR: (Address|Leak|Thread)Sanitizer|WARNING: ThreadSanitizer|runtime error:' "$OVT_DIR/server.log" 2>/dev/null; then
        ovt_log "FAIL: sanitizer report in the server log"
        grep -E -A 30 'ERROR: (Address|Leak|Thread)Sanitizer|WARNING: ThreadSanitizer|runtime error:' "$OVT_DIR/server.log" |
            head -n 60 >&2
        rc=1
    fi
    for ns in "${OVT_NAMESPACES[@]}"; do
        ip netns del "$ns" 2>/dev/null || true
    done
    if [ -n "$OVT_DIR" ] && [ -d "$OVT_DIR" ]; then
        if [ "${OVT_KEEP:-0}" = 1 ] || { [ "$rc" != 0 ] && [ "${OVT_KEEP_ON_FAIL:-0}" = 1 ]; }; then
            ovt_log "work directory kept: $OVT_DIR"
        else
            rm -rf "$OVT_DIR"
        fi
    fi
    if [ "$rc" = 0 ]; then
        ovt_log "PASS"
    elif [ "$rc" != 77 ]; then
        ovt_log "FAIL (exit $rc)"
    fi
    exit "$rc"
}

ovt_tail() { # ovt_tail FILE [N]
    if [ -f "$1" ]; then
        echo "----- last ${2:-30} lines of $(basename "$1") -----" >&2
        tail -n "${2:-30}" "$1" >&2
    fi
}

# fail MSG: print MSG and the tails of the server and client logs, then exit 1 (trap cleans up).
fail() {
    ovt_log "FAIL: $*"
    if [ -n "$OVT_DIR" ]; then
        # ovpnd's counters at the moment of the failure (SIGUSR2 logs every thread's drops by
        # reason), so that the log tail says where packets went
        local spid
        if [ "$OVPN_SERVER_IMPL" = ovpnd ] && server_alive && spid=$(server_process_pid); then
            kill -USR2 "$spid" 2>/dev/null && sleep 0.5
        fi
        ovt_tail "$OVT_DIR/server.log" 40
        local f
        for f in "$OVT_DIR"/client*.log; do
            [ -f "$f" ] && ovt_tail "$f" 25
        done
    fi
    exit 1
}

# wait_for TIMEOUT_S CMD...: run CMD every 0.1 s until it succeeds (return 0) or the deadline
# passes (return 1).
# count_lines REGEX FILE N: true when FILE has exactly N lines matching REGEX (extended). For
# wait_for, which re-runs its command: a "$(grep -c ...)" argument would be read only once.
count_lines() {
    [ "$(grep -cE "$1" "$2" 2>/dev/null)" = "$3" ]
}

# out_has ERE CMD...: CMD's output has a line matching ERE. The output is read whole first: with
# pipefail, `CMD | grep -q` fails when grep stops at the first match and CMD (ip flushes each
# line) then dies of SIGPIPE. A check of kernel state runs it under `wait_for 3`: a netlink dump
# that a concurrent change interrupts (the link coming up) can come back incomplete.
out_has() {
    local re=$1 out
    shift
    out=$("$@" 2>/dev/null) || true
    grep -qE -- "$re" <<<"$out"
}

wait_for() {
    local timeout_s=$1
    shift
    local deadline=$((SECONDS + timeout_s))
    while true; do
        if "$@"; then
            return 0
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            return 1
        fi
        sleep 0.1
    done
}

# ovt_spawn NS LOG CMD...: start CMD in namespace NS (or the current one if NS is "-") in the
# background, stdout+stderr appended to LOG. Sets OVT_LAST_PID. Must run in the test's own
# shell (not in $(...)) so the parent-death signal ties the process to the test.
ovt_spawn() {
    local ns=$1 logf=$2
    shift 2
    local -a inner=("$@")
    if [ "$ns" != - ]; then
        inner=(ip netns exec "$ns" "$@")
    fi
    setpriv --pdeathsig KILL -- timeout --kill-after=5 "$OVT_PROC_TIMEOUT_S" \
        setpriv --pdeathsig KILL -- "${inner[@]}" >>"$logf" 2>&1 </dev/null &
    OVT_LAST_PID=$!
    OVT_PIDS+=("$OVT_LAST_PID")
}

# ovt_signal PID SIG: send SIG to the command that ovt_spawn started as PID (the child of its
# `timeout`), not to the `timeout` itself: timeout passes a signal on to its command and then
# to its whole process group, so the command would get it twice, and a second SIGTERM makes
# openvpn give up its explicit-exit-notify at once, before its EXIT message has left (and the
# server would never hear of the exit). Falls back to PID when the command is gone.
ovt_signal() {
    local pid=$1 sig=$2 child
    child=$(pgrep -P "$pid" 2>/dev/null | head -n 1 || true)
    kill -"$sig" "${child:-$pid}" 2>/dev/null || true
}

# ovt_wait PID: wait for a process started by ovt_spawn, return its exit status, and forget it so
# the cleanup never signals a recycled PID.
ovt_wait() {
    local pid=$1 rc=0 p
    wait "$pid" 2>/dev/null || rc=$?
    local -a keep=()
    for p in "${OVT_PIDS[@]}"; do
        [ "$p" = "$pid" ] || keep+=("$p")
    done
    OVT_PIDS=("${keep[@]}")
    return "$rc"
}

# ovt_run TIMEOUT_S NS CMD...: run CMD in the foreground inside NS with a time limit.
ovt_run() {
    local timeout_s=$1 ns=$2
    shift 2
    setpriv --pdeathsig KILL -- timeout --kill-after=5 "$timeout_s" ip netns exec "$ns" "$@"
}

client_ns() { echo "ovt-c$1-$OVT_ID"; }
client_ip() { echo "198.18.0.$(($1 + 1))"; }

ovt_add_ns() {
    ip netns add "$1"
    OVT_NAMESPACES+=("$1")
    ip -n "$1" link set lo up
}

# netns_setup N: the server namespace with bridge br0 (198.18.0.1/24) and N client namespaces,
# each with eth0 = 198.18.0.(I+1)/24 on a veth whose other end is a port of br0.
netns_setup() {
    local n=$1 i ns
    [ "$n" -ge 1 ] && [ "$n" -le 200 ] || fail "netns_setup: bad client count $n"
    OVT_N_CLIENTS=$n
    ovt_add_ns "$NS_SRV"
    ip -n "$NS_SRV" link add br0 type bridge stp_state 0 forward_delay 0
    ip -n "$NS_SRV" addr add "$OVT_SERVER_IP/24" dev br0
    ip -n "$NS_SRV" link set br0 up
    for i in $(seq 1 "$n"); do
        ns=$(client_ns "$i")
        ovt_add_ns "$ns"
        ip -n "$NS_SRV" link add "vc$i" type veth peer name eth0 netns "$ns"
        ip -n "$NS_SRV" link set "vc$i" master br0
        ip -n "$NS_SRV" link set "vc$i" up
        ip -n "$ns" addr add "$(client_ip "$i")/24" dev eth0
        ip -n "$ns" link set eth0 up
    done
    for i in $(seq 1 "$n"); do
        ns=$(client_ns "$i")
        wait_for 10 ovt_run 3 "$ns" ping -c 1 -W 1 -q "$OVT_SERVER_IP" >/dev/null ||
            fail "underlay: client namespace $i cannot reach $OVT_SERVER_IP"
    done
    [ "${OVT_VERBOSE:-0}" = 1 ] && ovt_log "namespaces up: $NS_SRV and $n clients"
    return 0
}

# pki_make DIR [pki.sh options]: a fresh PKI in DIR/pki (see scripts/pki.sh).
pki_make() {
    local dir=$1
    shift
    bash "$OVT_SRC/scripts/pki.sh" "$@" "$dir/pki" >"$dir/pki.log" 2>&1 ||
        {
            cat "$dir/pki.log" >&2
            fail "scripts/pki.sh failed"
        }
}

# pki_sign_client DIR CN NEWKEY [OPENSSL-CA-OPTION...]: a client certificate for CN with a new
# key (NEWKEY as `openssl req -newkey` takes it, e.g. rsa:1024, or ec plus -pkeyopt options, one
# word each), signed with SHA-256 by the CA that pki_make made in $OVT_DIR/pki; the options go
# to `openssl ca` (validity: -days N or -startdate/-enddate). Leaves DIR/client.crt and
# DIR/client.key; fails the test on error.
pki_sign_client() {
    local d=$1 cn=$2 newkey=$3
    shift 3
    mkdir -p "$d"
    printf '%s\n' '[ca]' 'default_ca = c' '[c]' "database = $d/index" "new_certs_dir = $d" \
        "serial = $d/serial" 'default_md = sha256' 'policy = pol' 'x509_extensions = client' \
        '[pol]' 'commonName = supplied' '[client]' 'basicConstraints = CA:FALSE' \
        'keyUsage = critical, digitalSignature, keyEncipherment, keyAgreement' \
        'extendedKeyUsage = clientAuth' >"$d/ca.cnf"
    : >"$d/index"
    echo 1000 >"$d/serial"
    {
        # shellcheck disable=SC2086 # NEWKEY is several words on purpose
        openssl req -new -newkey $newkey -nodes -keyout "$d/client.key" -subj "/CN=$cn" \
            -out "$d/client.csr" &&
            openssl ca -batch -config "$d/ca.cnf" -keyfile "$OVT_DIR/pki/ca.key" \
                -cert "$OVT_DIR/pki/ca.crt" "$@" -in "$d/client.csr" -out "$d/client.crt"
    } >"$d/openssl.log" 2>&1 || fail "could not make a certificate for $cn: $(cat "$d/openssl.log")"
}

ovt_wrap_server_line() { # the server's wrapper directive for OVT_WRAP, with PKI dir $1
    case "$OVT_WRAP" in
    tls-crypt) echo "tls-crypt $1/ta.key" ;;
    tls-auth) echo "tls-auth $1/tls-auth.key 0" ;;
    none) ;;
    *) fail "unknown OVT_WRAP=$OVT_WRAP" ;;
    esac
}

ovt_wrap_client_line() {
    case "$OVT_WRAP" in
    tls-crypt) echo "tls-crypt $1/ta.key" ;;
    tls-auth) echo "tls-auth $1/tls-auth.key 1" ;;
    none) ;;
    *) fail "unknown OVT_WRAP=$OVT_WRAP" ;;
    esac
}

# server_conf_write DIR [LINE...]: DIR/server.conf in OpenVPN 2.6 server syntax, absolute paths,
# status file DIR/status.log every OVT_STATUS_INTERVAL seconds (default 1; status-version from
# OVT_STATUS_VERSION if set), keepalive OVT_KEEPALIVE (default "10 60"), then each LINE appended
# as is. OVT_TOPOLOGY (default subnet; "none": no topology line, so the server's default applies)
# and OVT_SERVER_LINE (default "server 198.19.0.0 255.255.255.0") change the address lines.
server_conf_write() {
    local dir=$1
    shift
    local pki=$dir/pki
    {
        echo "# written by tests/netns/lib.sh"
        echo "port $OVT_PORT"
        echo "proto ${OVT_PROTO:-udp}"
        echo "dev tun"
        [ "${OVT_TOPOLOGY:-}" = none ] || echo "topology ${OVT_TOPOLOGY:-subnet}"
        echo "${OVT_SERVER_LINE:-server 198.19.0.0 255.255.255.0}"
        echo "ca $pki/ca.crt"
        echo "cert $pki/server.crt"
        echo "key $pki/server.key"
        echo "dh none"
        ovt_wrap_server_line "$pki"
        echo "keepalive ${OVT_KEEPALIVE:-10 60}"
        echo "status $dir/status.log ${OVT_STATUS_INTERVAL:-1}"
        [ -n "${OVT_STATUS_VERSION:-}" ] && echo "status-version $OVT_STATUS_VERSION"
        echo "explicit-exit-notify 1"
        echo "verb 3"
        local line
        for line in "$@"; do
            echo "$line"
        done
    } >"$dir/server.conf"
}

server_alive() {
    [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null
}

# ns_pid NS COMM: the PID of the process named COMM in namespace NS (the real server or client,
# not its timeout/setpriv wrapper, which stays in the parent namespace); fails when none runs.
ns_pid() {
    local p
    for p in $(ip netns pids "$1" 2>/dev/null); do
        if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$2" ]; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

# server_process_pid: the PID of the server process itself (SERVER_PID is its wrapper), for
# signals and /proc; fails when it is not running.
server_process_pid() {
    local comm=openvpn
    # (the kernel keeps the first 15 characters of the program's name)
    [ "$OVPN_SERVER_IMPL" = ovpnd ] && comm=$(basename "$OVPND" | cut -c1-15)
    ns_pid "$NS_SRV" "$comm"
}

# server_log_since: the server log written since the last server_start.
server_log_since() {
    tail -c "+$((OVT_SERVER_LOG_OFF + 1))" "$OVT_DIR/server.log" 2>/dev/null
}

server_ready() {
    server_alive || return 1
    # Implementation-neutral readiness: the tun has its address and the UDP port is bound.
    # (subnet: "inet ADDR/BITS"; net30 and p2p: "inet ADDR peer REMOTE/32")
    out_has "inet ${OVT_SERVER_TUN_IP}[/ ]" ip -n "$NS_SRV" -4 addr show || return 1
    case "${OVT_PROTO:-udp}" in
    tcp*) out_has . ip netns exec "$NS_SRV" ss -Hltn "sport = :$OVT_PORT" || return 1 ;;
    *) out_has . ip netns exec "$NS_SRV" ss -Hlun "sport = :$OVT_PORT" || return 1 ;;
    esac
    if [ "$OVPN_SERVER_IMPL" = openvpn ]; then
        server_log_since | grep "Initialization Sequence Completed" >/dev/null || return 1
    fi
    return 0
}

# server_spawn DIR: start the server on DIR/server.conf (ovpnd or openvpn 2.6, as
# OVPN_SERVER_IMPL says) without waiting for it to be ready (server_start waits; a test of
# management-hold, for one, cannot). Removes a stale DIR/status.log first.
server_spawn() {
    local dir=$1
    [ -f "$dir/server.conf" ] || fail "server_spawn: no $dir/server.conf"
    rm -f "$dir/status.log"
    echo "===== server start $(date +%T) ($OVPN_SERVER_IMPL) =====" >>"$dir/server.log"
    OVT_SERVER_LOG_OFF=$(stat -c %s "$dir/server.log")
    case "$OVPN_SERVER_IMPL" in
    ovpnd) ovt_spawn "$NS_SRV" "$dir/server.log" "$OVPND" --config "$dir/server.conf" ;;
    openvpn) ovt_spawn "$NS_SRV" "$dir/server.log" openvpn --config "$dir/server.conf" ;;
    esac
    SERVER_PID=$OVT_LAST_PID
}

# server_start DIR: start the server (OVPN_SERVER_IMPL) on DIR/server.conf in the server
# namespace, log appended to DIR/server.log, and wait until it is ready (tun address set, UDP
# port bound). Removes a stale DIR/status.log first.
server_start() {
    local dir=$1
    server_spawn "$dir"
    local deadline=$((SECONDS + 20))
    until server_ready; do
        server_alive || fail "server exited during start-up"
        [ "$SECONDS" -lt "$deadline" ] || fail "server not ready within 20 s"
        sleep 0.1
    done
    ovt_log "server up (pid $SERVER_PID)"
}

# server_stop: SIGTERM the server and wait for it to exit (SIGKILL after 10 s).
server_stop() {
    local pid=$SERVER_PID
    [ -n "$pid" ] || return 0
    ovt_signal "$pid" TERM
    if ! wait_for 10 pid_gone "$pid"; then
        ovt_log "server did not exit on SIGTERM within 10 s; killing it"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    ovt_wait "$pid" || true
    SERVER_PID=
}

pid_gone() {
    ! kill -0 "$1" 2>/dev/null
}

# client_conf_write DIR I [LINE...]: DIR/clientI.conf for the stock openvpn client. The cert
# and key are DIR/pki/clientI.{crt,key} unless OVT_CLIENT_CERT / OVT_CLIENT_KEY name others;
# OVT_CLIENT_CERT=none: no certificate at all (for verify-client-cert none). OVT_CLIENT_BIND
# replaces the "nobind" line (e.g. "lport 40001" for a fixed source port).
client_conf_write() {
    local dir=$1 i=$2
    shift 2
    local pki=$dir/pki
    {
        echo "client"
        echo "dev tun"
        echo "${OVT_CLIENT_REMOTE:-remote $OVT_SERVER_IP $OVT_PORT ${OVT_CLIENT_PROTO:-udp4}}"
        echo "${OVT_CLIENT_BIND:-nobind}"
        echo "remote-cert-tls server"
        echo "ca $pki/ca.crt"
        if [ "${OVT_CLIENT_CERT:-}" != none ]; then
            echo "cert ${OVT_CLIENT_CERT:-$pki/client$i.crt}"
            echo "key ${OVT_CLIENT_KEY:-$pki/client$i.key}"
        fi
        ovt_wrap_client_line "$pki"
        echo "connect-retry 1 1"
        echo "explicit-exit-notify 1"
        echo "verb 3"
        local line
        for line in "$@"; do
            echo "$line"
        done
    } >"$dir/client$i.conf"
}

client_alive() {
    local pid=${CLIENT_PID[$1]:-}
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

# client_start DIR I [LINE...]: write DIR/clientI.conf (extra LINEs appended) and start the
# stock openvpn client in client namespace I, log to DIR/clientI.log (truncated). Returns at
# once; use wait_tunnel.
client_start() {
    local dir=$1 i=$2
    shift 2
    [ "$i" -ge 1 ] && [ "$i" -le "$OVT_N_CLIENTS" ] || fail "client_start: no client namespace $i"
    client_conf_write "$dir" "$i" "$@"
    : >"$dir/client$i.log"
    ovt_spawn "$(client_ns "$i")" "$dir/client$i.log" openvpn --config "$dir/client$i.conf"
    CLIENT_PID[$i]=$OVT_LAST_PID
    CLIENT_TUN_IP[$i]=
}

# client_restart I [TIMEOUT_S]: SIGUSR1 to client I's openvpn (it restarts in place, a new
# session) and wait until it logs one more "Initialization Sequence Completed".
client_restart() {
    local i=$1 timeout_s=${2:-30} pid n
    pid=$(client_process_pid "$i") || fail "client_restart: no openvpn process for client $i"
    n=$(grep -c "Initialization Sequence Completed" "$OVT_DIR/client$i.log" || true)
    kill -USR1 "$pid"
    wait_for "$timeout_s" client_inits_at_least "$i" $((n + 1)) ||
        fail "client $i did not come back within $timeout_s s of its restart"
}

# client_process_pid I: the PID of client I's openvpn itself (CLIENT_PID is its wrapper).
client_process_pid() {
    ns_pid "$(client_ns "$1")" openvpn
}

# client_peer_ids I: the peer-ids client I was pushed, each once, space-separated ("0 ").
client_peer_ids() {
    grep -o "Data Channel: .*peer-id: [0-9]*" "$OVT_DIR/client$1.log" | awk '{ print $NF }' |
        sort -u | tr '\n' ' '
}

# status_lists_once CN: the (status-version 1) status file has exactly one CLIENT_LIST row for CN.
status_lists_once() {
    [ "$(grep -c "^$1," "$OVT_DIR/status.log" 2>/dev/null)" = 1 ]
}

# client_inits_at_least I N: client I has logged "Initialization Sequence Completed" N times.
client_inits_at_least() {
    [ "$(grep -c "Initialization Sequence Completed" "$OVT_DIR/client$1.log" || true)" -ge "$2" ]
}

# client_tun_dev I: name of the tun device in client namespace I (empty if none).
client_tun_dev() {
    ip -n "$(client_ns "$1")" -o link show type tun 2>/dev/null | awk -F': ' 'NR==1 {print $2}' |
        cut -d@ -f1
}

# client_tun_ip I: the client's 198.19.0.x tunnel address (empty if none); with net30/p2p the
# address has a peer ("inet ADDR peer REMOTE/32").
client_tun_ip() {
    # awk reads to the end (no early exit that would SIGPIPE ip under pipefail)
    ip -n "$(client_ns "$1")" -4 -o addr show 2>/dev/null |
        awk '!found && $4 ~ /^198\.19\.0\.[0-9]+(\/|$)/ { split($4, a, "/"); print a[1]; found = 1 }'
}

client_up() {
    local i=$1
    client_alive "$i" || return 1
    grep -q "Initialization Sequence Completed" "$OVT_DIR/client$i.log" 2>/dev/null || return 1
    [ -n "$(client_tun_ip "$i")" ]
}

# wait_tunnel I [TIMEOUT_S]: wait until client I logs "Initialization Sequence Completed" and
# has a 198.19.0.0/24 address on its tun; sets CLIENT_TUN_IP[I]. Fails the test on timeout.
wait_tunnel() {
    local i=$1 timeout_s=${2:-30}
    local deadline=$((SECONDS + timeout_s))
    until client_up "$i"; do
        client_alive "$i" || fail "client $i exited before the tunnel came up"
        [ "$SECONDS" -lt "$deadline" ] || fail "client $i: tunnel not up within $timeout_s s"
        sleep 0.1
    done
    if grep -q "Initialization Sequence Completed With Errors" "$OVT_DIR/client$i.log"; then
        fail "client $i: Initialization Sequence Completed With Errors"
    fi
    CLIENT_TUN_IP[$i]=$(client_tun_ip "$i")
    ovt_log "client $i tunnel up: ${CLIENT_TUN_IP[$i]} on $(client_tun_dev "$i")"
}

# client_stop I: SIGTERM client I (it sends explicit-exit-notify) and wait for it to exit.
client_stop() {
    local i=$1 pid=${CLIENT_PID[$1]:-}
    [ -n "$pid" ] || return 0
    ovt_signal "$pid" TERM
    if ! wait_for 15 pid_gone "$pid"; then
        ovt_log "client $i did not exit on SIGTERM within 15 s; killing it"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    ovt_wait "$pid" || true
    CLIENT_PID[$i]=
    CLIENT_TUN_IP[$i]=
}

# ping_loss NS DST COUNT INTERVAL_S: ping from NS, print the packet loss in percent as ping
# reports it (e.g. 0, 0.5, 100; 100 when ping printed no summary).
ping_loss() {
    local ns=$1 dst=$2 count=$3 interval=$4 out loss
    shift 4 # the rest: extra ping options, e.g. -s 1400
    out=$(ovt_run $((count / 10 + 30)) "$ns" ping -n -q -c "$count" -i "$interval" -W 2 "$@" "$dst" 2>&1) || true
    loss=$(printf '%s\n' "$out" | sed -n 's/.* \([0-9.]*\)% packet loss.*/\1/p' | head -n 1)
    [ -n "$loss" ] || loss=100
    echo "$loss"
}

# ping_rtt NS DST COUNT INTERVAL_S: ping from NS and print "MEDIAN MAX RECEIVED" (round-trip
# times in ms; "- - 0" when nothing came back). The median says how fast the path is even when
# a loaded test machine delays a few packets.
ping_rtt() {
    local out
    out=$(ovt_run $(($3 / 10 + 30)) "$1" ping -n -c "$3" -i "$4" -W 1 "$2" 2>&1) || true
    printf '%s\n' "$out" | sed -n 's/.* time=\([0-9.]*\) ms.*/\1/p' | sort -n |
        awk '{ t[NR] = $1 } END { if (NR == 0) { print "- - 0" } else {
            printf "%s %s %d\n", t[int((NR + 1) / 2)], t[NR], NR } }'
}

# assert_ping NS DST COUNT INTERVAL_S MAX_LOSS_PCT WHAT [PING_OPTIONS...]
assert_ping() {
    local loss
    # One echo first, not counted: the loss figure is about the path once it carries traffic,
    # not about the first packet after a tunnel came up (the stock client may still be busy
    # with its routes and scripts then).
    ovt_run 5 "$1" ping -n -q -c 1 -W 2 "${@:7}" "$2" >/dev/null 2>&1 || true
    loss=$(ping_loss "$1" "$2" "$3" "$4" "${@:7}")
    if awk -v l="$loss" -v m="$5" 'BEGIN { exit !(l > m) }'; then
        fail "$6: $loss% loss pinging $2 ($3 pings, at most $5% allowed)"
    fi
    ovt_log "$6: $3 pings to $2, $loss% loss"
}

# loadgen_find: sets LOADGEN to the load generator built beside $OVPND (or $OVPND_LOADGEN); the
# test fails when there is none.
loadgen_find() {
    LOADGEN=${OVPND_LOADGEN:-$(dirname "$OVPND")/ovpnd-loadgen}
    [ -x "$LOADGEN" ] || fail "load generator not found at $LOADGEN (build it, or set OVPND_LOADGEN)"
}

# loadgen_args PKI CLIENT: sets the array lg_args to the load generator's options for the server
# of netns_setup, with CLIENT's certificate and key from PKI (pki_make) and the key that
# OVT_WRAP wraps the control channel with. Skips the test for any other OVT_WRAP than tls-crypt
# or tls-auth: the generator speaks no other.
loadgen_args() {
    lg_args=(--server "$OVT_SERVER_IP:$OVT_PORT" --ca "$1/ca.crt" --cert "$1/$2.crt"
        --key "$1/$2.key")
    case "$OVT_WRAP" in
    tls-crypt) lg_args+=(--tls-crypt "$1/ta.key") ;;
    tls-auth) lg_args+=(--tls-auth "$1/tls-auth.key" --key-direction 1) ;;
    *) ovt_skip "the load generator needs tls-crypt or tls-auth, not OVT_WRAP=$OVT_WRAP" ;;
    esac
}

# tcp_transfer WHAT RECV_NS RECV_ADDR SEND_NS SRC DST PORT [TIMEOUT_S]: send file SRC over TCP
# from namespace SEND_NS to RECV_ADDR:PORT, where a receiver in RECV_NS writes it to DST
# (tcpxfer.py); fails unless both ends finish within TIMEOUT_S (default 100) and DST's sha256 is
# SRC's. Logs the sender's figures.
tcp_transfer() {
    local what=$1 rns=$2 raddr=$3 sns=$4 src=$5 dst=$6 port=$7 timeout_s=${8:-100}
    local ready=$OVT_DIR/ready.$port xfer=$OVT_LIB_DIR/tcpxfer.py lpid
    rm -f "$ready" "$dst"
    ovt_spawn "$rns" "$OVT_DIR/listen.$port.log" "$OVT_PY" "$xfer" listen --bind "$raddr" \
        --port "$port" --ready "$ready" --recv "$dst" --timeout "$timeout_s"
    lpid=$OVT_LAST_PID
    wait_for 30 test -s "$ready" || fail "$what: TCP listener on $raddr:$port did not start"
    if ! ovt_run $((timeout_s + 10)) "$sns" "$OVT_PY" "$xfer" connect --host "$raddr" \
        --port "$port" --send "$src" --timeout "$timeout_s" >"$OVT_DIR/connect.$port.log" 2>&1; then
        cat "$OVT_DIR/connect.$port.log" "$OVT_DIR/listen.$port.log" >&2
        fail "$what: TCP transfer through the tunnel failed"
    fi
    ovt_wait "$lpid" || {
        cat "$OVT_DIR/listen.$port.log" >&2
        fail "$what: TCP receiver failed"
    }
    [ "$(sha256sum <"$src")" = "$(sha256sum <"$dst")" ] ||
        fail "$what: sha256 mismatch ($(stat -c %s "$dst") of $(stat -c %s "$src") bytes arrived)"
    ovt_log "$what: $(stat -c %s "$src") bytes, sha256 matches: $(cat "$OVT_DIR/connect.$port.log")"
}

# wait_server_log REGEX TIMEOUT_S: wait until the server log since the last start matches REGEX
# (extended regular expression).
wait_server_log() {
    wait_for "$2" server_log_grep "$1"
}

# (grep reads all its input: with pipefail, an early `grep -q` exit could fail the pipeline
# through SIGPIPE on a big log even though the text is there.)
server_log_grep() {
    server_log_since | grep -E -- "$1" >/dev/null
}
