#!/usr/bin/env bash
# The management interface (openvpn 2.6 doc/management-notes.txt), driven by a scripted client
# (tests/netns/mgmt_client.py) with two stock clients connected:
#  - run 1: `management PATH unix` without a password; runs 2 and 3: `management 127.0.0.1 PORT
#    PW-FILE` (a wrong password is refused, the right one accepted); status-version 1, 2, 3;
#  - version, pid (the server's), state (CONNECTED with the tunnel address), load-stats (2
#    clients), status, status 1/2/3: the same text as the status file apart from times and
#    counters;
#  - bad input: an unknown command, an overlong line: errors, and the session still answers;
#  - run 3: kill CN and kill IP:PORT: the stock client is told RESTART and its old address leaves
#    the status; client-kill CID HALT: the client exits and leaves the status; unknown CN / CID
#    are errors;
#  - ovpnd only (openvpn 2.6 serves one management client at a time): a second client watching
#    with `log on` and `bytecount 1` gets >LOG, >BYTECOUNT_CLI and >CLIENT:ESTABLISHED with its
#    >CLIENT:ENV block while a third one floods commands and never
#    reads: that one is dropped, the others keep their answers.
# Every step runs against OVPN_SERVER_IMPL=openvpn as well, where 2.6 supports it.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init management

netns_setup 2
pki_make "$OVT_DIR"
mc=$OVT_LIB_DIR/mgmt_client.py
PW=s3cret-Management
printf '%s\n' "$PW" >"$OVT_DIR/mgmt.pw"
MPORT=7505
is_ovpnd() { [ "$OVPN_SERVER_IMPL" = ovpnd ]; }

mrun() { # mrun ARGS...: mgmt_client.py run inside the server namespace (tagged lines)
    ovt_run 30 "$NS_SRV" "$OVT_PY" "$mc" run "${MPW[@]}" "$MADDR" "$@"
}
reply_of() { # reply_of OUTPUT TAG: the lines tagged TAG (a reply's number, W, A, P, N)
    printf '%s\n' "$1" | awk -F'\t' -v t="$2" '$1 == t { sub(/^[^\t]*\t/, ""); print }'
}
expect_line() { # expect_line WHAT REGEX TEXT
    grep -Eq -- "$2" <<<"$3" || {
        printf '%s\n' "$3" >&2
        fail "$1: no line matching '$2'"
    }
}

# status_same V TEXT: TEXT (a `status` reply) equals the status file (status-version V) apart
# from times and counters: every field that is a number or a date is masked; the rows are
# compared as sets, since the file is rewritten each second.
status_same() {
    "$OVT_PY" - "$1" "$OVT_DIR/status.log" "$2" <<'EOF'
import re, sys
v, path, text = sys.argv[1], sys.argv[2], sys.argv[3]
sep = "\t" if v == "3" else ","
def norm(t):
    out = set()
    for line in t.replace("\r", "").split("\n"):
        if not line:
            continue
        f = line.split(sep)
        f = ["#" if re.fullmatch(r"\d+|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d|\w{3} \w{3} +\d+ [\d:]+ \d{4}", x)
             else x for x in f]
        out.add(sep.join(f))
    return out
a, b = norm(open(path).read()), norm(text)
if a != b:
    print("file only: %s\nstatus only: %s" % (sorted(a - b), sorted(b - a)), file=sys.stderr)
    sys.exit(1)
EOF
}

status_has_addr() { grep -q -- "$1" "$OVT_DIR/status.log"; }
status_lacks_addr() { ! grep -q -- "$1" "$OVT_DIR/status.log"; }
real_addr_of() { # real_addr_of CN: client CN's real address (IP:PORT) in the v1-3 status file
    tr '\t' ',' <"$OVT_DIR/status.log" | awk -F, -v cn="$1" '
        ($1 == "CLIENT_LIST" && $2 == cn) { print $3; exit }
        ($1 == cn && $2 ~ /:/) { print $2; exit }'
}
cid_of() { # cid_of CN: the Client ID column (status-version 2/3)
    tr '\t' ',' <"$OVT_DIR/status.log" | awk -F, -v cn="$1" '$1 == "CLIENT_LIST" && $2 == cn { print $11; exit }'
}

for v in 1 2 3; do
    ovt_log "--- run $v (status-version $v)"
    if [ "$v" = 1 ]; then
        MADDR=$OVT_DIR/mgmt.sock
        MPW=()
        mline="management $MADDR unix"
    else
        MADDR=127.0.0.1:$MPORT
        MPW=(--password "$PW")
        mline="management 127.0.0.1 $MPORT $OVT_DIR/mgmt.pw"
    fi
    OVT_STATUS_VERSION=$v server_conf_write "$OVT_DIR" "$mline"
    server_start "$OVT_DIR"
    client_start "$OVT_DIR" 1
    client_start "$OVT_DIR" 2
    wait_tunnel 1
    wait_tunnel 2
    wait_for 10 status_has_addr "198.18.0.3:" || fail "client2 not in the status file"
    wait_for 10 status_has_addr "198.18.0.2:" || fail "client1 not in the status file"

    if [ "$v" = 2 ]; then
        out=$(ovt_run 30 "$NS_SRV" "$OVT_PY" "$mc" run --password wrong --password "$PW" "$MADDR" pid)
        [ "$(reply_of "$out" P)" = "ENTER PASSWORD:" ] || fail "no 'ENTER PASSWORD:' prompt: $out"
        # (2.6 drops its "ERROR: bad password" while the password is needed: the prompt again)
        [ "$(reply_of "$out" A)" = "ENTER PASSWORD:
SUCCESS: password is correct" ] || fail "wrong password not refused or right one not accepted: $out"
        ovt_log "password: wrong one refused, right one accepted"
    fi

    out=$(mrun version pid state load-stats status "status 1" "status 2" "status 3" foo \
        "$(printf 'x%.0s' $(seq 1 1500))" pid)
    welcome=$(reply_of "$out" W)
    [ "$welcome" = ">INFO:OpenVPN Management Interface Version 5 -- type 'help' for more info" ] ||
        fail "welcome line: '$welcome'"
    r=$(reply_of "$out" 0)
    # dashboards take the word after "OpenVPN" for openvpn's version (openvpn-monitor: >= 2.4.0
    # for the status layout with client IDs)
    expect_line version '^OpenVPN Version: OpenVPN 2\.[4-9]\.[0-9]+ ' "$r"
    expect_line version '^Management Version: 5$' "$r"
    expect_line version '^END$' "$r"
    spid=$(server_process_pid)
    [ "$(reply_of "$out" 1)" = "SUCCESS: pid=$spid" ] || fail "pid: '$(reply_of "$out" 1)', server is $spid"
    r=$(reply_of "$out" 2)
    expect_line state "^[0-9]+,CONNECTED,SUCCESS,$OVT_SERVER_TUN_IP,,,,\$" "$r"
    expect_line load-stats '^SUCCESS: nclients=2,bytesin=[0-9]+,bytesout=[0-9]+$' "$(reply_of "$out" 3)"
    for i in 4 5 6 7; do
        sv=$((i - 4))
        [ "$sv" = 0 ] && sv=$v
        r=$(reply_of "$out" "$i")
        expect_line "status $sv" '^END$' "$r"
        if [ "$sv" = "$v" ]; then
            status_same "$v" "$r" || fail "status $sv differs from the status file"
        fi
        grep -q 'client1' <<<"$r" || fail "status $sv does not list client1"
    done
    ovt_log "version, pid, state, load-stats, status 1/2/3 (= status file v$v) answered"
    [ "$(reply_of "$out" 8)" = "ERROR: unknown command, enter 'help' for more options" ] ||
        fail "unknown command: '$(reply_of "$out" 8)'"
    expect_line "overlong line" '^ERROR: ' "$(reply_of "$out" 9)"
    [ "$(reply_of "$out" 10)" = "SUCCESS: pid=$spid" ] || fail "no answer after an overlong line"
    ovt_log "unknown command and overlong line refused; the session goes on"

    out=$(mrun verb "verb 4" verb mute "log 3" "echo all" "signal SIGUSR2" "signal SIGFOO" \
        "bytecount 0" "hold" "kill" help exit)
    [ "$(reply_of "$out" 0)" = "SUCCESS: verb=3" ] || fail "verb: '$(reply_of "$out" 0)'"
    [ "$(reply_of "$out" 1)" = "SUCCESS: verb level changed" ] || fail "verb 4: '$(reply_of "$out" 1)'"
    [ "$(reply_of "$out" 2)" = "SUCCESS: verb=4" ] || fail "verb after verb 4: '$(reply_of "$out" 2)'"
    [ "$(reply_of "$out" 3)" = "SUCCESS: mute=0" ] || fail "mute: '$(reply_of "$out" 3)'"
    r=$(reply_of "$out" 4)
    [ "$(grep -Ec '^[0-9]+,[A-Z]*,.' <<<"$r")" = 3 ] && [ "$(printf '%s\n' "$r" | tail -n 1)" = END ] ||
        fail "log 3: not 3 cached lines and END: $r"
    [ "$(reply_of "$out" 5)" = "END" ] || fail "echo all: '$(reply_of "$out" 5)'"
    [ "$(reply_of "$out" 6)" = "SUCCESS: signal SIGUSR2 thrown" ] || fail "signal SIGUSR2: '$(reply_of "$out" 6)'"
    [ "$(reply_of "$out" 7)" = "ERROR: signal 'SIGFOO' is not a known signal type" ] ||
        fail "signal SIGFOO: '$(reply_of "$out" 7)'"
    [ "$(reply_of "$out" 8)" = "SUCCESS: bytecount interval changed" ] || fail "bytecount 0: '$(reply_of "$out" 8)'"
    [ "$(reply_of "$out" 9)" = "SUCCESS: hold=0" ] || fail "hold: '$(reply_of "$out" 9)'"
    [ "$(reply_of "$out" 10)" = "ERROR: the 'kill' command requires 1 parameter" ] ||
        fail "kill without a parameter: '$(reply_of "$out" 10)'"
    r=$(reply_of "$out" 11)
    expect_line help '^Management Interface for ' "$r"
    expect_line help '^status \[n\] +: Show current daemon status info using format #n\.$' "$r"
    grep -qx EOF <<<"$out" || fail "exit did not close the session"
    # SIGUSR2: both write their statistics to the log
    if is_ovpnd; then
        wait_for 10 server_log_grep "worker 0: packets in" || fail "no statistics after signal SIGUSR2"
    fi
    ovt_log "verb, mute, log N, echo, signal, bytecount, hold, help, exit answered"

    if [ "$v" = 3 ]; then
        if is_ovpnd; then
            # a watcher and a client that never reads, beside the scripted one
            : >"$OVT_DIR/watch.log"
            ovt_spawn "$NS_SRV" "$OVT_DIR/watch.err" "$OVT_PY" "$mc" watch "${MPW[@]}" \
                --out "$OVT_DIR/watch.log" "$MADDR" "log on" "bytecount 1"
            ovt_spawn "$NS_SRV" "$OVT_DIR/flood.err" "$OVT_PY" "$mc" flood "${MPW[@]}" "$MADDR" \
                --count 200000 --hold 60
            wait_for 40 grep -q "reads too slowly" "$OVT_DIR/server.log" ||
                fail "the management client that never reads was not dropped"
            [ "$(reply_of "$(mrun pid)" 0)" = "SUCCESS: pid=$spid" ] ||
                fail "no answer while another management client never reads"
            wait_for 10 grep -q '^>BYTECOUNT_CLI:[0-9]*,[0-9]*,[0-9]*$' "$OVT_DIR/watch.log" ||
                fail "no >BYTECOUNT_CLI for the watcher"
            ovt_log "a client that never reads is dropped; the other two are served"
        fi

        a1=$(real_addr_of client1)
        out=$(mrun "kill client1" "kill nobody")
        [ "$(reply_of "$out" 0)" = "SUCCESS: common name 'client1' found, 1 client(s) killed" ] ||
            fail "kill client1: '$(reply_of "$out" 0)'"
        [ "$(reply_of "$out" 1)" = "ERROR: common name 'nobody' not found" ] ||
            fail "kill nobody: '$(reply_of "$out" 1)'"
        if is_ovpnd; then
            wait_for 15 grep -q "Connection reset command was pushed by server" \
                "$OVT_DIR/client1.log" || fail "client1 was not told RESTART"
        fi
        # (openvpn 2.6 drops the instance without a word to the client, multi.c
        # management_callback_kill_by_cn: the client learns of it at its ping-restart)
        wait_for 15 status_lacks_addr "$a1," || fail "client1's old address $a1 stays in the status"
        ovt_log "kill client1: $a1 left the status"

        a2=$(real_addr_of client2)
        out=$(mrun "kill $a2" "kill 198.18.0.99:1")
        [ "$(reply_of "$out" 0)" = "SUCCESS: 1 client(s) at address $a2 killed" ] ||
            fail "kill $a2: '$(reply_of "$out" 0)'"
        [ "$(reply_of "$out" 1)" = "ERROR: client at address 198.18.0.99:1 not found" ] ||
            fail "kill of an unknown address: '$(reply_of "$out" 1)'"
        wait_for 15 status_lacks_addr "$a2," || fail "client2's old address $a2 stays in the status"
        ovt_log "kill $a2: it left the status"

        if is_ovpnd; then
            wait_for 30 client_inits_at_least 1 2 || fail "client1 did not reconnect after the kill"
        else
            client_restart 1 # (2.6 did not tell it)
        fi
        wait_for 15 status_has_addr "198.18.0.2:" || fail "client1 is not back in the status"
        cid=$(cid_of client1)
        [ -n "$cid" ] || fail "no Client ID for client1"
        out=$(mrun "client-kill $cid HALT" "client-kill 999999")
        [ "$(reply_of "$out" 0)" = "SUCCESS: client-kill command succeeded" ] ||
            fail "client-kill $cid: '$(reply_of "$out" 0)'"
        [ "$(reply_of "$out" 1)" = "ERROR: client-kill command failed" ] ||
            fail "client-kill of an unknown CID: '$(reply_of "$out" 1)'"
        wait_for 20 pid_gone "${CLIENT_PID[1]}" || fail "client1 did not exit on client-kill HALT"
        wait_for 15 status_lacks_addr "198.18.0.2:" || fail "client1 stays in the status after HALT"
        ovt_log "client-kill $cid HALT: client1 exited and left the status"

        if is_ovpnd; then
            # (>CLIENT:DISCONNECT and ADDRESS come only with management-client-auth, as in 2.6:
            # test_management_client_auth.sh)
            for note in '^>CLIENT:ESTABLISHED,[0-9]+$' '^>CLIENT:ENV,n_clients=[0-9]+$' \
                '^>CLIENT:ENV,common_name=client1$' '^>CLIENT:ENV,END$' '^>LOG:[0-9]+,I,'; do
                grep -Eq -- "$note" "$OVT_DIR/watch.log" || {
                    tail -n 40 "$OVT_DIR/watch.log" >&2
                    fail "the watching management client got no line matching $note"
                }
            done
            ovt_log "the watcher got >LOG, >BYTECOUNT_CLI, >CLIENT:ESTABLISHED with ENV"
        fi
    fi
    client_stop 1
    client_stop 2
    server_stop
done
