/* server/hooks/hook_env.h: the environment variables openvpn 2.6 gives its scripts and plugins
 * (auth-user-pass-verify, tls-verify, client-connect, client-disconnect, learn-address), built
 * into a struct script_env (server/hooks/script.h).
 *
 * Names and formats follow openvpn 2.6: misc.c/env_set.c (setenv_settings, setenv_str_incr),
 * socket.c setenv_link_socket_actual (PREFIX_ip, PREFIX_ip6, PREFIX_port), ssl_verify.c
 * (verify_cert_set_env, output_peer_info_env), ssl_verify_mbedtls.c (x509_setenv,
 * backend_x509_get_serial, backend_x509_get_serial_hex), multi.c (multi_client_connect_setenv,
 * multi_set_virtual_addr_env, multi_client_disconnect_setenv), and
 * doc/man-sections/script-options.rst. No function here blocks; any thread may call them on its
 * own env.
 */
#ifndef SERVER_HOOKS_HOOK_ENV_H
#define SERVER_HOOKS_HOOK_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <mbedtls/x509_crt.h>

#include "server/config/config.h"
#include "server/hooks/script.h"
#include "server/addr/udp_addr.h"

#define HOOK_CERT_DEPTH_MAX 16 /* openvpn ssl_verify.h MAX_CERT_DEPTH */
#define HOOK_SUBJECT_MAX 512   /* bytes of a formatted certificate subject, NUL included */

/* What every script and plugin gets (2.6 setenv_settings and the global env): the `setenv`
 * lines, config, verb, daemon, daemon_log_redirect. Returns 0, -EINVAL or -ENOMEM. */
int hook_env_base(const struct config *cfg, struct script_env *env);

/* The server itself, for hook_env_global. */
struct hook_server {
    const char *dev; /* the TUN device's name */
    int tun_mtu;
    uint32_t local;          /* the tun's IPv4 address (host order): ifconfig_local */
    uint32_t remote_netmask; /* topology subnet: its netmask; net30/p2p: its peer */
    bool is_p2p;             /* net30/p2p: remote_netmask is named ifconfig_remote */
    bool has_ipv6;
    uint8_t local6[16]; /* network order */
    int ipv6_bits;
    uint16_t port;
    time_t start_time;
    long pid;
};

/* What 2.6 has in its global environment for every script and plugin call: hook_env_base, then
 * daemon_start_time, daemon_pid, proto_1, local_1 (with `local`), local_port_1, remote_port_1
 * (options.c setenv_settings), dev, dev_type, tun_mtu, ifconfig_local and ifconfig_netmask (or
 * ifconfig_remote), ifconfig_ipv6_local, ifconfig_ipv6_netbits (init.c, tun.c
 * do_ifconfig_setenv), redirect_gateway=0 and script_context=init. Returns 0, -EINVAL or
 * -ENOMEM. */
int hook_env_global(struct script_env *env, const struct config *cfg, const struct hook_server *s);

/* The client's IV_* and UV_* peer-info lines (peer_info: "NAME=value\n" lines, "" if none)
 * whose names are letters, digits and '_', as 2.6 output_peer_info_env exports them; other
 * lines are skipped. Returns 0 or -ENOMEM. */
int hook_env_peer_info(struct script_env *env, const char *peer_info);

/* PREFIX_ip (IPv4, also for a v4-mapped IPv6 address) or PREFIX_ip6, and PREFIX_port, of addr:
 * prefix "trusted" or "untrusted" as 2.6 names them. Returns 0, -EINVAL or -ENOMEM. */
int hook_env_addr(struct script_env *env, const char *prefix, const union udp_addr *addr);

/* time_unix (seconds) and time_ascii ("2026-11-30 06:35:26", local time, 2.6 otime.c
 * time_string) of t, as 2.6 sets them for client-connect. Returns 0 or -ENOMEM. */
int hook_env_time(struct script_env *env, time_t t);

/* The certificate's subject as 2.6 (mbed TLS build) prints it: "C=.., O=.., CN=.." from
 * mbedtls_x509_dn_gets, with control characters replaced by '?'. buf: HOOK_SUBJECT_MAX bytes.
 * Returns 0 or -EINVAL when the subject cannot be printed. */
int hook_cert_subject(const mbedtls_x509_crt *crt, char *buf, size_t buf_len);

/* The variables of the certificate at depth (0: the client's own): X509_<depth>_<field> for
 * each subject field (short names such as CN, O, OU, emailAddress; a repeated field gets _1,
 * _2 ... as 2.6 setenv_str_incr), tls_id_<depth> (the subject), tls_digest_<depth> (SHA-1) and
 * tls_digest_sha256_<depth> (lowercase hex bytes separated by ':'), tls_serial_<depth>
 * (decimal) and tls_serial_hex_<depth> (uppercase hex bytes separated by ':'). Returns 0,
 * -EINVAL or -ENOMEM. */
int hook_env_cert(struct script_env *env, int depth, const mbedtls_x509_crt *crt);

/* hook_env_cert without the X509_<depth>_<field> variables (x509-track sets its own instead,
 * server/hooks/x509_track.h): tls_id_, tls_digest_, tls_digest_sha256_, tls_serial_,
 * tls_serial_hex_<depth>. Same returns. */
int hook_env_cert_info(struct script_env *env, int depth, const mbedtls_x509_crt *crt);

/* The chain openvpn verifies for leaf: leaf at depth 0, then each certificate's issuer, looked
 * up by subject in the chain the client sent (leaf->next ...) and then in trusted (the `ca`
 * certificates), until a self-signed certificate or one whose issuer is in neither; at most
 * cap (<= HOOK_CERT_DEPTH_MAX) entries into out. Returns the number found (0 when leaf is
 * NULL). The pointers borrow from leaf's and trusted's lists. */
size_t hook_cert_chain(const mbedtls_x509_crt *leaf, const mbedtls_x509_crt *trusted,
                       const mbedtls_x509_crt **out, size_t cap);

/* What client-connect, client-disconnect and learn-address are told about one client. */
struct hook_client {
    const char *common_name;
    const char *username; /* NULL when no username/password was checked */
    union udp_addr remote;
    uint32_t vaddr, vaddr_netmask; /* the client's address and the netmask pushed with it */
    bool is_p2p; /* topology net30/p2p: vaddr_netmask is the client's peer address, named
                  * ifconfig_pool_local_ip */
    bool has_ipv6;
    uint8_t vaddr6[16], remote_addr6[16]; /* network order */
    int vaddr6_bits;
    time_t connected_since;
};

/* The per-client variables of 2.6's client-connect environment (after hook_env_global):
 * common_name, username (if any), trusted_ip[6]/trusted_port, untrusted_ip[6]/untrusted_port,
 * ifconfig_pool_remote_ip, ifconfig_pool_netmask (net30/p2p: ifconfig_pool_local_ip),
 * ifconfig_pool_remote_ip6, ifconfig_pool_local_ip6, ifconfig_pool_ip6_netbits, time_unix,
 * time_ascii. Returns 0, -EINVAL or -ENOMEM. */
int hook_env_client(struct script_env *env, const struct hook_client *c);

/* client-disconnect's additions (multi_client_disconnect_setenv): bytes_received and
 * bytes_sent (link bytes) and time_duration (seconds since the connection). Returns 0 or
 * -ENOMEM. */
int hook_env_disconnect(struct script_env *env, uint64_t bytes_received, uint64_t bytes_sent,
                        int64_t duration_s);

/* Copy every variable of from to the end of to. Returns 0 or -ENOMEM. */
int hook_env_append(struct script_env *to, const struct script_env *from);

/* The value of NAME in env, or NULL. */
const char *hook_env_get(const struct script_env *env, const char *name);

#endif /* SERVER_HOOKS_HOOK_ENV_H */
