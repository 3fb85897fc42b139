/* server/config/profile.h: `ovpnd profile`: one inline client profile (.ovpn) from the server's
 * own config, so that the options a client needs (proto and port, data-ciphers, compression,
 * the tls-auth / tls-crypt / tls-crypt-v2 key, tun-mtu, auth-user-pass) follow the server config
 * exactly as the server parser reads it (includes, inline blocks, `cd`).
 *
 * The profile keeps to options that the stock openvpn 2.6 client and OpenVPN Connect (openvpn3)
 * both take: client, dev tun, remote HOST PORT udp|tcp, nobind, remote-cert-tls server,
 * verify-x509-name CN name, tun-mtu, compress / comp-lzo, auth-user-pass, auth, key-direction,
 * verb, and the inline blocks <ca>, <cert>, <key>, <tls-auth>, <tls-crypt>, <tls-crypt-v2>;
 * plus persist-tun, explicit-exit-notify (UDP only) and data-ciphers (when not the default),
 * which openvpn3 ignores with a warning (its cliopt.hpp list of ignored options): a profile
 * that needs a cipher outside Connect's default set does not suit Connect.
 */
#ifndef SERVER_CONFIG_PROFILE_H
#define SERVER_CONFIG_PROFILE_H

/* Run `ovpnd profile ARGS...`: argv[0] is "profile", argc counts argv. Parses the server config
 * named by --config, checks the client certificate against its `ca` (and `crl-verify` file) and
 * the key against the certificate, and writes the profile to --out FILE (mode 0600, replaced)
 * or standard output. With tls-crypt-v2 in the server config a new client key is made from the
 * server key unless --tls-crypt-v2-key names one (or --no-tls-crypt-v2 asks for the server's
 * tls-auth / tls-crypt key beside it). Main thread, before anything else runs;
 * reads files, writes one. Messages go to standard error. Returns the process exit status: 0,
 * 1 (a file or check failed) or 2 (bad usage). */
int profile_main(int argc, char **argv);

#endif /* SERVER_CONFIG_PROFILE_H */
