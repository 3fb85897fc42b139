/* server/config/config_check.c: what is decided once the whole config is read: required directives,
 * combinations, defaults that depend on other directives, and reading and checking the
 * certificate, key and tls-auth/tls-crypt files (openvpn reads them at start-up too, after
 * every `cd`). Facts from openvpn 2.6 src/openvpn/options.c (options_postprocess_verify_ce,
 * options_postprocess_mutate_ce, options_postprocess_cipher), helper.c (helper_keepalive) and
 * init.c (do_option_warnings).
 */
#include "server/config/config_internal.h"

#include <arpa/inet.h>

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/error.h>
#include <mbedtls/pk.h>
#include <mbedtls/x509_crt.h>

#include "proto/data_crypto.h"
#include "proto/tls_crypt_v2.h"
#include "server/config/topology.h"

#define MSSFIX_DEFAULT 1492 /* openvpn mtu.h */

static const struct config_where *later(const struct config_where *a, const struct config_where *b)
{
    /* Both from the same parse; "later" only matters for which line the message names. */
    if (a->line == 0) {
        return b;
    }
    if (b->line == 0) {
        return a;
    }
    if (a->file == b->file) {
        return a->line > b->line ? a : b;
    }
    return b;
}

static int check_dev(struct config_parser *ps)
{
    const char *dev = ps->cfg->net.dev;

    if (dev == NULL) {
        /* a refused `dev` line was reported already */
        return config_refused(ps, "dev") || config_refused(ps, "dev-type")
                   ? -EINVAL
                   : config_error_at(ps, NULL, NULL, "dev is required (e.g. 'dev tun')");
    }
    /* 2.6 dev_type_enum: dev-type when given, else the name's first three letters */
    if (ps->is_dev_type_tap || (!ps->is_dev_type_tun && strncmp(dev, "tap", 3) == 0)) {
        ps->cfg->net.is_tap = true;
        return 0;
    }
    if (ps->is_dev_type_tun || strncmp(dev, "tun", 3) == 0) {
        return 0;
    }
    if (strcmp(dev, "null") == 0) {
        return config_error_at(ps, &ps->seen_dev, "dev",
                               "not implemented yet in ovpnd (null devices; use tun)");
    }
    return config_error_at(ps, &ps->seen_dev, "dev",
                           "cannot tell the device type of '%s': add 'dev-type tun'", dev);
}

/* What only works with one device type (2.6 helper.c helper_client_server, options.c
 * options_postprocess_verify_ce), and what ovpnd does not do with dev tap. */
static int check_tap(struct config_parser *ps)
{
    const struct config_net *net = &ps->cfg->net;
    bool has_bridge = net->has_server_bridge || net->server_bridge_dhcp;

    if (has_bridge && net->has_server) {
        const struct config_where *w = later(&ps->seen_server, &ps->seen_server_bridge);

        return config_error_at(ps, w, w == &ps->seen_server ? "server" : "server-bridge",
                               "server and server-bridge cannot be used together");
    }
    if (has_bridge && !net->is_tap) {
        return config_error_at(ps, &ps->seen_server_bridge, "server-bridge",
                               "only makes sense with dev tap");
    }
    if (has_bridge && net->has_ifconfig_pool) {
        return config_error_at(ps, &ps->seen_ifconfig_pool, "ifconfig-pool",
                               "server-bridge already defines an ifconfig-pool, so you can't "
                               "also specify one explicitly");
    }
    if (net->has_lladdr && !net->is_tap) {
        return config_error_at(ps, &ps->seen_lladdr, "lladdr", "can only be used with dev tap");
    }
    /* 2.6 options_postprocess_verify_ce (server mode) */
    if (net->vlan_tagging && !net->is_tap) {
        return config_error_at(ps, &ps->seen_vlan_tagging, "vlan-tagging",
                               "must be used with dev tap");
    }
    if (!net->vlan_tagging && ps->seen_vlan_accept.line != 0 &&
        net->vlan_accept != VLAN_ACCEPT_ALL) {
        return config_error_at(ps, &ps->seen_vlan_accept, "vlan-accept", "requires vlan-tagging");
    }
    if (!net->vlan_tagging && ps->seen_vlan_pvid.line != 0 && net->vlan_pvid != 1) {
        return config_error_at(ps, &ps->seen_vlan_pvid, "vlan-pvid", "requires vlan-tagging");
    }
    return 0;
}

static int check_timers(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;
    const struct config_where *ping =
        later(later(&ps->seen_ping, &ps->seen_ping_restart), &ps->seen_ping_exit);

    if (ps->seen_keepalive.line > 0 && ping->line > 0) {
        const struct config_where *w = later(&ps->seen_keepalive, ping);
        const char *name = w == &ps->seen_keepalive   ? "keepalive"
                           : w == &ps->seen_ping      ? "ping"
                           : w == &ps->seen_ping_exit ? "ping-exit"
                                                      : "ping-restart";

        return config_error_at(ps, w, name,
                               "keepalive conflicts with ping, ping-exit and ping-restart: "
                               "keepalive alone is enough");
    }
    if (ps->seen_keepalive.line > 0) {
        cfg->timers.ping_s = cfg->timers.keepalive_ping_s;
        cfg->timers.ping_restart_s =
            2 * cfg->timers.keepalive_restart_s; /* server side, helper.c */
    } else if (ping->line == 0) {
        return config_warn(ps, &(struct config_where){NULL, 0},
                           "keepalive is missing from the server config: dead clients are "
                           "never noticed (add e.g. 'keepalive 10 60')");
    }
    return 0;
}

static int check_tls(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;
    static const char *const versions[] = {"1.0", "1.1", "1.2"};
    int min = 0, max = 2;

    if (ps->seen_tls_auth.line > 0 && ps->seen_tls_crypt.line > 0) {
        const struct config_where *w = later(&ps->seen_tls_auth, &ps->seen_tls_crypt);

        return config_error_at(ps, w, w == &ps->seen_tls_auth ? "tls-auth" : "tls-crypt",
                               "tls-auth and tls-crypt are mutually exclusive");
    }
    if (cfg->tls.tls_wrap_mode == CONFIG_TLS_WRAP_AUTH && strcmp(cfg->tls.auth, "none") == 0) {
        return config_error_at(ps, &ps->seen_auth, "auth", "tls-auth needs a digest, not none");
    }
    for (int i = 0; i < 3; i++) {
        if (strcmp(cfg->tls.tls_version_min, versions[i]) == 0) {
            min = i;
        }
        if (cfg->tls.tls_version_max != NULL &&
            strcmp(cfg->tls.tls_version_max, versions[i]) == 0) {
            max = i;
        }
    }
    if (max < min) {
        return config_error_at(ps, later(&ps->seen_tls_version_min, &ps->seen_tls_version_max),
                               NULL, "tls-version-max %s is below tls-version-min %s",
                               cfg->tls.tls_version_max, cfg->tls.tls_version_min);
    }
    return 0;
}

bool config_in_colon_list(const char *list, const char *name)
{
    size_t len = strlen(name);

    for (const char *p = list; p != NULL; p = strchr(p, ':')) {
        p += *p == ':' ? 1 : 0;
        if (strncmp(p, name, len) == 0 && (p[len] == ':' || p[len] == '\0')) {
            return true;
        }
    }
    return false;
}

/* The first CBC cipher in the colon list (or the single name) list, or NULL. */
static const char *first_cbc(const char *list, char *buf, size_t buf_len)
{
    for (const char *p = list; p != NULL && *p != '\0';) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        enum data_cipher c;

        if (len < buf_len) {
            memcpy(buf, p, len);
            buf[len] = '\0';
            if (data_cipher_from_name(buf, &c) == 0 && data_cipher_is_cbc(c)) {
                return buf;
            }
        }
        p = end ? end + 1 : NULL;
    }
    return NULL;
}

/* options_postprocess_cipher: a server's --cipher outside --data-ciphers is ignored. */
static int check_cipher(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;
    char name[64];
    const char *cbc = first_cbc(cfg->tls.data_ciphers, name, sizeof(name));

    if (!cbc) {
        cbc = first_cbc(cfg->tls.data_ciphers_fallback, name, sizeof(name));
    }
    if (cbc && strcmp(cfg->tls.auth, "none") == 0) {
        /* 2.6 runs such a channel without any integrity check; ovpnd does not offer it */
        return config_error_at(ps, &ps->seen_auth, "auth",
                               "auth none with the CBC cipher %s (no integrity protection) is "
                               "not supported by ovpnd; use a digest such as SHA256",
                               cbc);
    }

    if (cfg->tls.cipher == NULL || config_in_colon_list(cfg->tls.data_ciphers, cfg->tls.cipher)) {
        return 0;
    }
    return config_warn(ps, &ps->seen_cipher,
                       "cipher: '%s' is not in data-ciphers (%s) and is ignored, as by openvpn "
                       "2.6; add it to data-ciphers or use data-ciphers-fallback for clients "
                       "that cannot negotiate",
                       cfg->tls.cipher, cfg->tls.data_ciphers);
}

static int tls_error(struct config_parser *ps, const struct config_where *where, const char *name,
                     const struct config_blob *blob, const char *what, int rc)
{
    char text[128];

    mbedtls_strerror(rc, text, sizeof(text));
    return config_error_at(ps, where, name, "%s: %s (%s)", blob->origin, what, text);
}

/* Load a file named by a directive, unless it came inline. */
static int load(struct config_parser *ps, struct config_pending *pending, const char *name,
                struct config_blob *blob)
{
    if (pending->path == NULL) {
        return 0;
    }
    return config_read_blob(ps, &pending->where, name, pending->path, blob);
}

static int check_certs(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;
    mbedtls_x509_crt ca, cert;
    mbedtls_pk_context key;
    int rc, err = 0;

    mbedtls_x509_crt_init(&ca);
    mbedtls_x509_crt_init(&cert);
    mbedtls_pk_init(&key);
    /* PEM input is given to mbed TLS with its terminating NUL, as it requires. No ca is
     * allowed only with capath or peer-fingerprint (check_files). */
    rc = cfg->tls.ca.data == NULL
             ? 0
             : mbedtls_x509_crt_parse(&ca, (const unsigned char *)cfg->tls.ca.data,
                                      cfg->tls.ca.len + 1);
    if (cfg->tls.ca.data != NULL && (rc < 0 || ca.version == 0)) {
        err = tls_error(ps, &ps->ca.where, "ca", &cfg->tls.ca, "no valid certificate", rc);
        goto out;
    }
    if (rc > 0) {
        err = config_warn(ps, &ps->ca.where,
                          "ca: %s: %d certificate(s) could not be read and "
                          "are left out",
                          cfg->tls.ca.origin, rc);
    }
    if (cfg->mgmt.external_cert || cfg->pkcs11.n_providers > 0) {
        goto out; /* the certificate comes at start-up (config_cert_set_external checks it) */
    }
    rc = mbedtls_x509_crt_parse(&cert, (const unsigned char *)cfg->tls.cert.data,
                                cfg->tls.cert.len + 1);
    if (rc != 0 || cert.version == 0) {
        err = tls_error(ps, &ps->cert.where, "cert", &cfg->tls.cert, "not a valid certificate", rc);
        goto out;
    }
    if (cfg->mgmt.external_key) {
        /* the management client holds the key: only its kind is known here */
        if (!mbedtls_pk_can_do(&cert.pk, MBEDTLS_PK_RSA) &&
            !mbedtls_pk_can_do(&cert.pk, MBEDTLS_PK_ECKEY)) {
            err = config_error_at(ps, &ps->cert.where, "cert",
                                  "%s: management-external-key needs an RSA or EC key",
                                  cfg->tls.cert.origin);
        }
        goto out;
    }
    if (cfg->tls.is_key_locked) {
        goto out; /* its password comes at start-up (config_key_unlock checks the pair) */
    }
    rc = mbedtls_pk_parse_key(&key, (const unsigned char *)cfg->tls.key.data, cfg->tls.key.len + 1,
                              NULL, 0);
    if (rc == MBEDTLS_ERR_PK_PASSWORD_REQUIRED) {
        err = config_error_at(ps, &ps->key.where, "key",
                              "%s is encrypted: not implemented yet in ovpnd (askpass)",
                              cfg->tls.key.origin);
        goto out;
    }
    if (rc != 0) {
        err = tls_error(ps, &ps->key.where, "key", &cfg->tls.key, "not a valid private key", rc);
        goto out;
    }
    rc = mbedtls_pk_check_pair(&cert.pk, &key);
    if (rc != 0) {
        err = config_error_at(ps, &ps->key.where, "key", "%s does not match the certificate %s",
                              cfg->tls.key.origin, cfg->tls.cert.origin);
    }
out:
    mbedtls_pk_free(&key);
    mbedtls_x509_crt_free(&cert);
    mbedtls_x509_crt_free(&ca);
    return err;
}

/* `tls-crypt-v2 FILE`: read and parse the server key (a client key given there by mistake is
 * named as such). */
static int check_tls_crypt_v2_key(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;
    struct tls_crypt_v2_server_key sk;
    int err;

    if (!cfg->tls.has_tls_crypt_v2) {
        return 0;
    }
    err = load(ps, &ps->tls_crypt_v2_key, "tls-crypt-v2", &cfg->tls.tls_crypt_v2_key);
    if (err) {
        return err;
    }
    err = tls_crypt_v2_server_key_parse(cfg->tls.tls_crypt_v2_key.data,
                                        cfg->tls.tls_crypt_v2_key.len, &sk);
    tls_crypt_v2_server_key_wipe(&sk);
    if (err) {
        return config_error_at(ps, &ps->tls_crypt_v2_key.where, "tls-crypt-v2",
                               "%s is not a tls-crypt-v2 server key (openvpn --genkey "
                               "tls-crypt-v2-server, or ovpnd --genkey tls-crypt-v2-server)",
                               cfg->tls.tls_crypt_v2_key.origin);
    }
    return 0;
}

/* management-external-cert: instead of cert (and pkcs12), with management-external-key (2.6
 * options.c options_postprocess_verify_ce, in its words). */
static int check_external_cert(struct config_parser *ps)
{
    const struct config *cfg = ps->cfg;

    if (!cfg->mgmt.external_cert) {
        return 0;
    }
    if (ps->certp.pkcs12.path != NULL || ps->certp.pkcs12_inline.data != NULL) {
        return config_error_at(ps, &ps->certp.pkcs12.where, "pkcs12",
                               "Parameter --management-external-cert cannot be used when "
                               "--pkcs12 is also specified (as in openvpn 2.6)");
    }
    if (ps->cert.path != NULL || cfg->tls.cert.data != NULL) {
        return config_error_at(ps, &ps->cert.where, "cert",
                               "--cert and --management-external-cert are mutually exclusive "
                               "(as in openvpn 2.6)");
    }
    if (!cfg->mgmt.external_key) {
        return config_error_at(ps, NULL, NULL,
                               "--management-external-cert must be used with "
                               "--management-external-key (as in openvpn 2.6)");
    }
    return 0;
}

static int check_files(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;
    static const char *const names[] = {"ca", "cert", "key"};
    struct config_pending *pending[] = {&ps->ca, &ps->cert, &ps->key};
    struct config_blob *blobs[] = {&cfg->tls.ca, &cfg->tls.cert, &cfg->tls.key};
    int err = config_cert_before_files(ps);

    if (cfg->mgmt.external_key && (ps->key.path != NULL || cfg->tls.key.data != NULL)) {
        /* 2.6 options.c: they are mutually exclusive */
        return config_error_at(ps, &ps->key.where, "key",
                               "key and management-external-key cannot be used together");
    }
    err = err ? err : check_external_cert(ps);
    err = err ? err : config_check_pkcs11(ps);
    /* every file missing or unreadable is named in one run; the checks that need them all
     * (certificates against each other) only when all were read */
    bool is_ready = err == 0; /* (pkcs12 and external-cert problems come first) */

    for (int i = 0; i < 3 && is_ready && err != -ENOMEM; i++) {
        int e;

        if (i == 1 && cfg->mgmt.external_cert) {
            continue; /* asked from the management client at start-up */
        }
        if (i > 0 && cfg->pkcs11.n_providers > 0) {
            break; /* on the token, opened at start-up */
        }
        if (i == 2 && cfg->mgmt.external_key) {
            break; /* the management client signs */
        }
        if (pending[i]->path == NULL && blobs[i]->data == NULL) {
            if (i == 0 && (cfg->tls.n_peer_fingerprints > 0 || ps->certp.capath.path != NULL)) {
                continue; /* 2.6 options.c check_ca_required: the fingerprints or a CA
                           * directory stand in for the CA file */
            }
            if (config_refused(ps, names[i]) ||
                (i == 0 &&
                 (config_refused(ps, "capath") || config_refused(ps, "peer-fingerprint")))) {
                e = -EINVAL; /* its line was refused and reported */
            } else if (i == 2 && (pending[1]->path != NULL || blobs[1]->data != NULL) &&
                       pending[1]->where.line > 0) {
                /* the line the user wrote, and what it lacks */
                e = config_error_at(ps, &pending[1]->where, "cert",
                                    "the certificate needs its private key: add 'key FILE' "
                                    "(or <key>...</key>)");
            } else {
                e = config_error_at(ps, NULL, NULL, "%s is required%s", names[i],
                                    i == 0 ? " (or capath, or peer-fingerprint)" : "");
            }
        } else {
            e = load(ps, pending[i], names[i], blobs[i]);
        }
        err = err ? err : e;
    }
    if (err == -ENOMEM) {
        return err;
    }
    err = err ? err : config_cert_after_files(ps);
    err = err ? err : check_certs(ps);
    {
        int e = check_tls_crypt_v2_key(ps);

        if (e == -ENOMEM) {
            return e;
        }
        err = err ? err : e;
    }
    if (cfg->tls.tls_wrap_mode == CONFIG_TLS_WRAP_NONE) {
        return err;
    }
    const char *name = cfg->tls.tls_wrap_mode == CONFIG_TLS_WRAP_AUTH ? "tls-auth" : "tls-crypt";
    int e = load(ps, &ps->tls_wrap_key, name, &cfg->tls.tls_wrap_key);

    if (e) {
        return err ? err : e;
    }
    if (strstr(cfg->tls.tls_wrap_key.data, "-----BEGIN OpenVPN tls-crypt-v2") != NULL) {
        return config_error_at(ps, &ps->tls_wrap_key.where, name,
                               "%s is a tls-crypt-v2 key; give it with tls-crypt-v2, not %s",
                               cfg->tls.tls_wrap_key.origin, name);
    }
    if (strstr(cfg->tls.tls_wrap_key.data, "-----BEGIN OpenVPN Static key V1-----") == NULL ||
        strstr(cfg->tls.tls_wrap_key.data, "-----END OpenVPN Static key V1-----") == NULL) {
        return config_error_at(ps, &ps->tls_wrap_key.where, name,
                               "%s is not an OpenVPN static key (openvpn --genkey %s)",
                               cfg->tls.tls_wrap_key.origin, name);
    }
    return err;
}

static int set_default(struct config_parser *ps, char **dst, const char *value)
{
    return *dst != NULL ? 0 : config_set_str(ps, dst, value);
}

/* What server / server-ipv6 / ifconfig* expand to (topology.c), and the pool persist file's
 * conditions (openvpn options.c, init.c). */
static int check_topology(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;
    struct topology_plan plan;
    const char *directive = NULL;
    char why[400];
    int err = check_tap(ps);

    if (err) {
        return err; /* the expansion would only repeat the problem */
    }
    err = topology_plan_make(cfg, &plan, &directive, why, sizeof(why));

    if (err) {
        static const struct {
            const char *name;
            size_t offset;
        } where[] = {
            {"server", offsetof(struct config_parser, seen_server)},
            {"ifconfig", offsetof(struct config_parser, seen_ifconfig)},
            {"ifconfig-pool", offsetof(struct config_parser, seen_ifconfig_pool)},
            {"ifconfig-ipv6", offsetof(struct config_parser, seen_ifconfig_ipv6)},
            {"ifconfig-ipv6-pool", offsetof(struct config_parser, seen_ifconfig_ipv6_pool)},
            {"server-ipv6", offsetof(struct config_parser, seen_server_ipv6)},
            {"server-bridge", offsetof(struct config_parser, seen_server_bridge)},
        };
        const struct config_where *at = NULL;

        for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
            if (strcmp(where[i].name, directive) == 0) {
                at =
                    (const struct config_where *)(const void *)((const char *)ps + where[i].offset);
            }
        }
        if (!at || at->line == 0) {
            /* "server is required" after a refused server, ifconfig or pool line repeats
             * that line's error */
            for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
                if (config_refused(ps, where[i].name)) {
                    return -EINVAL;
                }
            }
        }
        if (at && at->line == 0) {
            return config_error_at(ps, NULL, NULL, "%s", why);
        }
        return config_error_at(ps, at, at ? directive : NULL, "%s", why);
    }
    if (cfg->net.ifconfig_pool_persist && !plan.has_pool) {
        return config_error_at(ps, &ps->seen_ifconfig_pool_persist, "ifconfig-pool-persist",
                               "must be used with a pool (server, ifconfig-pool or "
                               "ifconfig-ipv6-pool)");
    }
    if (cfg->net.ifconfig_pool_persist && cfg->clients.duplicate_cn) {
        /* init.c: "--ifconfig-pool-persist will not work with --duplicate-cn" */
        return config_warn(ps, &ps->seen_ifconfig_pool_persist,
                           "ifconfig-pool-persist: does not work with duplicate-cn: addresses are "
                           "handed out lowest "
                           "first, %s is neither read nor written",
                           cfg->net.ifconfig_pool_persist);
    }
    return 0;
}

/* The checks after the last line that do not depend on one another's success. */

/* `proto-force P`: 2.6 disables the connection profiles of any other protocol and stops when
 * none is left (options.c, options_postprocess_mutate_ce; "No usable connection profiles are
 * present"). ovpnd's profiles are its sockets: one, or one UDP and one TCP. */
static int apply_proto_force(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;
    bool want_tcp = ps->proto_force == CONFIG_PROTO_TCP;

    if (cfg->net.n_sockets == 2) {
        struct config_socket *s = cfg->net.sockets;
        int keep = config_proto_is_tcp(s[0].proto) == want_tcp ? 0 : 1;

        struct config_socket kept = s[keep];

        free(s[1 - keep].host);
        s[0] = kept;
        memset(&s[1], 0, sizeof(s[1]));
        cfg->net.n_sockets = 1;
        cfg->net.port = s[0].port;
        cfg->net.proto = s[0].proto;
        if (config_set_str(ps, &cfg->net.local, s[0].host) != 0) {
            return -ENOMEM;
        }
        return config_warn(ps, &ps->seen_proto_force, "proto-force: only the %s socket is opened",
                           want_tcp ? "TCP" : "UDP");
    }
    if (config_proto_is_tcp(cfg->net.proto) != want_tcp) {
        return config_error_at(ps, &ps->seen_proto_force, "proto-force",
                               "no usable connection profiles are present (the server's proto "
                               "is %s)",
                               config_proto_is_tcp(cfg->net.proto) ? "tcp-server" : "udp");
    }
    return 0;
}

/* `local` lines (openvpn 2.7's multi-socket server): one is the server's socket, two are one UDP
 * and one TCP socket, each completed from `port` and `proto`; and port-share needs TCP. */
static int check_sockets(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;
    struct config_socket *s = cfg->net.sockets;

    if (cfg->net.n_sockets == 1) {
        cfg->net.port = s[0].port ? s[0].port : cfg->net.port;
        cfg->net.proto = s[0].proto ? s[0].proto : cfg->net.proto;
    }
    if (cfg->net.n_sockets == 2) {
        for (int i = 0; i < 2; i++) {
            s[i].port = s[i].port ? s[i].port : cfg->net.port;
            s[i].proto = s[i].proto ? s[i].proto : cfg->net.proto;
        }
        if (config_proto_is_tcp(s[0].proto) == config_proto_is_tcp(s[1].proto)) {
            return config_error_at(ps, &ps->seen_local, "local",
                                   "not implemented yet in ovpnd: two %s sockets (two `local` "
                                   "lines must be one UDP and one TCP socket)",
                                   config_proto_is_tcp(s[0].proto) ? "TCP" : "UDP");
        }
    }
    if (ps->proto_force != 0) {
        int err = apply_proto_force(ps);

        if (err) {
            return err;
        }
    }
    if (cfg->net.port_share_host && !config_proto_is_tcp(cfg->net.proto) &&
        cfg->net.n_sockets < 2) {
        /* 2.6 options.c: "--port-share only works in TCP server mode" */
        return config_error_at(ps, &ps->seen_port_share, "port-share",
                               "only works with a TCP socket (proto tcp-server, or a `local` "
                               "line with tcp)");
    }
    if (ps->seen_socket_flags_nodelay.line && !config_proto_is_tcp(cfg->net.proto) &&
        cfg->net.n_sockets < 2) {
        return config_warn(ps, &ps->seen_socket_flags_nodelay,
                           "socket-flags: TCP_NODELAY only applies to TCP connections "
                           "(proto udp is not affected)");
    }
    return 0;
}

static int check_local(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;
    struct in6_addr a6;
    struct in_addr a4;
    bool is_v6, is_v4;
    int err = check_sockets(ps);

    if (err || !cfg->net.local || cfg->net.n_sockets == 2) {
        return err;
    }
    is_v6 = inet_pton(AF_INET6, cfg->net.local, &a6) == 1;
    is_v4 = inet_pton(AF_INET, cfg->net.local, &a4) == 1;
    if (is_v6 && (cfg->net.proto == CONFIG_PROTO_UDP4 || cfg->net.proto == CONFIG_PROTO_TCP4)) {
        return config_error_at(ps, &ps->seen_local, "local",
                               "'%s' is an IPv6 address, but proto is %s", cfg->net.local,
                               cfg->net.proto == CONFIG_PROTO_UDP4 ? "udp4" : "tcp4-server");
    }
    if (is_v4 && (cfg->net.proto == CONFIG_PROTO_UDP6 || cfg->net.proto == CONFIG_PROTO_TCP6)) {
        return config_error_at(ps, &ps->seen_local, "local",
                               "'%s' is an IPv4 address, but proto is %s", cfg->net.local,
                               cfg->net.proto == CONFIG_PROTO_UDP6 ? "udp6" : "tcp6-server");
    }
    return 0;
}

static int check_net_needs(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;

    for (size_t i = 0; i < cfg->net.n_routes; i++) {
        if (cfg->net.routes[i].metric < 0) {
            cfg->net.routes[i].metric = cfg->net.route_metric; /* route-metric, or -1 */
        }
    }
    if (cfg->net.ccd_exclusive && !cfg->net.client_config_dir) {
        return config_error_at(ps, &ps->seen_ccd_exclusive, "ccd-exclusive",
                               "needs client-config-dir");
    }
    if (ps->seen_route_ipv6.line && !cfg->net.has_server_ipv6 && !cfg->net.has_ifconfig_ipv6) {
        return config_error_at(ps, &ps->seen_route_ipv6, "route-ipv6",
                               "needs server-ipv6 or ifconfig-ipv6 (the tun device has no IPv6 "
                               "address)");
    }
    if (ps->seen_block_ipv6.line && !cfg->net.has_server_ipv6 && !cfg->net.has_ifconfig_ipv6) {
        return config_warn(ps, &ps->seen_block_ipv6,
                           "block-ipv6: the tunnel carries no IPv6 (no server-ipv6 or "
                           "ifconfig-ipv6), so IPv6 packets are dropped anyway, as in openvpn "
                           "2.6: the line has no effect");
    }
    return 0;
}

static int note_topology(struct config_parser *ps)
{
    if (ps->seen_topology.line != 0 || ps->cfg->net.is_tap) {
        return 0; /* 2.6 ignores topology with dev tap: an address and netmask each */
    }
    /* 2.6 options.c: topology defaults to net30 (2.7 changed it to subnet) */
    return config_warn(ps, &(struct config_where){NULL, 0},
                       "topology is not set: net30, the default of openvpn 2.6, is in force "
                       "(each client gets a /30 of the pool; openvpn 2.7 defaults to subnet: "
                       "write 'topology subnet' for one address per client)");
}

static int check_defaults(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;
    int err = set_default(ps, &cfg->tls.auth, "SHA1");

    if (err == 0) {
        err = set_default(ps, &cfg->tls.data_ciphers, CONFIG_DEFAULT_DATA_CIPHERS);
    }
    if (err == 0) {
        err = config_apply_compat_mode(ps);
    }
    if (err == 0) {
        err = set_default(ps, &cfg->tls.tls_version_min, "1.2");
    }
    if (err == 0) {
        err = config_check_mtu(ps); /* needs auth; before mssfix, which follows the tun MTU */
    }
    if (err == 0 && ps->is_mssfix_default && cfg->net.fragment > 0) {
        /* options_postprocess_mutate_ce: with fragment, mssfix defaults to its value (as
         * `mssfix N mtu`) */
        cfg->net.mssfix = cfg->net.fragment;
        cfg->net.mssfix_mode = CONFIG_MSSFIX_MTU;
    } else if (err == 0 && ps->is_mssfix_default) {
        /* options_postprocess_mutate_ce: the default 1492 only fits the default tun MTU;
         * otherwise TCP inside the tunnel is clamped to the tun MTU. */
        cfg->net.mssfix = cfg->net.tun_mtu == 1500 ? MSSFIX_DEFAULT : cfg->net.tun_mtu;
        cfg->net.mssfix_mode = cfg->net.tun_mtu == 1500 ? CONFIG_MSSFIX_MTU : CONFIG_MSSFIX_FIXED;
    }
    return err;
}

int config_finish(struct config_parser *ps)
{
    /* Each group stops at its own first problem; all groups run, so that one run names every
     * problem (only -ENOMEM stops at once). dev comes before topology, which needs it. */
    static int (*const checks[])(struct config_parser *) = {
        check_defaults,
        config_check_jail,
        check_dev,
        check_topology,
        note_topology,
        check_local,
        config_check_fragment,
        check_net_needs,
        check_timers,
        check_tls,
        check_cipher,
        config_check_auth,
        config_check_auth_token,
        config_check_mgmt,
        config_check_metrics,
        check_files,
    };
    int result = 0;

    /* a `config FILE` that could not be read: its lines are missing, so "dev is required"
     * and the like would only mislead (the refused line was reported) */
    if (config_refused(ps, "config")) {
        return -EINVAL;
    }
    for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
        int err = checks[i](ps);

        if (err == -ENOMEM) {
            return err;
        }
        if (err && checks[i] == check_dev) {
            return err; /* without a device type the rest would only add noise */
        }
        if (err) {
            result = err;
        }
    }
    return result;
}
