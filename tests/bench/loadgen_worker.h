/* tests/bench/loadgen_worker.h: one load-generator thread: a libuv loop that runs its share of
 * the simulated clients (global index i belongs to worker i % n_workers).
 *
 * The main thread drives the run through struct loadgen_run (phases and counters, atomics);
 * everything else in a worker, including its clients, belongs to the worker's thread.
 */
#ifndef TESTS_BENCH_LOADGEN_WORKER_H
#define TESTS_BENCH_LOADGEN_WORKER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <uv.h>

#include "proto/comp.h"
#include "proto/key_method.h"
#include "proto/tls_session.h"
#include "proto/tls_wrap.h"
#include "tests/bench/loadgen_config.h"

struct loadgen_client;

enum loadgen_phase {
    LOADGEN_PHASE_RAMP = 0, /* clients start at --rate, until each is connected or failed */
    LOADGEN_PHASE_STEADY,   /* --duration seconds of data from every connected client */
    LOADGEN_PHASE_DRAIN,    /* no new data; late echo replies are still counted */
    LOADGEN_PHASE_EXIT,     /* every connected client leaves with an explicit exit */
};

/* Shared by the main thread and all workers. */
struct loadgen_run {
    const struct loadgen_config *cfg;
    uint64_t t0_ms;          /* loadgen_now_ms() at the start; client i starts at t0 + i / rate */
    atomic_int phase;        /* enum loadgen_phase, only ever increases; set by the main thread */
    atomic_size_t n_settled; /* clients connected or failed before connecting */
    atomic_uint_least64_t last_connect_ms; /* latest time a client got connected */
    atomic_int n_workers_done;
};

#define LOADGEN_RX_BUF_LEN 65536
#define LOADGEN_CTL_BUF_LEN 2048
#define LOADGEN_APP_BUF_LEN 16384 /* one full TLS record */
#define LOADGEN_DATA_BUF_LEN 2048

struct loadgen_worker {
    int index;
    int n_workers;
    const struct loadgen_config *cfg;
    struct loadgen_run *run;
    uv_loop_t loop;
    uv_timer_t tick;
    uv_thread_t thread;
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context drbg;
    struct tls_server_conf tls; /* a client configuration (tls_client_conf_init) */
    struct tls_wrap_ctx wrap;
    char options_string[KEY_METHOD2_OPTIONS_MAX];
    char peer_info[LOADGEN_PEER_INFO_MAX];
    struct loadgen_client *clients; /* n_clients, this worker's share */
    size_t n_clients;
    size_t n_started;
    size_t n_settled; /* of this worker's clients: connected, or failed before connecting */
    size_t n_open_handles;
    uint64_t exit_start_ms; /* when this worker's tick first saw the exit phase (0: not yet) */
    uint64_t n_ticks;       /* ticks so far (which quiet clients a tick looks at) */
    struct loadgen_client **busy; /* clients ticked every tick (not quiet), n_busy of n_clients */
    size_t n_busy;
    bool has_loop; /* loop and tick initialised */
    bool is_closing;
    char errbuf[256]; /* set when loadgen_worker_init fails */
    /* Scratch space; the loop runs one callback at a time. */
    uint8_t rx_buf[LOADGEN_RX_BUF_LEN];
    uint8_t ctl_plain[LOADGEN_CTL_BUF_LEN];
    uint8_t ctl_wire[LOADGEN_CTL_BUF_LEN];
    uint8_t app_buf[LOADGEN_APP_BUF_LEN + 1];
    uint8_t data_plain[LOADGEN_DATA_BUF_LEN];
    uint8_t data_framed[LOADGEN_DATA_BUF_LEN];
    uint8_t data_wire[LOADGEN_DATA_BUF_LEN];
    uint8_t comp_out[COMP_WORK_OUT_LEN(LOADGEN_DATA_BUF_LEN)]; /* --lz4-v2-forge */
};

/* Monotonic milliseconds, comparable between threads. */
uint64_t loadgen_now_ms(void);

/* Set up w (caller-owned, zeroed) as worker index of n_workers: its loop, DRBG, TLS client
 * configuration, wrapping key and its clients (not started). Main thread. Returns 0 or -1 with
 * w->errbuf set; call loadgen_worker_clear() in both cases. */
int loadgen_worker_init(struct loadgen_worker *w, int index, int n_workers,
                        struct loadgen_run *run);

/* Start the worker's thread; it returns once all its clients are done or failed in the exit
 * phase and their sockets are closed. Returns 0 or -errno. */
int loadgen_worker_start(struct loadgen_worker *w);

/* Wait for the thread started by loadgen_worker_start. Main thread. */
void loadgen_worker_join(struct loadgen_worker *w);

/* Release everything (after join, or after a failed init). */
void loadgen_worker_clear(struct loadgen_worker *w);

/* Worker thread: one more client is connected or failed before connecting. */
void loadgen_worker_settled(struct loadgen_worker *w, bool connected, uint64_t now_ms);

/* Worker thread: c has work that cannot wait for its next quiet tick (it started, or a control
 * packet came): tick it every tick until it is quiet again. Idempotent. */
void loadgen_worker_wake(struct loadgen_worker *w, struct loadgen_client *c);

/* Worker thread: a handle of a client was closed (uv_close callback bookkeeping). */
void loadgen_worker_handle_closed(struct loadgen_worker *w);

/* The current phase (any thread). */
enum loadgen_phase loadgen_worker_phase(const struct loadgen_worker *w);

#endif /* TESTS_BENCH_LOADGEN_WORKER_H */
