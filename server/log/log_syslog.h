/* server/log/log_syslog.h: the process log sent to syslog (`syslog [NAME]`, or `daemon [NAME]`
 * without `log`/`log-append`), as openvpn 2.6 does it (error.c open_syslog, x_msg_va): the
 * facility is daemon, each message carries the program name and the process id, and there are
 * three severities: error for errors, warning for warnings, notice for everything else.
 *
 * Kept apart from server/log/log.c because <syslog.h> defines LOG_ERR and friends, which are
 * server/log/log.h's level names; this header does not include <syslog.h>.
 */
#ifndef SERVER_LOG_LOG_SYSLOG_H
#define SERVER_LOG_LOG_SYSLOG_H

#define LOG_SYSLOG_NAME_MAX 64 /* bytes of the program name kept, NUL included */

enum log_syslog_severity {
    LOG_SYSLOG_ERROR,   /* LOG_ERR */
    LOG_SYSLOG_WARNING, /* LOG_WARNING */
    LOG_SYSLOG_NOTICE,  /* LOG_NOTICE */
};

/* Start sending to the local syslog socket (/dev/log) as name (copied; cut to
 * LOG_SYSLOG_NAME_MAX - 1 bytes), facility daemon, each message tagged with the pid. Connects
 * at the first message, so it may be called before daemon(3). Main thread, before other
 * threads log; once. */
void log_syslog_open(const char *name);

/* Send msg (one line, no "\n") at sev. One datagram per call; a message that cannot be sent
 * is dropped (no syslog socket: nothing is listening). Any thread (the C library serialises
 * the calls). */
void log_syslog_write(enum log_syslog_severity sev, const char *msg);

/* The <PRI> value a message at sev carries on the wire (facility daemon): 27, 28 or 29. For
 * tests. */
int log_syslog_priority(enum log_syslog_severity sev);

#endif /* SERVER_LOG_LOG_SYSLOG_H */
