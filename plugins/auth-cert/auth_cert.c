/* plugins/auth-cert/auth_cert.c: ovpnd-auth-cert.so, a certificate gate on ovpnd's plugin
 * interface (plugins/include/ovpnd_plugin.h).
 *
 *     plugin PREFIX/lib/ovpnd/plugins/ovpnd-auth-cert.so [cn=NAME]... [ou=NAME]... [list=FILE]
 *                                                       [crl=FILE]
 *
 * After the TLS handshake has verified the client's chain against `ca`, the client certificate
 * (depth 0) is accepted only if its CN or its OU equals one of the names given: `cn=NAME` and
 * `ou=NAME` words, and the lines of `list=FILE` ("cn NAME" or "ou NAME", one per line, '#'
 * starts a comment; the file is read again when it changes). Without any name every
 * certificate passes this check. With `crl=FILE` (PEM or DER, from the same CA as the clients),
 * a certificate whose serial number is on the list is refused; the file is read again when it
 * changes, and a file that cannot be read keeps the previous list in use.
 *
 * A bad argument, an unreadable list or CRL at start-up stops ovpnd with the reason. Every
 * refusal is logged with the CN and why. Hooks run on the plugin's own thread (the interface's
 * rule), so reading the files there never holds up ovpnd.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <mbedtls/x509_crl.h>

#include "plugins/include/ovpnd_plugin.h"

#define EXPORT __attribute__((visibility("default")))
#define NAME_MAX_LEN 256
#define SERIAL_MAX 64

struct name_list {
    char **cn, **ou;
    size_t n_cn, n_ou;
};

/* A file read again when its mtime or size changes. */
struct watched {
    const char *path; /* borrowed from argv, NULL: none */
    struct timespec mtime;
    off_t size;
};

struct context {
    const struct ovpnd_plugin_host *host;
    struct name_list fixed; /* cn= and ou= words */
    struct name_list file;  /* list=FILE */
    struct watched list;
    struct watched crl_file;
    mbedtls_x509_crl crl;
    bool has_crl;
};

static void names_free(struct name_list *l)
{
    for (size_t i = 0; i < l->n_cn; i++) {
        free(l->cn[i]);
    }
    for (size_t i = 0; i < l->n_ou; i++) {
        free(l->ou[i]);
    }
    free(l->cn);
    free(l->ou);
    memset(l, 0, sizeof(*l));
}

/* Add name to the CN (is_ou false) or OU list. Returns 0 or -ENOMEM. */
static int names_add(struct name_list *l, bool is_ou, const char *name)
{
    char ***v = is_ou ? &l->ou : &l->cn;
    size_t *n = is_ou ? &l->n_ou : &l->n_cn;
    char **grown = realloc(*v, (*n + 1) * sizeof(**v));

    if (!grown) {
        return -ENOMEM;
    }
    *v = grown;
    grown[*n] = strdup(name);
    if (!grown[*n]) {
        return -ENOMEM;
    }
    (*n)++;
    return 0;
}

static bool names_has(const struct name_list *l, bool is_ou, const char *name)
{
    char **v = is_ou ? l->ou : l->cn;
    size_t n = is_ou ? l->n_ou : l->n_cn;

    for (size_t i = 0; name && i < n; i++) {
        if (strcmp(v[i], name) == 0) {
            return true;
        }
    }
    return false;
}

/* Whether w's file changed since the last look (or was never read). Sets *err on stat failure. */
static bool changed(struct watched *w, int *err)
{
    struct stat st;

    if (stat(w->path, &st) != 0) {
        *err = -errno;
        return false;
    }
    *err = 0;
    if (st.st_mtim.tv_sec == w->mtime.tv_sec && st.st_mtim.tv_nsec == w->mtime.tv_nsec &&
        st.st_size == w->size) {
        return false;
    }
    w->mtime = st.st_mtim;
    w->size = st.st_size;
    return true;
}

/* Read list=FILE into out. err (err_cap bytes) gets "FILE:LINE: reason". Returns 0 or -1. */
static int read_list(const char *path, struct name_list *out, char *err, size_t err_cap)
{
    FILE *f = fopen(path, "re");
    char line[NAME_MAX_LEN + 16];
    int lineno = 0, ret = 0;

    memset(out, 0, sizeof(*out));
    if (!f) {
        snprintf(err, err_cap, "%s: %s", path, strerror(errno));
        return -1;
    }
    while (ret == 0 && fgets(line, sizeof(line), f)) {
        char *p = line, *kind, *name, *end;

        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            snprintf(err, err_cap, "%s:%d: line too long", path, lineno);
            ret = -1;
            break;
        }
        p[strcspn(p, "#\r\n")] = '\0';
        while (isspace((unsigned char)*p)) {
            p++;
        }
        if (!*p) {
            continue;
        }
        kind = p;
        while (*p && !isspace((unsigned char)*p)) {
            p++;
        }
        if (*p) {
            *p++ = '\0';
        }
        while (isspace((unsigned char)*p)) {
            p++;
        }
        name = p;
        end = name + strlen(name);
        while (end > name && isspace((unsigned char)end[-1])) {
            *--end = '\0';
        }
        if ((strcmp(kind, "cn") != 0 && strcmp(kind, "ou") != 0) || !name[0]) {
            snprintf(err, err_cap, "%s:%d: expected 'cn NAME' or 'ou NAME'", path, lineno);
            ret = -1;
        } else if (names_add(out, kind[0] == 'o', name)) {
            snprintf(err, err_cap, "%s:%d: out of memory", path, lineno);
            ret = -1;
        }
    }
    fclose(f);
    if (ret) {
        names_free(out);
    }
    return ret;
}

/* Parse the CRL file into a fresh list and replace the old one. Returns 0 or -1 (err says). */
static int read_crl(struct context *c, char *err, size_t err_cap)
{
    mbedtls_x509_crl fresh;
    int ret;

    mbedtls_x509_crl_init(&fresh);
    ret = mbedtls_x509_crl_parse_file(&fresh, c->crl_file.path);
    if (ret != 0) {
        snprintf(err, err_cap, "%s: not a readable CRL (mbedTLS error -0x%04x)", c->crl_file.path,
                 (unsigned)-ret);
        mbedtls_x509_crl_free(&fresh);
        return -1;
    }
    if (c->has_crl) {
        mbedtls_x509_crl_free(&c->crl);
    }
    c->crl = fresh;
    c->has_crl = true;
    return 0;
}

/* Look at both files again if they changed; a failure keeps the previous contents. */
static void refresh(struct context *c)
{
    char err[300];
    int serr;

    if (c->list.path && changed(&c->list, &serr)) {
        struct name_list fresh;

        if (read_list(c->list.path, &fresh, err, sizeof(err)) == 0) {
            names_free(&c->file);
            c->file = fresh;
            c->host->log(c->host, OVPND_PLUGIN_LOG_INFO, "%s changed: %zu CN and %zu OU names",
                         c->list.path, fresh.n_cn, fresh.n_ou);
        } else {
            c->host->log(c->host, OVPND_PLUGIN_LOG_WARN, "%s; the previous list stays in use", err);
        }
    }
    if (c->crl_file.path && changed(&c->crl_file, &serr)) {
        if (read_crl(c, err, sizeof(err)) == 0) {
            c->host->log(c->host, OVPND_PLUGIN_LOG_INFO, "%s changed: CRL reloaded",
                         c->crl_file.path);
        } else {
            c->host->log(c->host, OVPND_PLUGIN_LOG_WARN, "%s; the previous CRL stays in use", err);
        }
    }
}

/* "0A:1B:..." (tls_serial_hex_0) into bytes without leading zero bytes. Returns the length,
 * 0 when the text is not such a serial. */
static size_t serial_from_hex(const char *hex, unsigned char *out, size_t cap)
{
    size_t n = 0;

    while (*hex) {
        unsigned int v;

        if (!isxdigit((unsigned char)hex[0]) || !isxdigit((unsigned char)hex[1]) || n == cap ||
            sscanf(hex, "%2x", &v) != 1) {
            return 0;
        }
        if (n > 0 || v != 0) {
            out[n++] = (unsigned char)v;
        }
        hex += 2;
        if (*hex == ':') {
            hex++;
        }
    }
    return n;
}

static bool is_revoked(const struct context *c, const unsigned char *serial, size_t len)
{
    for (const mbedtls_x509_crl *crl = &c->crl; crl; crl = crl->next) {
        for (const mbedtls_x509_crl_entry *e = &crl->entry; e && e->raw.len; e = e->next) {
            const unsigned char *p = e->serial.p;
            size_t n = e->serial.len;

            while (n > 0 && *p == 0) { /* a DER INTEGER may start with 00 */
                p++;
                n--;
            }
            if (n == len && memcmp(p, serial, len) == 0) {
                return true;
            }
        }
    }
    return false;
}

static int tls_verify(void *ctx, const struct ovpnd_plugin_vars *vars, int depth,
                      const char *subject)
{
    struct context *c = ctx;
    const char *cn, *ou;

    if (depth != 0) {
        return OVPND_PLUGIN_OK; /* the CA: the TLS handshake checked the chain */
    }
    refresh(c);
    cn = c->host->var(vars, "X509_0_CN");
    ou = c->host->var(vars, "X509_0_OU");
    if (c->has_crl) {
        const char *hex = c->host->var(vars, "tls_serial_hex_0");
        unsigned char serial[SERIAL_MAX];
        size_t len = hex ? serial_from_hex(hex, serial, sizeof(serial)) : 0;

        if (len == 0) {
            c->host->log(c->host, OVPND_PLUGIN_LOG_WARN,
                         "refused '%s': no usable serial number (tls_serial_hex_0 '%s')", subject,
                         hex ? hex : "");
            return OVPND_PLUGIN_DENY;
        }
        if (is_revoked(c, serial, len)) {
            c->host->log(c->host, OVPND_PLUGIN_LOG_WARN,
                         "refused '%s': certificate serial %s is revoked (%s)", subject, hex,
                         c->crl_file.path);
            return OVPND_PLUGIN_DENY;
        }
    }
    if (c->fixed.n_cn + c->fixed.n_ou + c->file.n_cn + c->file.n_ou == 0) {
        return OVPND_PLUGIN_OK;
    }
    if (names_has(&c->fixed, false, cn) || names_has(&c->file, false, cn) ||
        names_has(&c->fixed, true, ou) || names_has(&c->file, true, ou)) {
        return OVPND_PLUGIN_OK;
    }
    c->host->log(c->host, OVPND_PLUGIN_LOG_WARN,
                 "refused '%s': neither its CN '%s' nor its OU '%s' is on the allowed list",
                 subject, cn ? cn : "", ou ? ou : "");
    return OVPND_PLUGIN_DENY;
}

static void plugin_close(void *ctx)
{
    struct context *c = ctx;

    names_free(&c->fixed);
    names_free(&c->file);
    if (c->has_crl) {
        mbedtls_x509_crl_free(&c->crl);
    }
    free(c);
}

EXPORT int ovpnd_plugin_open(unsigned int version, const struct ovpnd_plugin_host *host,
                             const char *const *argv, struct ovpnd_plugin *plugin, char *err,
                             size_t err_cap)
{
    struct context *c;
    int serr;

    if (version < OVPND_PLUGIN_VERSION) {
        snprintf(err, err_cap, "needs plugin interface version %d", OVPND_PLUGIN_VERSION);
        return -1;
    }
    c = calloc(1, sizeof(*c));
    if (!c) {
        snprintf(err, err_cap, "out of memory");
        return -1;
    }
    c->host = host;
    for (size_t i = 1; argv[i]; i++) {
        const char *a = argv[i];
        int ret = 0;

        if (strncmp(a, "cn=", 3) == 0 && a[3]) {
            ret = names_add(&c->fixed, false, a + 3);
        } else if (strncmp(a, "ou=", 3) == 0 && a[3]) {
            ret = names_add(&c->fixed, true, a + 3);
        } else if (strncmp(a, "list=", 5) == 0 && a[5] && !c->list.path) {
            c->list.path = a + 5;
        } else if (strncmp(a, "crl=", 4) == 0 && a[4] && !c->crl_file.path) {
            c->crl_file.path = a + 4;
        } else {
            snprintf(err, err_cap,
                     "argument '%s': expected cn=NAME, ou=NAME, list=FILE or crl=FILE (list and "
                     "crl once)",
                     a);
            plugin_close(c);
            return -1;
        }
        if (ret) {
            snprintf(err, err_cap, "out of memory");
            plugin_close(c);
            return -1;
        }
    }
    if (c->list.path) {
        if (!changed(&c->list, &serr) && serr) {
            snprintf(err, err_cap, "%s: %s", c->list.path, strerror(-serr));
            plugin_close(c);
            return -1;
        }
        if (read_list(c->list.path, &c->file, err, err_cap)) {
            plugin_close(c);
            return -1;
        }
    }
    if (c->crl_file.path) {
        if (!changed(&c->crl_file, &serr) && serr) {
            snprintf(err, err_cap, "%s: %s", c->crl_file.path, strerror(-serr));
            plugin_close(c);
            return -1;
        }
        if (read_crl(c, err, err_cap)) {
            plugin_close(c);
            return -1;
        }
    }
    host->log(host, OVPND_PLUGIN_LOG_INFO, "%zu CN and %zu OU names allowed%s%s",
              c->fixed.n_cn + c->file.n_cn, c->fixed.n_ou + c->file.n_ou,
              c->crl_file.path ? ", CRL " : "", c->crl_file.path ? c->crl_file.path : "");
    plugin->ctx = c;
    plugin->tls_verify = tls_verify;
    plugin->close = plugin_close;
    return 0;
}
