/* server/config/capath.c: see capath.h. */
#include "server/config/capath.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mbedtls/x509_crl.h>
#include <mbedtls/x509_crt.h>
#include <openssl/x509.h>

#include "server/log/log.h"

#define CAPATH_FILE_MAX (16 << 20) /* bytes of one file: the CRL of a large CA can be MBs */

bool capath_name_parse(const char *name, struct capath_entry *out)
{
    uint32_t hash = 0;
    unsigned index = 0;
    const char *p;
    size_t n_digits = 0;

    for (int i = 0; i < 8; i++) {
        char c = name[i];

        if (c >= '0' && c <= '9') {
            hash = hash << 4 | (uint32_t)(c - '0');
        } else if (c >= 'a' && c <= 'f') {
            hash = hash << 4 | (uint32_t)(c - 'a' + 10);
        } else {
            return false; /* (also the end of a shorter name) */
        }
    }
    if (name[8] != '.') {
        return false;
    }
    p = name + 9;
    out->is_crl = *p == 'r';
    p += out->is_crl;
    if (*p == '\0' || (*p == '0' && p[1] != '\0')) {
        return false; /* no index, or a leading zero "%d" never writes */
    }
    for (; *p; p++) {
        if (*p < '0' || *p > '9' || ++n_digits > 9) {
            return false;
        }
        index = index * 10 + (unsigned)(*p - '0');
    }
    out->hash = hash;
    out->index = index;
    out->is_read = false;
    snprintf(out->name, sizeof(out->name), "%s", name);
    return true;
}

static int entry_cmp(const void *pa, const void *pb)
{
    const struct capath_entry *a = pa, *b = pb;

    if (a->hash != b->hash) {
        return a->hash < b->hash ? -1 : 1;
    }
    if (a->is_crl != b->is_crl) {
        return a->is_crl ? 1 : -1;
    }
    return a->index < b->index ? -1 : a->index > b->index;
}

static bool same_group(const struct capath_entry *a, const struct capath_entry *b)
{
    return a->hash == b->hash && a->is_crl == b->is_crl;
}

size_t capath_select(struct capath_entry *e, size_t n)
{
    size_t n_read = 0;
    unsigned next = 0;

    if (n > 1) {
        qsort(e, n, sizeof(*e), entry_cmp);
    }
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || !same_group(&e[i - 1], &e[i])) {
            next = 0;
        }
        e[i].is_read = e[i].index == next;
        if (e[i].is_read) {
            next++;
            n_read++;
        }
    }
    return n_read;
}

/* OpenSSL's hash of a DER Name (X509_NAME_hash_ex, what `openssl rehash` names files by). */
static bool name_hash(const unsigned char *der, size_t len, uint32_t *out)
{
    const unsigned char *p = der;
    X509_NAME *name = d2i_X509_NAME(NULL, &p, (long)len);
    unsigned long h;
    int ok = 0;

    if (name == NULL) {
        return false;
    }
    h = X509_NAME_hash_ex(name, NULL, NULL, &ok);
    X509_NAME_free(name);
    *out = (uint32_t)h;
    return ok != 0;
}

/* dir/name, whole and NUL-terminated, into *out (caller frees); *len its length. A regular
 * file only (opened without blocking: a FIFO must not stall the acceptor). 0 or -errno. */
static int read_file(const char *dir, const char *name, char **out, size_t *len)
{
    char path[4096];
    struct stat st;
    ssize_t n;
    char *buf;
    int fd, err;

    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
        return -ENAMETOOLONG;
    }
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        return -errno;
    }
    err = fstat(fd, &st) != 0            ? -errno
          : !S_ISREG(st.st_mode)         ? -EINVAL
          : st.st_size > CAPATH_FILE_MAX ? -EFBIG
                                         : 0;
    if (err) {
        close(fd);
        return err;
    }
    buf = malloc((size_t)st.st_size + 1);
    if (buf == NULL) {
        close(fd);
        return -ENOMEM;
    }
    n = read(fd, buf, (size_t)st.st_size);
    err = n < 0 ? -errno : 0;
    close(fd);
    if (err) {
        free(buf);
        return err;
    }
    buf[n] = '\0';
    *out = buf;
    *len = (size_t)n;
    return 0;
}

/* Where capath_load / capath_certs put what they read: tls's trust, or a list of certificates. */
struct sink {
    struct tls_server_conf *tls;
    mbedtls_x509_crt *certs;
};

/* Parse one file's text as e's kind, check the names' hashes, and add it to the sink. 0, or
 * -EINVAL with why filled (the file is not used), -ENOMEM. */
static int add_file(const struct capath_entry *e, const char *text, size_t len,
                    const struct sink *to, struct capath_stats *st, char *why, size_t why_len)
{
    const char *header = e->is_crl ? "-----BEGIN X509 CRL-----" : "-----BEGIN CERTIFICATE-----";
    mbedtls_x509_crt crts;
    mbedtls_x509_crl crls;
    size_t n = 0;
    int ret, err = 0;

    if (strstr(text, header) == NULL) {
        snprintf(why, why_len, "no PEM %s in it (OpenSSL reads PEM only here)",
                 e->is_crl ? "CRL (X509 CRL)" : "CERTIFICATE");
        return -EINVAL;
    }
    mbedtls_x509_crt_init(&crts);
    mbedtls_x509_crl_init(&crls);
    ret = e->is_crl ? mbedtls_x509_crl_parse(&crls, (const unsigned char *)text, len + 1)
                    : mbedtls_x509_crt_parse(&crts, (const unsigned char *)text, len + 1);
    if (ret != 0) {
        char reason[120] = "";

        if (ret < 0) {
            snprintf(reason, sizeof(reason), " (Mbed TLS error -0x%04x)", (unsigned)-ret);
        }
        snprintf(why, why_len, "%s %s not parse%s", ret > 0 ? "some certificates in it" : "it",
                 ret > 0 ? "do" : "does", reason);
        err = -EINVAL;
        goto out;
    }
    for (const mbedtls_x509_crt *c = &crts; !e->is_crl && c && c->raw.p; c = c->next, n++) {
        uint32_t h = 0;

        if (!name_hash(c->subject_raw.p, c->subject_raw.len, &h) || h != e->hash) {
            snprintf(why, why_len,
                     "certificate %zu's subject hash is %08x, not %08x: OpenSSL looks for "
                     "that CA in %08x.N files, so it is not used from this one (openssl rehash "
                     "renames it)",
                     n + 1, h, e->hash, h);
            err = -EINVAL;
            goto out;
        }
    }
    for (const mbedtls_x509_crl *c = &crls; e->is_crl && c && c->version; c = c->next, n++) {
        uint32_t h = 0;

        if (!name_hash(c->issuer_raw.p, c->issuer_raw.len, &h) || h != e->hash) {
            snprintf(why, why_len,
                     "CRL %zu's issuer hash is %08x, not %08x: OpenSSL looks for it in "
                     "%08x.rN files, so it is not used from this one (openssl rehash renames it)",
                     n + 1, h, e->hash, h);
            err = -EINVAL;
            goto out;
        }
    }
    if (to->tls != NULL) {
        ret = tls_server_conf_add_trust(to->tls, e->is_crl ? NULL : &crts, e->is_crl ? &crls : NULL,
                                        why, why_len);
    } else {
        ret = 0;
        for (const mbedtls_x509_crt *c = &crts; !e->is_crl && c && c->raw.p && !ret; c = c->next) {
            ret = mbedtls_x509_crt_parse_der(to->certs, c->raw.p, c->raw.len);
        }
    }
    if (ret) {
        err = -ENOMEM;
        goto out;
    }
    *(e->is_crl ? &st->n_crls : &st->n_certs) += n;
out:
    mbedtls_x509_crt_free(&crts);
    mbedtls_x509_crl_free(&crls);
    return err;
}

/* The hashed entries of dir, at most CAPATH_MAX_FILES, into a new array (caller frees). */
static int list_dir(const char *dir, struct capath_entry **out, size_t *n_out)
{
    struct capath_entry *e;
    size_t n = 0, n_over = 0;
    struct dirent *de;
    DIR *d = opendir(dir);
    int err;

    if (d == NULL) {
        return -errno;
    }
    e = malloc(CAPATH_MAX_FILES * sizeof(*e));
    if (e == NULL) {
        closedir(d);
        return -ENOMEM;
    }
    errno = 0;
    while ((de = readdir(d)) != NULL) {
        if (n == CAPATH_MAX_FILES) {
            n_over += capath_name_parse(de->d_name, &e[0]) ? 1 : 0;
        } else if (capath_name_parse(de->d_name, &e[n])) {
            n++;
        }
    }
    err = -errno;
    closedir(d);
    if (err) {
        free(e);
        return err;
    }
    if (n_over > 0) {
        log_msg(LOG_WARN, "capath: %s holds more than %d hashed files: %zu left out", dir,
                CAPATH_MAX_FILES, n_over);
    }
    *out = e;
    *n_out = n;
    return 0;
}

static int load(const char *dir, const struct sink *to, struct capath_stats *st)
{
    struct capath_entry *e = NULL;
    const struct capath_entry *broken = NULL; /* the last file that failed, in e */
    size_t n = 0;
    int err = list_dir(dir, &e, &n);

    memset(st, 0, sizeof(*st));
    if (err) {
        log_msg(LOG_WARN,
                "capath: cannot read the directory %s: %s; no certificate or CRL is "
                "taken from it",
                dir, strerror(-err));
        return err;
    }
    capath_select(e, n);
    for (size_t i = 0; i < n && err != -ENOMEM; i++) {
        char why[400], *text = NULL;
        size_t len = 0;

        if (broken != NULL && same_group(broken, &e[i])) {
            log_msg(LOG_WARN, "capath: %s/%s: not read: OpenSSL stops at %s, which is not used",
                    dir, e[i].name, broken->name);
            st->n_skipped++;
            continue;
        }
        if (!e[i].is_read) {
            log_msg(LOG_WARN,
                    "capath: %s/%s: not read: OpenSSL reads %08x.%s0, .%s1, ... up to the "
                    "first missing index, and %u comes after a gap",
                    dir, e[i].name, e[i].hash, e[i].is_crl ? "r" : "", e[i].is_crl ? "r" : "",
                    e[i].index);
            st->n_skipped++;
            continue;
        }
        err = read_file(dir, e[i].name, &text, &len);
        if (err) {
            snprintf(why, sizeof(why), "cannot read it: %s",
                     err == -EINVAL  ? "not a regular file"
                     : err == -EFBIG ? "larger than 16 MiB"
                                     : strerror(-err));
        } else {
            err = add_file(&e[i], text, len, to, st, why, sizeof(why));
            free(text);
        }
        if (err) {
            log_msg(err == -ENOMEM ? LOG_ERR : LOG_WARN, "capath: %s/%s: %s; not used", dir,
                    e[i].name, why);
            broken = &e[i];
            st->n_skipped++;
            continue;
        }
        st->n_files++;
    }
    free(e);
    return err == -ENOMEM ? err : 0;
}

int capath_load(const char *dir, struct tls_server_conf *tls, struct capath_stats *st)
{
    const struct sink to = {.tls = tls};

    return load(dir, &to, st);
}

int capath_certs(const char *dir, mbedtls_x509_crt *certs, struct capath_stats *st)
{
    const struct sink to = {.certs = certs};

    return load(dir, &to, st);
}

/* splitmix64's finaliser: spreads every input bit over the output. */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

int capath_signature(const char *dir, uint64_t *out)
{
    uint64_t sum = 0, n = 0;
    struct dirent *de;
    DIR *d = opendir(dir);

    if (d == NULL) {
        return -errno;
    }
    while ((de = readdir(d)) != NULL) {
        struct capath_entry e;
        struct stat st;
        uint64_t h = 0xcbf29ce484222325ULL;

        if (!capath_name_parse(de->d_name, &e)) {
            continue;
        }
        for (const char *p = de->d_name; *p; p++) { /* FNV-1a of the name */
            h = (h ^ (uint8_t)*p) * 0x100000001b3ULL;
        }
        if (fstatat(dirfd(d), de->d_name, &st, 0) == 0) { /* a dangling link: its name alone */
            h = mix(h ^ (uint64_t)st.st_ino);
            h = mix(h ^ (uint64_t)st.st_size);
            h = mix(h ^ (uint64_t)st.st_mtim.tv_sec);
            h = mix(h ^ (uint64_t)st.st_mtim.tv_nsec);
            h = mix(h ^ (uint64_t)st.st_ctim.tv_sec); /* chmod: a file that became readable */
            h = mix(h ^ (uint64_t)st.st_ctim.tv_nsec);
        }
        sum += mix(h); /* the order readdir gives does not matter */
        n++;
    }
    closedir(d);
    *out = mix(sum ^ n);
    return 0;
}
