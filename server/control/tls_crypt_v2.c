/* server/control/tls_crypt_v2.c: the acceptor's side of tls-crypt-v2: the client key (Kc)
 * unwrapped from the WKc a client appends to its P_CONTROL_HARD_RESET_CLIENT_V3 and
 * P_CONTROL_WKC_V1, tls-crypt-v2-max-age, and tls-crypt-v2-verify run before any TLS work of
 * the session. Facts from openvpn 2.6 tls_crypt.c (tls_crypt_v2_extract_client_key,
 * tls_crypt_v2_verify_metadata), openvpn 2.7 (tls_crypt_v2_check_client_key_age) and
 * doc/tls-crypt-v2.txt. Acceptor thread only. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mbedtls/platform_util.h>

#include "proto/errors.h"
#include "proto/tls_crypt_v2.h"
#include "server/hooks/hooks.h"

#include "server/control/acceptor_internal.h"

#define TEMP_PATH_MAX 512
#define SECONDS_PER_DAY 86400

/* A session whose client key is being vetted by tls-crypt-v2-verify. */
struct acc_v2_verify {
    struct acceptor *a;
    struct ctl_session *cs;
    struct hook_run *run;
    char metadata_file[TEMP_PATH_MAX];
};

int acc_v2_init(struct acceptor *a, char *errbuf, size_t errbuf_len)
{
    const struct config_blob *b = &a->cfg->tls.tls_crypt_v2_key;

    a->crypto.is_tls_crypt_v2 = a->cfg->tls.has_tls_crypt_v2;
    if (!a->crypto.is_tls_crypt_v2) {
        return 0;
    }
    if (tls_crypt_v2_server_key_parse(b->data, b->len, &a->crypto.v2_key) != 0) {
        snprintf(errbuf, errbuf_len, "%s: not a tls-crypt-v2 server key",
                 b->origin ? b->origin : "tls-crypt-v2");
        return -EINVAL;
    }
    return 0;
}

void acc_v2_clear(struct acceptor *a)
{
    tls_crypt_v2_server_key_wipe(&a->crypto.v2_key);
}

/* tls-crypt-v2-max-age (2.7): only keys with a timestamp, not older than the limit. */
static const char *check_age(const struct acceptor *a, const uint8_t *md, size_t md_len)
{
    int64_t made_s;

    if (a->cfg->tls.tls_crypt_v2_max_age_days <= 0) {
        return NULL;
    }
    if (tls_crypt_v2_metadata_timestamp(md, md_len, &made_s) != 0) {
        return "tls-crypt-v2 client key has no timestamp (tls-crypt-v2-max-age)";
    }
    if ((int64_t)time(NULL) - made_s >
        (int64_t)a->cfg->tls.tls_crypt_v2_max_age_days * SECONDS_PER_DAY) {
        return "tls-crypt-v2 client key is too old (tls-crypt-v2-max-age)";
    }
    return NULL;
}

const char *acc_v2_open_wkc(struct acceptor *a, const uint8_t *buf, size_t len,
                            struct acc_v2_packet *out)
{
    uint8_t kc[TLS_CRYPT_V2_CLIENT_KEY_LEN];
    size_t off;
    const char *why = NULL;
    int err;

    out->wrapped_len = 0;
    out->md_len = 0;
    if (tls_crypt_v2_locate_wkc(buf, len, &off) != 0) {
        return "tls-crypt-v2: no well-formed wrapped client key (WKc) at the end of the packet";
    }
    err = tls_crypt_v2_unwrap(&a->crypto.v2_key, buf + off, len - off, kc, out->metadata,
                              sizeof(out->metadata), &out->md_len);
    if (err) {
        return err == -PE_AUTH ? "tls-crypt-v2: wrapped client key (WKc) did not authenticate "
                                 "(made for another server key, or altered)"
                               : "tls-crypt-v2: malformed wrapped client key (WKc)";
    }
    why = check_age(a, out->metadata, out->md_len);
    if (!why &&
        tls_wrap_init(&out->wrap, TLS_WRAP_CRYPT, kc, CONFIG_KEY_DIRECTION_NONE, NULL, true) != 0) {
        why = "tls-crypt-v2: cannot set up the client key";
    }
    mbedtls_platform_zeroize(kc, sizeof(kc));
    if (why) {
        tls_wrap_wipe(&out->wrap);
        return why;
    }
    out->wrapped_len = off;
    return NULL;
}

void acc_v2_packet_wipe(struct acc_v2_packet *p)
{
    tls_wrap_wipe(&p->wrap);
    mbedtls_platform_zeroize(p->metadata, sizeof(p->metadata));
}

static void verify_free(struct acc_v2_verify *v)
{
    if (v->metadata_file[0]) {
        unlink(v->metadata_file);
    }
    free(v);
}

static void on_verify_done(void *ctx, const struct hook_result *res)
{
    struct acc_v2_verify *v = ctx;
    struct acceptor *a = v->a;
    struct ctl_session *cs = v->cs;

    cs->wrap.v2_verify = NULL;
    verify_free(v);
    if (!res->is_ok) {
        a->stats.drop_v2_refused++;
        acc_cs_log(a, cs, LOG_WARN, "tls-crypt-v2-verify refused the client key: %s", res->why);
        acc_cs_close(a, cs, 0);
        return;
    }
    acc_cs_log(a, cs, LOG_DEBUG, "tls-crypt-v2-verify accepted the client key");
    acc_session_pump(a, cs, &cs->ks[cs->primary]);
}

static int write_metadata(const char *path, const uint8_t *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
    size_t done = 0;

    if (fd < 0) {
        return -errno;
    }
    while (done < len) {
        ssize_t n = write(fd, data + done, len - done);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            int err = n < 0 ? -errno : -EIO;

            close(fd);
            return err;
        }
        done += (size_t)n;
    }
    return close(fd) == 0 ? 0 : -errno;
}

int acc_v2_verify_start(struct acceptor *a, struct ctl_session *cs, const uint8_t *md,
                        size_t md_len)
{
    const struct config *cfg = a->cfg;
    struct script_env env = {0};
    struct hook_req req;
    struct acc_v2_verify *v;
    char type[4];
    int err;

    if (!cfg->hooks.tls_crypt_v2_verify) {
        return 0;
    }
    if (md_len < 1) {
        return -EINVAL;
    }
    v = calloc(1, sizeof(*v));
    if (!v) {
        return -ENOMEM;
    }
    v->a = a;
    v->cs = cs;
    /* As 2.6: the file holds the metadata without its type byte, which goes in metadata_type. */
    err = script_make_temp(cfg->hooks.tmp_dir, "tls-crypt-v2-metadata", v->metadata_file,
                           sizeof(v->metadata_file));
    err = err ? err : write_metadata(v->metadata_file, md + 1, md_len - 1);
    snprintf(type, sizeof(type), "%u", (unsigned)md[0]);
    err = err ? err : script_env_add(&env, "metadata_type", type);
    err = err ? err : script_env_add(&env, "metadata_file", v->metadata_file);
    if (!err) {
        memset(&req, 0, sizeof(req));
        req.what = "tls-crypt-v2-verify";
        req.script = cfg->hooks.tls_crypt_v2_verify;
        req.script_type = "tls-crypt-v2-verify";
        req.env = &env;
        err = hook_run_start(a->checks.hooks, &req, on_verify_done, v, &v->run);
    }
    script_env_clear(&env);
    if (err) {
        verify_free(v);
        return err;
    }
    cs->wrap.v2_verify = v;
    return 1;
}

void acc_v2_on_free(struct acceptor *a, struct ctl_session *cs)
{
    (void)a;
    if (cs->wrap.v2_verify) {
        hook_run_cancel(cs->wrap.v2_verify->run);
        verify_free(cs->wrap.v2_verify);
        cs->wrap.v2_verify = NULL;
    }
    if (cs->wrap.has_kc) {
        tls_wrap_wipe(&cs->wrap.kc);
        cs->wrap.has_kc = false;
    }
}
