/* server/hooks/plugin.h: the `plugin PATH [ARGS...]` loader for OpenVPN plugins (the v1/v2/v3
 * interface of server/hooks/openvpn_plugin.h), such as Debian's openvpn-plugin-auth-pam.so.
 *
 * Threads: plugins are opened and closed on the main thread, at start-up before privileges are
 * dropped (auth-pam forks its privileged helper then) and at shutdown. Each plugin gets a
 * thread of its own on which all its calls run, one at a time and in order: an OpenVPN plugin
 * expects the single-threaded caller openvpn is, and may block (PAM) without holding up the
 * acceptor. A call that blocks delays only later calls to the same plugin; plugins that answer
 * OVPN_PLUGIN_FUNC_DEFERRED (auth-pam with `setenv deferred_auth_pam 1`) let calls overlap.
 *
 * Events ovpnd calls: AUTH_USER_PASS_VERIFY (server/hooks/auth.h), TLS_VERIFY, CLIENT_CONNECT,
 * CLIENT_CONNECT_V2, CLIENT_DISCONNECT, LEARN_ADDRESS and CLIENT_CRRESPONSE (server/hooks/hooks.h),
 * CLIENT_CONNECT_DEFER and CLIENT_CONNECT_DEFER_V2 while a client-connect answer is deferred
 * (server/control/client_connect.c), TLS_FINAL (server/control/client_hooks.c), and UP,
 * ROUTE_UP, ROUTE_PREDOWN and DOWN (server/server.c, with the up/down scripts). A plugin that asks
 * for any other event (IPCHANGE ...) is refused at start-up, naming the events (openvpn 2.6 refuses
 * unsupported types the same way), so that nothing it expects is silently skipped.
 *
 * Per-client contexts (openvpn 2.6 plugin.c, plugin_per_client_init and _destroy): a plugin
 * that exports openvpn_plugin_client_constructor_v1 gets a context of its own for each client
 * session (struct plugin_client, made when the session is, before its first event) and one for
 * the server, made right after the plugin opens. Every call for a client passes the client's
 * context as per_client_context (TLS_VERIFY, AUTH_USER_PASS_VERIFY, TLS_FINAL,
 * CLIENT_CONNECT(_V2), CLIENT_CONNECT_DEFER(_V2), LEARN_ADDRESS add/update, CLIENT_DISCONNECT,
 * CLIENT_CRRESPONSE); the events without a client (UP, DOWN, ROUTE_UP, ROUTE_PREDOWN and
 * LEARN_ADDRESS delete, which 2.6 calls for an address, not a client) pass the server's.
 * The constructor and destructor of a client's context run on the plugin's thread, in order
 * with its other calls; the destructor after the last call made for that client (2.6 too
 * skips it for a NULL context). The server's context is destroyed just before the plugin is
 * closed.
 */
#ifndef SERVER_HOOKS_PLUGIN_H
#define SERVER_HOOKS_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>

#include "server/config/config.h"

struct ovpn_plugin_string_list;

struct plugin_set;
struct plugin_client;

/* One call into a plugin. Caller-owned until done runs; the plugin thread fills result. */
struct plugin_call {
    int type;    /* enum ovpn_plugin_event */
    char **argv; /* arguments after argv[0] (the plugin path), NULL-terminated, borrowed; NULL:
                  * none */
    char **envp; /* NULL-terminated "NAME=value" strings, borrowed */
    int result;  /* OVPN_PLUGIN_FUNC_* once done */
    /* Set before the call: keep what the plugin returns (name/value list, e.g. "config" from
     * CLIENT_CONNECT_V2) in return_list, which the caller then frees with
     * plugin_string_list_free(). Otherwise it is freed at once. */
    bool wants_return_list;
    struct ovpn_plugin_string_list *return_list;
    /* The client the call is for (its per-client contexts), or NULL: the server's context.
     * Borrowed: the caller holds a reference (plugin_client_ref) when it queues the call. */
    struct plugin_client *client;
    /* Called on the plugin's thread when the call has returned; must not block. */
    void (*done)(struct plugin_call *call);
    struct plugin_call *next; /* the plugin's queue */
};

/* dlopen and open every `plugin` of cfg in config order, and start their threads. cfg is
 * borrowed and must outlive the set. envp: the environment handed to open (config, verb,
 * daemon and setenv lines, NULL-terminated). On failure errbuf (errbuf_len bytes) says
 * "FILE:LINE: plugin: ...", every plugin opened so far is closed, and -EINVAL or -ENOMEM is
 * returned. With no `plugin` lines *out is an empty set. Main thread. */
int plugin_set_open(const struct config *cfg, char **envp, struct plugin_set **out, char *errbuf,
                    size_t errbuf_len);

/* Stop the threads (a call in progress is waited for; queued calls are finished with
 * OVPN_PLUGIN_FUNC_ERROR without reaching the plugin), close every plugin, dlclose, free.
 * NULL is a no-op. Main thread. */
void plugin_set_close(struct plugin_set *ps);

/* How many plugins want event type; index them 0..n-1 in config order for plugin_call_start. */
size_t plugin_set_count(const struct plugin_set *ps, int type);

/* Queue call for the index-th plugin that wants call->type. Any thread. Returns 0, or -EINVAL
 * (no such plugin) or -ESHUTDOWN (the set is closing); then done is not called. */
int plugin_call_start(struct plugin_set *ps, size_t index, struct plugin_call *call);

/* Call every plugin that wants call->type, in config order, and wait for each (for the events
 * around the TUN device: UP, ROUTE_UP, DOWN, which openvpn 2.6 calls inline). Stops at the
 * first that does not return OVPN_PLUGIN_FUNC_SUCCESS: returns -ECHILD then (its name in the
 * log), 0 when all succeeded or none wants the event. call is copied for each call (its done is
 * not used); call->result holds the last result. Main thread, while the set is open. */
int plugin_call_all_sync(struct plugin_set *ps, struct plugin_call *call);

/* A client's contexts: queue each constructor on its plugin's thread (none is called for
 * plugins without one) and return the object with one reference, in *out. *out is NULL, and 0
 * returned, when no plugin of ps has a constructor (then nothing is kept per client).
 * Returns -ENOMEM (nothing queued). Any thread; ps must be open. */
int plugin_client_new(struct plugin_set *ps, struct plugin_client **out);

/* Another reference to pc (NULL: no-op); returns pc. Any thread. */
struct plugin_client *plugin_client_ref(struct plugin_client *pc);

/* Drop a reference (NULL: no-op). The last one queues each destructor on its plugin's thread,
 * after every call already queued there; the object is freed when the last has run. No call
 * for pc may be queued after that. Destructors still run while the set closes
 * (plugin_set_close waits for them), so drop the last reference before plugin_set_close
 * returns. Any thread. */
void plugin_client_unref(struct plugin_client *pc);

/* Free a list a plugin returned (each node, name and value were malloc'ed by the plugin, as
 * the OpenVPN plugin interface requires). NULL is a no-op. */
void plugin_string_list_free(struct ovpn_plugin_string_list *l);

/* The path of the index-th plugin for type, for log lines. */
const char *plugin_name(const struct plugin_set *ps, int type, size_t index);

#endif /* SERVER_HOOKS_PLUGIN_H */
