/* server/plugin.h: the `plugin PATH [ARGS...]` loader for OpenVPN plugins (the v1/v2/v3
 * interface of server/openvpn_plugin.h), such as Debian's openvpn-plugin-auth-pam.so.
 *
 * Threads: plugins are opened and closed on the main thread, at start-up before privileges are
 * dropped (auth-pam forks its privileged helper then) and at shutdown. Each plugin gets a
 * thread of its own on which all its calls run, one at a time and in order: an OpenVPN plugin
 * expects the single-threaded caller openvpn is, and may block (PAM) without holding up the
 * acceptor. A call that blocks delays only later calls to the same plugin; plugins that answer
 * OVPN_PLUGIN_FUNC_DEFERRED (auth-pam with `setenv deferred_auth_pam 1`) let calls overlap.
 *
 * Events ovpnd calls so far: OVPN_PLUGIN_AUTH_USER_PASS_VERIFY. A plugin that asks for any other
 * event is refused at start-up (openvpn 2.6 refuses unsupported types the same way), so that
 * nothing it expects is silently skipped.
 */
#ifndef SERVER_PLUGIN_H
#define SERVER_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>

#include "server/config.h"

struct plugin_set;

/* One call into a plugin. Caller-owned until done runs; the plugin thread fills result. */
struct plugin_call {
    int type;    /* enum ovpn_plugin_event */
    char **envp; /* NULL-terminated "NAME=value" strings, borrowed */
    int result;  /* OVPN_PLUGIN_FUNC_* once done */
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

/* The path of the index-th plugin for type, for log lines. */
const char *plugin_name(const struct plugin_set *ps, int type, size_t index);

#endif /* SERVER_PLUGIN_H */
