/* server/hooks/plugin_native.c: ovpnd's own plugin interface on top of the OpenVPN event calls (see
 * plugin_native.h). */
#include "server/hooks/plugin_native.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/log/log.h"
#include "server/hooks/openvpn_plugin.h"

#define NATIVE_CONFIG_MAX 8192 /* client_connect's config buffer, as the header promises */
#define NATIVE_REASON_MAX 200

struct ovpnd_plugin_vars {
    const char *const *envp;
};

/* A deferred username/password answer: where 2.6's deferred protocol wants it written. */
struct ovpnd_plugin_deferred {
    char *control_file; /* auth_control_file: "1" or "0" */
    char *reason_file;  /* auth_failed_reason_file, or NULL */
};

static const char *host_var(const struct ovpnd_plugin_vars *vars, const char *name)
{
    size_t n = strlen(name);

    for (const char *const *e = vars->envp; e && *e; e++) {
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') {
            return *e + n + 1;
        }
    }
    return NULL;
}

static void host_log(const struct ovpnd_plugin_host *host, int level, const char *fmt, ...)
{
    /* host is the first member of its struct native_plugin (plugin_native.h). */
    const struct native_plugin *np = (const struct native_plugin *)host;
    enum log_level lvl = level <= OVPND_PLUGIN_LOG_ERROR  ? LOG_ERR
                         : level == OVPND_PLUGIN_LOG_WARN ? LOG_WARN
                         : level == OVPND_PLUGIN_LOG_INFO ? LOG_INFO
                                                          : LOG_DEBUG;
    char text[1024];
    va_list ap;

    if (!log_enabled(lvl)) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    log_msg(lvl, "%s: %s", np->name, text);
}

/* Write text to path with O_TRUNC; errors are logged (the client then times out at
 * hand-window, as with a deferred script that never answers). */
static void write_small(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    size_t len = strlen(text);

    if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
        log_msg(LOG_WARN, "plugin: cannot write %s: %s", path, strerror(errno));
    }
    if (fd >= 0) {
        close(fd);
    }
}

static void deferred_free(struct ovpnd_plugin_deferred *d)
{
    free(d->control_file);
    free(d->reason_file);
    free(d);
}

static void host_auth_done(struct ovpnd_plugin_deferred *d, int result, const char *reason)
{
    if (!d) {
        return;
    }
    /* The reason first: ovpnd reads it once the control file says 0. */
    if (result != OVPND_PLUGIN_OK && reason && reason[0] && d->reason_file) {
        char text[NATIVE_REASON_MAX + 1];

        snprintf(text, sizeof(text), "%s", reason);
        write_small(d->reason_file, text);
    }
    write_small(d->control_file, result == OVPND_PLUGIN_OK ? "1" : "0");
    deferred_free(d);
}

int native_plugin_open(struct native_plugin *np, ovpnd_plugin_open_fn open_fn, const char *name,
                       const char *const *argv, unsigned int *type_mask, char *err, size_t err_len)
{
    char why[256] = "";

    memset(np, 0, sizeof(*np));
    np->name = name;
    np->host.version = OVPND_PLUGIN_VERSION;
    np->host.size = sizeof(np->host);
    np->host.var = host_var;
    np->host.log = host_log;
    np->host.auth_done = host_auth_done;
    if (open_fn(OVPND_PLUGIN_VERSION, &np->host, argv, &np->hooks, why, sizeof(why)) != 0) {
        why[sizeof(why) - 1] = '\0';
        snprintf(err, err_len, "%s failed to initialise: %s", name,
                 why[0] ? why : "(no reason given)");
        return -EINVAL;
    }
    *type_mask = 0;
    if (np->hooks.tls_verify) {
        *type_mask |= 1u << OVPN_PLUGIN_TLS_VERIFY;
    }
    if (np->hooks.auth_user_pass) {
        *type_mask |= 1u << OVPN_PLUGIN_AUTH_USER_PASS_VERIFY;
    }
    if (np->hooks.address_assign || np->hooks.client_connect) {
        *type_mask |= 1u << OVPN_PLUGIN_CLIENT_CONNECT_V2;
    }
    if (np->hooks.client_disconnect) {
        *type_mask |= 1u << OVPN_PLUGIN_CLIENT_DISCONNECT;
    }
    if (np->hooks.learn_address) {
        *type_mask |= 1u << OVPN_PLUGIN_LEARN_ADDRESS;
    }
    return 0;
}

static int func_result(int r)
{
    return r == OVPND_PLUGIN_OK ? OVPN_PLUGIN_FUNC_SUCCESS : OVPN_PLUGIN_FUNC_ERROR;
}

static int call_auth(struct native_plugin *np, const struct ovpnd_plugin_vars *vars)
{
    const char *user = host_var(vars, "username"), *pass = host_var(vars, "password");
    const char *acf = host_var(vars, "auth_control_file");
    const char *afr = host_var(vars, "auth_failed_reason_file");
    struct ovpnd_plugin_deferred *d = calloc(1, sizeof(*d));
    int r;

    if (!d || !acf || !(d->control_file = strdup(acf)) ||
        (afr && !(d->reason_file = strdup(afr)))) {
        if (d) {
            deferred_free(d);
        }
        return OVPN_PLUGIN_FUNC_ERROR;
    }
    r = np->hooks.auth_user_pass(np->hooks.ctx, vars, user ? user : "", pass ? pass : "", d);
    if (r == OVPND_PLUGIN_DEFER) {
        return OVPN_PLUGIN_FUNC_DEFERRED; /* d is the plugin's until host->auth_done */
    }
    deferred_free(d);
    return func_result(r);
}

/* address_assign, then client_connect: both as one "config" text. */
static int call_connect(struct native_plugin *np, const struct ovpnd_plugin_vars *vars,
                        struct ovpn_plugin_string_list **list)
{
    char *config = calloc(1, NATIVE_CONFIG_MAX + 128);
    size_t used = 0;
    int r = OVPND_PLUGIN_OK;

    if (!config) {
        return OVPN_PLUGIN_FUNC_ERROR;
    }
    if (np->hooks.address_assign) {
        char ipv4[16] = "", ipv6[46] = "";
        /* topology subnet: the netmask; net30/p2p: the client's peer (hook_env.c) */
        const char *mask = host_var(vars, "ifconfig_pool_netmask")
                               ? host_var(vars, "ifconfig_pool_netmask")
                               : host_var(vars, "ifconfig_pool_local_ip");
        const char *bits = host_var(vars, "ifconfig_pool_ip6_netbits");

        const char *local = host_var(vars, "ifconfig_local");
        char peer[INET_ADDRSTRLEN] = "";

        r = np->hooks.address_assign(np->hooks.ctx, vars, ipv4, sizeof(ipv4), ipv6, sizeof(ipv6));
        ipv4[sizeof(ipv4) - 1] = ipv6[sizeof(ipv6) - 1] = '\0';
        if (r == OVPND_PLUGIN_OK && ipv4[0] && !host_var(vars, "ifconfig_pool_netmask") && mask &&
            local && strcmp(mask, local) != 0) {
            /* net30 (the pool's peer is its block's server end, not the server's address, as
             * with p2p): the server's end is the other usable address of the plugin address's
             * own /30 block. */
            struct in_addr a;

            if (inet_pton(AF_INET, ipv4, &a) == 1) {
                a.s_addr = htonl(ntohl(a.s_addr) ^ 3u);
                inet_ntop(AF_INET, &a, peer, sizeof(peer));
                mask = peer;
            }
        }
        if (r == OVPND_PLUGIN_OK && ipv4[0]) {
            used += (size_t)snprintf(config + used, NATIVE_CONFIG_MAX + 128 - used,
                                     "ifconfig-push %s %s\n", ipv4, mask ? mask : "255.255.255.0");
        }
        if (r == OVPND_PLUGIN_OK && ipv6[0]) {
            used += (size_t)snprintf(config + used, NATIVE_CONFIG_MAX + 128 - used,
                                     "ifconfig-ipv6-push %s/%s\n", ipv6, bits ? bits : "64");
        }
    }
    if (r == OVPND_PLUGIN_OK && np->hooks.client_connect) {
        r = np->hooks.client_connect(np->hooks.ctx, vars, config + used, NATIVE_CONFIG_MAX);
        config[used + NATIVE_CONFIG_MAX - 1] = '\0';
    }
    if (r == OVPND_PLUGIN_OK && config[0]) {
        struct ovpn_plugin_string_list *node = calloc(1, sizeof(*node));

        if (!node || !(node->name = strdup("config"))) {
            free(node);
            free(config);
            return OVPN_PLUGIN_FUNC_ERROR;
        }
        node->value = config; /* freed with the list */
        *list = node;
        return OVPN_PLUGIN_FUNC_SUCCESS;
    }
    free(config);
    return func_result(r);
}

int native_plugin_call(struct native_plugin *np, int type, const char *const *argv,
                       const char *const *envp, struct ovpn_plugin_string_list **list)
{
    struct ovpnd_plugin_vars vars = {envp};

    switch (type) {
    case OVPN_PLUGIN_TLS_VERIFY:
        if (!np->hooks.tls_verify || !argv[1] || !argv[2]) {
            return OVPN_PLUGIN_FUNC_ERROR;
        }
        return func_result(np->hooks.tls_verify(np->hooks.ctx, &vars, atoi(argv[1]), argv[2]));
    case OVPN_PLUGIN_AUTH_USER_PASS_VERIFY:
        return np->hooks.auth_user_pass ? call_auth(np, &vars) : OVPN_PLUGIN_FUNC_ERROR;
    case OVPN_PLUGIN_CLIENT_CONNECT_V2:
        return call_connect(np, &vars, list);
    case OVPN_PLUGIN_CLIENT_DISCONNECT:
        if (np->hooks.client_disconnect) {
            np->hooks.client_disconnect(np->hooks.ctx, &vars);
        }
        return OVPN_PLUGIN_FUNC_SUCCESS;
    case OVPN_PLUGIN_LEARN_ADDRESS:
        if (np->hooks.learn_address && argv[1] && argv[2]) {
            np->hooks.learn_address(np->hooks.ctx, argv[1], argv[2], argv[3]);
        }
        return OVPN_PLUGIN_FUNC_SUCCESS;
    default:
        return OVPN_PLUGIN_FUNC_ERROR;
    }
}

void native_plugin_close(struct native_plugin *np)
{
    if (np->hooks.close) {
        np->hooks.close(np->hooks.ctx);
    }
    memset(&np->hooks, 0, sizeof(np->hooks));
}
