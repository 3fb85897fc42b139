/* plugins/pool/pool.c: ovpnd-pool.so, static addresses per certificate CN on ovpnd's plugin
 * interface (plugins/include/ovpnd_plugin.h, the address_assign hook).
 *
 *     plugin PREFIX/lib/ovpnd/plugins/ovpnd-pool.so FILE [strict]
 *
 * FILE has one line per client: "CN IPV4 [IPV6]" ('#' starts a comment), for instance
 *
 *     alice   198.19.0.50
 *     bob     198.19.0.51   2001:db8:0:123::51
 *
 * A client whose CN (username with username-as-common-name) is listed gets that address
 * instead of one from the server's pool; the others get the pool's, or are refused with
 * `strict`. The addresses must lie in the `server` subnet (and the `server-ipv6` one), and not
 * be in use by another client at connect time, else that client is refused (as for a
 * client-config-dir ifconfig-push). FILE is read at start-up (a bad line stops ovpnd with
 * FILE:LINE) and again whenever it changes (then a bad line is logged and the previous map
 * stays in use), so adding a user needs no restart.
 *
 * The dynamic pool itself, and keeping pool addresses across restarts, are ovpnd's own
 * `server`/`ifconfig-pool` and `ifconfig-pool-persist`, as in openvpn.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plugins/include/ovpnd_plugin.h"

#define EXPORT __attribute__((visibility("default")))
#define LINE_MAX_LEN 512

struct entry {
    char *cn;
    char ipv4[INET_ADDRSTRLEN];
    char ipv6[INET6_ADDRSTRLEN]; /* "" if none */
};

struct map {
    struct entry *v;
    size_t n;
};

struct context {
    const struct ovpnd_plugin_host *host;
    const char *path; /* borrowed from argv */
    bool is_strict;
    struct timespec mtime;
    off_t size;
    struct map map;
};

static void map_free(struct map *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->v[i].cn);
    }
    free(m->v);
    memset(m, 0, sizeof(*m));
}

static const struct entry *map_find(const struct map *m, const char *cn)
{
    for (size_t i = 0; cn && i < m->n; i++) {
        if (strcmp(m->v[i].cn, cn) == 0) {
            return &m->v[i];
        }
    }
    return NULL;
}

/* Split the next blank-separated word off *p (NUL-terminating it), or NULL at the end. */
static char *next_word(char **p)
{
    char *w;

    while (isspace((unsigned char)**p)) {
        (*p)++;
    }
    if (!**p) {
        return NULL;
    }
    w = *p;
    while (**p && !isspace((unsigned char)**p)) {
        (*p)++;
    }
    if (**p) {
        *(*p)++ = '\0';
    }
    return w;
}

/* Check and add one line's words. Returns NULL or the reason it is bad. */
static const char *add_line(struct map *m, const char *cn, const char *ipv4, const char *ipv6)
{
    struct in_addr a4;
    struct in6_addr a6;
    struct entry *grown;

    if (inet_pton(AF_INET, ipv4, &a4) != 1) {
        return "not an IPv4 address";
    }
    if (ipv6 && inet_pton(AF_INET6, ipv6, &a6) != 1) {
        return "not an IPv6 address (write it without /bits)";
    }
    for (size_t i = 0; i < m->n; i++) {
        if (strcmp(m->v[i].cn, cn) == 0) {
            return "this CN is listed twice";
        }
        if (strcmp(m->v[i].ipv4, ipv4) == 0) {
            return "this IPv4 address is given to another CN";
        }
    }
    grown = realloc(m->v, (m->n + 1) * sizeof(*m->v));
    if (!grown) {
        return "out of memory";
    }
    m->v = grown;
    memset(&grown[m->n], 0, sizeof(grown[m->n]));
    grown[m->n].cn = strdup(cn);
    if (!grown[m->n].cn) {
        return "out of memory";
    }
    inet_ntop(AF_INET, &a4, grown[m->n].ipv4, sizeof(grown[m->n].ipv4));
    if (ipv6) {
        inet_ntop(AF_INET6, &a6, grown[m->n].ipv6, sizeof(grown[m->n].ipv6));
    }
    m->n++;
    return NULL;
}

/* Read path into out. err (err_cap bytes) gets "FILE:LINE: reason". Returns 0 or -1. */
static int read_map(const char *path, struct map *out, char *err, size_t err_cap)
{
    FILE *f = fopen(path, "re");
    char line[LINE_MAX_LEN];
    int lineno = 0, ret = 0;

    memset(out, 0, sizeof(*out));
    if (!f) {
        snprintf(err, err_cap, "%s: %s", path, strerror(errno));
        return -1;
    }
    while (ret == 0 && fgets(line, sizeof(line), f)) {
        char *p = line, *cn, *ipv4, *ipv6;
        const char *why = NULL;

        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            why = "line too long";
        } else {
            p[strcspn(p, "#\r\n")] = '\0';
            cn = next_word(&p);
            if (!cn) {
                continue;
            }
            ipv4 = next_word(&p);
            ipv6 = next_word(&p);
            if (!ipv4 || next_word(&p)) {
                why = "expected 'CN IPV4 [IPV6]'";
            } else {
                why = add_line(out, cn, ipv4, ipv6);
            }
        }
        if (why) {
            snprintf(err, err_cap, "%s:%d: %s", path, lineno, why);
            ret = -1;
        }
    }
    fclose(f);
    if (ret) {
        map_free(out);
    }
    return ret;
}

/* Read the file again when it changed; on error keep the map we have. */
static void refresh(struct context *c)
{
    struct stat st;
    struct map fresh;
    char err[600];

    if (stat(c->path, &st) != 0 ||
        (st.st_mtim.tv_sec == c->mtime.tv_sec && st.st_mtim.tv_nsec == c->mtime.tv_nsec &&
         st.st_size == c->size)) {
        return;
    }
    c->mtime = st.st_mtim;
    c->size = st.st_size;
    if (read_map(c->path, &fresh, err, sizeof(err))) {
        c->host->log(c->host, OVPND_PLUGIN_LOG_WARN, "%s; the previous map stays in use", err);
        return;
    }
    map_free(&c->map);
    c->map = fresh;
    c->host->log(c->host, OVPND_PLUGIN_LOG_INFO, "%s changed: %zu clients", c->path, fresh.n);
}

static int address_assign(void *ctx, const struct ovpnd_plugin_vars *vars, char *ipv4,
                          size_t ipv4_cap, char *ipv6, size_t ipv6_cap)
{
    struct context *c = ctx;
    const char *cn = c->host->var(vars, "common_name");
    const struct entry *e;

    refresh(c);
    e = map_find(&c->map, cn);
    if (!e) {
        if (c->is_strict) {
            c->host->log(c->host, OVPND_PLUGIN_LOG_WARN, "refused '%s': not in %s (strict)",
                         cn ? cn : "", c->path);
            return OVPND_PLUGIN_DENY;
        }
        return OVPND_PLUGIN_OK; /* the server's pool decides */
    }
    snprintf(ipv4, ipv4_cap, "%s", e->ipv4);
    if (e->ipv6[0]) {
        snprintf(ipv6, ipv6_cap, "%s", e->ipv6);
    }
    c->host->log(c->host, OVPND_PLUGIN_LOG_INFO, "'%s' gets %s%s%s", cn, e->ipv4,
                 e->ipv6[0] ? " and " : "", e->ipv6);
    return OVPND_PLUGIN_OK;
}

static void plugin_close(void *ctx)
{
    struct context *c = ctx;

    map_free(&c->map);
    free(c);
}

EXPORT int ovpnd_plugin_open(unsigned int version, const struct ovpnd_plugin_host *host,
                             const char *const *argv, struct ovpnd_plugin *plugin, char *err,
                             size_t err_cap)
{
    struct context *c;
    struct stat st;

    if (version < OVPND_PLUGIN_VERSION) {
        snprintf(err, err_cap, "needs plugin interface version %d", OVPND_PLUGIN_VERSION);
        return -1;
    }
    if (!argv[1] || (argv[2] && strcmp(argv[2], "strict") != 0) || (argv[2] && argv[3])) {
        snprintf(err, err_cap, "usage: ovpnd-pool.so FILE [strict]");
        return -1;
    }
    c = calloc(1, sizeof(*c));
    if (!c) {
        snprintf(err, err_cap, "out of memory");
        return -1;
    }
    c->host = host;
    c->path = argv[1];
    c->is_strict = argv[2] != NULL;
    if (stat(c->path, &st) == 0) {
        c->mtime = st.st_mtim;
        c->size = st.st_size;
    }
    if (read_map(c->path, &c->map, err, err_cap)) {
        plugin_close(c);
        return -1;
    }
    host->log(host, OVPND_PLUGIN_LOG_INFO, "%s: %zu clients with a fixed address%s", c->path,
              c->map.n, c->is_strict ? ", no others (strict)" : "");
    plugin->ctx = c;
    plugin->address_assign = address_assign;
    plugin->close = plugin_close;
    return 0;
}
