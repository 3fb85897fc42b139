/* server/server_addr.c: start-up of the tunnel addresses: the plan of topology.c, the pool it
 * describes (with its persist file and the client-config-dir addresses reserved in it), and the
 * device's IPv6 address. Main thread, before the threads start. */
#include "server/server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/addr/pool_persist.h"
#include "server/addr/vroute.h"
#include "server/config/ccd.h"
#include "server/log/log.h"
#include "server/ops/status.h"

/* The tun device's IPv6 address (server-ipv6 NETWORK+1, or ifconfig-ipv6). Pool addresses are
 * paired with the IPv4 ones by entry (pool.h). With ifconfig-noexec the address is only
 * known (for the scripts), not given to the device. */
int server_setup_ipv6(struct server *srv)
{
    char text[80];
    int err;

    srv->has_ipv6 = true;
    srv->ipv6_bits = srv->plan.ipv6_bits;
    memcpy(srv->server_addr6, srv->plan.local6, 16);
    if (srv->cfg->net.ifconfig_noexec) {
        return 0;
    }
    err = tun_configure_ipv6(&srv->tun, srv->server_addr6, srv->ipv6_bits);
    if (err) {
        log_msg(LOG_ERR, "cannot give %s the address %s: %s", srv->tun.name,
                vroute_prefix_str(6, srv->server_addr6, srv->ipv6_bits, text, sizeof(text)),
                strerror(-err));
    }
    return err;
}

/* The plan of topology.c and the pool it describes. */
int server_setup_pool(struct server *srv)
{
    const struct config *cfg = srv->cfg;
    const char *directive = NULL;
    char why[400], note[300];
    int err = topology_plan_make(cfg, &srv->plan, &directive, why, sizeof(why));

    if (err) {
        log_msg(LOG_ERR, "%s: %s: %s", config_origin(cfg), directive, why);
        return err;
    }
    srv->server_addr = srv->plan.local;
    if (!srv->plan.has_pool) {
        return 0;
    }
    err = ip_pool_init(&srv->pool, &srv->plan.pool, why, sizeof(why), note, sizeof(note));
    if (err) {
        log_msg(LOG_ERR, "%s: address pool: %s", config_origin(cfg),
                err == -ENOMEM ? "out of memory" : why);
        return err;
    }
    if (note[0]) {
        log_msg(srv->pool.n6 < srv->pool.n4 ? LOG_WARN : LOG_INFO, "%s", note);
    }
    if (cfg->net.ifconfig_pool_persist && !cfg->clients.duplicate_cn) {
        const char *path = cfg->net.ifconfig_pool_persist;
        int n = pool_persist_load(&srv->pool, path, cfg->net.ifconfig_pool_persist_s == 0);
        bool is_warned = n < 0; /* one warning for the file */

        if (n == -ENOMEM || n == -ELOOP) { /* (-ELOOP: a symbolic link there, never followed) */
            log_msg(LOG_ERR, "ifconfig-pool-persist: cannot read %s: %s", path, strerror(-n));
            return n;
        }
        if (n < 0) {
            /* openvpn 2.6 starts then too (pool.c, status.c status_open: "Note: cannot
             * open"), with no address kept */
            status_warn_unopened("ifconfig-pool-persist", path,
                                 cfg->net.ifconfig_pool_persist_s > 0 ? O_RDWR : O_RDONLY, n,
                                 cfg->proc.chroot_dir == NULL);
            srv->persist_err = n;
            n = 0;
        }
        log_msg(LOG_INFO, "ifconfig-pool-persist: %d address%s of %s kept for their common names%s",
                n, n == 1 ? "" : "es", path,
                cfg->net.ifconfig_pool_persist_s == 0 ? " only (SECONDS 0: the file is not written)"
                                                      : "");
        srv->is_pool_persisted = cfg->net.ifconfig_pool_persist_s > 0;
        if (srv->is_pool_persisted && (cfg->proc.user || cfg->proc.group || cfg->proc.chroot_dir)) {
            /* after the privilege drop the directory may not be writable: keep the file open
             * and rewrite it in place, as openvpn does */
            srv->persist_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
            if (srv->persist_fd < 0 && errno == ELOOP) {
                log_msg(LOG_ERR, "ifconfig-pool-persist: cannot open %s: %s", path,
                        strerror(ELOOP));
                return -ELOOP;
            }
            if (srv->persist_fd < 0) {
                /* not a reason to stop (openvpn 2.6 starts too): written by its path at each
                 * write, unless a chroot makes that path name another file */
                if (!is_warned) {
                    srv->persist_err = -errno;
                    status_warn_unopened("ifconfig-pool-persist", path, O_RDWR, srv->persist_err,
                                         cfg->proc.chroot_dir == NULL);
                }
                srv->is_pool_persisted = cfg->proc.chroot_dir == NULL;
            }
        } else if (srv->is_pool_persisted && !is_warned &&
                   (err = status_probe_file(path, O_RDWR)) != 0) {
            srv->persist_err = err;
            status_warn_unopened("ifconfig-pool-persist", path, O_RDWR, err, true);
        }
    } else if (cfg->net.ifconfig_pool_persist) {
        log_msg(LOG_WARN,
                "ifconfig-pool-persist does not work with duplicate-cn (as in openvpn 2.6): %s "
                "is neither read nor written, addresses go lowest first",
                cfg->net.ifconfig_pool_persist);
    }
    return 0;
}

struct ccd_reserve {
    struct ip_pool *pool;
    int n_reserved, n_bad;
};

#define CCD_BAD_LOGGED 10 /* start-up warnings about unreadable client-config-dir files */

static void reserve_one(void *ctx, const char *path, const struct ccd *c, const char *error)
{
    struct ccd_reserve *r = ctx;
    size_t idx;

    if (!c) {
        if (r->n_bad++ < CCD_BAD_LOGGED) {
            log_msg(LOG_WARN, "client-config-dir: %s (a client using %s is refused)", error, path);
        }
        return;
    }
    if (c->has_ifconfig_push) {
        idx = ip_pool_file_index(r->pool, c->ifconfig_local); /* net30: its /30 block */
        if (idx != SIZE_MAX && !ip_pool_is_reserved(r->pool, idx)) {
            ip_pool_reserve(r->pool, idx);
            r->n_reserved++;
        }
    }
    if (c->has_ifconfig_ipv6_push) {
        idx = ip_pool_index6(r->pool, c->ifconfig_ipv6);
        if (idx != SIZE_MAX && !ip_pool_is_reserved(r->pool, idx)) {
            ip_pool_reserve(r->pool, idx);
            r->n_reserved++;
        }
    }
}

/* Keep the pool entries whose addresses client-config-dir files push (ifconfig-push,
 * ifconfig-ipv6-push) out of the dynamic allocation, so that such a client finds its address
 * free whoever connected first. Files added later are handled when read (acceptor_auth.c).
 * openvpn 2.6 does not do this. After setup_pool (the persist file is read first: a reserved
 * entry forgets the name it had there). */
void server_reserve_ccd_addresses(struct server *srv)
{
    struct ccd_reserve r = {.pool = &srv->pool};
    const char *dir = srv->cfg->net.client_config_dir;
    char host[PATH_MAX];
    int n;

    if (!dir || srv->pool.n == 0) {
        return;
    }
    if (srv->cfg->proc.chroot_dir) { /* before the chroot: the jail's directory from outside */
        snprintf(host, sizeof(host), "%s%s", srv->cfg->proc.chroot_dir, dir);
        dir = host;
    }
    n = ccd_scan_dir(dir, reserve_one, &r);
    if (n < 0) {
        log_msg(LOG_WARN, "client-config-dir: cannot read %s: %s", dir, strerror(-n));
        return;
    }
    if (r.n_bad > CCD_BAD_LOGGED) {
        log_msg(LOG_WARN, "client-config-dir: %d more files in %s cannot be used",
                r.n_bad - CCD_BAD_LOGGED, dir);
    }
    if (r.n_reserved > 0) {
        log_msg(LOG_INFO,
                "client-config-dir: %d pool entr%s kept for the clients whose files in %s push "
                "their addresses",
                r.n_reserved, r.n_reserved == 1 ? "y" : "ies", dir);
    }
}
