/* server/hooks/updown.c: `up`, `route-up` and `down` (updown.h). */
#include "server/hooks/updown.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "server/hooks/hook_env.h"
#include "server/hooks/plugin.h"
#include "server/hooks/script.h"
#include "server/log/log.h"

#define UPDOWN_ARGS 6 /* DEV TUN_MTU 0 LOCAL REMOTE CONTEXT */

struct updown_wait {
    bool is_done;
    int exit_status, term_signal;
};

static void on_exit_cb(void *ctx, int exit_status, int term_signal)
{
    struct updown_wait *w = ctx;

    w->is_done = true;
    w->exit_status = exit_status;
    w->term_signal = term_signal;
}

/* The plugins for type, with the device's arguments (none without dev), before the script
 * (2.6 run_up_down). */
static int run_plugins(struct plugin_set *ps, int type, const struct updown_dev *dev,
                       const struct script_env *env)
{
    char mtu[16], *args[UPDOWN_ARGS + 1] = {NULL};
    struct plugin_call call;

    if (ps == NULL || plugin_set_count(ps, type) == 0) {
        return 0;
    }
    if (dev != NULL) {
        snprintf(mtu, sizeof(mtu), "%d", dev->tun_mtu);
        args[0] = (char *)(uintptr_t)dev->name;
        args[1] = mtu;
        args[2] = "0";
        args[3] = (char *)(uintptr_t)dev->local;
        args[4] = (char *)(uintptr_t)dev->remote_netmask;
        args[5] = "init";
    }
    memset(&call, 0, sizeof(call));
    call.type = type;
    call.argv = dev != NULL ? args : NULL;
    call.envp = env->vars;
    return plugin_call_all_sync(ps, &call);
}

int updown_run(struct plugin_set *ps, int plugin_type, char *const *cmd, const char *script_type,
               const struct updown_dev *dev, const struct script_env *env)
{
    struct script_env all = {0};
    struct updown_wait w = {0};
    struct script *s = NULL;
    char mtu[16], **argv = NULL;
    size_t n = 0;
    uv_loop_t loop;
    int err;

    err = run_plugins(ps, plugin_type, dev, env);
    if (err || cmd == NULL) {
        return err;
    }
    while (cmd[n] != NULL) {
        n++;
    }
    argv = calloc(n + UPDOWN_ARGS + 1, sizeof(*argv));
    if (argv == NULL) {
        return -ENOMEM;
    }
    memcpy(argv, cmd, n * sizeof(*argv));
    if (dev != NULL) {
        snprintf(mtu, sizeof(mtu), "%d", dev->tun_mtu);
        argv[n++] = (char *)(uintptr_t)dev->name;
        argv[n++] = mtu;
        argv[n++] = "0"; /* 2.6 prints 0 where older versions gave the link MTU */
        argv[n++] = (char *)(uintptr_t)dev->local;
        argv[n++] = (char *)(uintptr_t)dev->remote_netmask;
        argv[n++] = "init";
    }
    err = env ? hook_env_append(&all, env) : 0;
    err = err ? err : script_env_add(&all, "script_type", script_type);
    err = err ? err : uv_loop_init(&loop);
    if (err) {
        script_env_clear(&all);
        free(argv);
        return err;
    }
    log_msg(LOG_INFO, "%s: running %s", script_type, cmd[0]);
    err = script_start(&loop, argv, &all, on_exit_cb, &w, &s);
    while (err == 0 && !w.is_done) {
        uv_run(&loop, UV_RUN_ONCE);
    }
    uv_run(&loop, UV_RUN_NOWAIT); /* the handles the script used close */
    if (uv_loop_close(&loop) != 0) {
        log_msg(LOG_DEBUG, "%s: a handle outlived the script", script_type);
    }
    script_env_clear(&all);
    free(argv);
    if (err) {
        log_msg(LOG_ERR, "%s: cannot run %s: %s", script_type, cmd[0], strerror(-err));
        return err;
    }
    if (w.term_signal != 0 || w.exit_status != 0) {
        log_msg(LOG_ERR, "%s: %s %s %d", script_type, cmd[0],
                w.term_signal ? "was killed by signal" : "exited with",
                w.term_signal ? w.term_signal : w.exit_status);
        return -ECHILD;
    }
    return 0;
}
