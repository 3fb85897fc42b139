#!/usr/bin/env bash
# management-client: the server connects to its management client instead of listening.
#  - nothing listens at the address: the server stops at start-up (2.6: SIGTERM from the
#    management interface);
#  - a listener in the server's namespace gets the management banner and, with management-hold
#    and management-up-down, releases the hold and gets >UPDOWN:UP with the tunnel's environment
#    (dev, ifconfig_local, ... ending in >UPDOWN:ENV,END); once a stock client is connected,
#    `status 2` lists it; `signal SIGTERM` brings >UPDOWN:DOWN and the server stops;
#  - a listener that hangs up right after the banner: the server stops (2.6: a
#    management-client link that goes away is a SIGTERM).
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init management_client

netns_setup 1
pki_make "$OVT_DIR"
d=$OVT_DIR
mport=7506

# --- nobody to connect to
server_conf_write "$d" "management 127.0.0.1 $mport" "management-client"
server_spawn "$d"
wait_for 15 pid_gone "$SERVER_PID" ||
    fail "the server runs on although its management client cannot be reached"
ovt_wait "$SERVER_PID" || true
SERVER_PID=
ovt_log "no management client to connect to: the server stopped"

# --- a management client that takes the connection, then hangs up
cat >"$d/listener.py" <<'PY'
import os, socket, sys, time
port, out, done = int(sys.argv[1]), sys.argv[2], sys.argv[3]
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(1)
srv.settimeout(30)
conn, _ = srv.accept()
conn.settimeout(30)
buf = b""
def until(marker):
    global buf
    while marker not in buf:
        chunk = conn.recv(4096)
        if not chunk:
            raise SystemExit("link closed before " + marker.decode())
        buf += chunk
until(b">INFO:OpenVPN Management Interface Version")
if len(sys.argv) > 4:  # hang up at once
    conn.close()
    raise SystemExit(0)
until(b">HOLD:")
conn.sendall(b"hold release\n")
until(b">UPDOWN:ENV,END")
up = buf[buf.index(b">UPDOWN:UP"):]
buf = b""
conn.sendall(b"version\n")
until(b"\nEND")
deadline = time.time() + 30
while not os.path.exists(done) and time.time() < deadline:
    time.sleep(0.1)
buf = b""
conn.sendall(b"status 2\n")
until(b"\nEND")
status = buf
buf = b""
conn.sendall(b"signal SIGTERM\n")
until(b">UPDOWN:DOWN")
until(b">UPDOWN:ENV,END")
down = buf[buf.index(b">UPDOWN:DOWN"):]
open(out, "wb").write((up + status + down).replace(b"\r\n", b"\n"))
conn.close()
PY
ovt_spawn "$NS_SRV" "$d/listener.log" "$OVT_PY" "$d/listener.py" "$mport" "$d/mgmt.out" "$d/client-up"
listener=$OVT_LAST_PID
wait_for 10 out_has ":$mport " ip netns exec "$NS_SRV" ss -Hltn || fail "the test's listener did not start"
server_conf_write "$d" "management 127.0.0.1 $mport" "management-client" "management-hold" \
    "management-up-down"
server_start "$d"
client_start "$d" 1
wait_tunnel 1
touch "$d/client-up"
ovt_wait "$listener" || { cat "$d/listener.log" >&2; fail "the management client's session failed"; }
grep -q '^CLIENT_LIST,client1,' "$d/mgmt.out" ||
    fail "status 2 over the management-client link does not list client1"
updown() { # updown UP|DOWN VAR: the value of VAR in the >UPDOWN:<first arg> block
    awk -v ev=">UPDOWN:$1" -v var="$2" '$0 == ev { f = 1; next }
        f && /^>UPDOWN:ENV,END/ { exit } f && index($0, ">UPDOWN:ENV," var "=") == 1 {
        print substr($0, length(">UPDOWN:ENV," var "=") + 1) }' "$d/mgmt.out"
}
for ev in UP DOWN; do
    grep -qx ">UPDOWN:$ev" "$d/mgmt.out" || fail "no >UPDOWN:$ev over the management link"
    [ "$(updown "$ev" dev)" = tun0 ] || fail ">UPDOWN:$ev: dev is '$(updown "$ev" dev)', not tun0"
    [ "$(updown "$ev" ifconfig_local)" = "$OVT_SERVER_TUN_IP" ] ||
        fail ">UPDOWN:$ev: ifconfig_local is '$(updown "$ev" ifconfig_local)'"
done
wait_for 15 pid_gone "$SERVER_PID" || fail "the server runs on after signal SIGTERM"
ovt_wait "$SERVER_PID" || true
SERVER_PID=
ovt_log "hold, UP, status and DOWN over the management-client link"

# --- the management client hangs up
server_conf_write "$d" "management 127.0.0.1 $mport" "management-client"
ovt_spawn "$NS_SRV" "$d/listener2.log" "$OVT_PY" "$d/listener.py" "$mport" /dev/null /dev/null hangup
listener=$OVT_LAST_PID
wait_for 10 out_has ":$mport " ip netns exec "$NS_SRV" ss -Hltn || fail "the test's listener did not start"
server_spawn "$d"
ovt_wait "$listener" || { cat "$d/listener2.log" >&2; fail "the second listener failed"; }
wait_for 15 pid_gone "$SERVER_PID" || fail "the server runs on after its management link closed"
ovt_wait "$SERVER_PID" || true
SERVER_PID=
ovt_log "PASS"
