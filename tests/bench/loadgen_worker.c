/* tests/bench/loadgen_worker.c: one load-generator thread and its clients. */
#include "tests/bench/loadgen_worker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/errors.h"
#include "tests/bench/loadgen_client.h"

#define TICK_MS 20
/* A quiet connected client (loadgen_client_is_quiet) is ticked every QUIET_TICKS ticks (200 ms):
 * its keepalive and ping-restart count whole seconds, and ticking 50,000 of them every 20 ms
 * cost the load generator more CPU than their handshakes, taken from the server it measures on
 * the same machine. A tick looks only at the busy list (clients that are not quiet) and at one
 * slice of QUIET_TICKS of the others: even checking whether each of 50,000 clients is quiet at
 * every tick was about 30% of a CPU. */
#define QUIET_TICKS 10
#define MAX_STARTS_PER_TICK 256 /* keeps the loop answering while a big batch starts */

uint64_t loadgen_now_ms(void)
{
    return uv_hrtime() / 1000000u;
}

enum loadgen_phase loadgen_worker_phase(const struct loadgen_worker *w)
{
    return (enum loadgen_phase)atomic_load_explicit(&w->run->phase, memory_order_acquire);
}

void loadgen_worker_settled(struct loadgen_worker *w, bool connected, uint64_t now_ms)
{
    if (connected) {
        uint64_t prev = atomic_load(&w->run->last_connect_ms);

        while (prev < now_ms && !atomic_compare_exchange_weak(&w->run->last_connect_ms, &prev,
                                                              (uint_least64_t)now_ms)) {
        }
    }
    w->n_settled++;
    atomic_fetch_add(&w->run->n_settled, 1);
}

void loadgen_worker_wake(struct loadgen_worker *w, struct loadgen_client *c)
{
    if (!c->is_busy && w->busy) {
        c->is_busy = true;
        w->busy[w->n_busy++] = c; /* at most n_clients: each client once */
    }
}

void loadgen_worker_handle_closed(struct loadgen_worker *w)
{
    w->n_open_handles--;
}

int loadgen_worker_init(struct loadgen_worker *w, int index, int n_workers, struct loadgen_run *run)
{
    const struct loadgen_config *cfg = run->cfg;
    char pers[32];
    int err;

    w->index = index;
    w->n_workers = n_workers;
    w->cfg = cfg;
    w->run = run;
    mbedtls_entropy_init(&w->entropy);
    mbedtls_ctr_drbg_init(&w->drbg);
    snprintf(pers, sizeof(pers), "ovpnd-loadgen %d", index);
    if (mbedtls_ctr_drbg_seed(&w->drbg, mbedtls_entropy_func, &w->entropy,
                              (const unsigned char *)pers, strlen(pers))) {
        snprintf(w->errbuf, sizeof(w->errbuf), "cannot seed the random generator");
        return -1;
    }
    err = tls_client_conf_init(&w->tls, cfg->ca.data, cfg->ca.len, cfg->cert.data, cfg->cert.len,
                               cfg->key.data, cfg->key.len, true, mbedtls_ctr_drbg_random, &w->drbg,
                               w->errbuf, sizeof(w->errbuf));
    if (err) {
        return -1;
    }
    err = tls_wrap_init(&w->wrap, cfg->wrap_mode, cfg->wrap_key, cfg->key_direction, cfg->auth,
                        false);
    if (err) {
        snprintf(w->errbuf, sizeof(w->errbuf), "tls-auth/tls-crypt setup: %s", proto_strerror(err));
        return -1;
    }
    if (loadgen_options_string(cfg, w->options_string, sizeof(w->options_string)) ||
        loadgen_peer_info(cfg, w->peer_info, sizeof(w->peer_info))) {
        snprintf(w->errbuf, sizeof(w->errbuf), "cannot build the options string (--cipher?)");
        return -1;
    }
    w->n_clients = (cfg->n_clients - (size_t)index + (size_t)n_workers - 1) / (size_t)n_workers;
    w->clients = calloc(w->n_clients ? w->n_clients : 1, sizeof(*w->clients));
    w->busy = calloc(w->n_clients ? w->n_clients : 1, sizeof(*w->busy));
    if (!w->clients || !w->busy) {
        snprintf(w->errbuf, sizeof(w->errbuf), "out of memory for %zu clients", w->n_clients);
        return -1;
    }
    for (size_t k = 0; k < w->n_clients; k++) {
        loadgen_client_init(&w->clients[k], w, (size_t)index + k * (size_t)n_workers);
    }
    err = uv_loop_init(&w->loop);
    if (err) {
        snprintf(w->errbuf, sizeof(w->errbuf), "libuv: %s", uv_strerror(err));
        return -1;
    }
    uv_timer_init(&w->loop, &w->tick); /* cannot fail on an initialised loop */
    w->has_loop = true;
    w->tick.data = w;
    w->n_open_handles = 1;
    return 0;
}

static void on_tick_closed(uv_handle_t *h)
{
    loadgen_worker_handle_closed(h->data);
}

static void start_due_clients(struct loadgen_worker *w, uint64_t now)
{
    double rate = w->cfg->rate_per_s;
    size_t limit = w->cfg->concurrency;

    if (limit > 0) { /* this worker's share of --concurrency, at least one */
        limit = (limit + (size_t)w->n_workers - 1) / (size_t)w->n_workers;
    }
    for (int n = 0; n < MAX_STARTS_PER_TICK && w->n_started < w->n_clients; n++) {
        struct loadgen_client *c = &w->clients[w->n_started];

        if (rate > 0 && now < w->run->t0_ms + (uint64_t)((double)c->index * 1000.0 / rate)) {
            break;
        }
        if (limit > 0 && w->n_started - w->n_settled >= limit) {
            break;
        }
        loadgen_client_start(c, now);
        loadgen_worker_wake(w, c);
        w->n_started++;
    }
}

static void close_all(struct loadgen_worker *w)
{
    w->is_closing = true;
    uv_timer_stop(&w->tick);
    uv_close((uv_handle_t *)&w->tick, on_tick_closed);
    for (size_t k = 0; k < w->n_clients; k++) {
        loadgen_client_close(&w->clients[k]);
    }
}

/* Tick every busy client; those now quiet or final leave the list. */
static void tick_busy(struct loadgen_worker *w, uint64_t now)
{
    for (size_t i = 0; i < w->n_busy;) {
        struct loadgen_client *c = w->busy[i];

        loadgen_client_tick(c, now);
        if (loadgen_client_is_final(c) || loadgen_client_is_quiet(c)) {
            c->is_busy = false;
            w->busy[i] = w->busy[--w->n_busy];
        } else {
            i++;
        }
    }
}

static void on_tick(uv_timer_t *t)
{
    struct loadgen_worker *w = t->data;
    enum loadgen_phase phase = loadgen_worker_phase(w);
    uint64_t now = loadgen_now_ms();
    bool all_final = true;

    if (phase == LOADGEN_PHASE_RAMP) {
        start_due_clients(w, now);
    } else {
        /* The ramp was cut short (signal): clients not started by now never will be. */
        for (; w->n_started < w->n_clients; w->n_started++) {
            loadgen_client_abandon(&w->clients[w->n_started]);
        }
    }
    w->n_ticks++;
    if (phase >= LOADGEN_PHASE_EXIT) { /* every client leaves: tick them all */
        for (size_t k = 0; k < w->n_started; k++) {
            loadgen_client_tick(&w->clients[k], now);
            all_final = all_final && loadgen_client_is_final(&w->clients[k]);
        }
    } else {
        tick_busy(w, now);
        /* this tick's slice of the others: each is ticked every QUIET_TICKS ticks */
        for (size_t k = w->n_ticks % QUIET_TICKS; k < w->n_started; k += QUIET_TICKS) {
            struct loadgen_client *c = &w->clients[k];

            if (!c->is_busy) {
                loadgen_client_tick(c, now);
                if (!loadgen_client_is_final(c) && !loadgen_client_is_quiet(c)) {
                    loadgen_worker_wake(w, c); /* e.g. a ping-restart began a new attempt */
                }
            }
        }
        all_final = false;
    }
    if (phase == LOADGEN_PHASE_EXIT && all_final && w->n_started == w->n_clients) {
        close_all(w);
    }
}

static void worker_main(void *arg)
{
    struct loadgen_worker *w = arg;

    if (uv_timer_start(&w->tick, on_tick, 0, TICK_MS) == 0) {
        uv_run(&w->loop, UV_RUN_DEFAULT);
    }
    atomic_fetch_add(&w->run->n_workers_done, 1);
}

int loadgen_worker_start(struct loadgen_worker *w)
{
    return uv_thread_create(&w->thread, worker_main, w);
}

void loadgen_worker_join(struct loadgen_worker *w)
{
    uv_thread_join(&w->thread);
}

void loadgen_worker_clear(struct loadgen_worker *w)
{
    if (w->has_loop) {
        if (!w->is_closing) {
            close_all(w); /* never ran to the end: the handles still need their close callbacks */
        }
        uv_run(&w->loop, UV_RUN_DEFAULT);
        uv_loop_close(&w->loop);
        w->has_loop = false;
    }
    free(w->clients);
    w->clients = NULL;
    free(w->busy);
    w->busy = NULL;
    tls_wrap_wipe(&w->wrap);
    tls_server_conf_clear(&w->tls);
    mbedtls_ctr_drbg_free(&w->drbg);
    mbedtls_entropy_free(&w->entropy);
}
