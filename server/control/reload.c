/* server/control/reload.c: SIGHUP (or `signal SIGHUP` on the management interface) re-reads the
 * config and applies, on the acceptor thread, what can change without dropping a client.
 *
 * openvpn 2.6 restarts the whole server on SIGHUP (openvpn.c main: its outer loop parses the
 * options again and rebuilds every context while the signal is SIGHUP), so every client
 * reconnects. Here the config is parsed again from the command line
 * the server started with; a config that does not parse or check changes nothing. Otherwise
 * config_diff (server/config/config_diff.h) says what differs: the reloadable settings go into a
 * new overlay (a shallow copy of the config in force whose reloadable settings are the new
 * file's), which becomes a->cfg; every other difference is named in the log and keeps the value
 * the server started with. Certificates and the CRL get a new TLS configuration for the
 * handshakes that follow; the one it replaces lives on until its last TLS session ends (a
 * handshake running on the thread pool keeps using it). Workers need nothing: keepalive goes
 * to each client's peer at its connect (install.c), so it changes for new clients, the ones that
 * were pushed the new values. No lock is taken on any packet path.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/sha256.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crl.h>
#include <mbedtls/x509_crt.h>

#include "proto/errors.h"
#include "proto/tls_session.h"
#include "server/config/config_diff.h"
#include "server/control/acceptor_internal.h"
#include "server/data/tun.h"
#include "server/hooks/auth.h"
#include "server/ops/mgmt.h"

int acc_tls_conf_new(struct acceptor *a, const struct config *cfg, const char *root,
                     struct acc_tls_conf **out, struct crl_watch *crl, char *errbuf,
                     size_t errbuf_len)
{
    struct acc_tls_conf *t = calloc(1, sizeof(*t));
    struct tls_server_conf *c;
    int err;

    if (!t) {
        snprintf(errbuf, errbuf_len, "out of memory");
        return -ENOMEM;
    }
    c = &t->conf;
    /* No ca only with peer-fingerprint (config_check.c). */
    err = tls_server_conf_init(c, (const uint8_t *)cfg->tls.ca.data, cfg->tls.ca.len + 1,
                               (const uint8_t *)cfg->tls.cert.data, cfg->tls.cert.len + 1,
                               (const uint8_t *)cfg->tls.key.data, cfg->tls.key.len + 1,
                               (enum tls_verify_client)cfg->tls.verify_client_cert,
                               mbedtls_ctr_drbg_random, &a->crypto.drbg, errbuf, errbuf_len);
    if (!err && cfg->pkcs11.n_providers > 0) {
        /* the token signs (pk_token.c): it is given the DigestInfo to pad, as 2.6 does */
        err = tls_server_conf_set_external_key(c, PK_EXT_PKCS1, errbuf, errbuf_len);
    } else if (!err && cfg->mgmt.external_key) {
        err = tls_server_conf_set_external_key(c, cfg->mgmt.external_key_flags, errbuf, errbuf_len);
        if (!err) {
            log_msg(LOG_INFO,
                    "management-external-key: the management client makes the server's "
                    "signature in each TLS handshake (>PK_SIGN); a handshake waits for it "
                    "without holding other clients, one request at a time, at most %d s each",
                    PK_SIGN_TIMEOUT_MS / 1000);
        }
    }
    if (err) {
        goto fail;
    }
    if (!c->is_ecdh_libcrypto) {
        log_msg(LOG_WARN, "TLS: the X25519 key exchange runs on Mbed TLS's own code (this "
                          "libmbedcrypto does not call its ECDH functions through the PLT): "
                          "about 1 ms more CPU per handshake");
    }
    if (cfg->tls.n_peer_fingerprints > 0) {
        err = tls_server_conf_set_fingerprints(c, (const uint8_t(*)[32])cfg->tls.peer_fingerprints,
                                               cfg->tls.n_peer_fingerprints);
        if (err) {
            snprintf(errbuf, errbuf_len, "peer-fingerprint: out of memory");
            goto fail;
        }
        if (!cfg->tls.ca.data && !cfg->cert.capath) {
            log_msg(LOG_INFO,
                    "peer-fingerprint: no ca: client certificates are checked by their "
                    "SHA-256 fingerprint alone (%zu listed)",
                    cfg->tls.n_peer_fingerprints);
        }
    }
    if (cfg->tls.n_verify_hashes > 0) {
        err = tls_server_conf_set_verify_hashes(c, (const uint8_t(*)[32])cfg->tls.verify_hashes,
                                                cfg->tls.n_verify_hashes, cfg->tls.verify_hash_len);
        if (err) {
            snprintf(errbuf, errbuf_len, "verify-hash: out of memory");
            goto fail;
        }
    }
    if (cfg->tls.tls_groups) {
        char bad[80];

        err = tls_server_conf_set_groups(c, cfg->tls.tls_groups, bad, sizeof(bad));
        if (err) {
            snprintf(errbuf, errbuf_len, "tls-groups: unknown group '%s'", bad);
            goto fail;
        }
    }
    if (cfg->tls.tls_cert_profile) {
        tls_server_conf_set_cert_profile(c, tls_cert_profile_by_name(cfg->tls.tls_cert_profile));
    }
    if (cfg->tls.dh.data) {
        err =
            tls_server_conf_set_dh(c, (const unsigned char *)cfg->tls.dh.data, cfg->tls.dh.len + 1);
        if (err) {
            snprintf(errbuf, errbuf_len, "dh: %s: cannot use the DH parameters",
                     cfg->tls.dh.origin ? cfg->tls.dh.origin : "inline");
            goto fail;
        }
    }
    if (cfg->tls.tls_cipher) {
        err = tls_server_conf_set_ciphers(c, cfg->tls.tls_cipher);
        if (err) {
            snprintf(errbuf, errbuf_len, "tls-cipher: no usable cipher suite");
            goto fail;
        }
    }
    if (cfg->tls.dh_none) {
        err = tls_server_conf_drop_dhe(c);
        if (err) {
            snprintf(errbuf, errbuf_len,
                     err == -PE_MALFORMED ? "dh none: tls-cipher names only DHE suites, which "
                                            "need the group of a dh file"
                                          : "dh none: out of memory");
            goto fail;
        }
    }
    /* at start-up crl is the acceptor's own watch: no earlier one */
    err = crl_watch_init(crl, cfg, root, crl == &a->crypto.crl ? NULL : &a->crypto.crl, c, errbuf,
                         errbuf_len);
    if (err) {
        goto fail;
    }
    *out = t;
    return 0;

fail:
    acc_tls_conf_free(t);
    return err;
}

/* Two optional strings are equal (both NULL counts). */
static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

void acc_tls_conf_free(struct acc_tls_conf *t)
{
    if (t) {
        tls_server_conf_clear(&t->conf);
        free(t);
    }
}

void acc_tls_conf_put(struct tls_server_conf *conf)
{
    struct acc_tls_conf *t = (struct acc_tls_conf *)conf; /* conf is its first member */

    if (t && t->n_sessions > 0) {
        t->n_sessions--;
    }
}

void acc_tls_conf_sweep(struct acceptor *a)
{
    struct acc_tls_conf **pp = &a->crypto.retired;

    while (*pp) {
        struct acc_tls_conf *t = *pp;

        if (t->n_sessions == 0) {
            *pp = t->next_retired;
            acc_tls_conf_free(t);
        } else {
            pp = &t->next_retired;
        }
    }
}

void acc_cert_identity(struct key_state *ks, struct ctl_session *cs)
{
    const mbedtls_x509_crt *crt = mbedtls_ssl_get_peer_cert(&ks->tls->ssl);

    cs->client.n_serial = 0;
    if (!crt || crt->serial.len == 0 || crt->serial.len > sizeof(cs->client.serial)) {
        return; /* (RFC 5280 4.1.2.2: 20 octets at most; longer ones are not checked here) */
    }
    memcpy(cs->client.serial, crt->serial.p, crt->serial.len);
    cs->client.n_serial = crt->serial.len;
    mbedtls_sha256_ret(crt->issuer_raw.p, crt->issuer_raw.len, cs->client.issuer_sha256, 0);
}

/* Whether the CRL in force lists cs's certificate (serial and issuer, as
 * mbedtls_x509_crt_is_revoked compares them). The revocation date is not compared: a CRL made
 * in the second of the revocation would not count yet (mbedtls_x509_time_is_past). */
static bool is_revoked(struct acceptor *a, const struct ctl_session *cs)
{
    const mbedtls_x509_crl *crl = &a->crypto.tls->conf.crl;

    if (!a->crypto.tls->conf.has_crl || cs->client.n_serial == 0) {
        return false;
    }
    for (; crl && crl->version != 0; crl = crl->next) {
        uint8_t issuer[32];

        mbedtls_sha256_ret(crl->issuer_raw.p, crl->issuer_raw.len, issuer, 0);
        if (memcmp(issuer, cs->client.issuer_sha256, sizeof(issuer)) != 0) {
            continue;
        }
        for (const mbedtls_x509_crl_entry *e = &crl->entry; e && e->raw.len != 0; e = e->next) {
            if (e->serial.len == cs->client.n_serial &&
                memcmp(e->serial.p, cs->client.serial, e->serial.len) == 0) {
                return true;
            }
        }
    }
    return false;
}

bool acc_cert_is_revoked(struct acceptor *a, struct ctl_session *cs)
{
    return is_revoked(a, cs);
}

void acc_revoke_sweep(struct acceptor *a)
{
    size_t n = 0;

    for (size_t i = 0; i < a->sessions.table_size; i++) {
        for (struct ctl_session *cs = a->sessions.table[i]; cs; cs = cs->hnext) {
            if (cs->state == CS_CLOSING || cs->is_dead || !cs->peer || !is_revoked(a, cs)) {
                continue;
            }
            acc_auth_failed(
                a, cs, "certificate revoked: a CRL in force now lists it (crl-verify, capath)");
            n++;
        }
    }
    if (n > 0) {
        log_msg(LOG_INFO, "CRL: %zu connected client%s disconnected (certificate revoked)", n,
                n == 1 ? "" : "s");
    }
}

/* ---- the reload itself ---- */

/* Log every error of a config that did not parse or check, then that nothing changed. */
static void log_refused(const struct config *next, const char *errbuf)
{
    for (size_t i = 0; i < next->n_errors; i++) {
        log_msg(LOG_ERR, "%s", next->errors[i]);
    }
    if (next->n_errors == 0 && errbuf[0]) {
        log_msg(LOG_ERR, "%s", errbuf);
    }
    if (next->n_errors_dropped > 0) {
        log_msg(LOG_ERR, "(%zu more errors not shown)", next->n_errors_dropped);
    }
    log_msg(LOG_ERR, "reload: refused, nothing changed: the config does not parse or check; "
                     "every client stays");
}

/* max-clients: lowering applies to new clients (the connected ones stay); raising is bounded by
 * the peer-id slots and the tables sized at start-up for the value the server started with. */
static int pick_max_clients(const struct acceptor *a, int wanted)
{
    int start = a->env->cfg->clients.max_clients;

    if (wanted > start) {
        log_msg(LOG_WARN,
                "reload: max-clients %d is above the %d the server started with; needs a "
                "restart, keeping %d",
                wanted, start, start);
        return start;
    }
    return wanted;
}

/* The pool of `server` with another netmask (the same network): check the new plan against
 * the running one; for a growth add the kernel route into the tun device for the whole new
 * network (a shrink leaves the wider route: what it covers beyond the pool has no owner and is
 * dropped); resize the pool. Returns 0 (the plan in force is replaced by *plan) or -1 with the
 * reason logged. */
static int resize_pool(struct acceptor *a, const struct config *next, struct topology_plan *plan)
{
    struct topology_plan *cur = a->env->plan;
    const char *directive = NULL;
    char why[300], net[80];
    uint8_t addr[4];
    uint32_t be, netmask = next->net.server_netmask;
    size_t n_before = a->env->pool->n;
    int err;

    if (topology_plan_make(next, plan, &directive, why, sizeof(why)) != 0) {
        log_msg(LOG_WARN, "reload: %s: %s; keeping the pool", directive ? directive : "server",
                why);
        return -1;
    }
    if (!cur->has_pool || !plan->has_pool || plan->topology != cur->topology ||
        plan->local != cur->local || plan->pool.start != cur->pool.start ||
        plan->has_ipv6 != cur->has_ipv6) {
        log_msg(LOG_WARN, "reload: server changed other than in its pool's size; needs a "
                          "restart, keeping the pool");
        return -1;
    }
    be = htonl(next->net.server_network);
    memcpy(addr, &be, 4);
    vroute_prefix_str(4, addr, __builtin_popcount(netmask), net, sizeof(net));
    if (plan->pool.end > cur->pool.end) {
        err = tun_add_route(a->env->tun, 4, addr, __builtin_popcount(netmask), -1,
                            next->net.route_table);
        if (err && err != -EEXIST) {
            log_msg(LOG_WARN,
                    "reload: cannot add the route %s into %s for the grown pool: %s; needs a "
                    "restart (or root), keeping the pool",
                    net, a->env->tun->name, strerror(-err));
            return -1;
        }
    }
    err = ip_pool_resize(a->env->pool, &plan->pool, why, sizeof(why));
    if (err) {
        log_msg(LOG_WARN, "reload: the pool cannot %s: %s; keeping it",
                plan->pool.end > cur->pool.end ? "grow" : "shrink",
                err == -ENOMEM ? "out of memory" : why);
        return -1;
    }
    log_msg(LOG_INFO, "reload: pool %s from %zu to %zu entries (%s)",
            a->env->pool->n > n_before ? "grown" : "shrunk", n_before, a->env->pool->n, net);
    return 0;
}

/* Put the overlay in force: the settings new clients and new handshakes use. */
static void apply(struct acceptor *a, struct acc_overlay *o, unsigned applied,
                  struct acc_tls_conf *tls, const struct crl_watch *crl)
{
    const struct config *cfg = &o->cfg;

    o->next = a->overlays;
    a->overlays = o;
    a->cfg = &o->cfg;
    auth_set_config(a->checks.auth, cfg);
    if (tls) {
        a->crypto.tls->next_retired = a->crypto.retired;
        a->crypto.retired = a->crypto.tls;
        a->crypto.tls = tls;
        a->crypto.crl = *crl;
    }
    if (applied & CONFIG_RELOAD_CONNECT_FREQ) {
        connect_freq_init(&a->cf, cfg->clients.connect_freq_max, cfg->clients.connect_freq_per_s);
        connect_freq_initial_init(&a->cf_initial, cfg->clients.connect_freq_initial_max,
                                  cfg->clients.connect_freq_initial_per_s);
    }
    if (applied & CONFIG_RELOAD_VERB) {
        log_set_level(log_level_from_verb(cfg->proc.verb));
        mgmt_set_verb(a->mgmt, cfg->proc.verb, cfg->proc.mute);
    }
    acc_tls_conf_sweep(a);
    if (tls) {
        acc_revoke_sweep(a); /* a CRL that now lists a connected client: it goes at once */
    }
}

void acc_tls_conf_renew(struct acceptor *a)
{
    struct acc_tls_conf *tls = NULL;
    struct crl_watch crl;
    char errbuf[512] = "";
    /* inside the chroot by now, if there is one: paths as the config gives them */
    int err = acc_tls_conf_new(a, a->cfg, NULL, &tls, &crl, errbuf, sizeof(errbuf));

    if (err) {
        log_msg(LOG_ERR,
                "capath: the TLS configuration could not be built again (%s); the "
                "previous certificates and CRLs stay in use",
                errbuf);
        return;
    }
    a->crypto.tls->next_retired = a->crypto.retired;
    a->crypto.retired = a->crypto.tls;
    a->crypto.tls = tls;
    a->crypto.crl = crl;
    acc_tls_conf_sweep(a);
    acc_revoke_sweep(a); /* a CRL that now lists a connected client: it goes at once */
}

/* "a, b, c" of the parts in bits, into buf. */
static void part_names(unsigned bits, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (unsigned bit = 1; bit != 0 && bit <= CONFIG_RELOAD_POOL; bit <<= 1) {
        if ((bits & bit) && used < len) {
            int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
                             config_reload_part_name(bit));

            used += n > 0 ? (size_t)n : 0;
        }
    }
}

static void log_restart_needed(const struct config_diff *d)
{
    for (size_t i = 0; i < d->n_restart; i++) {
        log_msg(LOG_WARN, "reload: %s changed; needs a restart, keeping the running value",
                d->restart[i]);
    }
    if (d->n_restart_dropped > 0) {
        log_msg(LOG_WARN, "reload: %zu more directives changed that need a restart",
                d->n_restart_dropped);
    }
}

static size_t count_connected(const struct acceptor *a)
{
    size_t n = 0;

    for (size_t i = 0; i < a->sessions.table_size; i++) {
        for (const struct ctl_session *cs = a->sessions.table[i]; cs; cs = cs->hnext) {
            n += cs->state == CS_ACTIVE && cs->is_connected;
        }
    }
    return n;
}

void acc_reload(struct acceptor *a)
{
    const struct acceptor_env *env = a->env;
    struct config next;
    struct config_diff d;
    struct acc_overlay *o = NULL;
    struct acc_tls_conf *tls = NULL;
    struct crl_watch crl;
    struct topology_plan plan;
    char errbuf[512] = "", parts[400];
    unsigned applied;
    int err;

    if (!env->config_text) {
        log_msg(LOG_WARN, "reload: the server was not started from a config it can read again");
        return;
    }
    if (env->cfg->proc.chroot_dir) {
        /* the config and the files it names are outside the jail now (2.6 cannot read them at
         * its SIGHUP restart either) */
        log_msg(LOG_WARN,
                "reload: not possible after chroot %s: restart ovpnd to apply changes; "
                "nothing changed",
                env->cfg->proc.chroot_dir);
        return;
    }
    config_init(&next);
    /* relative paths: against the directory the server started in, as at start-up (the
     * process is in the `cd` directory by now) */
    err = config_parse_string_in(&next, "command line", env->config_text,
                                 env->cfg->cd_dir ? env->start_dir : NULL, a->cfg, errbuf,
                                 sizeof(errbuf));
    if (err) {
        log_refused(&next, errbuf);
        config_free(&next);
        return;
    }
    for (size_t i = 0; i < next.n_warnings; i++) {
        /* said at start-up; the management interface is the one started then */
        if (strstr(next.warnings[i], CONFIG_WARN_MGMT_NO_PASSWORD) &&
            same_str(next.mgmt.addr, a->cfg->mgmt.addr) &&
            same_str(next.mgmt.port, a->cfg->mgmt.port) && !a->cfg->mgmt.password) {
            continue;
        }
        log_msg(LOG_WARN, "%s", next.warnings[i]);
    }
    /* management-query-passwords, management-external-cert: what start-up was given */
    err = acc_mgmt_startup_reload(a, &next, errbuf, sizeof(errbuf));
    if (err) {
        log_refused(&next, errbuf);
        config_free(&next);
        return;
    }
    config_diff(a->cfg, &next, &d);
    applied = d.applied;
    o = calloc(1, sizeof(*o));
    if (!o) {
        log_msg(LOG_ERR, "reload: out of memory; nothing changed");
        config_free(&next);
        return;
    }
    o->cfg = *a->cfg; /* shallow: the restart-only settings stay the running ones */
    o->cfg.warnings = o->cfg.errors = NULL;
    o->cfg.n_warnings = o->cfg.n_errors = 0;
    o->cfg.clients.max_clients = pick_max_clients(a, next.clients.max_clients);
    if (o->cfg.clients.max_clients == a->cfg->clients.max_clients) {
        applied &= ~CONFIG_RELOAD_MAX_CLIENTS;
    }
    config_reload_take(&o->cfg, &next);
    if (applied & (CONFIG_RELOAD_TLS | CONFIG_RELOAD_CRL)) {
        /* (no chroot here: a reload is refused after one) */
        err = acc_tls_conf_new(a, &o->cfg, NULL, &tls, &crl, errbuf, sizeof(errbuf));
        if (err) {
            log_msg(LOG_ERR, "%s: %s", config_origin(&o->cfg), errbuf);
            log_msg(LOG_ERR, "reload: refused, nothing changed: the certificates or the CRL do "
                             "not check; every client stays");
            config_reload_free(&o->cfg);
            free(o);
            config_free(&next);
            return;
        }
    }
    if (applied & CONFIG_RELOAD_POOL) {
        if (resize_pool(a, &next, &plan) == 0) {
            *env->plan = plan;
            o->cfg.net.server_netmask = next.net.server_netmask;
        } else {
            applied &= ~CONFIG_RELOAD_POOL;
        }
    }
    config_free(&next);
    log_restart_needed(&d);
    apply(a, o, applied, tls, &crl);
    part_names(applied, parts, sizeof(parts));
    log_msg(LOG_INFO, "reload: %s%s; %zu client%s connected", applied ? "applied " : "",
            applied ? parts : "no change to apply", count_connected(a),
            count_connected(a) == 1 ? "" : "s");
}

void acc_reload_free(struct acceptor *a)
{
    while (a->overlays) {
        struct acc_overlay *o = a->overlays;

        a->overlays = o->next;
        config_reload_free(&o->cfg);
        free(o);
    }
}
