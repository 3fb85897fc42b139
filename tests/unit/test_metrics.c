/* tests/unit/test_metrics.c: the Prometheus text the metrics endpoint renders
 * (server/ops/metrics.h): the histogram's buckets cumulative with +Inf equal to _count, label
 * values escaped (backslash, double quote, line feed) and made valid UTF-8, per-worker series
 * from the workers' counters, per-client series only when asked for. `promtool check metrics`
 * on a real scrape is tests/netns/test_metrics.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "server/data/worker_stats.h"
#include "server/ops/metrics.h"

/* The rendered text of snap and ws (caller frees). */
static char *render(const struct metrics_snapshot *snap, const struct worker_stats *const *ws,
                    int n_workers, bool per_client)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);

    assert_non_null(out);
    assert_int_equal(metrics_render(out, snap, ws, n_workers, per_client, 1700000000), 0);
    assert_int_equal(fclose(out), 0);
    return text;
}

static void has_line(const char *text, const char *line)
{
    const char *p = text;
    size_t n = strlen(line);

    while ((p = strstr(p, line)) != NULL) {
        if ((p == text || p[-1] == '\n') && p[n] == '\n') {
            return;
        }
        p += n;
    }
    fail_msg("no line '%s' in:\n%s", line, text);
}

static void handshake_histogram(void **state)
{
    struct metrics_snapshot snap;
    char *text;

    (void)state;
    memset(&snap, 0, sizeof(snap));
    metrics_count_handshake(&snap.control, METRICS_HS_OK, 3);      /* le 0.005 */
    metrics_count_handshake(&snap.control, METRICS_HS_OK, 100);    /* le 0.1 exactly */
    metrics_count_handshake(&snap.control, METRICS_HS_OK, 101);    /* le 0.25 */
    metrics_count_handshake(&snap.control, METRICS_HS_OK, 600000); /* +Inf only */
    metrics_count_handshake(&snap.control, METRICS_HS_TIMEOUT, 0);
    snap.n_clients = 3;
    text = render(&snap, NULL, 0, false);
    has_line(text, "# TYPE ovpnd_handshake_duration_seconds histogram");
    has_line(text, "ovpnd_handshake_duration_seconds_bucket{le=\"0.005\"} 1");
    has_line(text, "ovpnd_handshake_duration_seconds_bucket{le=\"0.05\"} 1");
    has_line(text, "ovpnd_handshake_duration_seconds_bucket{le=\"0.1\"} 2");
    has_line(text, "ovpnd_handshake_duration_seconds_bucket{le=\"0.25\"} 3");
    has_line(text, "ovpnd_handshake_duration_seconds_bucket{le=\"60\"} 3");
    has_line(text, "ovpnd_handshake_duration_seconds_bucket{le=\"+Inf\"} 4");
    has_line(text, "ovpnd_handshake_duration_seconds_count 4");
    has_line(text, "ovpnd_handshake_duration_seconds_sum 600.204");
    has_line(text, "ovpnd_handshakes_total{result=\"ok\"} 4");
    has_line(text, "ovpnd_handshakes_total{result=\"timeout\"} 1");
    has_line(text, "ovpnd_clients_connected 3");
    has_line(text, "ovpnd_start_time_seconds 1700000000");
    /* no per-client family without metrics-per-client */
    assert_null(strstr(text, "ovpnd_client_"));
    free(text);
}

static void worker_series(void **state)
{
    static struct worker_stats w0, w1;
    const struct worker_stats *ws[2] = {&w0, &w1};
    struct metrics_snapshot snap;
    char *text;

    (void)state;
    memset(&snap, 0, sizeof(snap));
    stat_add(&w0.rx_bytes, 1234);
    stat_add(&w1.tx_bytes, 99);
    stat_add(&w1.drop_replay, 7);
    stat_add(&w0.drop_tun_write, 2);
    stat_add(&w1.udp_recv_errors, 5);
    text = render(&snap, ws, 2, false);
    has_line(text, "ovpnd_worker_receive_bytes_total{worker=\"0\"} 1234");
    has_line(text, "ovpnd_worker_receive_bytes_total{worker=\"1\"} 0");
    has_line(text, "ovpnd_worker_transmit_bytes_total{worker=\"1\"} 99");
    has_line(text, "ovpnd_worker_dropped_packets_total{worker=\"1\",reason=\"replay\"} 7");
    has_line(text, "ovpnd_worker_dropped_packets_total{worker=\"0\",reason=\"tun_write_error\"} 2");
    has_line(text, "ovpnd_tun_errors_total{worker=\"0\",op=\"write\"} 2");
    has_line(text, "ovpnd_udp_errors_total{worker=\"1\",op=\"receive\"} 5");
    free(text);
}

static void client_labels_escaped(void **state)
{
    struct status_client rows[3];
    struct metrics_snapshot snap;
    char *text;

    (void)state;
    memset(&snap, 0, sizeof(snap));
    memset(rows, 0, sizeof(rows));
    snprintf(rows[0].common_name, sizeof(rows[0].common_name), "a\"b\\c\nd");
    rows[0].peer_id = 4;
    rows[0].bytes_rx = 10;
    rows[0].bytes_tx = 20;
    rows[0].connected_since = 1700000123;
    /* bytes that are not UTF-8 (a lone continuation byte, an overlong '/', a surrogate), a
     * control character, and a valid two-byte character */
    {
        static const char odd[] = "x\x80y\xc0\xafz\xed\xa0\x80\t\xc3\xa9";

        memcpy(rows[1].common_name, odd, sizeof(odd));
    }
    rows[1].peer_id = 5;
    rows[2].peer_id = 6; /* no common name: UNDEF, as in the status file */
    snap.clients = rows;
    snap.n_client_rows = 3;
    text = render(&snap, NULL, 0, true);
    has_line(text,
             "ovpnd_client_receive_bytes_total{common_name=\"a\\\"b\\\\c\\nd\",peer_id=\"4\"} 10");
    has_line(text,
             "ovpnd_client_transmit_bytes_total{common_name=\"a\\\"b\\\\c\\nd\",peer_id=\"4\"} 20");
    has_line(text,
             "ovpnd_client_connected_since_seconds{common_name=\"a\\\"b\\\\c\\nd\",peer_id=\"4\"} "
             "1700000123");
    has_line(
        text,
        "ovpnd_client_receive_bytes_total{common_name=\"x?y??z????\xc3\xa9\",peer_id=\"5\"} 0");
    has_line(text, "ovpnd_client_receive_bytes_total{common_name=\"UNDEF\",peer_id=\"6\"} 0");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(handshake_histogram),
        cmocka_unit_test(worker_series),
        cmocka_unit_test(client_labels_escaped),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
