#!/usr/bin/env bash
# management-client: the server connects to its management client instead of listening.
#  - nothing listens at the address: the server stops at start-up (2.6: SIGTERM from the
#    management interface);
#  - a listener in the server's namespace gets the management banner, asks `version` and, once a
#    stock client is connected, `status 2`, which lists it; then it closes the link: the server
#    stops (2.6: a management-client link that goes away is a SIGTERM).
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
conn.sendall(b"version\n")
until(b"\nEND")
deadline = time.time() + 30
while not os.path.exists(done) and time.time() < deadline:
    time.sleep(0.1)
buf = b""
conn.sendall(b"status 2\n")
until(b"\nEND")
open(out, "wb").write(buf.replace(b"\r\n", b"\n"))
conn.close()
PY
ovt_spawn "$NS_SRV" "$d/listener.log" "$OVT_PY" "$d/listener.py" "$mport" "$d/mgmt.out" "$d/client-up"
listener=$OVT_LAST_PID
wait_for 10 out_has ":$mport " ip netns exec "$NS_SRV" ss -Hltn || fail "the test's listener did not start"
server_start "$d"
client_start "$d" 1
wait_tunnel 1
touch "$d/client-up"
ovt_wait "$listener" || { cat "$d/listener.log" >&2; fail "the management client's session failed"; }
grep -q '^CLIENT_LIST,client1,' "$d/mgmt.out" ||
    fail "status 2 over the management-client link does not list client1"
wait_for 15 pid_gone "$SERVER_PID" || fail "the server runs on after its management link closed"
ovt_wait "$SERVER_PID" || true
SERVER_PID=
ovt_log "PASS"
