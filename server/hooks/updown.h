/* server/hooks/updown.h: the scripts around the TUN device, `up`, `route-up` and `down`, with
 * openvpn 2.6's arguments and environment (init.c run_up_down, do_route).
 *
 * Each runs to its end before the server goes on, as in 2.6: `up` and `route-up` once the
 * device has its addresses and routes, as root, before privileges are dropped; `down` at the
 * end, after the clients are gone, as the user the server runs as then (`user`/`group`), and
 * before the device is closed only with `down-pre`. Arguments after the command's own words, for
 * up and down: DEV TUN_MTU 0 IFCONFIG_LOCAL IFCONFIG_REMOTE_OR_NETMASK CONTEXT ("init"); route-up
 * gets none. Variables: the global ones every script gets (hook_env.h hook_env_global),
 * script_type, and for down the signal that ended the server ("sigterm"). Main thread.
 */
#ifndef SERVER_HOOKS_UPDOWN_H
#define SERVER_HOOKS_UPDOWN_H

struct plugin_set;
struct script_env;

/* What run_up_down passes: the device's name and MTU, its IPv4 address and its netmask
 * (topology subnet) or peer address (net30/p2p), dotted. */
struct updown_dev {
    const char *name;
    int tun_mtu;
    const char *local;
    const char *remote_netmask;
};

/* Call the plugins of ps that want plugin_type (OVPN_PLUGIN_UP, _ROUTE_UP, _DOWN; ps may be
 * NULL), then run cmd (its words, argv[0] a path; NULL: no script) as script_type ("up",
 * "route-up", "down"), each with dev's arguments (NULL: none) and env's variables, and wait for
 * them, as 2.6's run_up_down. Returns 0 when all succeeded, else -ECHILD (a plugin or the script
 * failed: logged), or -errno when the script could not be started. */
int updown_run(struct plugin_set *ps, int plugin_type, char *const *cmd, const char *script_type,
               const struct updown_dev *dev, const struct script_env *env);

#endif /* SERVER_HOOKS_UPDOWN_H */
