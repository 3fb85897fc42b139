/* server/hooks/script.h: run a user's script (auth-user-pass-verify, ...) as a child process
 * watched by the caller's libuv loop, so the loop never waits for it.
 *
 * Like openvpn 2.6 (run_command.c openvpn_execve), the program is executed directly (no shell)
 * with only the environment it is given; its stdout and stderr are ovpnd's, its stdin is
 * /dev/null. Each script runs in a process group of its own, so that abandoning it also stops
 * whatever it started and is still waiting for. Everything here runs on the thread of the loop
 * the script was started on.
 */
#ifndef SERVER_HOOKS_SCRIPT_H
#define SERVER_HOOKS_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>

#include <uv.h>

struct script;

/* Called once, on the loop, when the program has ended: exit_status is its exit code (0..255)
 * when it exited, term_signal the signal that ended it (0 if none). Not called for a script
 * that was abandoned, nor when it could not be started. */
typedef void (*script_exit_cb)(void *ctx, int exit_status, int term_signal);

/* A growable list of "NAME=value" strings for a script's environment. Caller-owned storage;
 * script_env_clear() frees what it holds. The vars array is NULL-terminated once n > 0. */
struct script_env {
    char **vars;
    size_t n, cap;
};

/* Append NAME=value (copied). A value with a newline is refused, as openvpn refuses it
 * (env_set.c: no multi-line variables). Returns 0, -EINVAL or -ENOMEM. */
int script_env_add(struct script_env *env, const char *name, const char *value);

/* Append a ready "NAME=value" string (copied). Returns 0 or -ENOMEM. */
int script_env_add_raw(struct script_env *env, const char *var);

/* Free the strings (wiping them first: a password may be among them) and the array. */
void script_env_clear(struct script_env *env);

/* Start argv[0] (a path; not looked up in PATH) with argv and env->vars on loop. cb(ctx, ...) is
 * called on the loop when it ends, unless script_abandon() came first. *out is the handle for
 * script_abandon(); the script frees itself once it has ended and been reported.
 * Returns 0, or -errno (-ENOENT, -EACCES, -ENOMEM ...) when it could not be started (then cb
 * is never called). */
int script_start(uv_loop_t *loop, char **argv, const struct script_env *env, script_exit_cb cb,
                 void *ctx, struct script **out);

/* The caller no longer wants the result: SIGKILL the script's process group (unless it has
 * ended). cb is not called after this; the handle is released once the exit is seen, so a
 * loop being shut down runs until then (a SIGKILLed process goes at once). */
void script_abandon(struct script *s);

/* The directory for scripts' temporary files: dir (`tmp-dir`) when set, else $TMPDIR, else
 * /tmp (openvpn 2.6 options.c). */
const char *script_tmp_dir(const char *dir);

/* Create an empty mode-0600 file DIR/ovpnd-TAG-XXXXXX (DIR from script_tmp_dir(dir)); its path
 * goes to path (path_len bytes). Returns 0, or -errno with path set to "". */
int script_make_temp(const char *dir, const char *tag, char *path, size_t path_len);

/* The process id of the running script (for log lines). */
int script_pid(const struct script *s);

#endif /* SERVER_HOOKS_SCRIPT_H */
