/* server/log/log.h: the process log.
 *
 * One line is one write(2) to the log fd (stderr by default), so lines from different threads
 * never interleave. Each line starts with the local time as "YYYY-MM-DD HH:MM:SS " (the prefix
 * openvpn 2.6 puts on its log lines when it is not logging to syslog, otime.c time_string), then
 * "ERROR: " or "WARNING: " for those two levels, then the message and "\n". No lock is taken: the
 * line is formatted into a stack buffer of LOG_LINE_MAX bytes and written at once; longer messages
 * are cut and end in "...". Control characters in the formatted message (bytes below 0x20 and
 * 0x7f, e.g. a newline inside a client's common name) are written as '?', so one call can never
 * produce more than one line.
 *
 * With log_init_syslog the lines go to syslog instead (server/log/log_syslog.h), without the time
 * (syslog adds its own) but otherwise the same: level word, message, one message per call.
 */
#ifndef SERVER_LOG_LOG_H
#define SERVER_LOG_LOG_H

#include <stdarg.h>
#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/log/log_syslog.h"

/* The level names below are also macros in <syslog.h>: a file must not include both. */
#ifdef LOG_ERR
#error "server/log/log.h and <syslog.h> both define LOG_ERR; include only one"
#endif

#define LOG_LINE_MAX 2048               /* bytes per line including the prefix and the final "\n" */
#define LOG_LINE_MIN 64                 /* smallest buffer log_format_line accepts */
#define LOG_SYSLOG_DEFAULT_NAME "ovpnd" /* syslog program name without `syslog NAME` */

enum log_level {
    LOG_ERR = 0, /* the operator must act */
    LOG_WARN,    /* a handled surprise */
    LOG_INFO,    /* connect, auth, rekey, disconnect */
    LOG_DEBUG,
    LOG_TRACE, /* per packet; off unless asked for */
};

/* Log to fd (not owned: never closed here) and show levels up to and including max_level.
 * Call on the main thread before other threads start; before any call the log goes to stderr
 * at LOG_INFO. */
void log_init(int fd, enum log_level max_level);

/* Log to syslog as name (NULL: LOG_SYSLOG_DEFAULT_NAME, as openvpn 2.6 uses "openvpn"), facility
 * daemon with the pid, and show levels up to and including max_level: `syslog [NAME]`, or
 * `daemon [NAME]` without `log`/`log-append` (openvpn 2.6 error.c open_syslog). Main thread,
 * before other threads start; instead of log_init. */
void log_init_syslog(const char *name, enum log_level max_level);

/* Called with every line written (and only those), after it is written: now_s is its time,
 * message the text without time prefix or level word (NUL-terminated, control characters as
 * '?'), for the management interface's log cache and >LOG lines. Runs on the logging thread,
 * any thread: it must not log, block or take a lock that is held while logging. ctx may be
 * NULL for a call that races with log_set_hook(NULL, NULL): the hook must then do nothing. */
typedef void (*log_hook_fn)(void *ctx, int64_t now_s, enum log_level lvl, const char *message);

/* Install fn (NULL: none) with its ctx. Set before other threads log and cleared after they
 * stop (the management interface's lifetime lies inside the acceptor's). */
void log_set_hook(log_hook_fn fn, void *ctx);

/* What starts each line written to the log file or standard error (not syslog, which stamps
 * its own), as openvpn 2.6 error.c x_msg_va: LOG_STAMP_TIME, the local time
 * "YYYY-MM-DD HH:MM:SS " (the default); LOG_STAMP_NONE, nothing (`suppress-timestamps`);
 * LOG_STAMP_MACHINE, `machine-readable-output`: the Unix time in seconds and microseconds and
 * the message's flags in hex as 2.6 numbers them ("1700000000.123456 1 "; flags by level:
 * error 20 (M_NONFATAL), warning 40 (M_WARN), info 1, debug 4, trace 5, the verb level 2.6
 * gives such messages). machine-readable-output wins over suppress-timestamps, as in 2.6. */
enum log_stamp { LOG_STAMP_TIME, LOG_STAMP_NONE, LOG_STAMP_MACHINE };

/* Set the stamp for the lines that follow. Any thread (main thread at start-up). */
void log_set_stamp(enum log_stamp stamp);

/* The stamp as log_msg writes it for a line at lvl, at now_s seconds and now_us microseconds,
 * into buf of cap bytes (NUL-terminated; at least 40 bytes for the machine stamp). Returns its
 * length. Any thread; used by log_msg and by tests. */
size_t log_format_stamp(char *buf, size_t cap, enum log_stamp stamp, int64_t now_s, long now_us,
                        enum log_level lvl);

/* Reopen the log file at path (after logrotate moved it away): open it again for appending
 * (created mode 0640 if missing, not through a symbolic link) and put it in place of the
 * current log descriptor with dup2, so that a line written meanwhile goes whole to one file or
 * the other. Returns 0 or -errno (the old file stays in use). Any thread. */
int log_reopen(const char *path);

/* Give the log file (a `log`/`log-append` file; nothing for standard error or syslog) to the
 * user and group the server is about to switch to (-1: keep that one), so that it can reopen
 * the file after a rotation (logrotate's `create` keeps the owner of the file it moved): 0, or
 * -errno. Main thread, before the switch. */
int log_give_file(uid_t uid, gid_t gid);

/* Change the level shown from now on (e.g. the management "verb" command). Any thread. */
void log_set_level(enum log_level max_level);

/* The level matching openvpn's --verb n (its manual: 0 fatal errors only, 1-4 normal use,
 * 5 adds per-packet R/W indicators, 6+ debug): n <= 0 -> LOG_ERR, 1..3 -> LOG_INFO,
 * 4 -> LOG_DEBUG, n >= 5 -> LOG_TRACE. Openvpn prints its non-fatal warnings from verb 1 on,
 * so LOG_WARN is never the answer. */
enum log_level log_level_from_verb(int verb);

/* Whether a message at lvl would be written: check it before building costly arguments.
 * Any thread. */
bool log_enabled(enum log_level lvl);

/* Format and write one line if lvl is enabled. Never fails visibly: a failed or short write is
 * dropped (there is nowhere left to report it). Any thread. */
void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Rate limiter for lines a packet or a client can trigger. Fixed windows of interval_s seconds:
 * the first burst calls in a window are allowed, the rest are counted as suppressed. The count
 * is handed back on the first allowed call of a later window, so the caller can log
 * "N messages suppressed" before its line. Zero-initialise to start. Caller-owned; one per peer
 * and reason; never shared between threads (no atomics inside). */
struct log_ratelimit {
    uint64_t window_start_ms;
    uint32_t n_in_window;
    uint32_t n_suppressed; /* in the current window and earlier ones not yet reported */
};

/* Returns true if the caller may log now. *n_suppressed_out (may be NULL) gets the number of
 * calls refused since the last allowed one was reported (normally 0), only when true is returned;
 * it is set to 0 otherwise. now_ms is any monotonic clock in milliseconds; a clock that goes
 * backwards starts a new window. burst 0 refuses everything; interval_s 0 allows everything.
 * The suppressed count saturates at UINT32_MAX. Cannot fail. */
bool log_ratelimit_allow(struct log_ratelimit *rl, uint64_t now_ms, uint32_t burst,
                         uint32_t interval_s, uint32_t *n_suppressed_out);

/* log_msg through rl: nothing is done (and nothing counted) when lvl is not enabled; when the
 * limiter allows it and earlier lines were refused, first writes "N messages suppressed" at lvl.
 * Same thread rule as rl. */
void log_msg_ratelimited(struct log_ratelimit *rl, uint64_t now_ms, uint32_t burst,
                         uint32_t interval_s, enum log_level lvl, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Build the line log_msg would write (prefix from the local time now_s, level word, message,
 * "\n") into buf of cap bytes; the message is cut to fit and then ends in "...\n". cap must be
 * at least LOG_LINE_MIN; a smaller buffer gets an empty string and 0. Returns the line's length
 * in bytes, not counting the NUL written after it. Any thread; used by log_msg and by tests. */
size_t log_format_line(char *buf, size_t cap, int64_t now_s, enum log_level lvl, const char *fmt,
                       va_list ap) __attribute__((format(printf, 5, 0)));

/* The message as it goes to syslog: what log_format_line builds without the time prefix and
 * without the "\n" (level word, message, cut to cap bytes with "...", control characters as
 * '?'). cap must be at least LOG_LINE_MIN; a smaller buffer gets an empty string and 0. Returns
 * the length, not counting the NUL. Any thread. */
size_t log_format_message(char *buf, size_t cap, enum log_level lvl, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

/* The syslog severity of lvl, as openvpn 2.6 maps its messages (error.c x_msg_va): LOG_ERR ->
 * error, LOG_WARN -> warning, every other level -> notice. */
enum log_syslog_severity log_syslog_severity(enum log_level lvl);

#endif /* SERVER_LOG_LOG_H */
