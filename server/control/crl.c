/* server/control/crl.c: see crl.h. */
#include "server/control/crl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/config/capath.h"
#include "server/log/log.h"

#define CRL_CHECK_MS 1000
#define CRL_MAX_LEN (16 << 20) /* a CRL of a large CA can be several MB */

/* The whole file, NUL-terminated, into *out (caller frees). Returns its length or -errno. */
static ssize_t read_all(const char *path, char **out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    char *buf;
    ssize_t n;

    if (fd < 0) {
        return -errno;
    }
    if (fstat(fd, &st) < 0 || st.st_size > CRL_MAX_LEN) {
        n = st.st_size > CRL_MAX_LEN ? -EFBIG : -errno;
        close(fd);
        return n;
    }
    buf = malloc((size_t)st.st_size + 1);
    if (buf == NULL) {
        close(fd);
        return -ENOMEM;
    }
    n = read(fd, buf, (size_t)st.st_size);
    close(fd);
    if (n < 0) {
        n = -errno;
        free(buf);
        return n;
    }
    buf[n] = '\0';
    *out = buf;
    return n;
}

/* The file changed and cannot be used: refuse every client from now on (crl_watch_unloaded),
 * logged once per reason. why: what went wrong, with the file's name. */
static void set_unloaded(struct crl_watch *w, const char *why)
{
    if (!w->is_unloaded || strcmp(w->why, why) != 0) {
        log_msg(LOG_ERR,
                "crl-verify: %s; no client is admitted (first handshake or renegotiation) until "
                "the file can be used (fail closed, as openvpn 2.6: \"CRL not loaded\"); the "
                "clients connected now stay until their next renegotiation",
                why);
    }
    w->is_unloaded = true;
    snprintf(w->why, sizeof(w->why), "%s", why);
}

/* The CRL file, if it changed (or, while it could not be read, once a second: a chmod changes
 * neither mtime nor size). Whether the CRL was replaced. */
static bool file_tick(struct crl_watch *w, struct tls_server_conf *tls, pthread_rwlock_t *lock)
{
    int ret;
    char err[256] = "", why[sizeof(w->why)], *text = NULL;
    bool was_unloaded = w->is_unloaded;
    struct stat st;
    ssize_t len;

    if (stat(w->path, &st) != 0) {
        return false; /* being replaced; the next look finds it (2.6 keeps its CRL then too) */
    }
    if (st.st_mtim.tv_sec == w->mtime.tv_sec && st.st_mtim.tv_nsec == w->mtime.tv_nsec &&
        st.st_size == w->size) {
        return false;
    }
    w->mtime = st.st_mtim;
    w->size = st.st_size;
    len = read_all(w->path, &text);
    if (len < 0) {
        snprintf(why, sizeof(why), "cannot read %s: %s", w->path, strerror((int)-len));
        set_unloaded(w, why);
        memset(&w->mtime, 0, sizeof(w->mtime)); /* read it again at the next look */
        return false;
    }
    pthread_rwlock_wrlock(lock); /* no handshake step may read the CRL meanwhile */
    ret = tls_server_conf_set_crl(tls, (const uint8_t *)text, (size_t)len + 1, err, sizeof(err));
    pthread_rwlock_unlock(lock);
    free(text);
    if (ret) {
        /* read again only once it changes: a broken file is not parsed once a second */
        snprintf(why, sizeof(why), "%s: %s", w->path, err);
        set_unloaded(w, why);
        return false;
    }
    w->is_unloaded = false;
    log_msg(LOG_INFO, "crl-verify: %s changed, CRL reloaded%s", w->path,
            was_unloaded ? "; clients are admitted again" : "");
    return true;
}

const char *crl_watch_unloaded(const struct crl_watch *w)
{
    return w->is_unloaded ? w->why : NULL;
}

unsigned crl_watch_tick(struct crl_watch *w, struct tls_server_conf *tls, pthread_rwlock_t *lock,
                        uint64_t now_ms)
{
    unsigned changed = 0;

    if ((w->path == NULL && w->capath == NULL) || now_ms < w->next_check_ms) {
        return 0;
    }
    w->next_check_ms = now_ms + CRL_CHECK_MS;
    if (w->path != NULL && file_tick(w, tls, lock)) {
        changed |= CRL_WATCH_CRL;
    }
    if (w->capath != NULL) {
        uint64_t sig = 0;

        if (capath_signature(w->capath, &sig) != 0) {
            sig = 0; /* gone or unreadable: that is a change too (nothing is trusted from it) */
        }
        if (sig != w->capath_sig) {
            w->capath_sig = sig; /* reported once; the new configuration records it again */
            log_msg(LOG_INFO, "capath: the hashed files in %s changed: reading them again",
                    w->capath);
            changed |= CRL_WATCH_CAPATH;
        }
    }
    return changed;
}

/* The CRL of cfg into tls: the file read now (a configuration built while the server runs must
 * not take the copy read at start-up). When the file cannot be used, the config's copy goes
 * into tls, and: while prev (the watch of the configuration in force; NULL at start-up) refuses
 * every client, so does w; a file that changed since prev last read it (another mtime or size)
 * makes w refuse every client (as file_tick); the file prev read (a mode 0600 file from
 * start-up, when a capath change builds a new configuration) or a missing one keeps the copy. */
static int crl_init(struct crl_watch *w, const struct config *cfg, const char *root,
                    const struct crl_watch *prev, struct tls_server_conf *tls, char *errbuf,
                    size_t errbuf_len)
{
    char host[PATH_MAX], why[sizeof(w->why)] = "", *text = NULL;
    ssize_t len = -1;
    struct stat st;
    bool has_stat = false;

    w->path = cfg->tls.crl_file;
    if (w->path != NULL) {
        /* before a chroot, the jail's file is seen from outside (config.h chroot_dir) */
        snprintf(host, sizeof(host), "%s%s", root ? root : "", w->path);
        if (stat(host, &st) == 0) {
            has_stat = true;
            w->mtime = st.st_mtim;
            w->size = st.st_size;
            len = read_all(host, &text);
            if (len < 0) {
                snprintf(why, sizeof(why), "cannot read %s: %s", w->path, strerror((int)-len));
            }
        }
    }
    if (len < 0 || tls_server_conf_set_crl(tls, (const uint8_t *)text, (size_t)len + 1, errbuf,
                                           errbuf_len) != 0) {
        bool is_same = prev != NULL && prev->path != NULL && w->path != NULL &&
                       strcmp(prev->path, w->path) == 0;

        if (len >= 0) {
            snprintf(why, sizeof(why), "%s: %s", w->path, errbuf);
        }
        if (is_same && prev->is_unloaded) {
            w->is_unloaded = true; /* still refused */
            snprintf(w->why, sizeof(w->why), "%s", prev->why);
        } else if (prev != NULL && has_stat &&
                   !(is_same && st.st_mtim.tv_sec == prev->mtime.tv_sec &&
                     st.st_mtim.tv_nsec == prev->mtime.tv_nsec && st.st_size == prev->size)) {
            set_unloaded(w, why);
        }
        if (prev == NULL || w->is_unloaded) {
            memset(&w->mtime, 0, sizeof(w->mtime)); /* the next tick reads the file again */
        }
        if (tls_server_conf_set_crl(tls, (const uint8_t *)cfg->tls.crl.data, cfg->tls.crl.len + 1,
                                    errbuf, errbuf_len)) {
            free(text);
            return -EINVAL;
        }
    }
    free(text);
    log_msg(LOG_INFO, "crl-verify: client certificates are checked against %s",
            cfg->tls.crl.origin ? cfg->tls.crl.origin : "the CRL");
    return 0;
}

int crl_watch_init(struct crl_watch *w, const struct config *cfg, const char *root,
                   const struct crl_watch *prev, struct tls_server_conf *tls, char *errbuf,
                   size_t errbuf_len)
{
    struct capath_stats st;
    char host[PATH_MAX];
    int err;

    memset(w, 0, sizeof(*w));
    if (cfg->tls.crl.data != NULL) {
        err = crl_init(w, cfg, root, prev, tls, errbuf, errbuf_len);
        if (err) {
            return err;
        }
    }
    if (cfg->cert.capath == NULL) {
        return 0;
    }
    w->capath = cfg->cert.capath;
    snprintf(host, sizeof(host), "%s%s", root ? root : "", w->capath);
    if (capath_signature(host, &w->capath_sig) != 0) {
        w->capath_sig = 0;
    }
    err = capath_load(host, tls, &st);
    if (err == -ENOMEM) {
        snprintf(errbuf, errbuf_len, "capath: out of memory");
        return err;
    }
    log_msg(LOG_INFO,
            "capath %s: %zu CA certificate%s and %zu CRL%s from %zu hashed file%s%s; each "
            "certificate of a client's chain is checked against its issuer's CRL where the "
            "directory or crl-verify has one (openvpn 2.6 calls capath experimental)",
            w->capath, st.n_certs, st.n_certs == 1 ? "" : "s", st.n_crls, st.n_crls == 1 ? "" : "s",
            st.n_files, st.n_files == 1 ? "" : "s",
            st.n_skipped ? " (some hashed files not used: logged above)" : "");
    return 0;
}
