/* server/control/tls_step.c: TLS handshake steps of the acceptor's sessions on libuv's thread
 * pool, and what runs TLS for a key state: driving it with what arrived, the end of a step,
 * reading the control-channel messages (key method 2, PUSH_REQUEST, EXIT ...), a failed TLS
 * session or negotiation.
 *
 * A full handshake costs the server a few ms of CPU in Mbed TLS (ECDHE, the client certificate's
 * and CertificateVerify's ECDSA verifications, our ECDSA signature), and nothing else in the
 * acceptor comes close. So each mbedtls_ssl_handshake() step runs as a uv_queue_work() job: as
 * many handshakes progress at once as the pool has threads (UV_THREADPOOL_SIZE, set by main.c
 * to the number of CPUs), while the acceptor thread goes on with reliability, ACKs, key-method 2
 * and every other session.
 *
 * Ownership: while ks->job is set the step owns ks->tls (its in/out queues too). The acceptor
 * holds ciphertext that arrives meanwhile in ks->held, moves none of the step's output, and
 * frees nothing: a key state cleared meanwhile (hand-window, session closed, server stopping)
 * hands its TLS session to the job, which frees it when the step returns.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/platform_util.h>

#include "proto/errors.h"
#include "proto/push.h"
#include "proto/tls_session.h"
#include "server/control/acceptor_decide.h"
#include "server/control/admission_decide.h"
#include "server/ops/mgmt.h"

#include "server/control/acceptor_internal.h"

#define TLS_HELD_MAX (256u * 1024u) /* same bound as tls_session_feed's */

struct tls_job {
    uv_work_t req;
    struct acceptor *a;
    struct ctl_session *cs;
    struct key_state *ks; /* NULL once the key state was cleared: only free tls */
    struct tls_session *tls;
    int ret;
    uint64_t step_us; /* how long the step ran on the pool */
    char err[256];
};

int acc_tls_feed(struct key_state *ks, const uint8_t *data, size_t len)
{
    if (!ks->job) {
        return tls_session_feed(ks->tls, data, len);
    }
    if (len > TLS_HELD_MAX - ks->held_len) {
        return -PE_NOSPACE;
    }
    if (ks->held_len + len > ks->held_cap) {
        size_t cap = ks->held_cap ? ks->held_cap : 2048;
        uint8_t *p;

        while (cap < ks->held_len + len) {
            cap *= 2;
        }
        p = realloc(ks->held, cap);
        if (!p) {
            return -PE_NOSPACE;
        }
        ks->held = p;
        ks->held_cap = cap;
    }
    memcpy(ks->held + ks->held_len, data, len);
    ks->held_len += len;
    return 0;
}

static void free_held(struct key_state *ks)
{
    free(ks->held);
    ks->held = NULL;
    ks->held_len = ks->held_cap = 0;
}

static void job_work(uv_work_t *req)
{
    struct tls_job *job = req->data;
    uint64_t t0 = uv_hrtime();

    pthread_rwlock_rdlock(&job->a->crypto.tls_conf_lock);
    job->ret = tls_session_handshake(job->tls, job->err, sizeof(job->err));
    pthread_rwlock_unlock(&job->a->crypto.tls_conf_lock);
    job->step_us = (uv_hrtime() - t0) / 1000u;
}

/* A handshake step took step_us on a TLS thread: the moving average of a step (1/8 of each new
 * one), for admission_decide_too_late, and the time of ks's handshake (NULL: cleared). */
static void note_step_time(struct acceptor *a, struct key_state *ks, uint64_t step_us)
{
    a->crypto.step_us = (a->crypto.step_us * 7 + step_us) / 8;
    if (ks) {
        ks->tls_us += step_us;
    }
}

/* A first handshake finished after hs_us on the TLS threads: the moving average of a handshake's
 * TLS cost (admission_decide_rate's floor). */
static void note_handshake_cost(struct acceptor *a, uint64_t hs_us)
{
    a->crypto.hs_us = (a->crypto.hs_us * 7 + hs_us) / 8;
}

void acc_admission_tick(struct acceptor *a, uint64_t now)
{
    struct acc_sessions *s = &a->sessions;
    size_t was = s->max_in_flight;

    if (now < s->next_rate_ms) {
        return;
    }
    uint64_t timeouts = a->stats.drop_handshake_timeout + a->stats.drop_too_late;

    s->hs_rate = admission_decide_rate(s->hs_rate, a->stats.handshakes_ok - s->connected_mark,
                                       a->crypto.n_tls_threads, a->crypto.hs_us,
                                       timeouts != s->timeouts_mark);
    s->connected_mark = a->stats.handshakes_ok;
    s->timeouts_mark = timeouts;
    s->next_rate_ms = now + 1000;
    s->max_in_flight = admission_decide_bound(s->configured_in_flight, s->hs_rate,
                                              (uint64_t)a->cfg->timers.hand_window_s * 1000u);
    /* (was 0: the first tick, at start-up, where setup_admission logs the bound) */
    if (was > 0 && s->max_in_flight != was &&
        (s->max_in_flight >= was * 2 || s->max_in_flight * 2 <= was)) {
        log_msg(LOG_INFO,
                "admission control: at most %zu TLS handshakes in flight (%" PRIu64
                " handshakes/s, %.1f ms of TLS work each)",
                s->max_in_flight, s->hs_rate, (double)a->crypto.hs_us / 1000.0);
    }
}

static void job_done(uv_work_t *req, int status)
{
    struct tls_job *job = req->data;
    struct acceptor *a = job->a;
    struct key_state *ks = job->ks;
    int ret = status == UV_ECANCELED ? -PE_TLS : job->ret;
    bool has_held;

    a->crypto.n_tls_jobs--;
    if (status != UV_ECANCELED) {
        note_step_time(a, ks, job->step_us);
    }
    if (!ks) {
        acc_tls_conf_put(job->tls->conf);
        tls_session_clear(job->tls);
        free(job->tls);
        free(job);
        return;
    }
    ks->job = NULL;
    if (a->is_stopping) {
        free_held(ks); /* the session is freed with the others when the loop ends */
        free(job);
        return;
    }
    has_held = ks->held_len > 0;
    if (has_held && tls_session_feed(ks->tls, ks->held, ks->held_len)) {
        snprintf(job->err, sizeof(job->err), "too much unread TLS data");
        ret = -PE_TLS;
    }
    free_held(ks);
    acc_tls_stepped(a, job->cs, ks, ret, job->err);
    if (ret == -PE_WANT_IO && has_held && job->cs->state != CS_CLOSING) {
        /* What arrived during the step may complete the next flight. */
        acc_tls_step(a, job->cs, ks);
    }
    free(job);
}

void acc_tls_step(struct acceptor *a, struct ctl_session *cs, struct key_state *ks)
{
    struct tls_job *job;

    if (ks->job) {
        return;
    }
    if (ks->tls->pk_req && ks->tls->pk_req->state == PK_EXT_WANTED && ks->tls->pk_req->is_asked) {
        return; /* waits for the management client's signature (pk_sign.c): nothing to do yet */
    }
    if (cs->is_in_flight && ks->key_id == 0 &&
        admission_decide_too_late(acc_now_ms(a), cs->hs_deadline_ms, a->crypto.n_tls_jobs,
                                  a->crypto.n_tls_threads, a->crypto.step_us)) {
        /* the client gives up (hand-window) before this handshake could finish: no TLS work
         * for it; a storm's client restarts its session and is admitted again */
        metrics_count_handshake(&a->mx, METRICS_HS_TIMEOUT, 0);
        acc_drop_pkt(a, &a->stats.drop_too_late, &cs->remote,
                     "handshake dropped: it cannot finish within the client's hand-window");
        acc_cs_close(a, cs, 0);
        return;
    }
    if (!ks->tls_us && !ks->is_tls_working && cs->is_in_flight && ks->key_id == 0) {
        ks->is_tls_working = true;
        a->stats.tls_started++;
    }
    job = calloc(1, sizeof(*job));
    if (job) {
        job->req.data = job;
        job->a = a;
        job->cs = cs;
        job->ks = ks;
        job->tls = ks->tls;
        if (!a->is_stopping && uv_queue_work(&a->loop, &job->req, job_work, job_done) == 0) {
            ks->job = job;
            a->crypto.n_tls_jobs++;
            return;
        }
        free(job);
    }
    /* No job: run the step here. */
    {
        char err[256] = "";
        int ret;

        pthread_rwlock_rdlock(&a->crypto.tls_conf_lock);
        uint64_t t0 = uv_hrtime();

        ret = tls_session_handshake(ks->tls, err, sizeof(err));
        pthread_rwlock_unlock(&a->crypto.tls_conf_lock);
        note_step_time(a, ks, (uv_hrtime() - t0) / 1000u);
        acc_tls_stepped(a, cs, ks, ret, err);
    }
}

void acc_tls_release(struct key_state *ks)
{
    free_held(ks);
    if (ks->job) {
        ks->job->ks = NULL; /* the step frees the session when it returns */
        ks->job = NULL;
    } else if (ks->tls) {
        acc_tls_conf_put(ks->tls->conf);
        tls_session_clear(ks->tls);
        free(ks->tls);
    }
    ks->tls = NULL;
}

static void handle_control_message(struct acceptor *a, struct ctl_session *cs,
                                   const struct key_state *ks, const char *msg)
{
    switch (control_msg_classify(msg, strlen(msg))) {
    case CONTROL_MSG_PUSH_REQUEST:
        if (cs->state != CS_ACTIVE || !cs->is_installed) {
            cs->push.is_requested = true;
        } else if (!cs->push.is_sent || acc_now_ms(a) - cs->push.sent_ms >= PUSH_REPEAT_IGNORE_MS) {
            acc_send_push_reply(a, cs);
        }
        break;
    case CONTROL_MSG_CR_RESPONSE:
        /* 2.6 push.c receive_cr_response: what follows "CR_RESPONSE," goes to the management
         * interface and client-crresponse as it came (its base64 is not checked) */
        acc_cr_response(a, cs, ks,
                        strlen(msg) >= strlen("CR_RESPONSE,") ? msg + strlen("CR_RESPONSE,") : "");
        break;
    case CONTROL_MSG_EXIT:
        acc_cs_log(a, cs, LOG_INFO, "client sent EXIT (explicit-exit-notify)");
        if (cs->state != CS_CLOSING) {
            /* once per client, as 2.6 push.c receive_exit_message tells the management
             * interface when it schedules the exit */
            mgmt_notify(a->mgmt, ">NOTIFY:info,remote-exit,EXIT");
        }
        acc_cs_close(a, cs, CLOSE_LINGER_MS);
        break;
    default:
        acc_cs_log(a, cs, LOG_DEBUG, "ignored control message '%.64s'", msg);
        break;
    }
}

void acc_ks_fail(struct acceptor *a, struct ctl_session *cs, struct key_state *ks, const char *why)
{
    if ((ks->key_id == 0 && !cs->peer) || ks == acc_primary_ks(cs)) {
        acc_cs_close(a, cs, 0);
        return;
    }
    acc_reneg_failed(a, cs, ks, why);
}

/* Read what ks's finished TLS session decrypted: the key-method-2 message, then control
 * messages. */
static void read_tls_app_data(struct acceptor *a, struct ctl_session *cs, struct key_state *ks)
{
    int ret;

    for (;;) {
        size_t n;

        ret = tls_session_read(ks->tls, a->app_buf, sizeof(a->app_buf) - 1, &n);
        if (ret) {
            acc_cs_log(a, cs, LOG_INFO, "key_id %u: TLS session closed by the peer", ks->key_id);
            acc_ks_fail(a, cs, ks, "TLS session closed by the peer");
            return;
        }
        if (n == 0) {
            return;
        }
        if (ks->state == KS_TLS && !ks->auth_wait) {
            acc_handle_key_method2(a, cs, ks, a->app_buf, n);
            /* The key-method-2 message in clear: pre_master, password. */
            mbedtls_platform_zeroize(a->app_buf, n);
            if (!ks->in_use || cs->state == CS_CLOSING) {
                return;
            }
            continue;
        }
        /* NUL-separated text messages (section 8.1), also while the credentials are checked
         * (PUSH_REQUEST, CR_RESPONSE); ones with control characters are dropped, as 2.6 does. */
        for (size_t off = 0; off < n;) {
            char msg[CONTROL_MSG_MAX];
            size_t consumed = 0, msg_len;

            if (control_msg_next(a->app_buf + off, n - off, &consumed, msg, sizeof(msg),
                                 &msg_len) == 0 &&
                msg_len > 0) {
                handle_control_message(a, cs, ks, msg);
            }
            off += consumed ? consumed : n - off;
        }
        mbedtls_platform_zeroize(a->app_buf, n); /* e.g. a challenge response */
    }
}

void acc_tls_stepped(struct acceptor *a, struct ctl_session *cs, struct key_state *ks, int ret,
                     const char *err)
{
    acc_cs_touch(a, cs); /* the step's output and the key state's new state */
    if (cs->state == CS_CLOSING) {
        return;
    }
    if (ret == -PE_WANT_IO) {
        acc_flush(a, cs);
        return;
    }
    if (ret == -PE_WANT_SIGN) {
        acc_pk_sign_wanted(a, cs, ks);
        return;
    }
    if (ret) {
        a->stats.handshakes_failed++;
        if (ks->key_id == 0 && !cs->peer) {
            metrics_count_handshake(&a->mx, METRICS_HS_TLS_ERROR, 0);
        }
        if (ks->key_id == 0) {
            acc_cs_log(a, cs, LOG_WARN, "%s", err);
        } else {
            acc_cs_log(a, cs, LOG_WARN, "renegotiation (key_id %u): %s", ks->key_id, err);
        }
        acc_flush_ks(a, cs, ks); /* deliver the TLS alert */
        acc_ks_fail(a, cs, ks, "TLS handshake failed");
        return;
    }
    if (ks->key_id == 0 && cs->is_in_flight && ks->is_tls_working) {
        /* the TLS work was not lost (the session stays in flight until it is connected) */
        ks->is_tls_working = false;
        a->stats.tls_done++;
        note_handshake_cost(a, ks->tls_us);
    }
    read_tls_app_data(a, cs, ks);
    if (cs->state != CS_CLOSING) {
        acc_flush(a, cs);
    }
}

void acc_drive_tls(struct acceptor *a, struct ctl_session *cs, struct key_state *ks)
{
    if (ks->job) {
        return; /* the running step's end looks at what arrived meanwhile */
    }
    if (!ks->tls->is_handshake_done) {
        acc_tls_step(a, cs, ks);
        return;
    }
    read_tls_app_data(a, cs, ks);
}
