/* server/hooks/auth.h: checking a client's username and password with the operator's plugins
 * (AUTH_USER_PASS_VERIFY) and auth-user-pass-verify script, without ever blocking the acceptor's
 * loop.
 *
 * As in openvpn 2.6 (ssl_verify.c verify_user_pass), every plugin that wants the event and the
 * script must accept; they are asked in config order, plugins first, and the first refusal
 * ends the check. A plugin call runs on that plugin's own thread (server/hooks/plugin.h) and
 * returns OVPN_PLUGIN_FUNC_SUCCESS, _ERROR, or _DEFERRED, after which its answer is read from the
 * auth control file like a deferred script's. Plugins always get $password (openvpn gives plugins
 * the whole environment); the script only with via-env.
 *
 * The script runs as a child process (server/hooks/script.h). Its result follows openvpn 2.6
 * (ssl_verify.c verify_user_pass_script, doc/man-sections/script-options.rst):
 *   exit 0: accepted; exit 2: deferred, the script (or what it started) later writes "1"
 *   (accepted) or "0" (refused) as the first byte of the file named in $auth_control_file;
 *   any other exit, or a signal: refused.
 * On refusal, non-empty text in $auth_failed_reason_file becomes the client's
 * "AUTH_FAILED,<text>". With via-file the username and password are the first two lines of a
 * mode-0600 temporary file in tmp-dir, whose path is the script's last argument; the file is
 * removed as soon as the script exits. With via-env they are in $username and $password.
 * Other variables: script_type=user-pass-verify, common_name, untrusted_ip, untrusted_port, the
 * client's IV_* and UV_* peer-info, auth_pending_file, config, verb, daemon, and setenv lines;
 * with auth-gen-token also session_id and session_state (server/hooks/auth_token.h).
 *
 * Everything here runs on the acceptor thread. A request that outlives its client is cancelled
 * by the caller (auth_cancel): its script, if still running, is killed with its process group,
 * and its files are removed.
 */
#ifndef SERVER_HOOKS_AUTH_H
#define SERVER_HOOKS_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include <netinet/in.h>
#include <uv.h>

#include "server/config/config.h"
#include "server/addr/udp_addr.h"

struct auth;
struct auth_req;
struct mailbox;
struct plugin_set;
struct plugin_client;
struct script_env;

/* What the checks are told about the client. Borrowed for the duration of auth_start(). */
struct auth_client {
    const char *common_name; /* CN of the client certificate, or "UNDEF" without one */
    const char *username;    /* as sent in key method 2, "" if none */
    const char *password;
    union udp_addr remote;
    const char *peer_info;        /* the client's NAME=value\n peer-info lines ("" if none) */
    const char *session_id;       /* auth-gen-token: $session_id, or NULL */
    const char *session_state;    /* auth-gen-token: $session_state, or NULL */
    struct plugin_client *client; /* its plugin contexts (server/hooks/plugin.h), or NULL; the
                                   * request keeps a reference until it ends */
};

/* Result of a request, called once on the acceptor's loop (never from inside auth_start).
 * client_reason: text for "AUTH_FAILED,<text>" (already cleaned by auth_failed_message rules
 * when sent), or NULL; log_reason: why, for the server log. The request is freed after the
 * callback returns: the caller must forget its pointer and not cancel it. */
typedef void (*auth_done_cb)(void *ctx, bool is_ok, const char *client_reason,
                             const char *log_reason);

/* The checks configured in cfg (borrowed, must outlive the struct), run on loop, whose thread
 * owns box `who` of mb (server/thread/mailbox.h): plugin calls that return on the plugins'
 * threads come back through it as MSG_CALL messages, which that thread runs (msg_call_run). Loads
 * and opens the `plugin`s (server/hooks/plugin.h), so call it on the main thread before privileges
 * are dropped, with loop initialised. Returns 0 and *out, or -errno with errbuf (errbuf_len bytes)
 * saying why ("FILE:LINE: plugin: ..."). With verify-client-cert none or optional, refuses
 * (-EINVAL, "FILE:LINE: verify-client-cert: ...", naming the plugins' lines) a config in which
 * neither a script nor a plugin handling AUTH_USER_PASS_VERIFY would check a client that comes
 * without a certificate. */
int auth_new(uv_loop_t *loop, struct mailbox *mb, int who, const struct config *cfg,
             struct auth **out, char *errbuf, size_t errbuf_len);

/* Cancel every pending request (their callbacks are not called; running scripts are killed)
 * and close the handle auth keeps on the loop. Call on the loop's thread before the loop ends;
 * the loop must run on until the killed scripts' exits are seen. */
void auth_shutdown(struct auth *au);

/* Close the plugins (waiting for a call in progress) and free au, after auth_shutdown() and
 * after its loop has stopped. NULL is a no-op. */
void auth_free(struct auth *au);

/* From now on, scripts and plugin calls get env (borrowed: it must outlive au) instead of the
 * variables auth_new knows from the config alone (server/hooks/hook_env.h, hook_env_global). */
void auth_set_global_env(struct auth *au, const struct script_env *env);

/* A reload (control/reload.c) put cfg in force: auth-user-pass-verify and its method come from
 * it for the checks that start from now on (the plugins stay those opened at start-up). cfg must
 * outlive au. Acceptor thread. */
void auth_set_config(struct auth *au, const struct config *cfg);

/* A deferred check wrote auth_pending_file (openvpn 2.6: timeout in seconds, a method the
 * client announced in IV_SSO, the text for INFO_PRE, e.g. "WEB_AUTH::https://..."): tell the
 * client (AUTH_PENDING, INFO_PRE) and let it wait up to timeout_s. ctx is auth_start's. Returns
 * false when that cannot be done; the request is then refused. Called on the loop's thread. */
typedef bool (*auth_pending_cb)(void *ctx, unsigned timeout_s, const char *extra);

/* From now on, requests that answer "deferred" and wrote auth_pending_file call cb (a request
 * whose client does not announce the file's method in IV_SSO is refused with 2.6's client
 * reason, "Authentication failed, required pending auth method '...' not supported"). Without
 * a callback the file is not read. Loop thread. */
void auth_set_pending_cb(struct auth *au, auth_pending_cb cb);

/* The `plugin`s auth_new opened (all of them, whatever events they want), for the other hooks
 * (server/hooks/hooks.h). Valid until auth_free. */
struct plugin_set *auth_plugins(const struct auth *au);

/* Whether a username/password check is configured at all. */
bool auth_is_configured(const struct auth *au);

/* The last word on a key (the first or a renegotiated one) of a client that passed its
 * checks: whether it may have it. has_cert: the client presented a certificate in this key's
 * TLS handshake (it was verified, or the handshake would not have got here);
 * is_user_pass_ok: for this key, a username/password check ran and accepted the client (the
 * script and plugins, or an auth-gen-token token, which only they lead to). A client without a
 * certificate needs is_user_pass_ok, whatever the config: auth_new refuses a config where no
 * check could run, and this stops what start-up cannot see. Rule from openvpn 2.6 ssl.c
 * key_method_2_read: without a username/password check a key needs a verified certificate.
 * When false, *why is the reason for the log (static text). Pure; any thread. */
bool auth_admits(const struct config *cfg, bool has_cert, bool is_user_pass_ok, const char **why);

/* Start checking c. On success *out is the pending request and done(ctx, ...) will be called
 * later. Returns 0, or -errno when the check could not even start (temporary files, fork):
 * then done is never called and the caller refuses the client. */
int auth_start(struct auth *au, const struct auth_client *c, auth_done_cb done, void *ctx,
               struct auth_req **out);

/* The path of r's auth control file ($auth_control_file), where a deferred check (or a
 * client-crresponse script, which 2.6 gives the same variable) writes its answer. Valid while r
 * is pending. */
const char *auth_req_control_file(const struct auth_req *r);

/* Forget a pending request: done is not called; its script is killed if it still runs; its
 * files are removed. NULL is a no-op. */
void auth_cancel(struct auth_req *r);

/* Look at the auth control files of deferred requests (as 2.6 does on its timer) and finish
 * those that have an answer. Call every few hundred ms. */
void auth_tick(struct auth *au);

/* Number of requests waiting for a script or a deferred answer. */
size_t auth_n_pending(const struct auth *au);

/* The AUTH_FAILED control message for reason (NULL or empty: plain "AUTH_FAILED") into out (cap
 * bytes, at least 16). The reason is cut at its first line break and loses any other control
 * character and trailing blanks: 2.6.11+ clients reject control messages with non-printable
 * characters, and nothing may follow the text (no newline). Longer reasons are cut to fit. */
void auth_failed_message(const char *reason, char *out, size_t cap);

#endif /* SERVER_HOOKS_AUTH_H */
