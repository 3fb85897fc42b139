/* server/ops/notify.c: sd_notify(3) messages for systemd (see notify.h). */
#include "server/ops/notify.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-daemon.h>

#include "server/log/log.h"

/* Set by notify_init before other threads start, read-only afterwards. */
static bool is_enabled;
static uint64_t watchdog_interval_ms;

void notify_init(void)
{
    const char *sock = getenv("NOTIFY_SOCKET");
    uint64_t usec = 0;
    int r;

    is_enabled = sock != NULL && sock[0] != '\0';
    if (!is_enabled) {
        return;
    }
    r = sd_watchdog_enabled(0, &usec);
    if (r > 0 && usec >= 2000) {
        watchdog_interval_ms = usec / 2000;
        log_msg(LOG_INFO, "systemd: watchdog every %" PRIu64 " ms (WatchdogSec=%" PRIu64 " ms)",
                watchdog_interval_ms, usec / 1000);
    } else if (r < 0) {
        log_msg(LOG_WARN, "systemd: WATCHDOG_USEC is not usable: %s", strerror(-r));
    }
}

bool notify_is_enabled(void)
{
    return is_enabled;
}

uint64_t notify_watchdog_interval_ms(void)
{
    return watchdog_interval_ms;
}

static void send_state(const char *state)
{
    int r;

    if (!is_enabled) {
        return;
    }
    r = sd_notify(0, state);
    if (r < 0) {
        log_msg(LOG_DEBUG, "systemd: notification not sent: %s", strerror(-r));
    }
}

void notify_ready(void)
{
    send_state("READY=1");
}

void notify_clients(size_t n_clients)
{
    char state[64];

    snprintf(state, sizeof(state), "STATUS=%zu client%s connected", n_clients,
             n_clients == 1 ? "" : "s");
    send_state(state);
}

void notify_watchdog(void)
{
    send_state("WATCHDOG=1");
}

void notify_waiting(const char *what)
{
    char state[320];

    snprintf(state, sizeof(state), "STATUS=waiting for %s\nEXTEND_TIMEOUT_USEC=%llu%s", what,
             (unsigned long long)NOTIFY_WAIT_EXTEND_MS * 1000u,
             watchdog_interval_ms ? "\nWATCHDOG=1" : "");
    send_state(state);
}

void notify_stopping(const char *status)
{
    char state[256];

    snprintf(state, sizeof(state), "STOPPING=1\nSTATUS=%s", status);
    send_state(state);
}
