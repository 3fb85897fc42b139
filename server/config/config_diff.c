/* server/config/config_diff.c: see config_diff.h. */
#include "server/config/config_diff.h"

#include <stdlib.h>
#include <string.h>

#include "proto/cert_name.h"
#include "server/config/config_internal.h"

static bool str_eq(const char *x, const char *y)
{
    return x == y || (x && y && strcmp(x, y) == 0);
}

static bool strv_eq(char *const *x, char *const *y)
{
    if (!x || !y) {
        return x == y;
    }
    for (; *x && *y; x++, y++) {
        if (strcmp(*x, *y) != 0) {
            return false;
        }
    }
    return *x == NULL && *y == NULL;
}

static bool strs_eq(char *const *x, size_t n_x, char *const *y, size_t n_y)
{
    if (n_x != n_y) {
        return false;
    }
    for (size_t i = 0; i < n_x; i++) {
        if (!str_eq(x[i], y[i])) {
            return false;
        }
    }
    return true;
}

static bool blob_eq(const struct config_blob *x, const struct config_blob *y)
{
    return x->len == y->len && (x->len == 0 || memcmp(x->data, y->data, x->len) == 0);
}

static bool mem_eq(const void *x, const void *y, size_t len)
{
    return memcmp(x, y, len) == 0;
}

static void need_restart(struct config_diff *d, const char *name)
{
    for (size_t i = 0; i < d->n_restart; i++) {
        if (strcmp(d->restart[i], name) == 0) {
            return;
        }
    }
    if (d->n_restart < CONFIG_DIFF_MAX) {
        d->restart[d->n_restart++] = name;
    } else {
        d->n_restart_dropped++;
    }
}

#define RESTART_UNLESS(d, same, name)                                                              \
    do {                                                                                           \
        if (!(same)) {                                                                             \
            need_restart(d, name);                                                                 \
        }                                                                                          \
    } while (0)

#define APPLY_UNLESS(d, same, bit)                                                                 \
    do {                                                                                           \
        if (!(same)) {                                                                             \
            (d)->applied |= (bit);                                                                 \
        }                                                                                          \
    } while (0)

/* `server NET MASK`: the same network with a shorter netmask grows the pool (the addresses
 * clients hold stay valid), with a longer one shrinks it (refused later while a client holds an
 * address beyond its new end); anything else is a restart. */
static void diff_server(const struct config_net *o, const struct config_net *n,
                        struct config_diff *d)
{
    if (o->has_server == n->has_server && o->server_network == n->server_network &&
        o->server_netmask == n->server_netmask && o->server_nopool == n->server_nopool) {
        return;
    }
    if (o->has_server && n->has_server && !o->server_nopool && !n->server_nopool &&
        o->server_network == n->server_network) {
        if ((n->server_netmask & o->server_netmask) == n->server_netmask &&
            (o->server_network & n->server_netmask) == o->server_network) {
            d->applied |= CONFIG_RELOAD_POOL;
            return;
        }
        if ((n->server_netmask & o->server_netmask) == o->server_netmask) {
            d->applied |= CONFIG_RELOAD_POOL; /* the same network, a longer netmask */
            d->is_pool_shrink = true;
            return;
        }
    }
    need_restart(d, "server");
}

static bool client_nat_eq(const struct client_nat *o, const struct client_nat *n)
{
    size_t n_o = o ? o->n_rules : 0, n_n = n ? n->n_rules : 0;

    return n_o == n_n && (n_o == 0 || mem_eq(o->rules, n->rules, n_o * sizeof(o->rules[0])));
}

static bool routes_eq(const struct config_net *o, const struct config_net *n)
{
    if (o->n_routes != n->n_routes || o->route_metric != n->route_metric ||
        o->route_noexec != n->route_noexec || o->route_table != n->route_table) {
        return false;
    }
    for (size_t i = 0; i < o->n_routes; i++) {
        const struct config_route *x = &o->routes[i], *y = &n->routes[i];

        if (x->family != y->family || x->plen != y->plen || x->metric != y->metric ||
            x->table != y->table || !mem_eq(x->addr, y->addr, sizeof(x->addr))) {
            return false;
        }
    }
    return true;
}

static bool sockets_eq(const struct config_net *o, const struct config_net *n)
{
    if (o->port != n->port || o->proto != n->proto || !str_eq(o->local, n->local) ||
        o->n_sockets != n->n_sockets) {
        return false;
    }
    for (int i = 0; i < o->n_sockets && i < CONFIG_MAX_SOCKETS; i++) {
        if (!str_eq(o->sockets[i].host, n->sockets[i].host) ||
            o->sockets[i].port != n->sockets[i].port ||
            o->sockets[i].proto != n->sockets[i].proto) {
            return false;
        }
    }
    return true;
}

static void diff_net(const struct config_net *o, const struct config_net *n, struct config_diff *d)
{
    RESTART_UNLESS(d, sockets_eq(o, n), "local/port/proto");
    RESTART_UNLESS(d, o->tcp_queue_limit == n->tcp_queue_limit, "tcp-queue-limit");
    RESTART_UNLESS(d, o->multihome == n->multihome, "multihome");
    RESTART_UNLESS(d, o->mark == n->mark, "mark");
    RESTART_UNLESS(d, str_eq(o->bind_dev, n->bind_dev), "bind-dev");
    RESTART_UNLESS(d, o->txqueuelen == n->txqueuelen, "txqueuelen"); /* set once, at creation */
    RESTART_UNLESS(d,
                   str_eq(o->port_share_host, n->port_share_host) &&
                       o->port_share_port == n->port_share_port &&
                       str_eq(o->port_share_dir, n->port_share_dir),
                   "port-share");
    RESTART_UNLESS(d, str_eq(o->dev, n->dev) && o->is_tap == n->is_tap, "dev");
    RESTART_UNLESS(d, o->has_lladdr == n->has_lladdr && memcmp(o->lladdr, n->lladdr, 6) == 0,
                   "lladdr");
    RESTART_UNLESS(d,
                   o->vlan_tagging == n->vlan_tagging && o->vlan_accept == n->vlan_accept &&
                       o->vlan_pvid == n->vlan_pvid,
                   "vlan-tagging/vlan-accept/vlan-pvid");
    RESTART_UNLESS(d,
                   o->has_server_bridge == n->has_server_bridge &&
                       o->server_bridge_dhcp == n->server_bridge_dhcp &&
                       o->server_bridge_nogw == n->server_bridge_nogw &&
                       o->server_bridge_gw == n->server_bridge_gw &&
                       o->server_bridge_netmask == n->server_bridge_netmask &&
                       o->server_bridge_pool_start == n->server_bridge_pool_start &&
                       o->server_bridge_pool_end == n->server_bridge_pool_end,
                   "server-bridge");
    RESTART_UNLESS(d, o->topology == n->topology, "topology");
    diff_server(o, n, d);
    RESTART_UNLESS(d,
                   o->has_ifconfig == n->has_ifconfig && o->ifconfig_local == n->ifconfig_local &&
                       o->ifconfig_remote_netmask == n->ifconfig_remote_netmask,
                   "ifconfig");
    RESTART_UNLESS(d,
                   o->has_ifconfig_pool == n->has_ifconfig_pool &&
                       o->ifconfig_pool_start == n->ifconfig_pool_start &&
                       o->ifconfig_pool_end == n->ifconfig_pool_end &&
                       o->ifconfig_pool_netmask == n->ifconfig_pool_netmask,
                   "ifconfig-pool");
    RESTART_UNLESS(d,
                   o->has_ifconfig_ipv6 == n->has_ifconfig_ipv6 &&
                       mem_eq(o->ifconfig_ipv6_local, n->ifconfig_ipv6_local, 16) &&
                       mem_eq(o->ifconfig_ipv6_remote, n->ifconfig_ipv6_remote, 16) &&
                       o->ifconfig_ipv6_bits == n->ifconfig_ipv6_bits,
                   "ifconfig-ipv6");
    RESTART_UNLESS(d,
                   o->has_ifconfig_ipv6_pool == n->has_ifconfig_ipv6_pool &&
                       mem_eq(o->ifconfig_ipv6_pool_base, n->ifconfig_ipv6_pool_base, 16) &&
                       o->ifconfig_ipv6_pool_bits == n->ifconfig_ipv6_pool_bits,
                   "ifconfig-ipv6-pool");
    RESTART_UNLESS(d,
                   str_eq(o->ifconfig_pool_persist, n->ifconfig_pool_persist) &&
                       o->ifconfig_pool_persist_s == n->ifconfig_pool_persist_s,
                   "ifconfig-pool-persist");
    RESTART_UNLESS(d,
                   o->has_ifconfig_push_constraint == n->has_ifconfig_push_constraint &&
                       o->ifconfig_push_constraint_network == n->ifconfig_push_constraint_network &&
                       o->ifconfig_push_constraint_netmask == n->ifconfig_push_constraint_netmask,
                   "ifconfig-push-constraint");
    RESTART_UNLESS(d, o->tun_mtu == n->tun_mtu && o->tun_mtu_occ == n->tun_mtu_occ, "tun-mtu");
    RESTART_UNLESS(d, o->mssfix == n->mssfix && o->mssfix_mode == n->mssfix_mode, "mssfix");
    RESTART_UNLESS(d, o->fragment == n->fragment && o->fragment_mtu == n->fragment_mtu, "fragment");
    RESTART_UNLESS(d,
                   o->comp.alg == n->comp.alg && o->comp.allow == n->comp.allow &&
                       o->comp.is_adaptive == n->comp.is_adaptive,
                   "compress");
    RESTART_UNLESS(d,
                   o->has_server_ipv6 == n->has_server_ipv6 &&
                       mem_eq(o->server_ipv6_network, n->server_ipv6_network, 16) &&
                       o->server_ipv6_bits == n->server_ipv6_bits,
                   "server-ipv6");
    RESTART_UNLESS(d, routes_eq(o, n), "route");
    RESTART_UNLESS(d, o->ifconfig_noexec == n->ifconfig_noexec, "ifconfig-noexec");
    RESTART_UNLESS(d, o->block_ipv6 == n->block_ipv6, "block-ipv6");
    RESTART_UNLESS(d, o->passtos == n->passtos, "passtos");
    RESTART_UNLESS(d, client_nat_eq(o->client_nat, n->client_nat), "client-nat");
    RESTART_UNLESS(d, o->client_to_client == n->client_to_client, "client-to-client");
    RESTART_UNLESS(d, o->tcp_nodelay == n->tcp_nodelay, "tcp-nodelay");
    APPLY_UNLESS(d, strs_eq(o->push.items, o->push.n_items, n->push.items, n->push.n_items),
                 CONFIG_RELOAD_PUSH);
    APPLY_UNLESS(d,
                 str_eq(o->client_config_dir, n->client_config_dir) &&
                     o->ccd_exclusive == n->ccd_exclusive,
                 CONFIG_RELOAD_CCD);
}

static void diff_timers(const struct config_timers *o, const struct config_timers *n,
                        struct config_diff *d)
{
    APPLY_UNLESS(d,
                 o->keepalive_ping_s == n->keepalive_ping_s &&
                     o->keepalive_restart_s == n->keepalive_restart_s && o->ping_s == n->ping_s &&
                     o->ping_restart_s == n->ping_restart_s,
                 CONFIG_RELOAD_KEEPALIVE);
    RESTART_UNLESS(d, o->is_ping_exit == n->is_ping_exit, "ping-exit");
    RESTART_UNLESS(d, o->hand_window_s == n->hand_window_s, "hand-window");
    RESTART_UNLESS(d, o->tran_window_s == n->tran_window_s, "tran-window");
    RESTART_UNLESS(d, o->tls_timeout_s == n->tls_timeout_s, "tls-timeout");
    RESTART_UNLESS(d, o->reneg_sec == n->reneg_sec && o->reneg_sec_min == n->reneg_sec_min,
                   "reneg-sec");
    RESTART_UNLESS(d, o->reneg_bytes == n->reneg_bytes, "reneg-bytes");
    RESTART_UNLESS(d, o->reneg_pkts == n->reneg_pkts, "reneg-pkts");
}

static void diff_tls(const struct config *oc, const struct config *nc, struct config_diff *d)
{
    const struct config_tls *o = &oc->tls, *n = &nc->tls;

    APPLY_UNLESS(d,
                 blob_eq(&o->ca, &n->ca) && blob_eq(&o->cert, &n->cert) &&
                     blob_eq(&o->key, &n->key) &&
                     blob_eq(&oc->cert.extra_certs, &nc->cert.extra_certs),
                 CONFIG_RELOAD_TLS);
    APPLY_UNLESS(d,
                 blob_eq(&o->crl, &n->crl) && str_eq(o->crl_file, n->crl_file) &&
                     str_eq(oc->cert.crl_dir, nc->cert.crl_dir) &&
                     str_eq(oc->cert.capath, nc->cert.capath),
                 CONFIG_RELOAD_CRL);
    RESTART_UNLESS(d,
                   o->tls_wrap_mode == n->tls_wrap_mode &&
                       blob_eq(&o->tls_wrap_key, &n->tls_wrap_key) &&
                       o->key_direction == n->key_direction,
                   o->tls_wrap_mode == CONFIG_TLS_WRAP_AUTH ? "tls-auth" : "tls-crypt");
    RESTART_UNLESS(d,
                   o->has_tls_crypt_v2 == n->has_tls_crypt_v2 &&
                       blob_eq(&o->tls_crypt_v2_key, &n->tls_crypt_v2_key),
                   "tls-crypt-v2");
    RESTART_UNLESS(d, str_eq(o->auth, n->auth), "auth");
    RESTART_UNLESS(d, o->tls_crypt_v2_max_age_days == n->tls_crypt_v2_max_age_days,
                   "tls-crypt-v2-max-age");
    RESTART_UNLESS(d,
                   str_eq(o->data_ciphers, n->data_ciphers) &&
                       str_eq(o->data_ciphers_fallback, n->data_ciphers_fallback) &&
                       str_eq(o->cipher, n->cipher),
                   "data-ciphers");
    RESTART_UNLESS(d, o->replay_window == n->replay_window && o->replay_time_s == n->replay_time_s,
                   "replay-window");
    RESTART_UNLESS(d,
                   str_eq(o->tls_version_min, n->tls_version_min) &&
                       str_eq(o->tls_version_max, n->tls_version_max),
                   "tls-version-min/max");
    RESTART_UNLESS(d, str_eq(o->tls_groups, n->tls_groups), "tls-groups");
    RESTART_UNLESS(d, str_eq(o->tls_cipher, n->tls_cipher), "tls-cipher");
    RESTART_UNLESS(d, str_eq(o->tls_cert_profile, n->tls_cert_profile), "tls-cert-profile");
    RESTART_UNLESS(d, o->verify_client_cert == n->verify_client_cert, "verify-client-cert");
    RESTART_UNLESS(d, o->remote_cert_tls_client == n->remote_cert_tls_client, "remote-cert-tls");
    RESTART_UNLESS(d,
                   o->n_peer_fingerprints == n->n_peer_fingerprints &&
                       (o->n_peer_fingerprints == 0 ||
                        mem_eq(o->peer_fingerprints, n->peer_fingerprints,
                               o->n_peer_fingerprints * sizeof(o->peer_fingerprints[0]))),
                   "peer-fingerprint");
    RESTART_UNLESS(d,
                   str_eq(o->verify_x509_name, n->verify_x509_name) &&
                       o->verify_x509_type == n->verify_x509_type,
                   "verify-x509-name");
    RESTART_UNLESS(d,
                   o->has_remote_cert_ku == n->has_remote_cert_ku &&
                       o->n_remote_cert_ku == n->n_remote_cert_ku &&
                       mem_eq(o->remote_cert_ku, n->remote_cert_ku, sizeof(o->remote_cert_ku)),
                   "remote-cert-ku");
    RESTART_UNLESS(d, str_eq(o->remote_cert_eku, n->remote_cert_eku), "remote-cert-eku");
    RESTART_UNLESS(
        d,
        o->n_verify_hashes == n->n_verify_hashes && o->verify_hash_len == n->verify_hash_len &&
            (o->n_verify_hashes == 0 || mem_eq(o->verify_hashes, n->verify_hashes,
                                               o->n_verify_hashes * sizeof(o->verify_hashes[0]))),
        "verify-hash");
    RESTART_UNLESS(d, o->ns_cert_type == n->ns_cert_type, "ns-cert-type");
}

static void diff_cert_auth(const struct config *oc, const struct config *nc, struct config_diff *d)
{
    const struct config_cert *o = &oc->cert, *n = &nc->cert;
    const struct config_auth *oa = &oc->auth, *na = &nc->auth;

    RESTART_UNLESS(d,
                   o->n_username_fields == n->n_username_fields &&
                       (o->n_username_fields == 0 ||
                        mem_eq(o->username_fields, n->username_fields,
                               o->n_username_fields * sizeof(*o->username_fields))),
                   "x509-username-field");
    RESTART_UNLESS(d,
                   o->n_x509_track == n->n_x509_track &&
                       (o->n_x509_track == 0 || mem_eq(o->x509_track, n->x509_track,
                                                       o->n_x509_track * sizeof(*o->x509_track))),
                   "x509-track");
    RESTART_UNLESS(d, str_eq(o->tls_export_cert_dir, n->tls_export_cert_dir), "tls-export-cert");
    APPLY_UNLESS(d,
                 strv_eq(oa->auth_user_pass_verify, na->auth_user_pass_verify) &&
                     oa->auth_user_pass_verify_via_file == na->auth_user_pass_verify_via_file,
                 CONFIG_RELOAD_SCRIPTS);
    RESTART_UNLESS(d, oa->auth_user_pass_optional == na->auth_user_pass_optional,
                   "auth-user-pass-optional");
    RESTART_UNLESS(d, oa->username_as_common_name == na->username_as_common_name,
                   "username-as-common-name");
    RESTART_UNLESS(d,
                   oa->auth_gen_token == na->auth_gen_token &&
                       oa->auth_token_lifetime_s == na->auth_token_lifetime_s &&
                       oa->auth_token_renewal_s == na->auth_token_renewal_s &&
                       oa->auth_token_external_auth == na->auth_token_external_auth,
                   "auth-gen-token");
    RESTART_UNLESS(
        d,
        oa->has_auth_token_secret == na->has_auth_token_secret &&
            mem_eq(oa->auth_token_secret, na->auth_token_secret, sizeof(oa->auth_token_secret)),
        "auth-gen-token-secret");
}

static bool plugins_eq(const struct config_hooks *o, const struct config_hooks *n)
{
    if (o->n_plugins != n->n_plugins) {
        return false;
    }
    for (size_t i = 0; i < o->n_plugins; i++) {
        if (!str_eq(o->plugins[i].path, n->plugins[i].path) ||
            !strv_eq(o->plugins[i].argv, n->plugins[i].argv)) {
            return false;
        }
    }
    return true;
}

static void diff_hooks(const struct config_hooks *o, const struct config_hooks *n,
                       struct config_diff *d)
{
    RESTART_UNLESS(d, o->script_security == n->script_security, "script-security");
    RESTART_UNLESS(d, str_eq(o->tmp_dir, n->tmp_dir), "tmp-dir");
    RESTART_UNLESS(d, strs_eq(o->setenv, o->n_setenv, n->setenv, n->n_setenv), "setenv");
    APPLY_UNLESS(d,
                 strv_eq(o->tls_verify, n->tls_verify) &&
                     strv_eq(o->client_connect, n->client_connect) &&
                     strv_eq(o->client_disconnect, n->client_disconnect),
                 CONFIG_RELOAD_SCRIPTS);
    APPLY_UNLESS(d, strv_eq(o->tls_crypt_v2_verify, n->tls_crypt_v2_verify),
                 CONFIG_RELOAD_V2_VERIFY);
    RESTART_UNLESS(d, strv_eq(o->learn_address, n->learn_address), "learn-address");
    RESTART_UNLESS(d,
                   strv_eq(o->up, n->up) && strv_eq(o->down, n->down) &&
                       strv_eq(o->route_up, n->route_up) && o->down_pre == n->down_pre &&
                       strv_eq(o->route_pre_down, n->route_pre_down),
                   "up/down/route-up");
    RESTART_UNLESS(d, strv_eq(o->client_crresponse, n->client_crresponse), "client-crresponse");
    RESTART_UNLESS(d, plugins_eq(o, n), "plugin");
}

static void diff_clients(const struct config_clients *o, const struct config_clients *n,
                         struct config_diff *d)
{
    APPLY_UNLESS(d, o->max_clients == n->max_clients, CONFIG_RELOAD_MAX_CLIENTS);
    APPLY_UNLESS(d,
                 o->connect_freq_max == n->connect_freq_max &&
                     o->connect_freq_per_s == n->connect_freq_per_s &&
                     o->connect_freq_initial_max == n->connect_freq_initial_max &&
                     o->connect_freq_initial_per_s == n->connect_freq_initial_per_s,
                 CONFIG_RELOAD_CONNECT_FREQ);
    RESTART_UNLESS(d, o->duplicate_cn == n->duplicate_cn, "duplicate-cn");
    RESTART_UNLESS(d, o->explicit_exit_notify == n->explicit_exit_notify, "explicit-exit-notify");
    RESTART_UNLESS(d, o->inactive_s == n->inactive_s && o->inactive_bytes == n->inactive_bytes,
                   "inactive");
    RESTART_UNLESS(d, o->session_timeout_s == n->session_timeout_s, "session-timeout");
    RESTART_UNLESS(d, o->max_routes_per_client == n->max_routes_per_client,
                   "max-routes-per-client");
    RESTART_UNLESS(d,
                   o->stale_routes_s == n->stale_routes_s &&
                       o->stale_routes_interval_s == n->stale_routes_interval_s,
                   "stale-routes-check");
}

static void diff_proc(const struct config *oc, const struct config *nc, struct config_diff *d)
{
    const struct config_proc *o = &oc->proc, *n = &nc->proc;
    const struct config_mgmt *om = &oc->mgmt, *nm = &nc->mgmt;

    RESTART_UNLESS(d, o->workers == n->workers, "workers");
    RESTART_UNLESS(d, str_eq(o->user, n->user), "user");
    RESTART_UNLESS(d, str_eq(o->group, n->group), "group");
    RESTART_UNLESS(d, str_eq(o->chroot_dir, n->chroot_dir), "chroot");
    RESTART_UNLESS(d, o->daemonize == n->daemonize, "daemon");
    RESTART_UNLESS(d, o->mlock == n->mlock, "mlock");
    RESTART_UNLESS(d, o->nice == n->nice, "nice"); /* applied before the first thread starts */
    RESTART_UNLESS(d, o->use_syslog == n->use_syslog && str_eq(o->syslog_name, n->syslog_name),
                   "syslog");
    RESTART_UNLESS(d, str_eq(o->writepid, n->writepid), "writepid");
    RESTART_UNLESS(d, str_eq(o->log_file, n->log_file) && o->log_append == n->log_append, "log");
    RESTART_UNLESS(d, o->suppress_timestamps == n->suppress_timestamps, "suppress-timestamps");
    RESTART_UNLESS(d, o->machine_readable_output == n->machine_readable_output,
                   "machine-readable-output");
    APPLY_UNLESS(d, o->verb == n->verb && o->mute == n->mute, CONFIG_RELOAD_VERB);
    RESTART_UNLESS(d,
                   str_eq(oc->status.status_file, nc->status.status_file) &&
                       oc->status.status_interval_s == nc->status.status_interval_s &&
                       oc->status.status_version == nc->status.status_version,
                   "status");
    RESTART_UNLESS(d,
                   str_eq(om->addr, nm->addr) && str_eq(om->port, nm->port) &&
                       om->is_unix == nm->is_unix && str_eq(om->password, nm->password) &&
                       str_eq(om->client_user, nm->client_user) &&
                       str_eq(om->client_group, nm->client_group) &&
                       om->log_cache == nm->log_cache && om->hold == nm->hold &&
                       om->client_auth == nm->client_auth && om->external_key == nm->external_key &&
                       om->external_key_flags == nm->external_key_flags &&
                       om->query_passwords == nm->query_passwords &&
                       str_eq(om->external_cert, nm->external_cert),
                   "management");
    RESTART_UNLESS(d, str_eq(oc->cd_dir, nc->cd_dir), "cd");
    RESTART_UNLESS(d,
                   str_eq(oc->metrics.host, nc->metrics.host) &&
                       oc->metrics.port == nc->metrics.port &&
                       oc->metrics.per_client == nc->metrics.per_client,
                   "metrics");
}

void config_diff(const struct config *old, const struct config *next, struct config_diff *d)
{
    memset(d, 0, sizeof(*d));
    diff_net(&old->net, &next->net, d);
    diff_timers(&old->timers, &next->timers, d);
    diff_tls(old, next, d);
    diff_cert_auth(old, next, d);
    diff_hooks(&old->hooks, &next->hooks, d);
    diff_clients(&old->clients, &next->clients, d);
    diff_proc(old, next, d);
}

const char *config_reload_part_name(unsigned bit)
{
    switch (bit) {
    case CONFIG_RELOAD_TLS:
        return "ca/cert/key";
    case CONFIG_RELOAD_CRL:
        return "crl-verify";
    case CONFIG_RELOAD_V2_VERIFY:
        return "tls-crypt-v2-verify";
    case CONFIG_RELOAD_PUSH:
        return "push";
    case CONFIG_RELOAD_CCD:
        return "client-config-dir";
    case CONFIG_RELOAD_SCRIPTS:
        return "auth scripts";
    case CONFIG_RELOAD_MAX_CLIENTS:
        return "max-clients";
    case CONFIG_RELOAD_KEEPALIVE:
        return "keepalive";
    case CONFIG_RELOAD_VERB:
        return "verb";
    case CONFIG_RELOAD_CONNECT_FREQ:
        return "connect-freq";
    case CONFIG_RELOAD_POOL:
        return "server (pool size)";
    default:
        return "?";
    }
}

#define TAKE(dst, src, field)                                                                      \
    do {                                                                                           \
        (dst)->field = (src)->field;                                                               \
        memset(&(src)->field, 0, sizeof((src)->field));                                            \
    } while (0)

void config_reload_take(struct config *dst, struct config *src)
{
    TAKE(dst, src, tls.ca);
    TAKE(dst, src, tls.cert);
    TAKE(dst, src, tls.key);
    TAKE(dst, src, cert.extra_certs);
    TAKE(dst, src, tls.crl);
    TAKE(dst, src, tls.crl_file);
    TAKE(dst, src, cert.crl_dir);
    TAKE(dst, src, cert.capath);
    TAKE(dst, src, hooks.tls_crypt_v2_verify);
    TAKE(dst, src, hooks.tls_verify);
    TAKE(dst, src, hooks.client_connect);
    TAKE(dst, src, hooks.client_disconnect);
    TAKE(dst, src, auth.auth_user_pass_verify);
    dst->auth.auth_user_pass_verify_via_file = src->auth.auth_user_pass_verify_via_file;
    TAKE(dst, src, net.push);
    TAKE(dst, src, net.client_config_dir);
    dst->net.ccd_exclusive = src->net.ccd_exclusive;
    dst->timers.keepalive_ping_s = src->timers.keepalive_ping_s;
    dst->timers.keepalive_restart_s = src->timers.keepalive_restart_s;
    dst->timers.ping_s = src->timers.ping_s;
    dst->timers.ping_restart_s = src->timers.ping_restart_s;
    dst->proc.verb = src->proc.verb;
    dst->proc.mute = src->proc.mute;
    dst->clients.connect_freq_max = src->clients.connect_freq_max;
    dst->clients.connect_freq_per_s = src->clients.connect_freq_per_s;
    dst->clients.connect_freq_initial_max = src->clients.connect_freq_initial_max;
    dst->clients.connect_freq_initial_per_s = src->clients.connect_freq_initial_per_s;
}

void config_reload_free(struct config *c)
{
    if (c == NULL) {
        return;
    }
    char **strv[] = {c->hooks.tls_crypt_v2_verify, c->hooks.tls_verify, c->hooks.client_connect,
                     c->hooks.client_disconnect, c->auth.auth_user_pass_verify};

    config_blob_clear(&c->tls.ca);
    config_blob_clear(&c->tls.cert);
    config_blob_clear(&c->tls.key);
    config_blob_clear(&c->cert.extra_certs);
    config_blob_clear(&c->tls.crl);
    free(c->tls.crl_file);
    free(c->cert.crl_dir);
    free(c->cert.capath);
    free(c->net.client_config_dir);
    for (size_t i = 0; i < sizeof(strv) / sizeof(strv[0]); i++) {
        config_strv_free(strv[i]);
    }
    for (size_t i = 0; i < c->net.push.n_items; i++) {
        free(c->net.push.items[i]);
    }
    free(c->net.push.items);
    memset(c, 0, sizeof(*c));
}
