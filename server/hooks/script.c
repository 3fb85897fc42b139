/* server/hooks/script.c: see script.h. */
#include "server/hooks/script.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mbedtls/platform_util.h>

struct script {
    uv_process_t proc;
    script_exit_cb cb;
    void *ctx;
    bool has_exited;
    bool is_closing;
};

int script_env_add_raw(struct script_env *env, const char *var)
{
    char *copy;

    if (env->n + 2 > env->cap) {
        size_t cap = env->cap ? env->cap * 2 : 32;
        char **grown = realloc(env->vars, cap * sizeof(*grown));

        if (grown == NULL) {
            return -ENOMEM;
        }
        env->vars = grown;
        env->cap = cap;
    }
    copy = strdup(var);
    if (copy == NULL) {
        return -ENOMEM;
    }
    env->vars[env->n++] = copy;
    env->vars[env->n] = NULL;
    return 0;
}

int script_env_add(struct script_env *env, const char *name, const char *value)
{
    size_t len = strlen(name) + strlen(value) + 2;
    char *var;
    int err;

    if (strpbrk(value, "\r\n") != NULL || name[0] == '\0' || strchr(name, '=') != NULL) {
        return -EINVAL;
    }
    var = malloc(len);
    if (var == NULL) {
        return -ENOMEM;
    }
    snprintf(var, len, "%s=%s", name, value);
    err = script_env_add_raw(env, var);
    mbedtls_platform_zeroize(var, len);
    free(var);
    return err;
}

void script_env_clear(struct script_env *env)
{
    for (size_t i = 0; i < env->n; i++) {
        mbedtls_platform_zeroize(env->vars[i], strlen(env->vars[i]));
        free(env->vars[i]);
    }
    free(env->vars);
    memset(env, 0, sizeof(*env));
}

static void on_close(uv_handle_t *h)
{
    free(h->data);
}

static void on_proc_exit(uv_process_t *proc, int64_t exit_status, int term_signal)
{
    struct script *s = proc->data;

    s->has_exited = true;
    if (s->cb != NULL) {
        s->cb(s->ctx, (int)exit_status, term_signal);
    }
    if (!s->is_closing) {
        s->is_closing = true;
        uv_close((uv_handle_t *)proc, on_close);
    }
}

int script_start(uv_loop_t *loop, char **argv, const struct script_env *env, script_exit_cb cb,
                 void *ctx, struct script **out)
{
    static char *no_env[] = {NULL};
    struct script *s = calloc(1, sizeof(*s));
    uv_stdio_container_t stdio[3];
    uv_process_options_t opt;
    int err;

    if (s == NULL) {
        return -ENOMEM;
    }
    memset(&opt, 0, sizeof(opt));
    stdio[0].flags = UV_IGNORE; /* libuv opens /dev/null */
    stdio[1].flags = UV_INHERIT_FD;
    stdio[1].data.fd = 1;
    stdio[2].flags = UV_INHERIT_FD;
    stdio[2].data.fd = 2;
    opt.file = argv[0];
    opt.args = argv;
    opt.env = env->n > 0 ? env->vars : no_env;
    opt.exit_cb = on_proc_exit;
    opt.stdio = stdio;
    opt.stdio_count = 3;
    opt.flags = UV_PROCESS_DETACHED; /* setsid(): its own process group, see script_abandon */
    s->cb = cb;
    s->ctx = ctx;
    s->proc.data = s;
    err = uv_spawn(loop, &s->proc, &opt);
    if (err) {
        /* libuv initialised the handle: it must still be closed. */
        s->cb = NULL;
        s->is_closing = true;
        uv_close((uv_handle_t *)&s->proc, on_close);
        return err;
    }
    *out = s;
    return 0;
}

void script_abandon(struct script *s)
{
    if (s == NULL) {
        return;
    }
    s->cb = NULL;
    /* The handle stays open until the exit is seen, so that libuv reaps the child. */
    if (!s->has_exited && s->proc.pid > 0) {
        kill(-s->proc.pid, SIGKILL); /* the group: a shell script's own children too */
    }
}

const char *script_tmp_dir(const char *dir)
{
    if (dir == NULL || dir[0] == '\0') {
        dir = getenv("TMPDIR");
    }
    return dir != NULL && dir[0] != '\0' ? dir : "/tmp";
}

int script_make_temp(const char *dir, const char *tag, char *path, size_t path_len)
{
    int fd, len = snprintf(path, path_len, "%s/ovpnd-%s-XXXXXX", script_tmp_dir(dir), tag);

    if (len < 0 || (size_t)len >= path_len) {
        path[0] = '\0';
        return -ENAMETOOLONG;
    }
    fd = mkstemp(path); /* mode 0600 */
    if (fd < 0) {
        int err = -errno;

        path[0] = '\0';
        return err;
    }
    close(fd);
    return 0;
}

int script_pid(const struct script *s)
{
    return s->proc.pid;
}
