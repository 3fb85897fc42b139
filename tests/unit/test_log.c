/* tests/unit/test_log.c: log line format, verb mapping and the rate limiter. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "server/log/log.h"

/* 2026-11-30 00:44:50 UTC */
#define T0 1795999490

static size_t format(char *buf, size_t cap, enum log_level lvl, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static size_t format(char *buf, size_t cap, enum log_level lvl, const char *fmt, ...)
{
    va_list ap;
    size_t n;

    va_start(ap, fmt);
    n = log_format_line(buf, cap, T0, lvl, fmt, ap);
    va_end(ap);
    return n;
}

static void line_prefix_like_openvpn(void **state)
{
    char buf[LOG_LINE_MAX];

    (void)state;
    /* openvpn 2.6.14 log lines look like "2026-11-30 00:44:20 TLS Error: TLS handshake failed" */
    assert_int_equal(format(buf, sizeof(buf), LOG_INFO, "peer %d up", 7),
                     strlen("2026-11-30 00:44:50 peer 7 up\n"));
    assert_string_equal(buf, "2026-11-30 00:44:50 peer 7 up\n");
    format(buf, sizeof(buf), LOG_WARN, "x");
    assert_string_equal(buf, "2026-11-30 00:44:50 WARNING: x\n");
    format(buf, sizeof(buf), LOG_ERR, "cannot open %s", "tun");
    assert_string_equal(buf, "2026-11-30 00:44:50 ERROR: cannot open tun\n");
    format(buf, sizeof(buf), LOG_TRACE, "%s", "");
    assert_string_equal(buf, "2026-11-30 00:44:50 \n");
}

static void control_characters_cannot_split_a_line(void **state)
{
    char buf[LOG_LINE_MAX];

    (void)state;
    format(buf, sizeof(buf), LOG_INFO, "CN=%s",
           "evil\n2026-11-30 00:00:00 ERROR: fake\r\t\x7f"
           "end");
    assert_string_equal(buf, "2026-11-30 00:44:50 CN=evil?2026-11-30 00:00:00 ERROR: fake???end\n");
    assert_int_equal(strchr(buf, '\n') - buf, (long)strlen(buf) - 1);
}

static void long_messages_are_cut(void **state)
{
    char big[5000];
    char buf[LOG_LINE_MAX];
    char small[LOG_LINE_MIN];
    size_t n;

    (void)state;
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    n = format(buf, sizeof(buf), LOG_INFO, "%s", big);
    assert_int_equal(n, LOG_LINE_MAX - 1);
    assert_int_equal(strlen(buf), n);
    assert_string_equal(buf + n - 4, "...\n");
    assert_int_equal(buf[n - 5], 'a');

    n = format(small, sizeof(small), LOG_WARN, "%s", big);
    assert_int_equal(n, LOG_LINE_MIN - 1);
    assert_true(strncmp(small, "2026-11-30 00:44:50 WARNING: aaa", 32) == 0);
    assert_string_equal(small + n - 4, "...\n");

    /* exactly fitting: no marker */
    n = format(small, sizeof(small), LOG_INFO, "%.*s", (int)(LOG_LINE_MIN - 22), big);
    assert_int_equal(n, LOG_LINE_MIN - 1);
    assert_string_equal(small + n - 2, "a\n");
    n = format(small, sizeof(small), LOG_INFO, "%.*s", (int)(LOG_LINE_MIN - 21), big);
    assert_string_equal(small + n - 4, "...\n");

    /* too small a buffer: nothing */
    assert_int_equal(format(small, LOG_LINE_MIN - 1, LOG_INFO, "x"), 0);
    assert_string_equal(small, "");
}

static size_t format_message(char *buf, size_t cap, enum log_level lvl, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static size_t format_message(char *buf, size_t cap, enum log_level lvl, const char *fmt, ...)
{
    va_list ap;
    size_t n;

    va_start(ap, fmt);
    n = log_format_message(buf, cap, lvl, fmt, ap);
    va_end(ap);
    return n;
}

/* What goes to syslog: the log line without the time and the "\n", at openvpn 2.6's severities
 * (error.c x_msg_va) under facility daemon (open_syslog). */
static void syslog_messages(void **state)
{
    char buf[LOG_LINE_MAX], small[LOG_LINE_MIN], big[5000];
    size_t n;

    (void)state;
    assert_int_equal(format_message(buf, sizeof(buf), LOG_INFO, "peer %d up", 7), 9);
    assert_string_equal(buf, "peer 7 up");
    format_message(buf, sizeof(buf), LOG_WARN, "CN=%s", "a\nb");
    assert_string_equal(buf, "WARNING: CN=a?b");
    format_message(buf, sizeof(buf), LOG_ERR, "x");
    assert_string_equal(buf, "ERROR: x");
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    n = format_message(small, sizeof(small), LOG_WARN, "%s", big);
    assert_int_equal(n, LOG_LINE_MIN - 1);
    assert_true(strncmp(small, "WARNING: aaa", 12) == 0);
    assert_string_equal(small + n - 3, "...");
    assert_int_equal(format_message(small, LOG_LINE_MIN - 1, LOG_INFO, "x"), 0);

    assert_int_equal(log_syslog_severity(LOG_ERR), LOG_SYSLOG_ERROR);
    assert_int_equal(log_syslog_severity(LOG_WARN), LOG_SYSLOG_WARNING);
    assert_int_equal(log_syslog_severity(LOG_INFO), LOG_SYSLOG_NOTICE);
    assert_int_equal(log_syslog_severity(LOG_DEBUG), LOG_SYSLOG_NOTICE);
    assert_int_equal(log_syslog_severity(LOG_TRACE), LOG_SYSLOG_NOTICE);
    /* <PRI> = facility daemon (3) * 8 + severity (3 error, 4 warning, 5 notice) */
    assert_int_equal(log_syslog_priority(LOG_SYSLOG_ERROR), 27);
    assert_int_equal(log_syslog_priority(LOG_SYSLOG_WARNING), 28);
    assert_int_equal(log_syslog_priority(LOG_SYSLOG_NOTICE), 29);
}

static void verb_mapping(void **state)
{
    (void)state;
    assert_int_equal(log_level_from_verb(-1), LOG_ERR);
    assert_int_equal(log_level_from_verb(0), LOG_ERR);
    assert_int_equal(log_level_from_verb(1), LOG_INFO);
    assert_int_equal(log_level_from_verb(3), LOG_INFO);
    assert_int_equal(log_level_from_verb(4), LOG_DEBUG);
    assert_int_equal(log_level_from_verb(5), LOG_TRACE);
    assert_int_equal(log_level_from_verb(11), LOG_TRACE);
}

static void read_all(int fd, char *buf, size_t cap)
{
    ssize_t n = read(fd, buf, cap - 1);

    assert_true(n >= 0);
    buf[n] = '\0';
}

static void log_msg_writes_enabled_levels_only(void **state)
{
    int p[2];
    char buf[4096];

    (void)state;
    assert_int_equal(pipe2(p, O_NONBLOCK), 0);
    log_init(p[1], LOG_WARN);
    assert_true(log_enabled(LOG_ERR));
    assert_true(log_enabled(LOG_WARN));
    assert_false(log_enabled(LOG_INFO));
    log_msg(LOG_INFO, "hidden");
    log_msg(LOG_WARN, "shown %u", 1u);
    read_all(p[0], buf, sizeof(buf));
    /* "YYYY-MM-DD HH:MM:SS WARNING: shown 1\n": the clock is live, check the shape */
    assert_int_equal(strlen(buf), 20 + 9 + 7 + 1);
    assert_int_equal(buf[4], '-');
    assert_int_equal(buf[10], ' ');
    assert_int_equal(buf[13], ':');
    assert_string_equal(buf + 20, "WARNING: shown 1\n");

    log_set_level(LOG_TRACE);
    assert_true(log_enabled(LOG_TRACE));
    log_msg(LOG_TRACE, "t");
    read_all(p[0], buf, sizeof(buf));
    assert_string_equal(buf + 20, "t\n");

    log_init(2, LOG_INFO);
    close(p[0]);
    close(p[1]);
}

static void ratelimit_burst_then_suppress(void **state)
{
    struct log_ratelimit rl = {0};
    uint32_t n = 99;

    (void)state;
    /* window 1 starts at 5000 ms: 3 allowed, then refused */
    for (int i = 0; i < 3; i++) {
        assert_true(log_ratelimit_allow(&rl, 5000 + (uint64_t)i, 3, 10, &n));
        assert_int_equal(n, 0);
    }
    for (int i = 0; i < 4; i++) {
        n = 99;
        assert_false(log_ratelimit_allow(&rl, 5100, 3, 10, &n));
        assert_int_equal(n, 0);
    }
    /* still inside the window one millisecond before its end */
    assert_false(log_ratelimit_allow(&rl, 14999, 3, 10, &n));
    /* exactly interval later: a new window, reporting the 5 refused */
    assert_true(log_ratelimit_allow(&rl, 15000, 3, 10, &n));
    assert_int_equal(n, 5);
    assert_true(log_ratelimit_allow(&rl, 15001, 3, 10, &n));
    assert_int_equal(n, 0); /* reported once only */
    assert_true(log_ratelimit_allow(&rl, 15002, 3, 10, &n));
    assert_false(log_ratelimit_allow(&rl, 15003, 3, 10, &n));
    /* a long silence: next window reports the 1 refused */
    assert_true(log_ratelimit_allow(&rl, 1000000, 3, 10, NULL));
    assert_true(log_ratelimit_allow(&rl, 1000001, 3, 10, &n));
    assert_int_equal(n, 0);
}

static void ratelimit_edges(void **state)
{
    struct log_ratelimit rl = {0};
    uint32_t n = 0;

    (void)state;
    /* first call at time 0 works on a zeroed struct */
    assert_true(log_ratelimit_allow(&rl, 0, 1, 1, &n));
    assert_false(log_ratelimit_allow(&rl, 999, 1, 1, &n));
    assert_true(log_ratelimit_allow(&rl, 1000, 1, 1, &n));
    assert_int_equal(n, 1);

    /* burst 0: everything refused and counted */
    memset(&rl, 0, sizeof(rl));
    for (int i = 0; i < 3; i++) {
        assert_false(log_ratelimit_allow(&rl, (uint64_t)i * 100000, 0, 1, &n));
    }
    assert_int_equal(rl.n_suppressed, 3);

    /* interval 0: no limit */
    memset(&rl, 0, sizeof(rl));
    for (int i = 0; i < 100; i++) {
        assert_true(log_ratelimit_allow(&rl, 42, 1, 0, &n));
        assert_int_equal(n, 0);
    }

    /* clock going backwards starts a new window instead of blocking forever */
    memset(&rl, 0, sizeof(rl));
    assert_true(log_ratelimit_allow(&rl, 50000, 1, 60, &n));
    assert_false(log_ratelimit_allow(&rl, 50001, 1, 60, &n));
    assert_true(log_ratelimit_allow(&rl, 10000, 1, 60, &n));
    assert_int_equal(n, 1);

    /* the suppressed count saturates */
    rl.n_in_window = 1;
    rl.n_suppressed = UINT32_MAX - 1;
    assert_false(log_ratelimit_allow(&rl, 10001, 1, 60, &n));
    assert_false(log_ratelimit_allow(&rl, 10002, 1, 60, &n));
    assert_int_equal(rl.n_suppressed, UINT32_MAX);
    assert_true(log_ratelimit_allow(&rl, 70000, 1, 60, &n));
    assert_int_equal(n, UINT32_MAX);

    /* large intervals do not overflow */
    memset(&rl, 0, sizeof(rl));
    assert_true(log_ratelimit_allow(&rl, UINT64_MAX - 5, 1, UINT32_MAX, &n));
    assert_false(log_ratelimit_allow(&rl, UINT64_MAX, 1, UINT32_MAX, &n));
}

static void ratelimited_messages(void **state)
{
    struct log_ratelimit rl = {0};
    int p[2];
    char buf[4096];
    const char *second;

    (void)state;
    assert_int_equal(pipe2(p, O_NONBLOCK), 0);
    log_init(p[1], LOG_INFO);
    for (int i = 0; i < 5; i++) {
        log_msg_ratelimited(&rl, 1000, 2, 1, LOG_INFO, "bad packet %d", i);
    }
    log_msg_ratelimited(&rl, 1500, 2, 1, LOG_DEBUG, "not enabled: not counted");
    read_all(p[0], buf, sizeof(buf));
    assert_non_null(strstr(buf, " bad packet 0\n"));
    assert_non_null(strstr(buf, " bad packet 1\n"));
    assert_null(strstr(buf, "bad packet 2"));
    log_msg_ratelimited(&rl, 2000, 2, 1, LOG_INFO, "bad packet %d", 5);
    read_all(p[0], buf, sizeof(buf));
    second = strchr(buf, '\n');
    assert_non_null(second);
    assert_true(strncmp(buf + 20, "3 messages suppressed\n", 22) == 0);
    assert_string_equal(second + 1 + 20, "bad packet 5\n");
    log_init(2, LOG_INFO);
    close(p[0]);
    close(p[1]);
}

/* suppress-timestamps and machine-readable-output (openvpn 2.6 error.c x_msg_va): the stamps,
 * and log_msg writing with each. */
static void stamps(void **state)
{
    char buf[LOG_LINE_MAX];
    int p[2];

    (void)state;
    assert_int_equal(log_format_stamp(buf, sizeof(buf), LOG_STAMP_TIME, T0, 5, LOG_INFO), 20);
    assert_string_equal(buf, "2026-11-30 00:44:50 ");
    assert_int_equal(log_format_stamp(buf, sizeof(buf), LOG_STAMP_NONE, T0, 5, LOG_INFO), 0);
    assert_string_equal(buf, "");
    log_format_stamp(buf, sizeof(buf), LOG_STAMP_MACHINE, T0, 5, LOG_INFO);
    assert_string_equal(buf, "1795999490.000005 1 ");
    log_format_stamp(buf, sizeof(buf), LOG_STAMP_MACHINE, T0, 999999, LOG_WARN);
    assert_string_equal(buf, "1795999490.999999 40 ");
    log_format_stamp(buf, sizeof(buf), LOG_STAMP_MACHINE, T0, 0, LOG_ERR);
    assert_string_equal(buf, "1795999490.000000 20 ");
    assert_int_equal(log_format_stamp(buf, 10, LOG_STAMP_MACHINE, T0, 0, LOG_ERR), 0);

    assert_int_equal(pipe2(p, O_NONBLOCK), 0);
    log_init(p[1], LOG_INFO);
    log_set_stamp(LOG_STAMP_NONE);
    log_msg(LOG_WARN, "no stamp %d", 1);
    read_all(p[0], buf, sizeof(buf));
    assert_string_equal(buf, "WARNING: no stamp 1\n");
    log_set_stamp(LOG_STAMP_MACHINE);
    log_msg(LOG_INFO, "machine");
    read_all(p[0], buf, sizeof(buf));
    assert_true(strlen(buf) == strlen("1795999490.000000 1 machine\n"));
    assert_true(buf[10] == '.' && strcmp(buf + 17, " 1 machine\n") == 0);
    log_set_stamp(LOG_STAMP_TIME);
    log_init(2, LOG_INFO);
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(line_prefix_like_openvpn),
        cmocka_unit_test(control_characters_cannot_split_a_line),
        cmocka_unit_test(long_messages_are_cut),
        cmocka_unit_test(verb_mapping),
        cmocka_unit_test(syslog_messages),
        cmocka_unit_test(log_msg_writes_enabled_levels_only),
        cmocka_unit_test(ratelimit_burst_then_suppress),
        cmocka_unit_test(ratelimit_edges),
        cmocka_unit_test(ratelimited_messages),
        cmocka_unit_test(stamps),
    };

    setenv("TZ", "UTC", 1);
    tzset();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
