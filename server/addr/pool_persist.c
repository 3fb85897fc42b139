/* server/addr/pool_persist.c: the ifconfig-pool-persist file; see pool_persist.h. */
#include "server/addr/pool_persist.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/log/log.h"

#define PERSIST_MAX_FILE (16 << 20) /* bytes read at most: 65536 lines of 256 bytes */

/* The next comma-separated field of *s (up to the next ',' or the end) into out, trimmed of
 * blanks. Returns false when out_len is too small. */
static bool next_field(const char **s, char *out, size_t out_len)
{
    const char *start = *s, *end = strchr(start, ',');
    size_t len;

    if (!end) {
        end = start + strlen(start);
    }
    *s = *end == ',' ? end + 1 : end;
    while (start < end && (*start == ' ' || *start == '\t')) {
        start++;
    }
    while (end > start && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r')) {
        end--;
    }
    len = (size_t)(end - start);
    if (len >= out_len) {
        return false;
    }
    memcpy(out, start, len);
    out[len] = '\0';
    return true;
}

/* The common name at the start of *s into out (out_len bytes): quoted as RFC 4180 has it ('"'
 * around it, '""' for a quote inside) when it starts with '"', else up to the next ',' as
 * next_field reads it; blanks around either are dropped. *s moves past the field and its ','.
 * Returns 0, or -1 with the reason in why. */
static int cn_field(const char **s, char *out, size_t out_len, char *why, size_t why_len)
{
    const char *p = *s;
    size_t n = 0;

    while (*p == ' ' || *p == '\t') {
        p++;
    }
    if (*p != '"') {
        if (!next_field(s, out, out_len)) {
            snprintf(why, why_len, "common name longer than %d bytes", POOL_PERSIST_CN_MAX - 1);
            return -1;
        }
        return 0;
    }
    for (p++;; p++) {
        if (*p == '\0') {
            snprintf(why, why_len, "common name: no closing quote");
            return -1;
        }
        if (*p == '"' && p[1] != '"') {
            break;
        }
        if (n + 1 >= out_len) {
            snprintf(why, why_len, "common name longer than %d bytes", POOL_PERSIST_CN_MAX - 1);
            return -1;
        }
        out[n++] = *p;
        if (*p == '"') {
            p++; /* the second of "" */
        }
    }
    out[n] = '\0';
    for (p++; *p == ' ' || *p == '\t' || *p == '\r';) {
        p++;
    }
    if (*p != ',' && *p != '\0') {
        snprintf(why, why_len, "common name: text after the closing quote");
        return -1;
    }
    *s = *p == ',' ? p + 1 : p;
    return 0;
}

int pool_persist_parse_line(const char *line, struct pool_persist_line *out, char *why,
                            size_t why_len)
{
    char ip4[64] = "", ip6[64] = "";
    const char *s = line;
    struct in_addr in;

    memset(out, 0, sizeof(*out));
    if (line[0] == '\0' || line[0] == '\r' || line[0] == '#' || line[0] == ';') {
        return 0;
    }
    if (cn_field(&s, out->cn, sizeof(out->cn), why, why_len) != 0) {
        return -1;
    }
    if (out->cn[0] == '\0') {
        snprintf(why, why_len, "no common name");
        return -1;
    }
    if (!next_field(&s, ip4, sizeof(ip4)) || (*s && !next_field(&s, ip6, sizeof(ip6)))) {
        snprintf(why, why_len, "address too long for CN=%s", out->cn);
        return -1;
    }
    if (ip4[0] == '\0' && ip6[0] == '\0') {
        snprintf(why, why_len, "no address for CN=%s (want CN,IPv4[,IPv6])", out->cn);
        return -1;
    }
    if (ip4[0]) {
        if (inet_pton(AF_INET, ip4, &in) != 1) {
            snprintf(why, why_len, "invalid IPv4 (%s) for CN=%s", ip4, out->cn);
            return -1;
        }
        out->has_ipv4 = true;
        out->ipv4 = ntohl(in.s_addr);
    }
    if (ip6[0]) {
        if (inet_pton(AF_INET6, ip6, out->ipv6) != 1) {
            snprintf(why, why_len, "invalid IPv6 (%s) for CN=%s", ip6, out->cn);
            return -1;
        }
        out->has_ipv6 = true;
    }
    return 1;
}

static void warnf(pool_persist_warn_fn warn, void *ctx, const char *name, int line, const char *fmt,
                  ...) __attribute__((format(printf, 5, 6)));

static void warnf(pool_persist_warn_fn warn, void *ctx, const char *name, int line, const char *fmt,
                  ...)
{
    char text[600], why[500];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    snprintf(text, sizeof(text), "%s:%d: %s", name, line, why);
    warn(ctx, text);
}

/* The entry one parsed line names, or SIZE_MAX (warned). pool.c: IPv4 first, the IPv6 entry
 * when there is no usable IPv4 one, and IPv4 wins when both name different entries. */
static size_t line_entry(const struct ip_pool *p, const struct pool_persist_line *l,
                         pool_persist_warn_fn warn, void *ctx, const char *name, int n)
{
    size_t h = SIZE_MAX, h6 = SIZE_MAX;
    char a[INET6_ADDRSTRLEN];

    if (l->has_ipv4) {
        h = ip_pool_file_index(p, l->ipv4);
        if (h == SIZE_MAX) {
            struct in_addr in = {.s_addr = htonl(l->ipv4)};

            warnf(warn, ctx, name, n, "IPv4 (%s) out of pool range for CN=%s",
                  inet_ntop(AF_INET, &in, a, sizeof(a)), l->cn);
        }
    }
    if (l->has_ipv6) {
        inet_ntop(AF_INET6, l->ipv6, a, sizeof(a));
        h6 = ip_pool_index6(p, l->ipv6);
        if (h6 == SIZE_MAX) {
            warnf(warn, ctx, name, n, "IPv6 (%s) out of pool range for CN=%s", a, l->cn);
        } else if (h == SIZE_MAX && !l->has_ipv4) {
            h = h6;
        }
        if (h6 != SIZE_MAX && h != SIZE_MAX && h != h6) {
            warnf(warn, ctx, name, n,
                  "IPv4 and IPv6 (%s) name different pool entries for CN=%s: the IPv4 one is "
                  "used",
                  a, l->cn);
        }
    }
    return h;
}

size_t pool_persist_apply(struct ip_pool *p, const char *name, const char *text, bool is_fixed,
                          pool_persist_warn_fn warn, void *ctx)
{
    size_t n_set = 0;
    int n = 0;

    for (const char *s = text; *s;) {
        const char *eol = strchr(s, '\n');
        size_t len = eol ? (size_t)(eol - s) : strlen(s);
        char line[2 * POOL_PERSIST_CN_MAX + 160], why[400]; /* a quoted name may double */
        struct pool_persist_line l;
        size_t h;
        int rc;

        n++;
        if (len >= sizeof(line)) {
            warnf(warn, ctx, name, n, "line longer than %zu bytes", sizeof(line) - 1);
        } else {
            memcpy(line, s, len);
            line[len] = '\0';
            rc = pool_persist_parse_line(line, &l, why, sizeof(why));
            if (rc < 0) {
                warnf(warn, ctx, name, n, "%s", why);
            } else if (rc > 0 && (h = line_entry(p, &l, warn, ctx, name, n)) != SIZE_MAX) {
                rc = ip_pool_set(p, h, l.cn, is_fixed);
                if (rc == 0) {
                    n_set++;
                } else {
                    warnf(warn, ctx, name, n, "cannot keep the entry of CN=%s: %s", l.cn,
                          strerror(-rc));
                }
            }
        }
        s += len;
        if (*s == '\n') {
            s++;
        }
    }
    return n_set;
}

static void warn_log(void *ctx, const char *text)
{
    (void)ctx;
    log_msg(LOG_WARN, "ifconfig-pool-persist: %s: skipped", text);
}

int pool_persist_load(struct ip_pool *p, const char *path, bool is_fixed)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), err = 0;
    char *text;
    size_t len = 0;
    ssize_t got;
    size_t n;

    if (fd < 0) {
        return errno == ENOENT ? 0 : -errno;
    }
    text = malloc(PERSIST_MAX_FILE + 1);
    if (!text) {
        close(fd);
        return -ENOMEM;
    }
    while (len < PERSIST_MAX_FILE && (got = read(fd, text + len, PERSIST_MAX_FILE - len)) != 0) {
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            err = -errno;
            break;
        }
        len += (size_t)got;
    }
    close(fd);
    if (err) {
        free(text);
        return err;
    }
    text[len] = '\0';
    if (strlen(text) != len) {
        free(text);
        return -EINVAL; /* a NUL byte: not a text file */
    }
    n = pool_persist_apply(p, path, text, is_fixed, warn_log, NULL);
    free(text);
    return n > INT_MAX ? INT_MAX : (int)n;
}

/* Whether cn can be written so that it reads back: no byte below 0x20 and no DEL (a line break
 * would end the line). Names from clients never hold them (proto/client_name.h). */
static bool is_writable(const char *cn)
{
    for (const unsigned char *c = (const unsigned char *)cn; *c; c++) {
        if (*c < 0x20 || *c == 0x7f) {
            return false;
        }
    }
    return true;
}

/* Whether cn, written as openvpn 2.6 writes it, would read back as something else: a ',' or
 * '"' in it, blanks at an end (trimmed), '#' or ';' first (a comment line), or nothing. */
static bool needs_quotes(const char *cn)
{
    size_t len = strlen(cn);

    return len == 0 || strpbrk(cn, ",\"") != NULL || cn[0] == '#' || cn[0] == ';' || cn[0] == ' ' ||
           cn[len - 1] == ' ';
}

static void put_cn(FILE *mem, const char *cn)
{
    if (!needs_quotes(cn)) {
        fputs(cn, mem);
        return;
    }
    fputc('"', mem);
    for (; *cn; cn++) {
        if (*cn == '"') {
            fputc('"', mem);
        }
        fputc(*cn, mem);
    }
    fputc('"', mem);
}

int pool_persist_format(const struct ip_pool *p, char **text, size_t *len)
{
    FILE *mem = open_memstream(text, len);
    char a4[INET_ADDRSTRLEN], a6[INET6_ADDRSTRLEN];

    if (!mem) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < p->n; i++) {
        const char *cn = ip_pool_cn(p, i);
        struct in_addr in = {.s_addr = htonl(ip_pool_file_addr(p, i))};
        uint8_t b6[16];

        if (!cn || !is_writable(cn)) {
            continue;
        }
        inet_ntop(AF_INET, &in, a4, sizeof(a4));
        a6[0] = '\0';
        if (p->has_ipv6) {
            ip_pool_addr6(p, i, b6);
            inet_ntop(AF_INET6, b6, a6, sizeof(a6));
        }
        put_cn(mem, cn);
        fprintf(mem, ",%s,%s\n", a4, a6);
    }
    if (fclose(mem) != 0) {
        free(*text);
        *text = NULL;
        return -ENOMEM;
    }
    return 0;
}

static int write_all(int fd, const char *text, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, text, len);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -errno;
        }
        text += n;
        len -= (size_t)n;
    }
    return 0;
}

int pool_persist_write(const struct ip_pool *p, const char *path, int fd)
{
    char tmp[PATH_MAX], *text = NULL;
    size_t len = 0;
    int err, tfd, n;

    err = pool_persist_format(p, &text, &len);
    if (err) {
        return err;
    }
    if (fd >= 0) {
        if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) < 0) {
            err = -errno;
        } else {
            err = write_all(fd, text, len);
        }
        free(text);
        return err;
    }
    n = snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    if (n < 0 || (size_t)n >= sizeof(tmp)) {
        free(text);
        return -ENAMETOOLONG;
    }
    unlink(tmp); /* a stale one, or a symlink someone planted */
    tfd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (tfd < 0) {
        err = -errno;
        free(text);
        return err;
    }
    err = write_all(tfd, text, len);
    free(text);
    if (close(tfd) != 0 && !err) {
        err = -errno;
    }
    if (!err && rename(tmp, path) != 0) {
        err = -errno;
    }
    if (err) {
        unlink(tmp);
    }
    return err;
}
