/* server/config/config_diff.h: what a reload (SIGHUP) may change in a running server, and what
 * needs a restart.
 *
 * openvpn 2.6 restarts the whole server on SIGHUP (openvpn.c main: the options are parsed
 * again and everything is rebuilt), dropping every client. ovpnd instead compares the running
 * config with the one just read and applies the parts that can change without a client noticing
 * (control/reload.c). This module is the comparison alone: pure, no I/O, any thread.
 */
#ifndef SERVER_CONFIG_CONFIG_DIFF_H
#define SERVER_CONFIG_CONFIG_DIFF_H

#include <stdbool.h>
#include <stddef.h>

#include "server/config/config.h"

/* The parts a reload applies (bits of config_diff.applied). */
#define CONFIG_RELOAD_TLS (1u << 0)       /* ca, cert, key, extra-certs: new handshakes */
#define CONFIG_RELOAD_CRL (1u << 1)       /* crl-verify (file, inline or dir), capath */
#define CONFIG_RELOAD_V2_VERIFY (1u << 2) /* tls-crypt-v2-verify */
#define CONFIG_RELOAD_PUSH (1u << 3)      /* push options and routes */
#define CONFIG_RELOAD_CCD (1u << 4)       /* client-config-dir, ccd-exclusive */
#define CONFIG_RELOAD_SCRIPTS                                                                      \
    (1u << 5)                                /* auth-user-pass-verify, tls-verify,                 \
                                              * client-connect, client-disconnect */
#define CONFIG_RELOAD_MAX_CLIENTS (1u << 6)  /* max-clients */
#define CONFIG_RELOAD_KEEPALIVE (1u << 7)    /* keepalive, ping, ping-restart */
#define CONFIG_RELOAD_VERB (1u << 8)         /* verb, mute */
#define CONFIG_RELOAD_CONNECT_FREQ (1u << 9) /* connect-freq, connect-freq-initial */
#define CONFIG_RELOAD_POOL (1u << 10)        /* `server` with the same network, another netmask */

#define CONFIG_DIFF_MAX 64 /* restart-only directives named at most (more are counted) */

/* The result of config_diff. The names are static strings (directive names as in openvpn). */
struct config_diff {
    unsigned applied;                     /* CONFIG_RELOAD_* bits whose settings differ */
    const char *restart[CONFIG_DIFF_MAX]; /* directives that differ but need a restart */
    size_t n_restart;                     /* entries in restart[] */
    size_t n_restart_dropped;             /* further ones, not named */
    bool is_pool_shrink;                  /* CONFIG_RELOAD_POOL with a longer netmask */
};

/* Compare the running config old with next, a config that parsed and passed its checks. Fills
 * d (caller-owned) with what a reload applies and what it has to leave as it is. Pure: no
 * allocation, no I/O; any thread. */
void config_diff(const struct config *old, const struct config *next, struct config_diff *d);

/* Move the reloadable settings from src into dst (a shallow copy of the config in force):
 * ca, cert, key, extra-certs, the CRL (crl-verify, its file and dir), capath, tls-crypt-v2-verify,
 * push, client-config-dir and ccd-exclusive, the auth scripts, keepalive / ping / ping-restart,
 * verb, mute, connect-freq and connect-freq-initial. dst's previous pointers for them are
 * overwritten, not freed (they belong to the config they were copied from); src's are left
 * NULL. max-clients and the pool are the caller's (they have limits). */
void config_reload_take(struct config *dst, struct config *src);

/* Free what config_reload_take moved into c, and nothing else (the rest of c belongs to the
 * config it was copied from); NULL is a no-op. */
void config_reload_free(struct config *c);

/* The name of one CONFIG_RELOAD_* bit, for the log ("push", "crl-verify", ...). */
const char *config_reload_part_name(unsigned bit);

#endif /* SERVER_CONFIG_CONFIG_DIFF_H */
