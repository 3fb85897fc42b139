/* server/log/log.c: the process log; see log.h. */
#include "server/log/log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "server/log/log_syslog.h"

/* Written by log_init/log_set_level, read by every thread: relaxed atomics are enough, a thread
 * seeing the old level for a moment is harmless. */
static atomic_int log_fd = 2;
static atomic_int log_max_level = LOG_INFO;
static atomic_int log_stamp = LOG_STAMP_TIME;
static atomic_bool log_is_syslog; /* set once by log_init_syslog, before other threads start */

static _Atomic(log_hook_fn) log_hook;
static _Atomic(void *) log_hook_ctx;

static const char cut_marker[] = "...";
#define LEVEL_WORD_MAX 9 /* strlen("WARNING: ") */

void log_init(int fd, enum log_level max_level)
{
    tzset(); /* localtime_r does not read TZ by itself */
    atomic_store_explicit(&log_fd, fd, memory_order_relaxed);
    atomic_store_explicit(&log_max_level, (int)max_level, memory_order_relaxed);
}

int log_give_file(uid_t uid, gid_t gid)
{
    int fd = atomic_load_explicit(&log_fd, memory_order_relaxed);
    struct stat st;

    if (fd <= STDERR_FILENO || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        return 0;
    }
    return fchown(fd, uid, gid) == 0 ? 0 : -errno;
}

int log_reopen(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0640);
    int cur = atomic_load_explicit(&log_fd, memory_order_relaxed);
    int err = 0;

    if (fd < 0) {
        return -errno;
    }
    if (fd != cur && dup3(fd, cur, O_CLOEXEC) < 0) {
        err = -errno;
    }
    if (fd != cur) {
        close(fd);
    }
    return err;
}

void log_init_syslog(const char *name, enum log_level max_level)
{
    tzset();
    log_syslog_open(name ? name : LOG_SYSLOG_DEFAULT_NAME);
    atomic_store_explicit(&log_is_syslog, true, memory_order_relaxed);
    atomic_store_explicit(&log_max_level, (int)max_level, memory_order_relaxed);
}

void log_set_hook(log_hook_fn fn, void *ctx)
{
    /* a reader loads fn, then ctx: it may see a new fn with an old ctx only while both are
     * being set, never the old fn with a NULL ctx it cannot use; hooks accept a NULL ctx */
    if (fn) {
        atomic_store(&log_hook_ctx, ctx);
        atomic_store(&log_hook, fn);
    } else {
        atomic_store(&log_hook, NULL);
        atomic_store(&log_hook_ctx, NULL);
    }
}

void log_set_level(enum log_level max_level)
{
    atomic_store_explicit(&log_max_level, (int)max_level, memory_order_relaxed);
}

enum log_level log_level_from_verb(int verb)
{
    if (verb <= 0) {
        return LOG_ERR;
    }
    if (verb <= 3) {
        return LOG_INFO;
    }
    if (verb == 4) {
        return LOG_DEBUG;
    }
    return LOG_TRACE;
}

bool log_enabled(enum log_level lvl)
{
    return (int)lvl <= atomic_load_explicit(&log_max_level, memory_order_relaxed);
}

static const char *level_word(enum log_level lvl)
{
    switch (lvl) {
    case LOG_ERR:
        return "ERROR: ";
    case LOG_WARN:
        return "WARNING: ";
    default:
        return "";
    }
}

/* The level word and the message, from buf + start on: cut to fit cap (the NUL included), then
 * ending in "...", control characters as '?'. start + LEVEL_WORD_MAX + sizeof(cut_marker) < cap.
 * Returns where the NUL was written. */
static size_t format_message_at(char *buf, size_t cap, size_t start, enum log_level lvl,
                                const char *fmt, va_list ap)
{
    const char *word = level_word(lvl);
    size_t word_len = strlen(word), msg_start = start + word_len, room = cap - msg_start, pos;
    int n;

    memcpy(buf + start, word, word_len);
    n = vsnprintf(buf + msg_start, room, fmt, ap);
    if (n < 0) {
        n = 0;
        buf[msg_start] = '\0';
    }
    if ((size_t)n >= room) {
        pos = cap - 1; /* vsnprintf filled room - 1 bytes */
        memcpy(buf + pos - (sizeof(cut_marker) - 1), cut_marker, sizeof(cut_marker) - 1);
    } else {
        pos = msg_start + (size_t)n;
    }
    for (size_t i = msg_start; i < pos; i++) {
        unsigned char ch = (unsigned char)buf[i];
        if (ch < 0x20 || ch == 0x7f) {
            buf[i] = '?';
        }
    }
    buf[pos] = '\0';
    return pos;
}

void log_set_stamp(enum log_stamp stamp)
{
    atomic_store_explicit(&log_stamp, (int)stamp, memory_order_relaxed);
}

/* openvpn 2.6's message flags (errlevel.h) for what ovpnd logs at lvl. */
static unsigned machine_flags(enum log_level lvl)
{
    switch (lvl) {
    case LOG_ERR:
        return 0x20; /* M_NONFATAL */
    case LOG_WARN:
        return 0x40; /* M_WARN */
    case LOG_INFO:
        return 1; /* M_INFO */
    case LOG_DEBUG:
        return 4;
    default:
        return 5;
    }
}

size_t log_format_stamp(char *buf, size_t cap, enum log_stamp stamp, int64_t now_s, long now_us,
                        enum log_level lvl)
{
    time_t t = (time_t)now_s;
    struct tm tm;
    int n = 0;

    if (cap == 0) {
        return 0;
    }
    buf[0] = '\0';
    switch (stamp) {
    case LOG_STAMP_NONE:
        return 0;
    case LOG_STAMP_MACHINE:
        n = snprintf(buf, cap, "%" PRId64 ".%06ld %x ", now_s, now_us, machine_flags(lvl));
        break;
    default:
        if (!localtime_r(&t, &tm)) {
            memset(&tm, 0, sizeof(tm));
        }
        /* Same shape as openvpn's log prefix: "2026-11-30 12:00:00 ". */
        n = snprintf(buf, cap, "%04d-%02d-%02d %02d:%02d:%02d ", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        break;
    }
    if (n < 0 || (size_t)n >= cap) {
        buf[0] = '\0';
        return 0;
    }
    return (size_t)n;
}

/* log_format_line with the given stamp. */
static size_t format_line(char *buf, size_t cap, enum log_stamp stamp, int64_t now_s, long now_us,
                          enum log_level lvl, const char *fmt, va_list ap)
{
    size_t n, pos;

    if (cap < LOG_LINE_MIN) {
        if (cap > 0) {
            buf[0] = '\0';
        }
        return 0;
    }
    n = log_format_stamp(buf, cap, stamp, now_s, now_us, lvl);
    if (n + LEVEL_WORD_MAX + sizeof(cut_marker) >= cap - 1) {
        n = 0; /* a year with many digits: drop the prefix rather than the message */
    }
    pos = format_message_at(buf, cap - 1, n, lvl, fmt, ap); /* one byte for the "\n" */
    buf[pos++] = '\n';
    buf[pos] = '\0';
    return pos;
}

size_t log_format_line(char *buf, size_t cap, int64_t now_s, enum log_level lvl, const char *fmt,
                       va_list ap)
{
    return format_line(buf, cap, LOG_STAMP_TIME, now_s, 0, lvl, fmt, ap);
}

size_t log_format_message(char *buf, size_t cap, enum log_level lvl, const char *fmt, va_list ap)
{
    if (cap < LOG_LINE_MIN) {
        if (cap > 0) {
            buf[0] = '\0';
        }
        return 0;
    }
    return format_message_at(buf, cap, 0, lvl, fmt, ap);
}

enum log_syslog_severity log_syslog_severity(enum log_level lvl)
{
    /* openvpn 2.6 error.c x_msg_va: LOG_ERR for errors, LOG_WARNING for warnings, LOG_NOTICE
     * for the rest, whatever the verb level */
    switch (lvl) {
    case LOG_ERR:
        return LOG_SYSLOG_ERROR;
    case LOG_WARN:
        return LOG_SYSLOG_WARNING;
    default:
        return LOG_SYSLOG_NOTICE;
    }
}

static void write_line(const char *line, size_t len)
{
    int fd = atomic_load_explicit(&log_fd, memory_order_relaxed);
    int saved_errno = errno; /* callers often log and then look at errno */
    ssize_t n;

    do {
        n = write(fd, line, len);
    } while (n < 0 && errno == EINTR);
    errno = saved_errno;
}

__attribute__((format(printf, 2, 0))) static void vlog(enum log_level lvl, const char *fmt,
                                                       va_list ap)
{
    char line[LOG_LINE_MAX];
    size_t len;
    struct timespec now;
    int64_t now_s;
    log_hook_fn hook = atomic_load(&log_hook);
    va_list ap2;

    clock_gettime(CLOCK_REALTIME, &now);
    now_s = (int64_t)now.tv_sec;
    va_copy(ap2, ap);
    if (atomic_load_explicit(&log_is_syslog, memory_order_relaxed)) {
        /* syslog adds the time itself */
        log_format_message(line, sizeof(line), lvl, fmt, ap);
        log_syslog_write(log_syslog_severity(lvl), line);
    } else {
        len = format_line(line, sizeof(line),
                          (enum log_stamp)atomic_load_explicit(&log_stamp, memory_order_relaxed),
                          now_s, now.tv_nsec / 1000, lvl, fmt, ap);
        write_line(line, len);
    }
    if (hook) {
        log_format_message(line, sizeof(line), lvl, fmt, ap2);
        hook(atomic_load(&log_hook_ctx), now_s, lvl, line + strlen(level_word(lvl)));
    }
    va_end(ap2);
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
    va_list ap;

    if (!log_enabled(lvl)) {
        return;
    }
    va_start(ap, fmt);
    vlog(lvl, fmt, ap);
    va_end(ap);
}

bool log_ratelimit_allow(struct log_ratelimit *rl, uint64_t now_ms, uint32_t burst,
                         uint32_t interval_s, uint32_t *n_suppressed_out)
{
    uint64_t interval_ms = (uint64_t)interval_s * 1000u;

    bool is_fresh = rl->n_in_window == 0 && rl->n_suppressed == 0; /* zeroed, never used */

    if (is_fresh || now_ms < rl->window_start_ms || now_ms - rl->window_start_ms >= interval_ms) {
        rl->window_start_ms = now_ms;
        rl->n_in_window = 0;
    }
    if (rl->n_in_window < burst) {
        rl->n_in_window++;
        if (n_suppressed_out) {
            *n_suppressed_out = rl->n_suppressed;
        }
        rl->n_suppressed = 0;
        return true;
    }
    if (rl->n_suppressed < UINT32_MAX) {
        rl->n_suppressed++;
    }
    if (n_suppressed_out) {
        *n_suppressed_out = 0;
    }
    return false;
}

void log_msg_ratelimited(struct log_ratelimit *rl, uint64_t now_ms, uint32_t burst,
                         uint32_t interval_s, enum log_level lvl, const char *fmt, ...)
{
    uint32_t n_suppressed;
    va_list ap;

    if (!log_enabled(lvl) || !log_ratelimit_allow(rl, now_ms, burst, interval_s, &n_suppressed)) {
        return;
    }
    if (n_suppressed > 0) {
        log_msg(lvl, "%u messages suppressed", n_suppressed);
    }
    va_start(ap, fmt);
    vlog(lvl, fmt, ap);
    va_end(ap);
}
