/* ovpnd_plugin.h: the C interface of ovpnd's own plugins, version 1.
 *
 * A plugin is a shared object named in the config like an OpenVPN plugin:
 *
 *     plugin /usr/local/lib/ovpnd/plugins/ovpnd-auth-cert.so cn=alice ou=laptops
 *
 * ovpnd looks for `ovpnd_plugin_open` first (this interface), then for the OpenVPN plugin
 * entry points (openvpn_plugin_open_v3 ...), so both kinds can be listed, in any order; all of
 * them are called in config order for each event.
 *
 * Stability: a plugin built against version N works with every ovpnd that implements version
 * N. Later versions only append members to the end of struct ovpnd_plugin_host and struct
 * ovpnd_plugin; ovpnd passes the version it implements and the size of the struct it offers.
 *
 * Threads: every plugin gets a thread of its own, and all its hooks run on it, one call at a
 * time, in the order ovpnd made them. A hook may block (a PAM conversation, an LDAP query): that
 * delays only this plugin's later calls, never ovpnd's event loops or other clients' traffic.
 * The hooks of one client's connection count against `hand-window` (60 s by default): a client
 * whose hooks have not all answered by then is refused, and answers that come later are dropped.
 * ovpnd_plugin_open and close run on the main thread, at start-up (before ovpnd drops
 * privileges with `user`/`group`) and at shutdown.
 *
 * Variables: each hook gets the client's variables, the same names and values a script gets in
 * its environment for that event (see the README of sample-config), among them common_name,
 * username, untrusted_ip, untrusted_port, trusted_ip6, ifconfig_pool_remote_ip,
 * ifconfig_pool_netmask, ifconfig_pool_remote_ip6, X509_<depth>_<field> (X509_0_CN,
 * X509_0_OU ...), tls_serial_<depth>, tls_serial_hex_<depth>, tls_digest_sha256_<depth>, the
 * client's peer info (IV_VER, IV_PLAT, IV_PROTO ...), and `setenv` values. host->var reads one.
 */
#ifndef OVPND_PLUGIN_H
#define OVPND_PLUGIN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OVPND_PLUGIN_VERSION 1

/* What a hook returns. */
enum ovpnd_plugin_result {
    OVPND_PLUGIN_OK = 0,    /* accepted / done */
    OVPND_PLUGIN_DENY = 1,  /* refuse the client: it gets AUTH_FAILED */
    OVPND_PLUGIN_DEFER = 2, /* auth_user_pass only: the answer follows through host->auth_done */
    OVPND_PLUGIN_ERROR = 3, /* the plugin failed: the client is refused, the log says so */
};

/* Log levels of host->log. */
enum ovpnd_plugin_log_level {
    OVPND_PLUGIN_LOG_ERROR = 0,
    OVPND_PLUGIN_LOG_WARN = 1,
    OVPND_PLUGIN_LOG_INFO = 2,
    OVPND_PLUGIN_LOG_DEBUG = 3,
};

struct ovpnd_plugin_vars;     /* one hook call's variables (opaque) */
struct ovpnd_plugin_deferred; /* a username/password answer that comes later (opaque) */

/* What ovpnd offers a plugin. Valid from ovpnd_plugin_open until close returns. */
struct ovpnd_plugin_host {
    unsigned int version; /* OVPND_PLUGIN_VERSION of the running ovpnd */
    size_t size;          /* sizeof(struct ovpnd_plugin_host) of the running ovpnd */

    /* The value of variable name in vars, or NULL when it is not set. The string belongs to
     * ovpnd and is valid until the hook returns. Only on the thread of that hook call. */
    const char *(*var)(const struct ovpnd_plugin_vars *vars, const char *name);

    /* Write one line to ovpnd's log, prefixed with the plugin's file name. host: the pointer
     * ovpnd_plugin_open got; level: enum ovpnd_plugin_log_level. Any thread, any time. */
    void (*log)(const struct ovpnd_plugin_host *host, int level, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

    /* The answer to an auth_user_pass call that returned OVPND_PLUGIN_DEFER: result is
     * OVPND_PLUGIN_OK or OVPND_PLUGIN_DENY; reason (NULL or printable text, at most 200 bytes)
     * is sent with AUTH_FAILED on DENY. Exactly once per deferred call, from any thread; d is
     * freed by it. An answer after hand-window is ignored. */
    void (*auth_done)(struct ovpnd_plugin_deferred *d, int result, const char *reason);
};

/* What a plugin offers ovpnd, filled in by ovpnd_plugin_open (ovpnd zeroes it first). A hook
 * left NULL is never called. ctx is handed back to every hook and to close. Strings passed to
 * hooks belong to ovpnd and are valid until the hook returns. */
struct ovpnd_plugin {
    void *ctx;

    /* tls-verify: once per certificate of the client's chain, after the TLS handshake and
     * before anything else looks at the client, CA first (depth N ... 0). subject is the
     * certificate's subject in openvpn's form ("CN=alice, OU=laptops"); vars has the chain's
     * X509_<depth>_* and tls_* variables. Returns OK or DENY (the client is refused). */
    int (*tls_verify)(void *ctx, const struct ovpnd_plugin_vars *vars, int depth,
                      const char *subject);

    /* auth-user-pass-verify: the username and password the client sent (NUL-terminated; the
     * password may be openvpn's static-challenge form "SCRV1:base64:base64"). Returns OK, DENY,
     * or DEFER and later host->auth_done(d, ...). d is valid until host->auth_done is called
     * with it; when the hook returns OK or DENY, d is freed by ovpnd and must be forgotten. */
    int (*auth_user_pass)(void *ctx, const struct ovpnd_plugin_vars *vars, const char *username,
                          const char *password, struct ovpnd_plugin_deferred *d);

    /* Address assignment: at client-connect time, before client_connect of the same plugin.
     * vars has the address ovpnd's pool chose (ifconfig_pool_remote_ip, ifconfig_pool_netmask,
     * ifconfig_pool_remote_ip6). To give the client another address, write it as text into
     * ipv4 (ipv4_cap = 16 bytes: "198.19.0.77") and/or ipv6 (ipv6_cap = 46 bytes, an address
     * without prefix length), else leave them empty (""). The address must lie in the server's
     * subnet and not be held by another client, or the client is refused, as for a
     * client-config-dir `ifconfig-push`. With topology net30 the server's end of the client's
     * tunnel is the other usable address of the address's /30 block, so give one of the two
     * middle addresses of a block (4n+1 or 4n+2) there. Returns OK, or DENY (no address for
     * this client).
     * Release what you hand out in client_disconnect. */
    int (*address_assign)(void *ctx, const struct ovpnd_plugin_vars *vars, char *ipv4,
                          size_t ipv4_cap, char *ipv6, size_t ipv6_cap);

    /* client-connect: after authentication and address assignment, before the client's
     * PUSH_REPLY. Lines written into config (NUL-terminated, at most config_cap = 8192 bytes
     * with the NUL) are applied like a client-config-dir file: push, push-reset, push-remove,
     * iroute, iroute-ipv6, ifconfig-push, ifconfig-ipv6-push, disable. Returns OK, or DENY. */
    int (*client_connect)(void *ctx, const struct ovpnd_plugin_vars *vars, char *config,
                          size_t config_cap);

    /* client-disconnect: once for every client whose client_connect stage completed, when it
     * goes (exit, timeout, replaced, server shutdown), with bytes_received, bytes_sent and
     * time_duration among vars. Nothing waits for it except shutdown (a few seconds). */
    void (*client_disconnect)(void *ctx, const struct ovpnd_plugin_vars *vars);

    /* learn-address: op is "add", "update" or "delete"; address an IPv4 or IPv6 address or an
     * iroute ("198.19.5.0/24"); common_name is NULL for "delete". Called in the order the
     * routes change. */
    void (*learn_address)(void *ctx, const char *op, const char *address, const char *common_name);

    /* Free everything; no hook runs after it. May be NULL. */
    void (*close)(void *ctx);
};

/* The entry point every plugin exports (with default visibility):
 *   version: OVPND_PLUGIN_VERSION of the running ovpnd; a plugin that needs a later version
 *            returns non-zero.
 *   host:    ovpnd's services (see above).
 *   argv:    the words after the plugin's path on its `plugin` line, NULL-terminated (argv[0]
 *            is the path itself).
 *   plugin:  to fill in.
 *   err:     on failure, a reason for the log (err_cap = 256 bytes).
 * Returns 0, or non-zero to stop ovpnd's start-up (the log shows FILE:LINE of the `plugin`
 * line and err). */
int ovpnd_plugin_open(unsigned int version, const struct ovpnd_plugin_host *host,
                      const char *const *argv, struct ovpnd_plugin *plugin, char *err,
                      size_t err_cap);

typedef int (*ovpnd_plugin_open_fn)(unsigned int version, const struct ovpnd_plugin_host *host,
                                    const char *const *argv, struct ovpnd_plugin *plugin, char *err,
                                    size_t err_cap);

#ifdef __cplusplus
}
#endif

#endif /* OVPND_PLUGIN_H */
