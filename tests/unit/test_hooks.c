/* tests/unit/test_hooks.c: the runner of tls-verify/client-connect/client-disconnect/
 * learn-address plugins and scripts (server/hooks/hooks.c) on a private libuv loop, with the test
 * plugin (tests/plugin/test_plugin.c, "hooks" mode) and small /bin/sh scripts: plugins before
 * the script (openvpn 2.6 plugin_call_ssl, client_connect_handlers), CLIENT_CONNECT's file and
 * CLIENT_CONNECT_V2's "config", a failed plugin stopping the script except for learn-address,
 * serial runs in order, cancel and shutdown killing scripts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_box.h"
#include "server/config/config.h"
#include "server/hooks/hooks.h"
#include "server/hooks/openvpn_plugin.h"
#include "server/hooks/plugin.h"

#define TEST_PLUGIN OVPND_BINARY_DIR "/tests/test_plugin.so"

struct result {
    int n_calls;
    bool is_ok;
    char why[300];
    char config[300];
};

static void on_done(void *ctx, const struct hook_result *res)
{
    struct result *r = ctx;

    r->n_calls++;
    r->is_ok = res->is_ok;
    snprintf(r->why, sizeof(r->why), "%s", res->why);
    snprintf(r->config, sizeof(r->config), "%s", res->config);
}

struct fixture {
    char dir[64], log[128];
    uv_loop_t loop;
    struct test_box box;
    struct config cfg;
    struct config_plugin pl;
    char *pargv[7];
    struct plugin_set *ps;
    struct hooks *h;
};

/* A loop, the test plugin in "hooks" mode with flags (NULL: none) logging to DIR/log, and a
 * runner. */
static void fixture_init(struct fixture *f, const char *flags)
{
    char err[300] = "";
    char *envp[] = {"verb=3", NULL};

    memset(f, 0, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "/tmp/ovpnd-test-hooks-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->log, sizeof(f->log), "%s/log", f->dir);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    test_box_open(&f->box, &f->loop);
    config_init(&f->cfg);
    f->pargv[0] = TEST_PLUGIN;
    f->pargv[1] = "hooks";
    f->pargv[2] = f->log;
    f->pargv[3] = "laptop1";
    f->pargv[4] = "198.19.0.88";
    f->pargv[5] = (char *)(uintptr_t)flags;
    f->pl.argv = f->pargv;
    f->pl.path = TEST_PLUGIN;
    f->pl.where = "t.conf:1";
    f->cfg.hooks.plugins = &f->pl;
    f->cfg.hooks.n_plugins = 1;
    if (plugin_set_open(&f->cfg, envp, &f->ps, err, sizeof(err)) != 0) {
        fail_msg("plugin_set_open: %s", err);
    }
    assert_int_equal(hooks_new(&f->loop, &f->box.mb, TEST_BOX_WHO, f->ps, &f->h), 0);
}

static void fixture_free(struct fixture *f)
{
    char cmd[128];

    hooks_shutdown(f->h, 1000);
    test_box_close(&f->box);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    plugin_set_close(f->ps);
    hooks_free(f->h);
    test_box_free(&f->box, &f->loop);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    f->cfg.hooks.plugins = NULL;
    f->cfg.hooks.n_plugins = 0;
    config_free(&f->cfg);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
    assert_int_equal(system(cmd), 0);
}

static void run_until(struct fixture *f, const int *n_calls, int n)
{
    for (int i = 0; i < 1000 && *n_calls < n; i++) {
        uv_run(&f->loop, UV_RUN_ONCE);
    }
    assert_int_equal(*n_calls, n);
}

static char *read_all(const char *path)
{
    static char buf[4096];
    FILE *fp = fopen(path, "r");
    size_t n = 0;

    if (fp != NULL) {
        n = fread(buf, 1, sizeof(buf) - 1, fp);
        fclose(fp);
    }
    buf[n] = '\0';
    return buf;
}

static void env_init(struct script_env *env, const char *cn)
{
    memset(env, 0, sizeof(*env));
    assert_int_equal(script_env_add(env, "common_name", cn), 0);
    assert_int_equal(script_env_add(env, "verb", "3"), 0);
}

/* /bin/sh -c TEXT sh [ARGS]: the script's argv in a request. */
static char *sh[] = {"/bin/sh", "-c", NULL, "sh", NULL};

static void plugins_then_script(void **state)
{
    struct fixture f;
    struct script_env env;
    struct result r = {0};
    struct hook_req req;
    struct hook_run *run = NULL;
    char script[512], file[160], *plugin_args[] = {file, NULL}, *script_args[] = {"ARG1", NULL};
    char expect[600];

    (void)state;
    fixture_init(&f, "v1");
    snprintf(file, sizeof(file), "%s/cc-file", f.dir);
    snprintf(script, sizeof(script), "echo \"script $script_type $common_name $0 $1\" >>%s", f.log);
    sh[2] = script;
    env_init(&env, "laptop1");
    memset(&req, 0, sizeof(req));
    req.what = "client-connect";
    req.types[0] = OVPN_PLUGIN_CLIENT_CONNECT;
    req.types[1] = OVPN_PLUGIN_CLIENT_CONNECT_V2;
    req.n_types = 2;
    req.type_argv[0] = plugin_args;
    req.script = sh;
    req.script_args = script_args;
    req.script_type = "client-connect";
    req.env = &env;
    assert_int_equal(hook_run_start(f.h, &req, on_done, &r, &run), 0);
    assert_int_equal(r.n_calls, 0); /* never from inside the start */
    script_env_clear(&env);         /* copied */
    run_until(&f, &r.n_calls, 1);
    assert_true(r.is_ok);
    assert_string_equal(r.why, "");
    assert_string_equal(r.config, "ifconfig-push 198.19.0.88 255.255.255.0\n");
    /* The plugins saw no script_type (the test plugin fails the call otherwise). */
    snprintf(expect, sizeof(expect),
             "CLIENT_CONNECT %s cn=laptop1\nCLIENT_CONNECT_V2 cn=laptop1\n"
             "script client-connect laptop1 sh ARG1\n",
             file);
    assert_string_equal(read_all(f.log), expect);
    assert_string_equal(read_all(file), "push \"route 198.19.71.0 255.255.255.0\"\n");
    assert_int_equal(hooks_n_running(f.h), 0);

    /* The script's exit status refuses. */
    snprintf(script, sizeof(script), "exit 3");
    env_init(&env, "laptop2");
    assert_int_equal(hook_run_start(f.h, &req, on_done, &r, &run), 0);
    run_until(&f, &r.n_calls, 2);
    assert_false(r.is_ok);
    assert_string_equal(r.why, "client-connect script exited with status 3");
    assert_string_equal(r.config, ""); /* only for laptop1 */
    script_env_clear(&env);
    fixture_free(&f);
}

static void failed_plugin(void **state)
{
    struct fixture f;
    struct script_env env;
    struct result r = {0};
    struct hook_req req;
    struct hook_run *run = NULL;
    char script[256], *args[] = {"add", "198.19.0.5", "laptop1", NULL};

    (void)state;
    fixture_init(&f, "fail");
    snprintf(script, sizeof(script), "echo \"script $*\" >>%s", f.log);
    sh[2] = script;
    env_init(&env, "laptop1");
    memset(&req, 0, sizeof(req));
    req.what = "client-connect";
    req.types[0] = OVPN_PLUGIN_CLIENT_CONNECT_V2;
    req.n_types = 1;
    req.script = sh;
    req.script_type = "client-connect";
    req.env = &env;
    /* client-connect: a failed plugin ends it, the script does not run. */
    assert_int_equal(hook_run_start(f.h, &req, on_done, &r, &run), 0);
    run_until(&f, &r.n_calls, 1);
    assert_false(r.is_ok);
    assert_non_null(strstr(r.why, "client-connect plugin " TEST_PLUGIN " failed (status 1)"));
    assert_string_equal(read_all(f.log), "CLIENT_CONNECT_V2 cn=laptop1\n");

    /* learn-address: both run (2.6 learn_address_script), the result is a failure. */
    req.what = "learn-address";
    req.types[0] = OVPN_PLUGIN_LEARN_ADDRESS;
    req.type_argv[0] = args;
    req.script_args = args;
    req.script_type = "learn-address";
    req.is_script_after_failure = true;
    req.is_serial = true;
    assert_int_equal(hook_run_start(f.h, &req, on_done, &r, &run), 0);
    run_until(&f, &r.n_calls, 2);
    assert_false(r.is_ok);
    assert_string_equal(read_all(f.log), "CLIENT_CONNECT_V2 cn=laptop1\n"
                                         "LEARN_ADDRESS add 198.19.0.5 laptop1 cn=laptop1\n"
                                         "script add 198.19.0.5 laptop1\n");
    script_env_clear(&env);
    fixture_free(&f);
}

/* Serial runs keep their order even when the first is slow; cancel and shutdown kill scripts. */
static void serial_cancel_shutdown(void **state)
{
    struct fixture f;
    struct script_env env;
    struct result r1 = {0}, r2 = {0}, r3 = {0};
    struct hook_req req;
    struct hook_run *run1 = NULL, *run2 = NULL, *run3 = NULL;
    char slow[256], fast[256], hang[256], pidfile[160], *pid_text;
    pid_t pid;

    (void)state;
    fixture_init(&f, NULL);
    snprintf(slow, sizeof(slow), "sleep 0.3; echo one >>%s", f.log);
    snprintf(fast, sizeof(fast), "echo two >>%s", f.log);
    snprintf(pidfile, sizeof(pidfile), "%s/pid", f.dir);
    snprintf(hang, sizeof(hang), "echo $$ >%s; exec sleep 30", pidfile);
    env_init(&env, "laptop1");
    memset(&req, 0, sizeof(req));
    req.what = "learn-address";
    req.script_type = "learn-address";
    req.env = &env;
    req.is_serial = true;
    {
        char *s1[] = {"/bin/sh", "-c", slow, NULL}, *s2[] = {"/bin/sh", "-c", fast, NULL};

        req.script = s1;
        assert_int_equal(hook_run_start(f.h, &req, on_done, &r1, &run1), 0);
        req.script = s2;
        assert_int_equal(hook_run_start(f.h, &req, on_done, &r2, &run2), 0);
    }
    run_until(&f, &r2.n_calls, 1);
    assert_int_equal(r1.n_calls, 1);
    assert_string_equal(read_all(f.log), "one\ntwo\n");

    /* Cancel: no callback, the script is killed. */
    {
        char *s3[] = {"/bin/sh", "-c", hang, NULL};

        req.script = s3;
        req.is_serial = false;
        assert_int_equal(hook_run_start(f.h, &req, on_done, &r3, &run3), 0);
        for (int i = 0; i < 500 && read_all(pidfile)[0] == '\0'; i++) {
            uv_run(&f.loop, UV_RUN_NOWAIT);
            usleep(10000);
        }
        pid_text = read_all(pidfile);
        pid = (pid_t)atoi(pid_text);
        assert_true(pid > 0);
        hook_run_cancel(run3);
        for (int i = 0; i < 500 && kill(pid, 0) == 0; i++) {
            uv_run(&f.loop, UV_RUN_NOWAIT);
            usleep(10000);
        }
        assert_int_equal(kill(pid, 0), -1);
        assert_int_equal(r3.n_calls, 0);

        /* Shutdown: a detached run gets the grace period, then its script is killed. */
        unlink(pidfile);
        assert_int_equal(hook_run_detached(f.h, &req, "laptop1/198.18.0.2:1194"), 0);
        for (int i = 0; i < 500 && read_all(pidfile)[0] == '\0'; i++) {
            uv_run(&f.loop, UV_RUN_NOWAIT);
            usleep(10000);
        }
        pid = (pid_t)atoi(read_all(pidfile));
        assert_true(pid > 0);
        hooks_shutdown(f.h, 100);
        assert_int_equal(hook_run_start(f.h, &req, on_done, &r3, &run3), -ESHUTDOWN);
        test_box_close(&f.box);          /* (its handle would keep the loop running) */
        uv_run(&f.loop, UV_RUN_DEFAULT); /* ends once the killed script is reaped */
        assert_int_equal(kill(pid, 0), -1);
        assert_int_equal(hooks_n_running(f.h), 0);
    }
    script_env_clear(&env);
    fixture_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plugins_then_script),
        cmocka_unit_test(failed_plugin),
        cmocka_unit_test(serial_cancel_shutdown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
