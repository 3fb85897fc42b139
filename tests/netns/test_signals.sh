#!/usr/bin/env bash
# Signals an openvpn admin sends: SIGHUP (2.6 restarts with its config read again; ovpnd reloads
# it with the clients connected: here nothing changed, see test_reload.sh) and SIGUSR1 (2.6
# restarts; ovpnd logs and ignores it): the server keeps running and the connected client's
# tunnel keeps working, with no new session. Both reopen the `log-append` file, as logrotate
# needs without copytruncate: after the file was moved away, the lines that follow go to a new
# one. SIGUSR2 logs the counters.
# SIGTERM then ends the server with the client told (explicit-exit-notify: it restarts).
# The config's warnings at start-up (here: `opt-verify`, accepted and ignored) are in the log
# file too, not only on the terminal.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init signals
[ "$OVPN_SERVER_IMPL" = ovpnd ] || ovt_skip "openvpn restarts on SIGHUP and SIGUSR1"

netns_setup 1
pki_make "$OVT_DIR"
LOGF=$OVT_DIR/ovpnd.log
server_conf_write "$OVT_DIR" "log-append $LOGF" "opt-verify"
server_start "$OVT_DIR"
grep -q "WARNING: .*opt-verify" "$LOGF" || fail "the config's warning is not in the log file"
client_start "$OVT_DIR" 1
wait_tunnel 1
ns=$(client_ns 1)
assert_ping "$ns" "$OVT_SERVER_TUN_IP" 5 0.05 0 "before the signals"
pid=$(server_process_pid) || fail "no ovpnd process in $NS_SRV"

for sig in HUP USR1; do
    mv "$LOGF" "$LOGF.$sig" # as logrotate does
    kill -"$sig" "$pid"
    wait_for 5 grep -q "SIG$sig: log file $LOGF reopened" "$LOGF" ||
        fail "SIG$sig did not reopen the log file"
    if [ "$sig" = HUP ]; then
        wait_for 5 grep -q "reload: no change to apply" "$LOGF" || fail "SIGHUP did not reload"
    else
        wait_for 5 grep -Eq "SIG$sig: .*not implemented" "$LOGF" || fail "no warning logged for SIG$sig"
    fi
    server_alive || fail "SIG$sig ended the server"
    assert_ping "$ns" "$OVT_SERVER_TUN_IP" 5 0.05 0 "after SIG$sig"
done
grep -q "Initialization Sequence Completed" "$LOGF.HUP" || fail "the first log file lost its start"
ovt_log "SIGHUP and SIGUSR1 each reopened the moved log file"
kill -USR2 "$pid"
wait_for 5 grep -Eq 'worker 0: packets in [0-9]+' "$LOGF" || fail "SIGUSR2 logged no worker counters"
server_alive || fail "SIGUSR2 ended the server"
n=$(grep -c "Initialization Sequence Completed" "$OVT_DIR/client1.log")
[ "$n" = 1 ] || fail "the client started $n sessions, not 1: the signals disturbed it"

kill -TERM "$pid"
wait_for 10 bash -c "! kill -0 $pid 2>/dev/null" || fail "SIGTERM did not end the server"
wait_for 10 grep -q "server-pushed-connection-reset\|SIGUSR1\[soft" "$OVT_DIR/client1.log" ||
    fail "the client was not told that the server went away"
ovt_log "SIGHUP reloaded, SIGUSR1 ignored with a warning, SIGUSR2 counters, SIGTERM told the client"
