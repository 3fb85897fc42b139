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

#include "server/log/log.h"

#define CRL_CHECK_MS 1000
#define CRL_MAX_LEN (16 << 20) /* a CRL of a large CA can be several MB */

int crl_watch_init(struct crl_watch *w, const struct config *cfg, struct tls_server_conf *tls,
                   char *errbuf, size_t errbuf_len)
{
    struct stat st;

    memset(w, 0, sizeof(*w));
    if (cfg->tls.crl.data == NULL) {
        return 0;
    }
    if (tls_server_conf_set_crl(tls, (const uint8_t *)cfg->tls.crl.data, cfg->tls.crl.len + 1,
                                errbuf, errbuf_len)) {
        return -EINVAL;
    }
    w->path = cfg->tls.crl_file;
    if (w->path != NULL) {
        char host[PATH_MAX];

        /* before a chroot, the jail's file is seen from outside (config.h chroot_dir) */
        snprintf(host, sizeof(host), "%s%s", cfg->proc.chroot_dir ? cfg->proc.chroot_dir : "",
                 w->path);
        if (stat(host, &st) == 0) {
            w->mtime = st.st_mtim;
            w->size = st.st_size;
        }
    }
    log_msg(LOG_INFO, "crl-verify: client certificates are checked against %s",
            cfg->tls.crl.origin ? cfg->tls.crl.origin : "the CRL");
    return 0;
}

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

bool crl_watch_tick(struct crl_watch *w, struct tls_server_conf *tls, pthread_rwlock_t *lock,
                    uint64_t now_ms)
{
    int ret;
    char err[256] = "", *text = NULL;
    struct stat st;
    ssize_t len;

    if (w->path == NULL || now_ms < w->next_check_ms) {
        return false;
    }
    w->next_check_ms = now_ms + CRL_CHECK_MS;
    if (stat(w->path, &st) != 0) {
        return false; /* being replaced; the next look finds it */
    }
    if (st.st_mtim.tv_sec == w->mtime.tv_sec && st.st_mtim.tv_nsec == w->mtime.tv_nsec &&
        st.st_size == w->size) {
        return false;
    }
    w->mtime = st.st_mtim;
    w->size = st.st_size;
    len = read_all(w->path, &text);
    if (len < 0) {
        log_msg(LOG_WARN, "crl-verify: cannot read %s: %s; the previous CRL stays in use", w->path,
                strerror((int)-len));
        return false;
    }
    pthread_rwlock_wrlock(lock); /* no handshake step may read the CRL meanwhile */
    ret = tls_server_conf_set_crl(tls, (const uint8_t *)text, (size_t)len + 1, err, sizeof(err));
    pthread_rwlock_unlock(lock);
    if (ret) {
        log_msg(LOG_WARN, "crl-verify: %s: %s; the previous CRL stays in use", w->path, err);
    } else {
        log_msg(LOG_INFO, "crl-verify: %s changed, CRL reloaded", w->path);
    }
    free(text);
    return ret == 0;
}
