/* server/hooks/plugin_native.h: plugins written for ovpnd's own interface (plugins/include/
 * ovpnd_plugin.h), behind the same calls as OpenVPN plugins (server/hooks/plugin.h).
 *
 * server/hooks/plugin.c loads both kinds; for a library that exports ovpnd_plugin_open it uses
 * these functions, which turn each OpenVPN event call (type, argv, envp) into the matching hook:
 * TLS_VERIFY -> tls_verify, AUTH_USER_PASS_VERIFY -> auth_user_pass, CLIENT_CONNECT_V2 ->
 * address_assign then client_connect (their result is the "config" returned, applied like a
 * client-config-dir file), CLIENT_DISCONNECT -> client_disconnect, LEARN_ADDRESS ->
 * learn_address. So both kinds share the dispatch, the threads, the ordering and hand-window.
 */
#ifndef SERVER_HOOKS_PLUGIN_NATIVE_H
#define SERVER_HOOKS_PLUGIN_NATIVE_H

#include "plugins/include/ovpnd_plugin.h"

struct ovpn_plugin_string_list;

struct native_plugin {
    struct ovpnd_plugin_host host; /* first: host->log finds the name from it */
    const char *name;              /* the path, for log lines; borrowed from the config */
    struct ovpnd_plugin hooks;
};

/* Call open (the library's ovpnd_plugin_open) for np with argv (NULL-terminated, argv[0] the
 * path; borrowed). *type_mask gets the OpenVPN event bits (1 << OVPN_PLUGIN_*) of the hooks
 * the plugin filled in. Returns 0 or -EINVAL with err (err_len bytes) saying why. Main thread. */
int native_plugin_open(struct native_plugin *np, ovpnd_plugin_open_fn open, const char *name,
                       const char *const *argv, unsigned int *type_mask, char *err, size_t err_len);

/* One event call, on the plugin's thread: type is an OVPN_PLUGIN_* event, argv the event's
 * arguments with argv[0] the path (NULL-terminated), envp the "NAME=value" variables. For
 * CLIENT_CONNECT_V2, *list gets a one-node list {"config", text} (malloc'ed, freed by
 * plugin_string_list_free) when there is config text. Returns OVPN_PLUGIN_FUNC_SUCCESS,
 * _ERROR or _DEFERRED (auth_user_pass said DEFER: the answer comes through the
 * auth_control_file of envp, written by host->auth_done). */
int native_plugin_call(struct native_plugin *np, int type, const char *const *argv,
                       const char *const *envp, struct ovpn_plugin_string_list **list);

/* The plugin's close hook. Main thread. */
void native_plugin_close(struct native_plugin *np);

#endif /* SERVER_HOOKS_PLUGIN_NATIVE_H */
