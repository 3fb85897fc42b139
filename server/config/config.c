/* server/config/config.c: reading config text line by line, inline blocks, dispatch through the
 * directive table, messages, and the public entry points.
 *
 * Line handling follows openvpn 2.6 (src/openvpn/options.c): read_config_file (a UTF-8 byte
 * order mark on the first line is skipped, includes nest at most 10 deep), bypass_doubledash
 * ("--port" is "port"), check_inline_file and read_inline_file (a line holding only "<tag>"
 * starts a block that ends at the first line starting, after blanks, with "</tag>"; the lines
 * between are kept verbatim), and add_option ("setenv opt NAME ..." runs NAME but only warns
 * when NAME is unknown; ignore-unknown-option does the same for the names it lists).
 */
#include "server/config/config.h"
#include "server/config/config_internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mbedtls/platform_util.h>

/* ---- messages ---- */

/* Keep one error: the first goes to errbuf too; a second one for the same line (a handler
 * whose helper already reported) is dropped. */
static int vreport(struct config_parser *ps, const char *file, int line, const char *name,
                   const char *fmt, va_list ap)
{
    struct config *cfg = ps->cfg;
    char text[512], where[64] = "", *full, **grown;

    if (line > 0 && ps->last_error_line == line && ps->last_error_file == file) {
        return -EINVAL;
    }
    ps->last_error_file = file;
    ps->last_error_line = line;
    if (line > 0 && name != NULL && !config_refused(ps, name) &&
        ps->n_refused < CONFIG_REFUSED_MAX && strlen(name) < CONFIG_REFUSED_NAME_LEN) {
        strcpy(ps->refused[ps->n_refused++], name); /* length checked */
    }
    vsnprintf(text, sizeof(text), fmt, ap);
    if (line > 0) {
        snprintf(where, sizeof(where), ":%d", line);
    }
    if (asprintf(&full, "%s%s: %s%s%s", file, where, name ? name : "", name ? ": " : "", text) <
        0) {
        return -EINVAL;
    }
    if (ps->errbuf != NULL && ps->errbuf_len > 0 && ps->errbuf[0] == '\0') {
        snprintf(ps->errbuf, ps->errbuf_len, "%s", full);
    }
    if (cfg->n_errors >= CONFIG_MAX_ERRORS) {
        cfg->n_errors_dropped++;
        free(full);
        return -EINVAL;
    }
    grown = realloc(cfg->errors, (cfg->n_errors + 1) * sizeof(*grown));
    if (grown == NULL) {
        free(full);
        return -EINVAL;
    }
    cfg->errors = grown;
    cfg->errors[cfg->n_errors++] = full;
    return -EINVAL;
}

bool config_refused(const struct config_parser *ps, const char *name)
{
    for (size_t i = 0; i < ps->n_refused; i++) {
        if (strcmp(ps->refused[i], name) == 0) {
            return true;
        }
    }
    return false;
}

int config_error(struct config_parser *ps, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vreport(ps, ps->file, ps->line, ps->name, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

int config_error_at(struct config_parser *ps, const struct config_where *where, const char *name,
                    const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    if (where != NULL && where->line > 0) {
        vreport(ps, where->file, where->line, name, fmt, ap);
    } else {
        vreport(ps, config_origin(ps->cfg), 0, name, fmt, ap);
    }
    va_end(ap);
    return -EINVAL;
}

int config_not_implemented(struct config_parser *ps, const char *detail_fmt, ...)
{
    char detail[256] = "";
    va_list ap;

    if (detail_fmt != NULL) {
        va_start(ap, detail_fmt);
        vsnprintf(detail, sizeof(detail), detail_fmt, ap);
        va_end(ap);
    }
    return config_error(ps, "not implemented yet in ovpnd%s%s%s", detail[0] ? " (" : "", detail,
                        detail[0] ? ")" : "");
}

int config_nomem(struct config_parser *ps)
{
    if (ps->errbuf != NULL && ps->errbuf_len > 0) {
        snprintf(ps->errbuf, ps->errbuf_len, "%s: out of memory", config_origin(ps->cfg));
    }
    return -ENOMEM;
}

int config_warn(struct config_parser *ps, const struct config_where *where, const char *fmt, ...)
{
    struct config *cfg = ps->cfg;
    const struct config_where here = config_here(ps);
    char text[512], *line, **grown;
    int n;
    va_list ap;

    if (where == NULL) {
        where = &here;
    }
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (where->line > 0) {
        n = asprintf(&line, "%s:%d: %s", where->file, where->line, text);
    } else {
        n = asprintf(&line, "%s: %s", config_origin(cfg), text);
    }
    if (n < 0) {
        return config_nomem(ps);
    }
    grown = realloc(cfg->warnings, (cfg->n_warnings + 1) * sizeof(*grown));
    if (grown == NULL) {
        free(line);
        return config_nomem(ps);
    }
    cfg->warnings = grown;
    cfg->warnings[cfg->n_warnings++] = line;
    return 0;
}

struct config_where config_here(const struct config_parser *ps)
{
    struct config_where w = {ps->file, ps->line};

    return w;
}

/* ---- values ---- */

int config_set_str(struct config_parser *ps, char **dst, const char *src)
{
    char *copy = NULL;

    if (src != NULL) {
        copy = strdup(src);
        if (copy == NULL) {
            return config_nomem(ps);
        }
    }
    free(*dst);
    *dst = copy;
    return 0;
}

int config_parse_int(struct config_parser *ps, const char *label, const char *s, long min, long max,
                     int *out)
{
    const char *p = s;
    long v = 0;
    bool is_negative = false;

    if (*p == '-') {
        is_negative = true;
        p++;
    }
    if (*p == '\0') {
        goto not_a_number;
    }
    for (; *p != '\0'; p++) {
        if (*p < '0' || *p > '9') {
            goto not_a_number;
        }
        if (v <= max) { /* stop growing once out of range; max fits an int */
            v = v * 10 + (*p - '0');
        }
    }
    if (is_negative) {
        v = -v;
    }
    if (v < min || v > max) {
        return config_error(ps, "%s%s'%s' is out of range (%ld-%ld)", label ? label : "",
                            label ? " " : "", s, min, max);
    }
    *out = (int)v;
    return 0;

not_a_number:
    return config_error(ps, "%s%s'%s' is not a number", label ? label : "", label ? " " : "", s);
}

void config_blob_clear(struct config_blob *blob)
{
    if (blob->data != NULL) {
        mbedtls_platform_zeroize(blob->data, blob->len);
    }
    free(blob->data);
    free(blob->origin);
    blob->data = NULL;
    blob->origin = NULL;
    blob->len = 0;
}

int config_set_file(struct config_parser *ps, struct config_pending *pending,
                    struct config_blob *blob, const char *value)
{
    config_blob_clear(blob);
    free(pending->path);
    pending->path = NULL;
    pending->where = config_here(ps);
    if (!ps->is_inline) {
        return config_set_str(ps, &pending->path, value);
    }
    blob->len = strlen(value);
    blob->data = strdup(value);
    if (blob->data == NULL || asprintf(&blob->origin, "%s:%d (inline)", ps->file, ps->line) < 0) {
        blob->origin = NULL;
        config_blob_clear(blob);
        return config_nomem(ps);
    }
    return 0;
}

void config_path_dir(char *path)
{
    char *slash = strrchr(path, '/');

    if (!slash) {
        strcpy(path, ".");
    } else if (slash == path) {
        path[1] = '\0';
    } else {
        *slash = '\0';
    }
}

char *config_resolve(const struct config_parser *ps, const char *path)
{
    char *joined;

    if (path[0] == '/' || ps->cd == NULL) {
        return strdup(path);
    }
    if (asprintf(&joined, "%s/%s", ps->cd, path) < 0) {
        return NULL;
    }
    return joined;
}

/* Read a regular file of at most max bytes into a NUL-terminated buffer. -errno, or -EFBIG. */
static int read_whole_file(const char *path, size_t max, char **out, size_t *out_len)
{
    struct stat st;
    char *buf;
    size_t len = 0;
    int err, fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

    if (fd < 0) {
        return -errno;
    }
    if (fstat(fd, &st) != 0) {
        err = -errno;
        goto out_fd;
    }
    if (S_ISDIR(st.st_mode)) {
        err = -EISDIR;
        goto out_fd;
    }
    if (!S_ISREG(st.st_mode) || (uintmax_t)st.st_size > max) {
        err = S_ISREG(st.st_mode) ? -EFBIG : -EINVAL;
        goto out_fd;
    }
    buf = malloc((size_t)st.st_size + 1);
    if (buf == NULL) {
        err = -ENOMEM;
        goto out_fd;
    }
    while (len < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + len, (size_t)st.st_size - len);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            err = n < 0 ? -errno : -EIO; /* the file shrank while we read it */
            mbedtls_platform_zeroize(buf, len);
            free(buf);
            goto out_fd;
        }
        len += (size_t)n;
    }
    buf[len] = '\0';
    close(fd);
    *out = buf;
    *out_len = len;
    return 0;

out_fd:
    close(fd);
    return err;
}

static const char *read_error_text(int err)
{
    if (err == -EFBIG) {
        return "file is too large";
    }
    if (err == -EINVAL) {
        return "not a regular file";
    }
    return strerror(-err);
}

/* persist-key at a reload: the running config's copy of the file at path (absolute), among
 * those 2.6 keeps across its SIGHUP restart with persist-key; NULL when there is none. */
static const struct config_blob *persisted_blob(const struct config_parser *ps, const char *path)
{
    const struct config *r = ps->running;
    const struct config_blob *kept[] = {&r->tls.ca,           &r->tls.cert,
                                        &r->tls.key,          &r->tls.dh,
                                        &r->tls.tls_wrap_key, &r->tls.tls_crypt_v2_key,
                                        &r->cert.extra_certs, &r->auth.auth_token_secret_text};

    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
        if (kept[i]->data && kept[i]->origin && strcmp(kept[i]->origin, path) == 0) {
            return kept[i];
        }
    }
    return NULL;
}

/* persist-key: *blob = a copy of the running config's (data and origin), 0; -ENOENT when
 * persist-key does not apply or running has no copy of path. */
static int take_persisted(struct config_parser *ps, const char *path, struct config_blob *blob)
{
    const struct config_blob *old;

    if (!ps->running || !ps->running->proc.persist_key || !ps->cfg->proc.persist_key) {
        return -ENOENT;
    }
    old = persisted_blob(ps, path);
    if (!old) {
        return -ENOENT;
    }
    blob->data = malloc(old->len + 1);
    blob->origin = strdup(path);
    if (!blob->data || !blob->origin) {
        config_blob_clear(blob);
        return -ENOMEM;
    }
    memcpy(blob->data, old->data, old->len);
    blob->data[old->len] = '\0';
    blob->len = old->len;
    return 0;
}

int config_read_blob(struct config_parser *ps, const struct config_where *where, const char *name,
                     const char *path, struct config_blob *blob)
{
    char *full = config_resolve(ps, path);
    int err;

    if (full == NULL) {
        return config_nomem(ps);
    }
    config_blob_clear(blob);
    err = read_whole_file(full, CONFIG_MAX_BLOB, &blob->data, &blob->len);
    if (err == -ENOMEM) {
        free(full);
        return config_nomem(ps);
    }
    if ((err == -EACCES || err == -EPERM) && strcmp(name, "crl-verify") != 0) {
        int e = take_persisted(ps, full, blob);

        if (e == -ENOMEM) {
            free(full);
            return config_nomem(ps);
        }
        if (e == 0) {
            config_warn(ps, where,
                        "%s: cannot read '%s' now (%s); persist-key: the one read at start-up "
                        "stays in use",
                        name, full, strerror(-err));
            free(full);
            return 0;
        }
    }
    if (err) {
        config_error_at(ps, where, name, "cannot read '%s': %s", full, read_error_text(err));
        free(full);
        return -EINVAL;
    }
    if (memchr(blob->data, '\0', blob->len) != NULL) {
        config_error_at(ps, where, name, "'%s' contains a NUL byte: is it a text (PEM) file?",
                        full);
        free(full);
        return -EINVAL;
    }
    blob->origin = full;
    return 0;
}

/* ---- lines ---- */

struct text_reader {
    const char *text;
    size_t len, pos;
};

/* The next line without its "\n"; false at the end of the text. */
static bool next_line(struct text_reader *r, const char **line, size_t *line_len)
{
    const char *nl;

    if (r->pos >= r->len) {
        return false;
    }
    *line = r->text + r->pos;
    nl = memchr(*line, '\n', r->len - r->pos);
    *line_len = nl ? (size_t)(nl - *line) : r->len - r->pos;
    r->pos += *line_len + (nl ? 1 : 0);
    return true;
}

/* Collect the lines of a <tag> block up to its "</tag>" line into *out (caller frees). */
static int read_inline_block(struct config_parser *ps, struct text_reader *r, const char *tag,
                             char **out, int *n_lines)
{
    const char *line;
    size_t line_len, tag_len = strlen(tag), start = r->pos, end;

    *n_lines = 0;
    for (;;) {
        end = r->pos;
        if (!next_line(r, &line, &line_len)) {
            return config_error(ps, "no closing </%s> for the inline block", tag);
        }
        (*n_lines)++;
        while (line_len > 0 && isspace((unsigned char)*line)) {
            line++;
            line_len--;
        }
        if (line_len >= tag_len + 3 && memcmp(line, "</", 2) == 0 &&
            memcmp(line + 2, tag, tag_len) == 0 && line[tag_len + 2] == '>') {
            break;
        }
    }
    if (end - start > CONFIG_MAX_BLOB) {
        return config_error(ps, "inline block is too large (%d bytes max)", CONFIG_MAX_BLOB);
    }
    if (memchr(r->text + start, '\0', end - start) != NULL) {
        return config_error(ps, "inline block contains a NUL byte");
    }
    *out = strndup(r->text + start, end - start);
    return *out ? 0 : config_nomem(ps);
}

static bool is_ignored_unknown(const struct config_parser *ps, const char *name)
{
    for (size_t i = 0; i < ps->n_ignore_unknown; i++) {
        if (strcmp(ps->ignore_unknown[i], name) == 0) {
            return true;
        }
    }
    return false;
}

static int check_arg_count(struct config_parser *ps, const struct config_directive *d, int n)
{
    if (n >= d->min_args && n <= d->max_args) {
        return 0;
    }
    if (d->min_args == d->max_args) {
        return config_error(
            ps, "takes %d argument%s, not %d%s", d->min_args, d->min_args == 1 ? "" : "s", n,
            n > d->max_args && d->max_args > 0 ? " (quote an argument that contains blanks)" : "");
    }
    if (n < d->min_args) {
        return config_error(ps, "needs at least %d argument%s", d->min_args,
                            d->min_args == 1 ? "" : "s");
    }
    return config_error(ps, "takes at most %d argument%s, not %d", d->max_args,
                        d->max_args == 1 ? "" : "s", n);
}

/* Run one directive: argv[0] is its name, argv[1] the block text when ps->is_inline. */
static int dispatch(struct config_parser *ps, int argc, char **argv, bool is_setenv_opt)
{
    const struct config_directive *d = config_directive_find(argv[0]);

    ps->name = argv[0];
    if (d == NULL) {
        if (argv[0][0] == '<' && argv[0][1] == '/') {
            return config_error(ps, "closing tag without an opening one");
        }
        if (is_setenv_opt || is_ignored_unknown(ps, argv[0]) || ps->is_forward_compatible) {
            return config_warn(ps, NULL, "%s: unknown directive, ignored (%s)", argv[0],
                               is_setenv_opt               ? "setenv opt"
                               : ps->is_forward_compatible ? "setenv FORWARD_COMPATIBLE 1"
                                                           : "ignore-unknown-option");
        }
        return config_error(ps, "unknown directive");
    }
    if (!(d->flags & CONFIG_F_GLOBAL)) {
        return config_error(ps, "only allowed in a client-config-dir file or in what a "
                                "client-connect script or plugin returns, as in openvpn");
    }
    if (ps->is_inline && !(d->flags & CONFIG_F_INLINE)) {
        return config_error(ps, "cannot be given as an inline <%s> block", argv[0]);
    }
    switch (d->kind) {
    case CONFIG_KIND_SET:
    case CONFIG_KIND_IGNORE: {
        int err = check_arg_count(ps, d, argc - 1);

        if (err) {
            return err;
        }
        if (d->kind == CONFIG_KIND_SET) {
            return d->handler(ps, argc, argv);
        }
        if (d->flags & CONFIG_F_CLIENT_OPTION) {
            return config_warn(ps, NULL,
                               "%s: ignored: a client option, without effect in a server (as in "
                               "openvpn 2.6)%s%s",
                               argv[0], d->note ? "; " : "", d->note ? d->note : "");
        }
        return d->note ? config_warn(ps, NULL, "%s: ignored: %s", argv[0], d->note) : 0;
    }
    case CONFIG_KIND_TODO:
        return d->note ? config_not_implemented(ps, "%s", d->note)
                       : config_not_implemented(ps, NULL);
    case CONFIG_KIND_CLIENT:
        return config_error(ps, "is a client directive, not valid in a server config%s%s",
                            d->note ? ": " : "", d->note ? d->note : "");
    default:
        return config_error(ps, "%s", d->note ? d->note : "not supported");
    }
}

/* One line, already split: inline block, "--" prefix, "setenv opt", then the table. */
static int handle_words(struct config_parser *ps, struct text_reader *r, int argc, char **argv)
{
    char *block = NULL, *name = argv[0], *words[CONFIG_MAX_ARGS + 1];
    size_t name_len = strlen(name);
    int err, n_block_lines = 0;
    bool is_setenv_opt = false;

    if (name_len >= 3 && name[0] == '-' && name[1] == '-') {
        name += 2;
        name_len -= 2;
    }
    ps->name = name;
    ps->is_inline = false;
    if (argc == 1 && name_len > 2 && name[0] == '<' && name[name_len - 1] == '>' &&
        name[1] != '/') {
        name[name_len - 1] = '\0';
        name++;
        ps->name = name;
        err = read_inline_block(ps, r, name, &block, &n_block_lines);
        if (err) {
            return err;
        }
        ps->is_inline = true;
        argc = 2;
        words[1] = block;
    } else {
        for (int i = 1; i < argc; i++) {
            words[i] = argv[i];
        }
    }
    words[0] = name;
    if (strcmp(name, "setenv") == 0 && argc >= 2 && strcmp(words[1], "opt") == 0) {
        if (argc == 2) {
            return config_error(ps, "'setenv opt' needs a directive after it");
        }
        is_setenv_opt = true;
        argc -= 2;
        memmove(words, words + 2, (size_t)argc * sizeof(*words));
    }
    words[argc] = NULL;
    err = dispatch(ps, argc, words, is_setenv_opt);
    if (block != NULL) {
        mbedtls_platform_zeroize(block, strlen(block));
        free(block);
    }
    ps->line += n_block_lines;
    ps->is_inline = false;
    return err;
}

static int parse_text(struct config_parser *ps, const char *file, const char *text, size_t len)
{
    struct text_reader r = {text, len, 0};
    const char *line, *saved_file = ps->file;
    size_t line_len;
    int err = 0, saved_line = ps->line;

    ps->file = file;
    ps->line = 0;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        r.pos = 3; /* UTF-8 byte order mark */
    }
    while (err != -ENOMEM && next_line(&r, &line, &line_len)) {
        char *argv[CONFIG_MAX_ARGS], *scratch, why[256];
        int argc;

        if (err) {
            /* A refused line: go on, so that one run reports every refused line. */
            ps->has_line_errors = true;
            err = 0;
        }
        ps->line++;
        ps->name = NULL;
        if (memchr(line, '\0', line_len) != NULL) {
            err = config_error(ps, "line contains a NUL byte");
            continue;
        }
        scratch = malloc(line_len + CONFIG_MAX_ARGS);
        if (scratch == NULL) {
            err = config_nomem(ps);
            break;
        }
        err = config_split_line(line, line_len, scratch, argv, &argc, why, sizeof(why));
        if (err) {
            /* name the directive: the line's first word as written */
            const char *word;
            size_t n = config_first_word(line, line_len, &word);

            if (n > 0) {
                config_error(ps, "%.*s: %s", (int)n, word, why);
            } else {
                config_error(ps, "%s", why);
            }
        } else if (argc > 0) {
            err = handle_words(ps, &r, argc, argv);
        }
        mbedtls_platform_zeroize(scratch, line_len + CONFIG_MAX_ARGS);
        free(scratch);
    }
    ps->file = saved_file;
    ps->line = saved_line;
    if (err == -ENOMEM) {
        return err;
    }
    return err || ps->has_line_errors ? -EINVAL : 0;
}

/* Keep a copy of a file name for messages and config_where. */
static const char *remember_file(struct config_parser *ps, const char *name)
{
    char **grown = realloc(ps->files, (ps->n_files + 1) * sizeof(*grown));

    if (grown == NULL) {
        return NULL;
    }
    ps->files = grown;
    grown[ps->n_files] = strdup(name);
    return grown[ps->n_files] ? grown[ps->n_files++] : NULL;
}

int config_parse_include(struct config_parser *ps, const char *path)
{
    char *full = config_resolve(ps, path), *text = NULL;
    const char *name;
    size_t len;
    int err;

    if (full == NULL) {
        return config_nomem(ps);
    }
    if (ps->depth >= CONFIG_MAX_DEPTH) {
        free(full);
        return config_error(ps,
                            "config files nested more than %d deep: does '%s' include "
                            "itself?",
                            CONFIG_MAX_DEPTH, path);
    }
    name = remember_file(ps, ps->depth == 0 ? path : full);
    err = name ? read_whole_file(full, CONFIG_MAX_FILE, &text, &len) : -ENOMEM;
    if (err == -ENOMEM) {
        free(full);
        return config_nomem(ps);
    }
    if (err) {
        if (ps->depth == 0) {
            config_error_at(ps, NULL, NULL, "cannot read the config file: %s",
                            read_error_text(err));
        } else {
            config_error(ps, "cannot read '%s': %s", full, read_error_text(err));
        }
        free(full);
        return -EINVAL;
    }
    free(full);
    ps->depth++;
    err = parse_text(ps, name, text, len);
    ps->depth--;
    mbedtls_platform_zeroize(text, len);
    free(text);
    return err;
}

/* ---- entry points ---- */

void config_init(struct config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->net.port = 1194;
    cfg->pkcs11.pin_cache_s = -1; /* 2.6 options.c: the PIN is kept for good */
    cfg->net.tcp_queue_limit = CONFIG_TCP_QUEUE_LIMIT;
    cfg->net.proto = CONFIG_PROTO_UDP;
    cfg->net.topology = CONFIG_TOPOLOGY_NET30; /* openvpn 2.6's default (2.7: subnet) */
    cfg->net.ifconfig_pool_persist_s = 600;
    cfg->net.route_metric = -1;
    cfg->net.tun_mtu = 1500;
    cfg->net.tls_mtu = 1250;
    cfg->net.mssfix = 1492;
    cfg->net.mssfix_mode = CONFIG_MSSFIX_MTU;
    cfg->net.vlan_accept = VLAN_ACCEPT_ALL; /* openvpn 2.6 options.c */
    cfg->net.vlan_pvid = 1;
    cfg->timers.hand_window_s = 60;
    cfg->timers.tran_window_s = 3600;
    cfg->timers.tls_timeout_s = 2;
    cfg->timers.reneg_sec = 3600;
    cfg->timers.reneg_sec_min = -1;
    cfg->tls.key_direction = CONFIG_KEY_DIRECTION_NONE;
    cfg->tls.auth = strdup("SHA1");
    cfg->tls.data_ciphers = strdup(CONFIG_DEFAULT_DATA_CIPHERS);
    cfg->tls.tls_version_min = strdup("1.2");
    cfg->tls.replay_window = 64;
    cfg->tls.replay_time_s = 15;
    cfg->tls.verify_client_cert = CONFIG_VERIFY_REQUIRE;
    cfg->clients.max_clients = 1024;
    cfg->clients.max_routes_per_client = CONFIG_MAX_ROUTES_PER_CLIENT_DEFAULT;
    cfg->clients.connect_freq_initial_max = CONFIG_CONNECT_FREQ_INITIAL_MAX_DEFAULT;
    cfg->clients.connect_freq_initial_per_s = CONFIG_CONNECT_FREQ_INITIAL_PER_DEFAULT;
    cfg->proc.verb = 1;
    cfg->status.status_interval_s = 60;
    cfg->status.status_version = 1;
    cfg->mgmt.log_cache = 250; /* openvpn 2.6 options.c */
    cfg->hooks.script_security = 1;
}

static void parser_clear(struct config_parser *ps)
{
    struct config_pending *pending[] = {&ps->ca,
                                        &ps->cert,
                                        &ps->key,
                                        &ps->tls_wrap_key,
                                        &ps->tls_crypt_v2_key,
                                        &ps->crl,
                                        &ps->dh,
                                        &ps->auth_token_secret,
                                        &ps->ccd,
                                        &ps->tmp_dir};

    for (size_t i = 0; i < sizeof(pending) / sizeof(pending[0]); i++) {
        free(pending[i]->path);
    }
    config_cert_pending_clear(&ps->certp);
    for (size_t i = 0; i < ps->n_files; i++) {
        free(ps->files[i]);
    }
    for (size_t i = 0; i < ps->n_ignore_unknown; i++) {
        free(ps->ignore_unknown[i]);
    }
    free(ps->files);
    free(ps->ignore_unknown);
    free(ps->cd);
}

static int parse_common(struct config *cfg, const char *name, const char *text, const char *dir,
                        const struct config *running, char *errbuf, size_t errbuf_len)
{
    struct config_parser ps = {.cfg = cfg,
                               .errbuf = errbuf,
                               .errbuf_len = errbuf_len,
                               .is_mssfix_default = true,
                               .running = running};
    int err;

    if (errbuf != NULL && errbuf_len > 0) {
        errbuf[0] = '\0';
    }
    if (dir != NULL) {
        ps.cd = strdup(dir);
        if (ps.cd == NULL) {
            return -ENOMEM;
        }
    }
    free(cfg->source);
    cfg->source = strdup(name);
    if (cfg->source == NULL) {
        if (errbuf != NULL && errbuf_len > 0) {
            snprintf(errbuf, errbuf_len, "%s: out of memory", name);
        }
        return -ENOMEM;
    }
    if (text != NULL) {
        const char *file = remember_file(&ps, name);

        ps.depth = 1; /* the top file counts as a level, as in openvpn */
        err = file ? parse_text(&ps, file, text, strlen(text)) : config_nomem(&ps);
    } else {
        err = config_parse_include(&ps, name);
    }
    if (err == 0 || err == -EINVAL) {
        /* the whole-config checks run after lines with errors too, so that one run names
         * every problem (a `dev tap` as well as a typo elsewhere) */
        int e = config_finish(&ps);

        err = err ? err : e;
    }
    parser_clear(&ps);
    return err;
}

int config_parse_file(struct config *cfg, const char *path, char *errbuf, size_t errbuf_len)
{
    return parse_common(cfg, path, NULL, NULL, NULL, errbuf, errbuf_len);
}

int config_parse_string(struct config *cfg, const char *name, const char *text, char *errbuf,
                        size_t errbuf_len)
{
    return parse_common(cfg, name, text, NULL, NULL, errbuf, errbuf_len);
}

int config_parse_string_in(struct config *cfg, const char *name, const char *text, const char *dir,
                           const struct config *running, char *errbuf, size_t errbuf_len)
{
    return parse_common(cfg, name, text, dir, running, errbuf, errbuf_len);
}

void config_free(struct config *cfg)
{
    if (cfg == NULL) {
        return;
    }
    char **strings[] = {&cfg->source,
                        &cfg->config_file,
                        &cfg->cd_dir,
                        &cfg->proc.chroot_dir,
                        &cfg->net.local,
                        &cfg->net.sockets[0].host,
                        &cfg->net.sockets[1].host,
                        &cfg->net.port_share_host,
                        &cfg->net.port_share_dir,
                        &cfg->net.dev,
                        &cfg->net.bind_dev,
                        &cfg->tls.auth,
                        &cfg->tls.data_ciphers,
                        &cfg->tls.data_ciphers_fallback,
                        &cfg->tls.cipher,
                        &cfg->tls.ekm_label,
                        &cfg->tls.tls_version_min,
                        &cfg->tls.tls_version_max,
                        &cfg->tls.tls_groups,
                        &cfg->tls.tls_cipher,
                        &cfg->tls.tls_cert_profile,
                        &cfg->proc.user,
                        &cfg->proc.group,
                        &cfg->proc.syslog_name,
                        &cfg->proc.writepid,
                        &cfg->proc.log_file,
                        &cfg->proc.log_where,
                        &cfg->status.status_file,
                        &cfg->mgmt.addr,
                        &cfg->mgmt.port,
                        &cfg->mgmt.where,
                        &cfg->mgmt.client_user,
                        &cfg->mgmt.client_group,
                        &cfg->mgmt.external_cert,
                        &cfg->metrics.host,
                        &cfg->net.client_config_dir,
                        &cfg->hooks.tmp_dir,
                        &cfg->tls.crl_file,
                        &cfg->net.ifconfig_pool_persist,
                        &cfg->tls.remote_cert_eku};

    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
        free(*strings[i]);
    }
    if (cfg->mgmt.password) {
        mbedtls_platform_zeroize(cfg->mgmt.password, strlen(cfg->mgmt.password));
        free(cfg->mgmt.password);
    }
    for (size_t i = 0; i < cfg->pkcs11.n_providers; i++) {
        free(cfg->pkcs11.providers[i]);
    }
    free(cfg->pkcs11.id);
    free(cfg->pkcs11.providers_where);
    free(cfg->pkcs11.id_where);
    config_cert_clear(&cfg->cert);
    config_blob_clear(&cfg->tls.ca);
    free(cfg->tls.peer_fingerprints);
    free(cfg->tls.verify_hashes);
    free(cfg->tls.verify_x509_name);
    config_blob_clear(&cfg->tls.cert);
    config_blob_clear(&cfg->tls.key);
    config_blob_clear(&cfg->tls.tls_wrap_key);
    config_blob_clear(&cfg->tls.tls_crypt_v2_key);
    config_blob_clear(&cfg->tls.crl);
    config_blob_clear(&cfg->tls.dh);
    config_blob_clear(&cfg->auth.auth_token_secret_text);
    mbedtls_platform_zeroize(cfg->auth.auth_token_secret, sizeof(cfg->auth.auth_token_secret));
    for (size_t i = 0; i < cfg->net.push.n_items; i++) {
        free(cfg->net.push.items[i]);
    }
    free(cfg->net.push.items);
    free(cfg->net.routes);
    free(cfg->net.client_nat);
    for (size_t i = 0; i < cfg->n_warnings; i++) {
        free(cfg->warnings[i]);
    }
    free(cfg->warnings);
    for (size_t i = 0; i < cfg->n_errors; i++) {
        free(cfg->errors[i]);
    }
    free(cfg->errors);
    free(cfg->tls.verify_client_cert_where);
    config_strv_free(cfg->auth.auth_user_pass_verify);
    config_strv_free(cfg->hooks.tls_verify);
    config_strv_free(cfg->hooks.tls_crypt_v2_verify);
    config_strv_free(cfg->hooks.client_connect);
    config_strv_free(cfg->hooks.client_disconnect);
    config_strv_free(cfg->hooks.client_crresponse);
    config_strv_free(cfg->hooks.up);
    config_strv_free(cfg->hooks.down);
    config_strv_free(cfg->hooks.route_pre_down);
    config_strv_free(cfg->hooks.route_up);
    config_strv_free(cfg->hooks.learn_address);
    for (size_t i = 0; i < cfg->hooks.n_plugins; i++) {
        config_strv_free(cfg->hooks.plugins[i].argv);
        free(cfg->hooks.plugins[i].path);
        free(cfg->hooks.plugins[i].where);
    }
    free(cfg->hooks.plugins);
    for (size_t i = 0; i < cfg->hooks.n_setenv; i++) {
        free(cfg->hooks.setenv[i]);
    }
    free(cfg->hooks.setenv);
    memset(cfg, 0, sizeof(*cfg));
}
