#!/usr/bin/env bash
# crl-verify: a client whose certificate is on the CA's CRL is refused at the TLS handshake,
# with a log line naming its address and certificate CN and the reason, and gets no address;
# the others connect. Revoking one more certificate while the server runs takes effect at that
# client's next connection, without a restart (the CRL file is read again when it changes).
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init crl_verify

netns_setup 3
pki_make "$OVT_DIR" --clients 3
dir=$OVT_DIR
bash "$OVT_SRC/scripts/pki.sh" --revoke client2 "$dir/pki"
OVT_STATUS_VERSION=2 server_conf_write "$dir" "crl-verify $dir/pki/crl.pem"
server_start "$dir"

client_start "$dir" 1
wait_tunnel 1
client_start "$dir" 2 "auth-retry none"
wait_server_log "198\.18\.0\.3:[0-9]+.*certificate has been revoked.*CN 'client2'" 30 ||
    fail "the revoked client2 was not refused with a log line naming it"
[ -z "$(client_tun_ip 2)" ] || fail "the revoked client got an address"
client_alive 2 && client_up 2 && fail "the revoked client's tunnel came up"
grep -q "^CLIENT_LIST,client2," "$dir/status.log" && fail "the revoked client is in the status file"
ovt_log "revoked certificate refused"

# Revoke client3 now: the server notices the new file.
bash "$OVT_SRC/scripts/pki.sh" --revoke client3 "$dir/pki"
wait_server_log "crl-verify: .*crl.pem changed, CRL reloaded" 10 || fail "the new CRL was not read"
client_start "$dir" 3 "auth-retry none"
wait_server_log "198\.18\.0\.4:[0-9]+.*certificate has been revoked.*CN 'client3'" 30 ||
    fail "client3, revoked while the server ran, was not refused"
[ -z "$(client_tun_ip 3)" ] || fail "client3 got an address after its revocation"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "the good client still works"
ovt_log "a certificate revoked at run time is refused at its next connection"
