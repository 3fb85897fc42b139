#!/usr/bin/env bash
# Logging to syslog, as openvpn 2.6 does it (error.c open_syslog, x_msg_va; init.c
# possibly_become_daemon): facility daemon, the program name and the pid on every message,
# severity error / warning / notice.
#  - `daemon NAME` without `log`: the server detaches (its standard error goes to /dev/null) and
#    its lines reach syslog tagged NAME[PID] with the PID of its pid file, a client's connect
#    among them; a refused client is logged as a warning (ovpnd; 2.6 logs its refusal as an
#    error); nothing is written to its old standard error.
#  - `daemon NAME` with `log-append FILE`: the file gets the lines, syslog none; with
#    `machine-readable-output` each line is stamped "SECONDS.MICROSECONDS FLAGS " (2.6 error.c).
#  - `syslog` with no name, in the foreground: the lines reach syslog tagged with the program's
#    own name (ovpnd, or openvpn for 2.6).
# There is no syslog daemon here: the server runs in a mount namespace of its own whose /dev/log
# is the socket of tests/netns/syslog_sink.py (tests/netns/dev_log_ns.sh).
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init syslog
command -v unshare >/dev/null || ovt_skip "unshare not installed"

netns_setup 2
pki_make "$OVT_DIR"
sock=$OVT_DIR/dev-log.sock
sink=$OVT_DIR/syslog.txt
pidfile=$OVT_DIR/server.pid
: >"$sink"
ovt_spawn - "$OVT_DIR/sink.log" "$OVT_PY" "$OVT_LIB_DIR/syslog_sink.py" "$sock" "$sink"
wait_for 10 test -S "$sock" || fail "the syslog stand-in did not start"
ccd=$OVT_DIR/ccd
mkdir -p "$ccd"
printf 'disable\n' >"$ccd/client2"
chmod -R a+rX "$ccd"

prog=ovpnd
server_cmd=("$OVPND")
if [ "$OVPN_SERVER_IMPL" = openvpn ]; then
    prog=openvpn
    server_cmd=(openvpn)
fi

# sink_lines TAG PID: the messages in the sink tagged TAG[PID], as "PRI MESSAGE".
sink_lines() {
    sed -nE "s/^<([0-9]+)>[A-Z][a-z]{2} [ 0-9][0-9] [0-9:]{8} $1\[$2\]: (.*)$/\1 \2/p" "$sink"
}
sink_has() { # sink_has TAG PID ERE: a message tagged TAG[PID] matches ERE ("PRI MESSAGE")
    sink_lines "$1" "$2" | grep -qE -- "$3"
}
log_has() { # log_has FILE ERE
    grep -qE -- "$2" "$1" 2>/dev/null
}

# start_server: start the server on $OVT_DIR/server.conf with /dev/log the sink's socket; wait
# until it is up (tun address, UDP port; openvpn: "Initialization Sequence Completed" in syslog
# or in the log file). Sets SERVER_PID to the wrapper (gone at once for a daemon).
start_server() {
    rm -f "$pidfile"
    echo "===== server start $(date +%T) ($OVPN_SERVER_IMPL) =====" >>"$OVT_DIR/server.log"
    OVT_SERVER_LOG_OFF=$(stat -c %s "$OVT_DIR/server.log")
    ovt_spawn "$NS_SRV" "$OVT_DIR/server.log" bash "$OVT_LIB_DIR/dev_log_ns.sh" "$sock" \
        "$OVT_DIR/host-dev" "${server_cmd[@]}" --config "$OVT_DIR/server.conf"
    SERVER_PID=$OVT_LAST_PID
    wait_for 20 server_up || fail "server not up within 20 s"
    ovt_log "server up (pid $(server_process_pid))"
}
server_up() {
    server_process_pid >/dev/null || return 1
    out_has "inet ${OVT_SERVER_TUN_IP}[/ ]" ip -n "$NS_SRV" -4 addr show || return 1
    out_has . ip netns exec "$NS_SRV" ss -Hlun "sport = :$OVT_PORT" || return 1
    if [ "$OVPN_SERVER_IMPL" = openvpn ]; then
        grep -q "Initialization Sequence Completed" "$sink" "$OVT_DIR"/file*.log 2>/dev/null ||
            return 1
    fi
}
stop_server() {
    local pid
    pid=$(server_process_pid) || fail "no server process to stop"
    kill -TERM "$pid"
    wait_for 15 pid_gone "$pid" || fail "server did not exit on SIGTERM"
    ovt_wait "$SERVER_PID" || true
    SERVER_PID=
}
daemon_pid() { # the daemon's pid from its pid file (it writes it after detaching)
    [ -s "$pidfile" ] && cat "$pidfile"
}

# 1. daemon NAME, no log: everything goes to syslog.
server_conf_write "$OVT_DIR" "daemon ovt-syslog-test" "writepid $pidfile" \
    "client-config-dir $ccd"
start_server
ovt_wait "$SERVER_PID" || fail "the server's start-up process did not exit 0 after daemon()"
wait_for 10 daemon_pid >/dev/null || fail "no pid file from the daemon"
pid=$(daemon_pid)
[ "$pid" = "$(server_process_pid)" ] || fail "pid file says $pid, the server runs as $(server_process_pid)"
wait_for 10 sink_has ovt-syslog-test "$pid" . ||
    fail "no syslog message tagged ovt-syslog-test[$pid] (sink: $(head -c 600 "$sink"))"
client_start "$OVT_DIR" 1
wait_tunnel 1
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.2 0 "client 1 -> server"
# The client's connect, at notice (facility daemon 3 << 3 | LOG_NOTICE 5 = 29).
wait_for 10 sink_has ovt-syslog-test "$pid" "^29 .*client1/198\.18\.0\.2:[0-9]+" ||
    fail "client 1's connect is not in syslog at notice: $(sink_lines ovt-syslog-test "$pid" | tail -n 5)"
client_start "$OVT_DIR" 2
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    # A refusal is a warning (LOG_WARNING 4: 28). 2.6 logs its 'disable' refusal as an error
    # (multi.c, D_MULTI_ERRORS), so this is checked against ovpnd only.
    wait_for 20 sink_has ovt-syslog-test "$pid" "^28 WARNING: client2/198\.18\.0\.3:[0-9]+: refused" ||
        fail "client 2's refusal is not in syslog as a warning: $(sink_lines ovt-syslog-test "$pid" | tail -n 5)"
else
    wait_for 20 grep -q "AUTH_FAILED" "$OVT_DIR/client2.log" || fail "client 2 was not refused"
fi
client_stop 2
# Every message is facility daemon (PRI 24..31), and none went to the old standard error.
if sink_lines ovt-syslog-test "$pid" | awk '$1 < 24 || $1 > 31 { bad = 1 } END { exit !bad }'; then
    fail "a syslog message not at facility daemon: $(sink_lines ovt-syslog-test "$pid" | awk '$1 < 24 || $1 > 31' | head -n 3)"
fi
if server_log_grep "client1"; then
    fail "the daemon wrote log lines to its old standard error"
fi
n_daemon=$(sink_lines ovt-syslog-test "$pid" | wc -l)
ovt_log "daemon without log: $n_daemon messages in syslog as ovt-syslog-test[$pid]"
client_stop 1
stop_server

# 2. daemon NAME with log-append FILE: the file wins; with machine-readable-output each line
#    starts with the Unix time in microseconds and the message's flags in hex (2.6 error.c).
n_before=$(wc -l <"$sink")
server_conf_write "$OVT_DIR" "daemon ovt-syslog-test" "writepid $pidfile" \
    "log-append $OVT_DIR/file.log" "machine-readable-output"
t_start=$(date +%s)
start_server
wait_for 10 daemon_pid >/dev/null || fail "no pid file from the daemon"
client_start "$OVT_DIR" 1
wait_tunnel 1
wait_for 10 log_has "$OVT_DIR/file.log" "client1/198\.18\.0\.2:[0-9]+" ||
    fail "client 1's connect is not in the log-append file"
client_stop 1
stop_server
bad=$(grep -vE '^[0-9]{10}\.[0-9]{6} [0-9a-f]+ ' "$OVT_DIR/file.log" | head -n 3 || true)
[ -z "$bad" ] || fail "machine-readable-output: lines not stamped 'SECONDS.MICROSECONDS FLAGS': $bad"
grep -qE '^[0-9]{10}\.[0-9]{6} 1 .*client1/198\.18\.0\.2:[0-9]+' "$OVT_DIR/file.log" ||
    fail "machine-readable-output: client 1's connect is not stamped with flags 1 (M_INFO)"
awk -v t0="$t_start" -v t1="$(date +%s)" '{ if ($1 < t0 - 1 || $1 > t1 + 1) bad = 1 } END { exit bad }' \
    "$OVT_DIR/file.log" || fail "machine-readable-output: a stamp outside the test's time"
ovt_log "machine-readable-output: $(wc -l <"$OVT_DIR/file.log") lines, e.g. $(grep -m1 'client1/' "$OVT_DIR/file.log" | cut -c1-60)"
[ "$(wc -l <"$sink")" = "$n_before" ] ||
    fail "with log-append, syslog still got: $(tail -n +$((n_before + 1)) "$sink" | head -n 3)"

# 3. syslog without a name, in the foreground: tagged with the program's name.
server_conf_write "$OVT_DIR" "syslog"
start_server
pid=$(server_process_pid)
client_start "$OVT_DIR" 1
wait_tunnel 1
wait_for 10 sink_has "$prog" "$pid" "^29 .*client1/198\.18\.0\.2:[0-9]+" ||
    fail "client 1's connect is not in syslog as ${prog}[$pid]: $(tail -n 5 "$sink")"
client_stop 1
stop_server
