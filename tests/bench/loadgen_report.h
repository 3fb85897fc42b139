/* tests/bench/loadgen_report.h: the load generator's results: totals over all clients, the
 * stdout summary and the --json file.
 *
 * Main thread, after every worker thread was joined (client state is then no longer changing).
 */
#ifndef TESTS_BENCH_LOADGEN_REPORT_H
#define TESTS_BENCH_LOADGEN_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tests/bench/loadgen_worker.h"

#define LOADGEN_REPORT_MAX_REASONS 16

struct loadgen_reason_count {
    const char *reason; /* a client's fail_reason (static string) */
    size_t n;
};

struct loadgen_report {
    size_t clients;
    size_t connected;         /* reached the data phase (PUSH_REPLY applied, keys installed) */
    size_t failed;            /* ended FAILED, including never started */
    size_t completed;         /* left with a clean explicit exit */
    size_t clients_with_echo; /* at least one echo reply came back */
    bool all_connected;
    double connect_all_secs;   /* first start to last connect; meaningful when all_connected */
    double handshakes_per_sec; /* connected / (first start to last connect) */
    double connect_avg_ms;     /* mean time from a client's start to its connect */
    double steady_secs;        /* measured length of the steady phase */
    double data_pps;           /* echo replies received in the steady phase per second */
    uint64_t sent, echoed, echoed_steady, min_echoed;
    double rtt_avg_ms;
    uint64_t restarts, resets_sent; /* --retry: sessions started over; hard resets sent */
    uint64_t push_replies, push_requests, pings_rx, pings_tx, retransmits, drops, early_data,
        other_rx, echo_answers, send_errors, soft_resets_ignored, forged, decompressed;
    bool has_rss;
    long server_rss_kb; /* VmRSS of --server-pid at the end of the steady phase */
    double rss_per_client_kb;
    struct loadgen_reason_count reasons[LOADGEN_REPORT_MAX_REASONS];
    size_t n_reasons;
};

/* Sum up the clients of all workers. steady_secs: how long the steady phase lasted; rss_kb: the
 * server's VmRSS (negative when not measured). */
void loadgen_report_collect(struct loadgen_report *r, const struct loadgen_worker *workers,
                            int n_workers, const struct loadgen_run *run, double steady_secs,
                            long rss_kb);

/* The human summary, a few lines. */
void loadgen_report_print(const struct loadgen_report *r, FILE *out);

/* Write the JSON report, with one entry per client, to path. Returns 0 or -errno. */
int loadgen_report_write_json(const struct loadgen_report *r, const struct loadgen_worker *workers,
                              int n_workers, const char *path);

/* VmRSS of process pid in kB from /proc/PID/status, or -1 if it cannot be read. */
long loadgen_rss_kb(long pid);

#endif /* TESTS_BENCH_LOADGEN_REPORT_H */
