/* server/hooks/hooks.h: running the operator's plugins and script for one event (tls-verify,
 * client-connect, client-disconnect, learn-address) without blocking the acceptor's loop.
 *
 * One run follows openvpn 2.6's order (plugin.c plugin_call_ssl, multi.c client_connect_handlers,
 * learn_address_script, ssl_verify.c verify_cert): for each plugin event type of the request in
 * turn, every plugin that wants it, in config order (all of them are called even after one
 * failed, as plugin_call_ssl does); then the script. A failed event type ends the run unless the
 * request says the script runs regardless (learn-address). Plugins get the request's
 * environment without script_type (2.6 removes it for plugin calls); the script gets it with
 * script_type. A plugin call runs on that plugin's thread (server/hooks/plugin.h); the script is a
 * child process (server/hooks/script.h). OVPN_PLUGIN_FUNC_DEFERRED counts as a failure unless
 * the request is deferrable (client-connect: the result then says so, and the caller waits for
 * the answer, server/control/client_connect.c).
 *
 * Runs marked serial (learn-address) run one at a time in the order they were started, so that
 * an address's "delete" and a later "add" reach the script in that order, as 2.6 (one thread)
 * calls them. Other runs overlap freely.
 *
 * Everything here runs on the thread of the loop given to hooks_new (the acceptor's).
 */
#ifndef SERVER_HOOKS_HOOKS_H
#define SERVER_HOOKS_HOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "server/hooks/script.h"

struct mailbox;
struct hooks;
struct hook_run;
struct plugin_set;
struct plugin_client;

#define HOOK_MAX_TYPES 2

/* What to run. Everything is copied by hook_run_start: the caller may free it afterwards. */
struct hook_req {
    const char *what;                       /* for log lines: "client-connect", ... */
    int types[HOOK_MAX_TYPES];              /* plugin event types, called in this order */
    size_t n_types;                         /* 0..HOOK_MAX_TYPES */
    char *const *type_argv[HOOK_MAX_TYPES]; /* per type: plugin argv after its path; NULL none */
    char *const *script;                    /* the command's words (argv[0] is the program); NULL:
                                             * no script */
    char *const *script_args;               /* appended after the words; NULL none */
    const char *script_type;                /* $script_type for the script */
    const struct script_env *env;           /* the variables (without script_type) */
    bool is_script_after_failure;           /* learn-address: the script runs even when a plugin
                                             * failed (2.6 learn_address_script) */
    bool is_serial;                         /* one at a time, in start order (see above) */
    bool is_deferrable; /* client-connect: a plugin's OVPN_PLUGIN_FUNC_DEFERRED is no failure;
                         * the result says is_deferred (2.6 multi.c CC_RET_DEFERRED) */
    struct plugin_client *client; /* the client's plugin contexts (the run takes a reference
                                   * until it ends), or NULL: the server's (plugin.h) */
};

/* How a run ended, passed to its callback: is_ok, why (the step that failed and how, for the
 * log; "" when ok), and config: the "config" values CLIENT_CONNECT_V2 and
 * CLIENT_CONNECT_DEFER_V2 plugins returned, one per line ("" if none). Both strings belong to
 * the run and are valid during the callback. is_deferred: a deferrable run's plugin answered
 * OVPN_PLUGIN_FUNC_DEFERRED and none failed (is_ok is true then, config is dropped). */
struct hook_result {
    bool is_ok;
    const char *why;
    const char *config;
    bool is_deferred;
};

typedef void (*hook_done_cb)(void *ctx, const struct hook_result *res);

/* A runner on loop for the plugins of ps (borrowed; may be NULL: no plugins). loop's thread owns
 * box `who` of mb (server/thread/mailbox.h): plugin calls that return on the plugins' threads
 * come back through it as MSG_CALL messages, which that thread runs (msg_call_run). Returns 0 or
 * -errno. */
int hooks_new(uv_loop_t *loop, struct mailbox *mb, int who, struct plugin_set *ps,
              struct hooks **out);

/* Whether a run for this event would do anything: a plugin wants type, or script is set. */
bool hooks_wanted(const struct hooks *h, int type, char *const *script);

/* Start a run; done(ctx, result) is called later on the loop, never from inside this call.
 * *out is for hook_run_cancel. Returns 0, -ENOMEM, -ESHUTDOWN (hooks_shutdown was called), or
 * the error of a plugin call or script that could not be started (then done is never called).
 */
int hook_run_start(struct hooks *h, const struct hook_req *req, hook_done_cb done, void *ctx,
                   struct hook_run **out);

/* A run nobody waits for (client-disconnect, learn-address delete): a failure is logged as a
 * warning naming ctx_name (the client). Returns 0 or -errno as hook_run_start. */
int hook_run_detached(struct hooks *h, const struct hook_req *req, const char *ctx_name);

/* Forget a run: done is not called; its script is killed if it runs; a plugin call in progress
 * finishes on its thread and is then dropped. NULL is a no-op. */
void hook_run_cancel(struct hook_run *r);

/* Stop taking new runs. Runs still going (detached ones, such as the client-disconnect scripts
 * started at shutdown) get up to grace_ms to finish; then their scripts are killed. The handles
 * hooks keeps on the loop are closed once no run is left, so the loop can end. */
void hooks_shutdown(struct hooks *h, uint64_t grace_ms);

/* cb(ctx) runs once h's handles close: after hooks_shutdown, when its last run has finished (or
 * was killed at the grace period). Until then the loop's thread must keep taking its mailbox
 * box, through which plugin calls come back. Loop thread, before hooks_shutdown. */
void hooks_on_closed(struct hooks *h, void (*cb)(void *ctx), void *ctx);

/* Free h after hooks_shutdown and after the loop and the plugin threads have stopped (plugin
 * calls that returned late are freed here). NULL is a no-op. */
void hooks_free(struct hooks *h);

/* Runs not yet finished. */
size_t hooks_n_running(const struct hooks *h);

#endif /* SERVER_HOOKS_HOOKS_H */
