/* tests/bench/loadgen.c: ovpnd-loadgen, many simulated OpenVPN 2.6 clients over UDP.
 *
 * The main thread parses the command line, starts one worker thread per --threads (each a libuv
 * loop running its share of the clients, see loadgen_worker.h), then drives the phases of the
 * run: ramp (clients start at --rate per second until each is connected or failed), steady
 * (--duration seconds of echo traffic), drain (late replies), exit (explicit exit from every
 * client). It then prints the summary and writes the JSON report.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tests/bench/loadgen_config.h"
#include "tests/bench/loadgen_report.h"
#include "tests/bench/loadgen_worker.h"

#define COORD_POLL_MS 10
#define DRAIN_MS 500 /* an echo reply inside a namespace takes well under a millisecond */

static volatile sig_atomic_t stop_requested;

static const char *const phase_names[] = {"ramp", "steady", "drain", "exit"};

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* One UDP socket per client: make room for them. */
static void raise_fd_limit(size_t n_clients)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < n_clients + 64) {
        fprintf(stderr, "ovpnd-loadgen: warning: open file limit %llu is too low for %zu clients\n",
                (unsigned long long)rl.rlim_cur, n_clients);
    }
}

/* --barrier: note that this process arrived (once), then whether all barrier_count have. A file
 * that cannot be written or read counts as everyone there, with a warning: the run goes on. */
static bool barrier_passed(const struct loadgen_config *cfg, bool *has_arrived)
{
    struct stat st;

    if (!*has_arrived) {
        int fd = open(cfg->barrier_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

        *has_arrived = true;
        if (fd < 0 || write(fd, "x", 1) != 1) {
            fprintf(stderr, "ovpnd-loadgen: --barrier %s: %s: not waiting\n", cfg->barrier_path,
                    strerror(errno));
            if (fd >= 0) {
                close(fd);
            }
            return true;
        }
        close(fd);
    }
    if (stat(cfg->barrier_path, &st) < 0) {
        return true;
    }
    return st.st_size >= (off_t)cfg->barrier_count;
}

/* Drive the phases until every worker finished; returns the steady phase's length and the
 * server's RSS sampled at its end (-1 when not asked for or unreadable). */
static void run_phases(struct loadgen_run *run, int n_workers, double *steady_secs, long *rss_kb)
{
    const struct loadgen_config *cfg = run->cfg;
    uint64_t steady_start = 0, drain_start = 0;
    bool has_arrived = false;

    *steady_secs = 0;
    *rss_kb = -1;
    for (;;) {
        enum loadgen_phase phase = (enum loadgen_phase)atomic_load(&run->phase);
        uint64_t now = loadgen_now_ms();
        enum loadgen_phase next = phase;

        if (atomic_load(&run->n_workers_done) >= n_workers) {
            break;
        }
        switch (phase) {
        case LOADGEN_PHASE_RAMP:
            if (atomic_load(&run->n_settled) >= cfg->n_clients &&
                (!cfg->barrier_path || barrier_passed(cfg, &has_arrived))) {
                steady_start = now;
                next = LOADGEN_PHASE_STEADY;
            }
            break;
        case LOADGEN_PHASE_STEADY:
            if (now >= steady_start + (uint64_t)(cfg->duration_s * 1000.0)) {
                next = LOADGEN_PHASE_DRAIN;
            }
            break;
        case LOADGEN_PHASE_DRAIN:
            if (now >= drain_start + DRAIN_MS) {
                next = LOADGEN_PHASE_EXIT;
            }
            break;
        case LOADGEN_PHASE_EXIT:
            break;
        }
        if (stop_requested && phase < LOADGEN_PHASE_EXIT) {
            fprintf(stderr, "ovpnd-loadgen: stopping early: clients exit now\n");
            stop_requested = 0;
            if (phase == LOADGEN_PHASE_RAMP) {
                steady_start = now;
            }
            next = LOADGEN_PHASE_EXIT;
        }
        if (next != phase) {
            if (phase <= LOADGEN_PHASE_STEADY && next > LOADGEN_PHASE_STEADY) {
                *steady_secs = (double)(now - steady_start) / 1000.0;
                if (cfg->server_pid > 0) {
                    *rss_kb = loadgen_rss_kb(cfg->server_pid);
                }
            }
            if (next == LOADGEN_PHASE_DRAIN) {
                drain_start = now;
            }
            if (cfg->verbose) {
                fprintf(stderr, "ovpnd-loadgen: %.3f s: %s phase\n",
                        (double)(now - run->t0_ms) / 1000.0, phase_names[next]);
            }
            atomic_store(&run->phase, (int)next);
        }
        sleep_ms(COORD_POLL_MS);
    }
}

int main(int argc, char **argv)
{
    struct loadgen_config cfg;
    struct loadgen_worker *workers = NULL;
    struct loadgen_report report;
    struct loadgen_run run;
    char errbuf[256] = "";
    int n_started = 0, rc = 1, ret;
    double steady_secs = 0;
    long rss_kb = -1;

    ret = loadgen_config_parse(&cfg, argc, argv, errbuf, sizeof(errbuf));
    if (ret) {
        if (ret < 0) {
            fprintf(stderr, "ovpnd-loadgen: %s\n", errbuf);
        }
        loadgen_config_clear(&cfg);
        return ret < 0 ? 2 : 0;
    }
    if (cfg.server_pid > 0 && loadgen_rss_kb(cfg.server_pid) < 0) {
        fprintf(stderr, "ovpnd-loadgen: cannot read the RSS of pid %ld\n", cfg.server_pid);
        loadgen_config_clear(&cfg);
        return 2;
    }
    raise_fd_limit(cfg.n_clients);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);

    memset(&run, 0, sizeof(run));
    run.cfg = &cfg;
    atomic_init(&run.phase, LOADGEN_PHASE_RAMP);
    atomic_init(&run.n_settled, 0);
    atomic_init(&run.last_connect_ms, 0);
    atomic_init(&run.n_workers_done, 0);
    workers = calloc((size_t)cfg.n_threads, sizeof(*workers));
    if (!workers) {
        fprintf(stderr, "ovpnd-loadgen: out of memory\n");
        goto out;
    }
    for (int i = 0; i < cfg.n_threads; i++) {
        if (loadgen_worker_init(&workers[i], i, cfg.n_threads, &run)) {
            fprintf(stderr, "ovpnd-loadgen: %s\n", workers[i].errbuf);
            goto out;
        }
    }
    run.t0_ms = loadgen_now_ms();
    for (; n_started < cfg.n_threads; n_started++) {
        if (loadgen_worker_start(&workers[n_started])) {
            fprintf(stderr, "ovpnd-loadgen: cannot start a thread\n");
            atomic_store(&run.phase, LOADGEN_PHASE_EXIT);
            break;
        }
    }
    if (n_started == cfg.n_threads) {
        run_phases(&run, cfg.n_threads, &steady_secs, &rss_kb);
    }
    for (int i = 0; i < n_started; i++) {
        loadgen_worker_join(&workers[i]);
    }
    if (n_started == cfg.n_threads) {
        loadgen_report_collect(&report, workers, cfg.n_threads, &run, steady_secs, rss_kb);
        loadgen_report_print(&report, stdout);
        if (cfg.json_path) {
            ret = loadgen_report_write_json(&report, workers, cfg.n_threads, cfg.json_path);
            if (ret) {
                fprintf(stderr, "ovpnd-loadgen: %s: %s\n", cfg.json_path, strerror(-ret));
            }
        }
        rc = report.connected == report.clients && report.completed == report.clients ? 0 : 1;
    }
out:
    for (int i = 0; workers && i < cfg.n_threads; i++) {
        loadgen_worker_clear(&workers[i]);
    }
    free(workers);
    loadgen_config_clear(&cfg);
    return rc;
}
