/* server/config/ccd.c: client-config-dir files (see ccd.h). Directive rules from openvpn 2.6
 * src/openvpn/options.c (add_option: ifconfig-push, ifconfig-ipv6-push, iroute, iroute-ipv6,
 * push, push-reset, push-remove, disable, vlan-pvid) and multi.c (multi_client_connect_source_ccd).
 */
#include "server/config/ccd.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/config/config_internal.h"

struct ccd_parser {
    struct ccd *c;
    const char *name;
    int line;
    const char *directive;
    char *errbuf;
    size_t errbuf_len;
    /* ccd_check_dir: each bad line goes here and parsing goes on (NULL: stop at the first) */
    void (*report)(void *ctx, const char *msg);
    void *report_ctx;
};

static int ccd_error(struct ccd_parser *cp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int ccd_error(struct ccd_parser *cp, const char *fmt, ...)
{
    char why[400];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    if (cp->errbuf && cp->errbuf_len) {
        if (cp->directive) {
            snprintf(cp->errbuf, cp->errbuf_len, "%s:%d: %s: %s", cp->name, cp->line, cp->directive,
                     why);
        } else {
            snprintf(cp->errbuf, cp->errbuf_len, "%s:%d: %s", cp->name, cp->line, why);
        }
    }
    return -EINVAL;
}

static int ccd_nomem(struct ccd_parser *cp)
{
    if (cp->errbuf && cp->errbuf_len) {
        snprintf(cp->errbuf, cp->errbuf_len, "%s:%d: out of memory", cp->name, cp->line);
    }
    return -ENOMEM;
}

static int parse_ipv4(struct ccd_parser *cp, const char *s, const char *what, uint32_t *out)
{
    struct in_addr a;

    if (inet_pton(AF_INET, s, &a) != 1) {
        return ccd_error(cp, "'%s' is not an IPv4 %s", s, what);
    }
    *out = ntohl(a.s_addr);
    return 0;
}

/* "ADDR/BITS" (BITS 0..128) or, with default_bits >= 0, a bare "ADDR". */
static int parse_ipv6_prefix(struct ccd_parser *cp, const char *s, int default_bits,
                             uint8_t addr[16], int *bits)
{
    char text[INET6_ADDRSTRLEN + 8];
    char *slash, *end;
    long b = default_bits;

    if (strlen(s) >= sizeof(text)) {
        return ccd_error(cp, "'%s' is not an IPv6 address/prefix length", s);
    }
    strcpy(text, s);
    slash = strchr(text, '/');
    if (slash) {
        *slash = '\0';
        b = strtol(slash + 1, &end, 10);
        if (slash[1] == '\0' || *end != '\0' || b < 0 || b > 128) {
            return ccd_error(cp, "'%s' has no valid prefix length (0-128)", s);
        }
    } else if (default_bits < 0) {
        return ccd_error(cp, "'%s' needs a prefix length (ADDRESS/BITS)", s);
    }
    if (inet_pton(AF_INET6, text, addr) != 1) {
        return ccd_error(cp, "'%s' is not an IPv6 address", text);
    }
    *bits = (int)b;
    return 0;
}

static int add_iroute(struct ccd_parser *cp, int family, const uint8_t *addr, int plen,
                      const char *as_written)
{
    struct ccd *c = cp->c;
    struct vroute_key key, *grown;

    if (c->n_iroutes >= CCD_MAX_ITEMS) {
        return ccd_error(cp, "too many iroute lines (%d max)", CCD_MAX_ITEMS);
    }
    vroute_key_make(&key, family, addr, plen);
    if (memcmp(key.addr, addr, family == 6 ? 16 : 4) != 0) {
        /* openvpn's iroute refuses host bits too (route.c, netmask/network check) */
        return ccd_error(cp, "'%s' has bits set outside its prefix", as_written);
    }
    grown = realloc(c->iroutes, (c->n_iroutes + 1) * sizeof(*grown));
    if (!grown) {
        return ccd_nomem(cp);
    }
    c->iroutes = grown;
    c->iroutes[c->n_iroutes++] = key;
    return 0;
}

static int add_push_op(struct ccd_parser *cp, enum ccd_push_kind kind, const char *text)
{
    struct ccd *c = cp->c;
    struct ccd_push_op *grown;
    char *copy = NULL;

    if (c->n_push_ops >= CCD_MAX_ITEMS) {
        return ccd_error(cp, "too many push lines (%d max)", CCD_MAX_ITEMS);
    }
    if (text) {
        copy = strdup(text);
        if (!copy) {
            return ccd_nomem(cp);
        }
    }
    grown = realloc(c->push_ops, (c->n_push_ops + 1) * sizeof(*grown));
    if (!grown) {
        free(copy);
        return ccd_nomem(cp);
    }
    c->push_ops = grown;
    c->push_ops[c->n_push_ops].kind = kind;
    c->push_ops[c->n_push_ops].text = copy;
    c->n_push_ops++;
    return 0;
}

static int check_args(struct ccd_parser *cp, int argc, int min, int max)
{
    if (argc - 1 < min) {
        return ccd_error(cp, "needs %d argument%s", min, min == 1 ? "" : "s");
    }
    if (argc - 1 > max) {
        return ccd_error(cp, "takes at most %d argument%s", max, max == 1 ? "" : "s");
    }
    return 0;
}

/* Directives openvpn accepts in a client instance that ovpnd does not implement yet. */
static const char *const not_yet[] = {
    "config",
    "ping",
    "ping-restart",
    "echo",
    "setenv",
    "push-peer-info",
    "ifconfig-push-constraint",
    "auth-token-user",
    NULL,
};

/* A number of at least min (seconds, bytes or routes). */
static int parse_count(struct ccd_parser *cp, const char *s, uint64_t min, uint64_t max,
                       uint64_t *out)
{
    char *end;

    errno = 0;
    *out = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || *out < min || *out > max) {
        return ccd_error(cp, "'%s' is not a number from %llu to %llu", s, (unsigned long long)min,
                         (unsigned long long)max);
    }
    return 0;
}

/* inactive N [BYTES], session-timeout N, max-routes-per-client N */
static int parse_limit(struct ccd_parser *cp, int argc, char **argv)
{
    struct ccd *c = cp->c;
    const char *d = cp->directive;
    uint64_t v = 0, bytes = 0;
    int err;

    if (strcmp(d, "inactive") == 0) {
        if ((err = check_args(cp, argc, 1, 2)) ||
            (err = parse_count(cp, argv[1], 0, INT_MAX, &v)) ||
            (argc == 3 && (err = parse_count(cp, argv[2], 0, UINT64_MAX, &bytes)))) {
            return err;
        }
        c->has_inactive = true;
        c->inactive_s = (int)v;
        c->inactive_bytes = bytes;
        return 0;
    }
    if ((err = check_args(cp, argc, 1, 1)) ||
        (err = parse_count(cp, argv[1], d[0] == 'm' ? 1 : 0, INT_MAX, &v))) {
        return err;
    }
    if (d[0] == 'm') {
        c->has_max_routes = true;
        c->max_routes = (int)v;
    } else {
        c->has_session_timeout = true;
        c->session_timeout_s = (int)v;
    }
    return 0;
}

/* compress [stub|stub-v2|migrate|lzo|lz4|lz4-v2], comp-lzo [yes|no|adaptive]: as the server
 * config's (config_net.c); allow-compression is the server's, checked at connect. */
static int parse_comp(struct ccd_parser *cp, int argc, char **argv)
{
    struct ccd *c = cp->c;
    enum comp_framing f;
    char option[64];
    int err;

    if ((err = check_args(cp, argc, 0, 1))) {
        return err;
    }
    if (strcmp(argv[0], "comp-lzo") == 0) {
        const char *mode = argc == 2 ? argv[1] : "adaptive";

        if (strcmp(mode, "no") != 0 && strcmp(mode, "yes") != 0 && strcmp(mode, "adaptive") != 0) {
            return ccd_error(cp, "'%s' must be yes, no or adaptive", mode);
        }
        c->comp_alg = strcmp(mode, "no") == 0 ? COMP_FRAMING_LZO_STUB : COMP_FRAMING_LZO;
        c->comp_is_adaptive = strcmp(mode, "adaptive") == 0;
        c->has_comp = true;
        return 0;
    }
    snprintf(option, sizeof(option), "compress %s", argc == 2 ? argv[1] : "");
    if (!comp_option_parse(option, &f)) {
        return ccd_error(cp, "'%s' must be stub, stub-v2, migrate, lzo, lz4 or lz4-v2", argv[1]);
    }
    c->comp_alg = f;
    c->comp_is_adaptive = false; /* "compress lzo" is never adaptive */
    c->has_comp = true;
    return 0;
}

static int handle_line(struct ccd_parser *cp, int argc, char **argv)
{
    struct ccd *c = cp->c;
    const char *d = argv[0];
    int err;

    if (strncmp(d, "--", 2) == 0) {
        d += 2;
    }
    cp->directive = d;
    if (strcmp(d, "disable") == 0) {
        if ((err = check_args(cp, argc, 0, 0))) {
            return err;
        }
        c->is_disabled = true;
        return 0;
    }
    if (strcmp(d, "push-reset") == 0) {
        if ((err = check_args(cp, argc, 0, 0))) {
            return err;
        }
        return add_push_op(cp, CCD_PUSH_RESET, NULL);
    }
    if (strcmp(d, "push-remove") == 0) {
        if ((err = check_args(cp, argc, 1, 1))) {
            return err;
        }
        return add_push_op(cp, CCD_PUSH_REMOVE, argv[1]);
    }
    if (strcmp(d, "push") == 0) {
        char why[400];

        if ((err = check_args(cp, argc, 1, 1))) {
            return err;
        }
        err = config_push_text_check(argv[1], why, sizeof(why));
        if (err == -ENOMEM) {
            return ccd_nomem(cp);
        }
        if (err) {
            return ccd_error(cp, "%s", why);
        }
        return add_push_op(cp, CCD_PUSH, argv[1]);
    }
    if (strcmp(d, "ifconfig-push") == 0) {
        if ((err = check_args(cp, argc, 2, 3)) ||
            (err = parse_ipv4(cp, argv[1], "address", &c->ifconfig_local)) ||
            (err = parse_ipv4(cp, argv[2], "netmask or remote address", &c->ifconfig_netmask))) {
            return err;
        }
        /* what the second word must be depends on the topology: checked at connect time */
        c->ifconfig_push_line = cp->line;
        c->has_ifconfig_push = true;
        return 0;
    }
    if (strcmp(d, "ifconfig-ipv6-push") == 0) {
        if ((err = check_args(cp, argc, 1, 2)) ||
            (err = parse_ipv6_prefix(cp, argv[1], -1, c->ifconfig_ipv6, &c->ifconfig_ipv6_bits))) {
            return err;
        }
        if (argc == 3) {
            int bits;

            if ((err = parse_ipv6_prefix(cp, argv[2], 128, c->ifconfig_ipv6_remote, &bits))) {
                return err;
            }
            c->has_ifconfig_ipv6_remote = true;
        }
        c->has_ifconfig_ipv6_push = true;
        return 0;
    }
    if (strcmp(d, "iroute") == 0) {
        uint32_t net = 0, mask = 0xFFFFFFFFu;
        uint8_t addr[4];
        int bits;

        if ((err = check_args(cp, argc, 1, 2)) ||
            (err = parse_ipv4(cp, argv[1], "network", &net)) ||
            (argc == 3 && (err = parse_ipv4(cp, argv[2], "netmask", &mask)))) {
            return err;
        }
        bits = config_netmask_bits(mask);
        if (bits < 0) {
            return ccd_error(cp, "'%s' is not a valid netmask", argv[2]);
        }
        net = htonl(net);
        memcpy(addr, &net, 4);
        return add_iroute(cp, 4, addr, bits, argv[1]);
    }
    if (strcmp(d, "iroute-ipv6") == 0) {
        uint8_t addr[16];
        int bits;

        if ((err = check_args(cp, argc, 1, 1)) ||
            (err = parse_ipv6_prefix(cp, argv[1], -1, addr, &bits))) {
            return err;
        }
        return add_iroute(cp, 6, addr, bits, argv[1]);
    }
    if (strcmp(d, "inactive") == 0 || strcmp(d, "session-timeout") == 0 ||
        strcmp(d, "max-routes-per-client") == 0) {
        return parse_limit(cp, argc, argv);
    }
    if (strcmp(d, "compress") == 0 || strcmp(d, "comp-lzo") == 0) {
        return parse_comp(cp, argc, argv);
    }
    if (strcmp(d, "override-username") == 0) {
        /* (a word is at most 255 characters here, well below 2.7's USER_PASS_LEN) */
        if ((err = check_args(cp, argc, 1, 1))) {
            return err;
        }
        free(c->override_username);
        c->override_username = strdup(argv[1]);
        return c->override_username ? 0 : ccd_nomem(cp);
    }
    if (strcmp(d, "vlan-pvid") == 0) {
        uint64_t vid;

        if ((err = check_args(cp, argc, 1, 1)) ||
            (err = parse_count(cp, argv[1], VLAN_VID_MIN, VLAN_VID_MAX, &vid))) {
            return err;
        }
        c->has_vlan_pvid = true;
        c->vlan_pvid = (uint16_t)vid;
        return 0;
    }
    for (size_t i = 0; not_yet[i]; i++) {
        if (strcmp(d, not_yet[i]) == 0) {
            return ccd_error(cp, "not implemented yet in ovpnd in a client-config-dir file");
        }
    }
    if (config_directive_find(d)) {
        return ccd_error(cp, "not allowed in a client-config-dir file");
    }
    return ccd_error(cp, "unknown directive");
}

/* Parse text line by line into cp->c (zeroed first). Without cp->report, stops at the first bad
 * line; with it, reports each and goes on (-EINVAL at the end if any). */
static int parse_text(struct ccd_parser *cp_in, const char *text)
{
    struct ccd_parser cp = *cp_in;
    struct ccd *c = cp.c;
    const char *p = text;
    int err = 0, n_bad = 0;

    memset(c, 0, sizeof(*c));
    while (*p && !err) {
        const char *eol = strchr(p, '\n');
        const char *next = eol ? eol + 1 : p + strlen(p);
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char *argv[CONFIG_MAX_ARGS], *scratch, why[256];
        int argc;

        cp.line++;
        cp.directive = NULL;
        if (len > 0 && p[len - 1] == '\r') {
            len--;
        }
        scratch = malloc(len + CONFIG_MAX_ARGS + 1);
        if (!scratch) {
            return ccd_nomem(&cp);
        }
        if (config_split_line(p, len, scratch, argv, &argc, why, sizeof(why))) {
            const char *word;
            size_t n = config_first_word(p, len, &word);

            err = n > 0 ? ccd_error(&cp, "%.*s: %s", (int)n, word, why) : ccd_error(&cp, "%s", why);
        } else if (argc > 0) {
            err = handle_line(&cp, argc, argv);
        }
        free(scratch);
        p = next; /* not p + len: a last line "...\r" without '\n' must not be read again */
        if (err == -EINVAL && cp.report) {
            cp.report(cp.report_ctx, cp.errbuf);
            n_bad++;
            err = 0;
        }
    }
    return err ? err : n_bad ? -EINVAL : 0;
}

int ccd_parse_string(struct ccd *c, const char *name, const char *text, char *errbuf,
                     size_t errbuf_len)
{
    struct ccd_parser cp = {.c = c, .name = name, .errbuf = errbuf, .errbuf_len = errbuf_len};

    return parse_text(&cp, text);
}

static bool is_file_name(const char *s)
{
    return s[0] != '\0' && strcmp(s, ".") != 0 && strcmp(s, "..") != 0 && !strchr(s, '/');
}

/* The file a common name reads, as openvpn 2.6 names it (platform.c platform_gen_path): each
 * '/' becomes '_', and ".", ".." or an empty name read none. buf (len bytes) holds the result;
 * NULL when there is no such file name or it does not fit. */
static const char *ccd_file_name(const char *common_name, char *buf, size_t len)
{
    size_t n = strlen(common_name);

    if (n >= len) {
        return NULL;
    }
    for (size_t i = 0; i <= n; i++) {
        buf[i] = common_name[i] == '/' ? '_' : common_name[i];
    }
    return is_file_name(buf) ? buf : NULL;
}

/* Read path (at most CCD_MAX_FILE bytes) into a NUL-terminated buffer. -ENOENT if absent. */
static int read_small_file(const char *path, char **out)
{
    struct stat st;
    char *buf;
    ssize_t n;
    size_t got = 0;
    /* O_NONBLOCK: a FIFO in the directory must not stop the control thread at the open */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

    if (fd < 0) {
        return -errno;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        int err = fstat(fd, &st) < 0 ? -errno : -EISDIR;

        close(fd);
        return err;
    }
    if (st.st_size > CCD_MAX_FILE) {
        close(fd);
        return -EFBIG;
    }
    buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        close(fd);
        return -ENOMEM;
    }
    while (got < (size_t)st.st_size && (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0) {
        got += (size_t)n;
    }
    close(fd);
    buf[got] = '\0';
    if (memchr(buf, '\0', got)) {
        free(buf);
        return -EILSEQ;
    }
    *out = buf;
    return 0;
}

int ccd_load(struct ccd *c, const char *dir, const char *common_name, bool *found, char *errbuf,
             size_t errbuf_len)
{
    char file_name[256];
    const char *names[2] = {ccd_file_name(common_name, file_name, sizeof(file_name)), "DEFAULT"};
    char *path = NULL, *text = NULL;
    int err = 0, used = -1;

    memset(c, 0, sizeof(*c));
    *found = false;
    for (int i = 0; i < 2; i++) {
        if (!names[i]) {
            continue;
        }
        free(path);
        if (asprintf(&path, "%s/%s", dir, names[i]) < 0) {
            return -ENOMEM;
        }
        err = read_small_file(path, &text);
        used = i;
        if (err != -ENOENT) {
            break;
        }
    }
    if (err == -ENOENT) {
        free(path);
        return 0;
    }
    if (err) {
        if (errbuf && errbuf_len) {
            snprintf(errbuf, errbuf_len, "%s: cannot read: %s", path,
                     err == -EILSEQ ? "it holds a NUL byte" : strerror(-err));
        }
        free(path);
        return err;
    }
    *found = true;
    err = ccd_parse_string(c, path, text, errbuf, errbuf_len);
    free(text);
    c->path = path;
    c->is_default = used == 1;
    return err;
}

/* Call visit(ctx, path) for each file of dir that a client-config-dir lookup could open: names
 * a common name can have (ccd_load), and only regular files (opening a FIFO would wait for a
 * writer). visit returns 1 for a file it counts, 0 for one it does not, or -ENOMEM to stop.
 * Returns the count, or -errno (dir unreadable, or out of memory). */
static int walk_dir(const char *dir, int (*visit)(void *ctx, const char *path), void *ctx)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;

    if (!d) {
        return -errno;
    }
    while ((de = readdir(d)) != NULL) {
        struct stat st;
        char *path;
        int rc;

        if (!is_file_name(de->d_name) || fstatat(dirfd(d), de->d_name, &st, 0) != 0 ||
            !S_ISREG(st.st_mode)) {
            continue;
        }
        if (asprintf(&path, "%s/%s", dir, de->d_name) < 0) {
            closedir(d);
            return -ENOMEM;
        }
        rc = visit(ctx, path);
        free(path);
        if (rc < 0) {
            closedir(d);
            return rc;
        }
        n += rc;
    }
    closedir(d);
    return n;
}

struct scan_ctx {
    ccd_scan_fn fn;
    void *ctx;
};

static int scan_one(void *ctx, const char *path)
{
    struct scan_ctx *sc = ctx;
    char errbuf[600] = "";
    struct ccd c;
    bool found;
    int err = ccd_load_path(&c, path, path, &found, errbuf, sizeof(errbuf));

    if (err != -ENOMEM) {
        sc->fn(sc->ctx, path, err ? NULL : &c, err ? errbuf : NULL);
    }
    ccd_free(&c);
    return err == -ENOMEM ? err : 1;
}

int ccd_scan_dir(const char *dir, ccd_scan_fn fn, void *ctx)
{
    struct scan_ctx sc = {fn, ctx};

    return walk_dir(dir, scan_one, &sc);
}

struct check_ctx {
    void (*report)(void *ctx, const char *msg);
    void *ctx;
};

/* One file as ccd_load_path reads it, with every bad line reported: 1 when it has one */
static int check_one(void *ctx, const char *path)
{
    struct check_ctx *cc = ctx;
    char errbuf[600] = "";
    struct ccd_parser cp = {.errbuf = errbuf, .errbuf_len = sizeof(errbuf)};
    struct ccd c;
    char *text = NULL;
    int err = read_small_file(path, &text);

    if (err == -ENOMEM) {
        return err;
    }
    if (err) {
        snprintf(errbuf, sizeof(errbuf), "%s: cannot read: %s", path,
                 err == -EILSEQ ? "it holds a NUL byte" : strerror(-err));
        cc->report(cc->ctx, errbuf);
        return 1;
    }
    cp.c = &c;
    cp.name = path;
    cp.report = cc->report;
    cp.report_ctx = cc->ctx;
    err = parse_text(&cp, text);
    ccd_free(&c);
    free(text);
    return err == -ENOMEM ? err : (err ? 1 : 0);
}

int ccd_check_dir(const char *dir, void (*report)(void *ctx, const char *msg), void *ctx)
{
    struct check_ctx cc = {report, ctx};

    return walk_dir(dir, check_one, &cc);
}

int ccd_load_path(struct ccd *c, const char *path, const char *name, bool *found, char *errbuf,
                  size_t errbuf_len)
{
    char *text = NULL;
    int err;

    memset(c, 0, sizeof(*c));
    *found = false;
    err = read_small_file(path, &text);
    if (err == -ENOENT) {
        return 0;
    }
    if (err) {
        if (errbuf && errbuf_len) {
            snprintf(errbuf, errbuf_len, "%s: cannot read: %s", name,
                     err == -EILSEQ ? "it holds a NUL byte" : strerror(-err));
        }
        return err;
    }
    *found = text[0] != '\0';
    err = ccd_parse_string(c, name, text, errbuf, errbuf_len);
    free(text);
    c->path = strdup(name);
    if (!c->path && !err) {
        err = -ENOMEM;
    }
    return err;
}

int ccd_merge(struct ccd *into, struct ccd *from)
{
    struct vroute_key *routes = NULL;
    struct ccd_push_op *ops = NULL;
    char *path = NULL;

    if (from->n_iroutes > 0) {
        routes = realloc(into->iroutes, (into->n_iroutes + from->n_iroutes) * sizeof(*routes));
        if (!routes) {
            return -ENOMEM;
        }
        into->iroutes = routes;
    }
    if (from->n_push_ops > 0) {
        ops = realloc(into->push_ops, (into->n_push_ops + from->n_push_ops) * sizeof(*ops));
        if (!ops) {
            return -ENOMEM;
        }
        into->push_ops = ops;
    }
    if (into->path && from->path && asprintf(&path, "%s, %s", into->path, from->path) < 0) {
        return -ENOMEM;
    }
    if (routes) {
        memcpy(routes + into->n_iroutes, from->iroutes, from->n_iroutes * sizeof(*routes));
        into->n_iroutes += from->n_iroutes;
    }
    if (ops) {
        memcpy(ops + into->n_push_ops, from->push_ops, from->n_push_ops * sizeof(*ops));
        into->n_push_ops += from->n_push_ops;
        free(from->push_ops);
        from->push_ops = NULL;
        from->n_push_ops = 0;
    }
    if (path || !into->path) {
        free(into->path);
        into->path = path ? path : from->path;
        from->path = path ? from->path : NULL;
    }
    into->is_disabled = into->is_disabled || from->is_disabled;
    if (from->has_inactive) { /* a later file's value wins, as for ifconfig-push */
        into->has_inactive = true;
        into->inactive_s = from->inactive_s;
        into->inactive_bytes = from->inactive_bytes;
    }
    if (from->has_session_timeout) {
        into->has_session_timeout = true;
        into->session_timeout_s = from->session_timeout_s;
    }
    if (from->has_max_routes) {
        into->has_max_routes = true;
        into->max_routes = from->max_routes;
    }
    if (from->override_username) {
        free(into->override_username);
        into->override_username = from->override_username;
        from->override_username = NULL;
    }
    if (from->has_vlan_pvid) {
        into->has_vlan_pvid = true;
        into->vlan_pvid = from->vlan_pvid;
    }
    if (from->has_comp) {
        into->has_comp = true;
        into->comp_alg = from->comp_alg;
        into->comp_is_adaptive = from->comp_is_adaptive;
    }
    if (from->has_ifconfig_push) {
        into->has_ifconfig_push = true;
        into->ifconfig_local = from->ifconfig_local;
        into->ifconfig_netmask = from->ifconfig_netmask;
        into->ifconfig_push_line = from->ifconfig_push_line;
    }
    if (from->has_ifconfig_ipv6_push) {
        into->has_ifconfig_ipv6_push = true;
        memcpy(into->ifconfig_ipv6, from->ifconfig_ipv6, 16);
        into->ifconfig_ipv6_bits = from->ifconfig_ipv6_bits;
        into->has_ifconfig_ipv6_remote = from->has_ifconfig_ipv6_remote;
        memcpy(into->ifconfig_ipv6_remote, from->ifconfig_ipv6_remote, 16);
    }
    ccd_free(from);
    return 0;
}

int ccd_push_list(const struct ccd *c, const char *const *in, size_t n_in, const char **out,
                  size_t out_cap, size_t *n_out, bool *is_ifconfig_blocked,
                  bool *is_ifconfig_ipv6_blocked)
{
    size_t n = 0;

    *is_ifconfig_blocked = *is_ifconfig_ipv6_blocked = false;
    if (n_in > out_cap) {
        return -ENOSPC;
    }
    for (size_t i = 0; i < n_in; i++) {
        out[n++] = in[i];
    }
    for (size_t i = 0; c && i < c->n_push_ops; i++) {
        const struct ccd_push_op *op = &c->push_ops[i];
        size_t kept = 0;

        switch (op->kind) {
        case CCD_PUSH:
            if (n >= out_cap) {
                return -ENOSPC;
            }
            out[n++] = op->text;
            break;
        case CCD_PUSH_RESET:
            n = 0;
            break;
        case CCD_PUSH_REMOVE:
            if (strcmp(op->text, "ifconfig") == 0) {
                *is_ifconfig_blocked = true;
                break;
            }
            if (strcmp(op->text, "ifconfig-ipv6") == 0) {
                *is_ifconfig_ipv6_blocked = true;
                break;
            }
            for (size_t j = 0; j < n; j++) {
                if (strncmp(out[j], op->text, strlen(op->text)) != 0) {
                    out[kept++] = out[j];
                }
            }
            n = kept;
            break;
        }
    }
    *n_out = n;
    return 0;
}

void ccd_free(struct ccd *c)
{
    if (!c) {
        return;
    }
    for (size_t i = 0; i < c->n_push_ops; i++) {
        free(c->push_ops[i].text);
    }
    free(c->push_ops);
    free(c->iroutes);
    free(c->path);
    free(c->override_username);
    memset(c, 0, sizeof(*c));
}
