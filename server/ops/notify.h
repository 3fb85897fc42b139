/* server/ops/notify.h: the systemd service manager's notification protocol (sd_notify(3), through
 * libsystemd), for a unit of Type=notify (contrib/ovpnd@.service): READY=1 once the sockets and
 * the TUN device are up, STATUS= with the number of connected clients, WATCHDOG=1 while the
 * control thread's loop runs, STOPPING=1 at the end.
 *
 * Without NOTIFY_SOCKET in the environment (not started by systemd) every call does nothing.
 * Each call sends one datagram on a unix socket and does not wait for an answer; none is made
 * from the per-packet path.
 */
#ifndef SERVER_OPS_NOTIFY_H
#define SERVER_OPS_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Read NOTIFY_SOCKET and WATCHDOG_USEC / WATCHDOG_PID (sd_watchdog_enabled). Main thread, at
 * start-up, before other threads start. */
void notify_init(void);

/* Whether a service manager listens (NOTIFY_SOCKET is set). Any thread after notify_init. */
bool notify_is_enabled(void);

/* How often WATCHDOG=1 should go out, in ms: half of WATCHDOG_USEC, as sd_watchdog_enabled(3)
 * advises; 0 when the manager asked for no watchdog. Any thread after notify_init. */
uint64_t notify_watchdog_interval_ms(void);

/* READY=1. Main thread, once the server serves. */
void notify_ready(void);

/* STATUS= with the client count: "N clients connected". Any one thread at a time. */
void notify_clients(size_t n_clients);

/* WATCHDOG=1. The control thread, from its loop: a stuck loop stops it. */
void notify_watchdog(void);

/* While start-up waits for something outside the server (the management client's answers):
 * STATUS=waiting for WHAT, EXTEND_TIMEOUT_USEC of NOTIFY_WAIT_EXTEND_MS (a unit's start-up
 * timeout would otherwise end a wait that has no limit), and WATCHDOG=1 when a watchdog is
 * asked for. Call it at least every NOTIFY_WAIT_EVERY_MS while waiting. Main thread. */
#define NOTIFY_WAIT_EVERY_MS 10000
#define NOTIFY_WAIT_EXTEND_MS 30000
void notify_waiting(const char *what);

/* STOPPING=1 and STATUS=status. Main thread, at shutdown. */
void notify_stopping(const char *status);

#endif /* SERVER_OPS_NOTIFY_H */
