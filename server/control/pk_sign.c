/* server/control/pk_sign.c: management-external-key on the acceptor: handshakes that wait for
 * the management client's signature (proto/pk_external.h), one request out at a time; with
 * pkcs11-providers the requests go to the token instead (pk_token.c).
 *
 * openvpn 2.6 (manage.c management_query_pk_sig) sends ">PK_SIGN:DATA,ALG" and waits for
 * `pk-sig` ... END; the answer names no request, so only one may be out: the others wait here in
 * order. 2.6 stops everything while it waits; here only the handshakes that need a signature
 * wait (their steps return and free the TLS thread), and everything else goes on. A request
 * unanswered after PK_SIGN_TIMEOUT_MS fails its handshake, and the next one goes out; an answer
 * that is not a valid signature of what was asked fails it too (it is checked against the
 * certificate's public key before Mbed TLS sees it). Acceptor thread only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/base64.h>
#include <mbedtls/platform_util.h>

#include "proto/errors.h"
#include "proto/pk_external.h"
#include "proto/tls_session.h"
#include "server/ops/mgmt.h"

#include "server/control/acceptor_internal.h"

/* The b64 of PK_EXT_DATA_MAX bytes and its terminating NUL. */
#define B64_MAX (4 * ((PK_EXT_DATA_MAX + 2) / 3) + 1)

struct key_state *acc_pk_sign_find(struct acceptor *a, unsigned long cid, unsigned kid,
                                   struct ctl_session **cs_out)
{
    struct ctl_session *cs = acc_mgmt_find_cid(a, cid);

    if (!cs) {
        return NULL;
    }
    for (int i = 0; i < 2; i++) {
        struct key_state *ks = &cs->ks[i];

        /* (no step runs meanwhile: acc_tls_step waits for the answer) */
        if (ks->in_use && ks->kid == kid && ks->tls && !ks->job && ks->tls->pk_req &&
            ks->tls->pk_req->state == PK_EXT_WANTED) {
            *cs_out = cs;
            return ks;
        }
    }
    return NULL;
}

static struct key_state *find_ks(struct acceptor *a, const struct acc_pk_wait *w,
                                 struct ctl_session **cs_out)
{
    return acc_pk_sign_find(a, w->cid, w->kid, cs_out);
}

void acc_pk_sign_fail(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
                      const char *why)
{
    acc_cs_log(a, cs, LOG_WARN, "%s: the TLS handshake fails", why);
    pk_external_fail(ks->tls->pk_req);
    acc_tls_step(a, cs, ks);
}

/* ks's signature will not come: its next step fails the handshake (and says so). */
static void fail_one(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
                     const char *why)
{
    char line[300];

    snprintf(line, sizeof(line), "management-external-key: %s", why);
    acc_pk_sign_fail(a, cs, ks, line);
}

/* Send the next waiting request, unless one is out. */
static void send_next(struct acceptor *a)
{
    struct acc_pk_sign *p = &a->pk_sign;

    while (!p->is_out && p->n > 0) {
        struct acc_pk_wait w = p->q[0];
        struct ctl_session *cs = NULL;
        struct key_state *ks;
        uint8_t data[PK_EXT_DATA_MAX];
        char b64[B64_MAX], alg[64];
        size_t len, b64_len;
        int err;

        memmove(p->q, p->q + 1, (p->n - 1) * sizeof(*p->q));
        p->n--;
        ks = find_ks(a, &w, &cs);
        if (!ks) {
            continue; /* the session ended meanwhile */
        }
        if (!a->mgmt || !mgmt_has_clients(a->mgmt)) {
            fail_one(a, cs, ks, "no management client is connected to sign");
            continue;
        }
        err = pk_external_request(&ks->tls->conf->key, ks->tls->pk_req, data, sizeof(data), &len,
                                  alg, sizeof(alg));
        if (err ||
            mbedtls_base64_encode((unsigned char *)b64, sizeof(b64), &b64_len, data, len) != 0) {
            fail_one(a, cs, ks, "the data to sign cannot be encoded");
            continue;
        }
        mgmt_pk_sign(a->mgmt, b64, alg);
        p->is_out = true;
        p->out = w;
        p->sent_ms = acc_now_ms(a);
    }
}

void acc_pk_sign_wanted(struct acceptor *a, struct ctl_session *cs, struct key_state *ks)
{
    struct acc_pk_sign *p = &a->pk_sign;
    struct pk_ext_req *r = ks->tls->pk_req;

    if (acc_pk_token_is_on(a)) {
        acc_pk_token_wanted(a, cs, ks);
        return;
    }
    acc_flush(a, cs); /* ServerHello and Certificate go out meanwhile */
    if (r->is_asked) {
        return; /* a step ran again before the answer: it is already waiting */
    }
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        struct acc_pk_wait *q = realloc(p->q, cap * sizeof(*q));

        if (!q) {
            fail_one(a, cs, ks, "out of memory");
            return;
        }
        p->q = q;
        p->cap = cap;
    }
    r->is_asked = true;
    p->q[p->n++] = (struct acc_pk_wait){.cid = cs->cid, .kid = ks->kid};
    send_next(a);
}

bool acc_pk_sign_answer(struct acceptor *a, const char *b64)
{
    struct acc_pk_sign *p = &a->pk_sign;
    struct ctl_session *cs = NULL;
    struct key_state *ks;
    uint8_t sig[PK_EXT_SIG_MAX];
    size_t len = 0;
    bool ok = false;

    if (!p->is_out) {
        return false;
    }
    p->is_out = false;
    ks = find_ks(a, &p->out, &cs);
    if (ks) {
        ok = mbedtls_base64_decode(sig, sizeof(sig), &len, (const unsigned char *)b64,
                                   strlen(b64)) == 0 &&
             pk_external_answer(&ks->tls->conf->key, ks->tls->pk_req, sig, len) == 0;
        if (ok) {
            acc_cs_log(a, cs, LOG_DEBUG, "management-external-key: signature received");
            acc_tls_step(a, cs, ks);
        } else {
            fail_one(a, cs, ks,
                     "the management client's answer is not a valid signature of what was asked");
        }
    } else {
        log_msg(LOG_INFO,
                "management-external-key: a signature came for CID %lu, which no "
                "longer waits for one",
                p->out.cid);
    }
    send_next(a);
    return ok;
}

void acc_pk_sign_tick(struct acceptor *a, uint64_t now_ms)
{
    struct acc_pk_sign *p = &a->pk_sign;
    struct ctl_session *cs = NULL;
    struct key_state *ks;

    if (!p->is_out || now_ms - p->sent_ms < PK_SIGN_TIMEOUT_MS) {
        return;
    }
    p->is_out = false;
    mgmt_pk_sign_cancel(a->mgmt);
    ks = find_ks(a, &p->out, &cs);
    if (ks) {
        char why[96];

        snprintf(why, sizeof(why), "no signature from the management client within %d s",
                 PK_SIGN_TIMEOUT_MS / 1000);
        fail_one(a, cs, ks, why);
    }
    send_next(a);
}

void acc_pk_sign_free(struct acceptor *a)
{
    free(a->pk_sign.q);
    memset(&a->pk_sign, 0, sizeof(a->pk_sign));
}
