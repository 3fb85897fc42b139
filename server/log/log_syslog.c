/* server/log/log_syslog.c: the process log sent to syslog; see log_syslog.h. */
#include "server/log/log_syslog.h"

#include <stdio.h>
#include <syslog.h>

/* openlog keeps the pointer it is given */
static char syslog_name[LOG_SYSLOG_NAME_MAX];

void log_syslog_open(const char *name)
{
    snprintf(syslog_name, sizeof(syslog_name), "%s", name);
    /* openvpn 2.6 error.c open_syslog: openlog(name, LOG_PID, LOG_DAEMON); connected at once
     * (LOG_NDELAY), so that /dev/log is reached after a chroot too */
    openlog(syslog_name, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

int log_syslog_priority(enum log_syslog_severity sev)
{
    switch (sev) {
    case LOG_SYSLOG_ERROR:
        return LOG_DAEMON | LOG_ERR;
    case LOG_SYSLOG_WARNING:
        return LOG_DAEMON | LOG_WARNING;
    default:
        return LOG_DAEMON | LOG_NOTICE;
    }
}

void log_syslog_write(enum log_syslog_severity sev, const char *msg)
{
    syslog(log_syslog_priority(sev), "%s", msg);
}
