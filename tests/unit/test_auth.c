/* tests/unit/test_auth.c: the auth-user-pass-verify runner (server/hooks/auth.c) with small /bin/sh
 * scripts on a private libuv loop, and the AUTH_FAILED text. The results follow openvpn 2.6
 * (ssl_verify.c verify_user_pass_script): exit 0 accepts, 2 defers to auth_control_file,
 * anything else refuses, with auth_failed_reason_file as the client's reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_box.h"
#include "server/hooks/auth.h"
#include "server/config/config.h"

struct result {
    int n_calls;
    bool is_ok;
    char client_reason[300];
    char log_reason[200];
};

static void on_done(void *ctx, bool is_ok, const char *client_reason, const char *log_reason)
{
    struct result *r = ctx;

    r->n_calls++;
    r->is_ok = is_ok;
    snprintf(r->client_reason, sizeof(r->client_reason), "%s",
             client_reason ? client_reason : "(none)");
    snprintf(r->log_reason, sizeof(r->log_reason), "%s", log_reason);
}

/* A config whose auth-user-pass-verify is `/bin/sh -c SCRIPT sh [FILE]`. */
static void setup_cfg(struct config *cfg, char **argv, const char *script, bool via_file,
                      char *tmpdir)
{
    config_init(cfg);
    argv[0] = "/bin/sh";
    argv[1] = "-c";
    argv[2] = (char *)(uintptr_t)script; /* test-only: the vector is never written */
    argv[3] = "sh";
    argv[4] = NULL;
    cfg->auth.auth_user_pass_verify = argv;
    cfg->auth.auth_user_pass_verify_via_file = via_file;
    cfg->hooks.tmp_dir = tmpdir;
}

static void client_init(struct auth_client *c, const char *user, const char *pass)
{
    memset(c, 0, sizeof(*c));
    c->common_name = "laptop1";
    c->username = user;
    c->password = pass;
    c->remote.in4.sin_family = AF_INET;
    c->remote.in4.sin_port = htons(40000);
    inet_pton(AF_INET, "198.18.0.7", &c->remote.in4.sin_addr);
    c->peer_info = "IV_VER=2.6.14\nIV_PLAT=linux\nIV_BAD-NAME=x\nUV_GROUP=ops\n";
}

/* Run the loop (with auth_tick every 20 ms) until r has an answer, at most ~3 s. */
static void run_until_done(uv_loop_t *loop, struct auth *au, struct result *r)
{
    for (int i = 0; i < 150 && r->n_calls == 0; i++) {
        uv_run(loop, UV_RUN_NOWAIT);
        auth_tick(au);
        usleep(20000);
    }
}

static int count_files(const char *dir)
{
    char cmd[300];
    FILE *p;
    int n = -1;

    snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", dir);
    p = popen(cmd, "r");
    if (p != NULL) {
        if (fscanf(p, "%d", &n) != 1) {
            n = -1;
        }
        pclose(p);
    }
    return n;
}

#define TEST_PLUGIN OVPND_BINARY_DIR "/tests/test_plugin.so"

/* As check() below, with the test plugin (argument plugin_arg) before the script (script NULL:
 * no script). */
static void check_plugin(const char *plugin_arg, const char *script, const char *user,
                         const char *pass, bool expect_ok, const char *expect_log)
{
    char tmpdir[] = "/tmp/ovpnd-test-auth-XXXXXX", *argv[5], err[256];
    char *pargv[] = {TEST_PLUGIN, (char *)(uintptr_t)plugin_arg, NULL};
    struct config_plugin pl = {pargv, TEST_PLUGIN, "t.conf:1"};
    struct config cfg;
    struct auth_client c;
    struct auth_req *req = NULL;
    struct result r = {0};
    uv_loop_t loop;
    struct test_box box;
    struct auth *au;

    assert_non_null(mkdtemp(tmpdir));
    assert_int_equal(uv_loop_init(&loop), 0);
    test_box_open(&box, &loop);
    setup_cfg(&cfg, argv, script ? script : "exit 1", true, tmpdir);
    if (script == NULL) {
        cfg.auth.auth_user_pass_verify = NULL;
    }
    cfg.hooks.plugins = &pl;
    cfg.hooks.n_plugins = 1;
    if (auth_new(&loop, &box.mb, TEST_BOX_WHO, &cfg, &au, err, sizeof(err)) != 0) {
        fail_msg("auth_new: %s", err);
    }
    assert_true(auth_is_configured(au));
    client_init(&c, user, pass);
    assert_int_equal(auth_start(au, &c, on_done, &r, &req), 0);
    run_until_done(&loop, au, &r);
    assert_int_equal(r.n_calls, 1);
    if (r.is_ok != expect_ok || strstr(r.log_reason, expect_log) == NULL) {
        fail_msg("user %s: expected %s (%s), got %s (%s)", user, expect_ok ? "ok" : "refused",
                 expect_log, r.is_ok ? "ok" : "refused", r.log_reason);
    }
    assert_int_equal(count_files(tmpdir), 0);
    auth_shutdown(au);
    test_box_close(&box);
    uv_run(&loop, UV_RUN_DEFAULT);
    auth_free(au);
    test_box_free(&box, &loop);
    assert_int_equal(uv_loop_close(&loop), 0);
    rmdir(tmpdir);
    cfg.auth.auth_user_pass_verify = NULL;
    cfg.hooks.tmp_dir = NULL;
    cfg.hooks.plugins = NULL;
    cfg.hooks.n_plugins = 0;
    config_free(&cfg);
}

/* The plugin is asked first, then the script; each must accept (openvpn 2.6 verify_user_pass).
 * Deferred plugin answers come through auth_control_file. */
static void plugins_then_script(void **state)
{
    (void)state;
    check_plugin("ok", NULL, "good", "pw", true, "test_plugin.so accepted");
    check_plugin("ok", NULL, "bad", "pw", false, "test_plugin.so refused (status 1)");
    check_plugin("ok", NULL, "good", "wrong", false, "refused");
    check_plugin("ok", NULL, "defer", "pw", true, "auth control file says 1");
    check_plugin("ok", "exit 0", "good", "pw", true, "script exited with 0");
    check_plugin("ok", "exit 1", "good", "pw", false, "script exited with 1");
    check_plugin("ok", "exit 0", "bad", "pw", false, "test_plugin.so refused");
}

static void expect_open_error(const char *path, const char *arg, const char *expect)
{
    char tmpdir[] = "/tmp/ovpnd-test-auth-XXXXXX", err[512] = "";
    char *pargv[] = {(char *)(uintptr_t)path, (char *)(uintptr_t)arg, NULL};
    struct config_plugin pl = {pargv, pargv[0], "t.conf:3"};
    struct config cfg;
    uv_loop_t loop;
    struct test_box box;
    struct auth *au = NULL;

    assert_non_null(mkdtemp(tmpdir));
    assert_int_equal(uv_loop_init(&loop), 0);
    test_box_open(&box, &loop);
    config_init(&cfg);
    cfg.hooks.plugins = &pl;
    cfg.hooks.n_plugins = 1;
    assert_int_not_equal(auth_new(&loop, &box.mb, TEST_BOX_WHO, &cfg, &au, err, sizeof(err)), 0);
    if (strstr(err, expect) == NULL) {
        fail_msg("error '%s' does not contain '%s'", err, expect);
    }
    test_box_free(&box, &loop);
    assert_int_equal(uv_loop_close(&loop), 0);
    cfg.hooks.plugins = NULL;
    cfg.hooks.n_plugins = 0;
    config_free(&cfg);
    rmdir(tmpdir);
}

/* Start-up stops with the config line and the reason. */
static void plugin_open_errors(void **state)
{
    (void)state;
    expect_open_error(TEST_PLUGIN, "fail",
                      "t.conf:3: plugin: " TEST_PLUGIN " failed to initialise");
    expect_open_error(TEST_PLUGIN, "want-ipchange",
                      "wants events ovpnd does not call plugins for (IPCHANGE): not "
                      "implemented yet");
    expect_open_error(OVPND_BINARY_DIR "/tests/pam_test_otp.so", "x", "is not an OpenVPN plugin");
    expect_open_error("/nonexistent/plugin.so", "x", "t.conf:3: plugin: cannot load");
}

#define AUTH_CERT_PLUGIN OVPND_BINARY_DIR "/plugins/ovpnd-auth-cert.so"

/* auth_new with verify-client-cert `verify` (from t.conf:2), the plugins given (path and one
 * argument each, from t.conf:3 on; NULL ends the list) and, with script, an
 * auth-user-pass-verify script. expect: NULL when it must start, else the error it must give. */
static void start_certless(int verify, bool script, const char *const *plugins, const char *expect)
{
    char tmpdir[] = "/tmp/ovpnd-test-auth-XXXXXX", *argv[5], err[512] = "";
    char *pargv[4][6], where[4][16];
    struct config_plugin pl[4];
    struct config cfg;
    uv_loop_t loop;
    struct test_box box;
    struct auth *au = NULL;
    size_t n = 0;
    int rc;

    assert_non_null(mkdtemp(tmpdir));
    assert_int_equal(uv_loop_init(&loop), 0);
    test_box_open(&box, &loop);
    setup_cfg(&cfg, argv, "exit 0", true, tmpdir);
    if (!script) {
        cfg.auth.auth_user_pass_verify = NULL;
    }
    for (; plugins[2 * n] != NULL; n++) {
        const char *arg = plugins[2 * n + 1];

        assert_true(n < 4);
        memset(pargv[n], 0, sizeof(pargv[n]));
        pargv[n][0] = (char *)(uintptr_t)plugins[2 * n];
        if (strcmp(arg, "hooks") == 0) { /* TLS_VERIFY and the client hooks, no password */
            pargv[n][1] = "hooks";
            pargv[n][2] = "/dev/null";
            pargv[n][3] = "nobody";
            pargv[n][4] = "198.19.0.9";
        } else {
            pargv[n][1] = (char *)(uintptr_t)arg;
        }
        snprintf(where[n], sizeof(where[n]), "t.conf:%zu", n + 3);
        pl[n] = (struct config_plugin){pargv[n], pargv[n][0], where[n]};
    }
    cfg.hooks.plugins = pl;
    cfg.hooks.n_plugins = n;
    cfg.tls.verify_client_cert = verify;
    cfg.tls.verify_client_cert_where = "t.conf:2";
    rc = auth_new(&loop, &box.mb, TEST_BOX_WHO, &cfg, &au, err, sizeof(err));
    if (expect == NULL) {
        if (rc != 0) {
            fail_msg("auth_new refused: %s", err);
        }
        auth_shutdown(au);
        test_box_close(&box);
        uv_run(&loop, UV_RUN_DEFAULT);
        auth_free(au);
    } else {
        assert_int_not_equal(rc, 0);
        if (strcmp(err, expect) != 0) {
            fail_msg("error\n  '%s'\nexpected\n  '%s'", err, expect);
        }
    }
    test_box_free(&box, &loop);
    assert_int_equal(uv_loop_close(&loop), 0);
    cfg.auth.auth_user_pass_verify = NULL;
    cfg.hooks.tmp_dir = NULL;
    cfg.hooks.plugins = NULL;
    cfg.hooks.n_plugins = 0;
    cfg.tls.verify_client_cert_where = NULL;
    config_free(&cfg);
    rmdir(tmpdir);
}

/* verify-client-cert none|optional: a client without a certificate is identified by its
 * username and password alone, so start-up refuses a config in which nothing would check them:
 * plugins that handle other events only (ovpnd-auth-cert checks certificates), naming their
 * lines. openvpn 2.6 starts with such a config (options.c counts any plugin as a check) and
 * refuses the client at run time (ssl.c key_method_2_read: no username/password check, so the
 * key needs a verified certificate: "Certificate verification failed (key-method 2)"). */
static void certless_needs_password_check(void **state)
{
    static const char *const none[] = {NULL};
    static const char *const auth_cert[] = {AUTH_CERT_PLUGIN, "cn=alice", NULL};
    static const char *const two[] = {AUTH_CERT_PLUGIN, "cn=alice", TEST_PLUGIN, "hooks", NULL};
    static const char *const checker[] = {TEST_PLUGIN, "hooks", TEST_PLUGIN, "ok", NULL};

    (void)state;
    start_certless(CONFIG_VERIFY_OPTIONAL, false, auth_cert,
                   "t.conf:2: verify-client-cert: 'optional' lets clients connect without a "
                   "certificate, but nothing would check their username and password: there is "
                   "no auth-user-pass-verify, and the plugin at t.conf:3 (ovpnd-auth-cert.so) "
                   "does not handle AUTH_USER_PASS_VERIFY");
    start_certless(CONFIG_VERIFY_NONE, false, two,
                   "t.conf:2: verify-client-cert: 'none' lets clients connect without a "
                   "certificate, but nothing would check their username and password: there is "
                   "no auth-user-pass-verify, and none of the plugins at t.conf:3 "
                   "(ovpnd-auth-cert.so), t.conf:4 (test_plugin.so) handles "
                   "AUTH_USER_PASS_VERIFY");
    start_certless(CONFIG_VERIFY_NONE, false, none,
                   "t.conf:2: verify-client-cert: 'none' lets clients connect without a "
                   "certificate, but nothing would check their username and password: there is "
                   "no auth-user-pass-verify, and no plugin");
    /* One of them checks passwords, or the script does; or every client has a certificate. */
    start_certless(CONFIG_VERIFY_OPTIONAL, false, checker, NULL);
    start_certless(CONFIG_VERIFY_NONE, true, auth_cert, NULL);
    start_certless(CONFIG_VERIFY_REQUIRE, false, auth_cert, NULL);
}

/* The run-time rule behind it, for whatever start-up cannot see: a key of a client without a
 * certificate only after a username/password check accepted it for that key. */
static void certless_admission(void **state)
{
    struct config cfg;
    const char *why = NULL;

    (void)state;
    config_init(&cfg);
    for (int v = CONFIG_VERIFY_REQUIRE; v <= CONFIG_VERIFY_NONE; v++) {
        cfg.tls.verify_client_cert = v;
        assert_true(auth_admits(&cfg, true, false, &why));
        assert_true(auth_admits(&cfg, true, true, &why));
        why = NULL;
        assert_false(auth_admits(&cfg, false, false, &why));
        assert_non_null(why);
        assert_true(auth_admits(&cfg, false, true, &why) == (v != CONFIG_VERIFY_REQUIRE));
    }
    cfg.tls.verify_client_cert = CONFIG_VERIFY_OPTIONAL;
    assert_false(auth_admits(&cfg, false, false, &why));
    assert_string_equal(
        why, "no client certificate, and no username/password check accepted this client");
    config_free(&cfg);
}

static void check(const char *script, bool via_file, const char *user, const char *pass,
                  bool expect_ok, const char *expect_client_reason)
{
    char tmpdir[] = "/tmp/ovpnd-test-auth-XXXXXX", *argv[5];
    struct config cfg;
    struct auth_client c;
    struct auth_req *req = NULL;
    struct result r = {0};
    uv_loop_t loop;
    struct test_box box;
    struct auth *au;
    char err[256];

    assert_non_null(mkdtemp(tmpdir));
    assert_int_equal(uv_loop_init(&loop), 0);
    test_box_open(&box, &loop);
    setup_cfg(&cfg, argv, script, via_file, tmpdir);
    assert_int_equal(auth_new(&loop, &box.mb, TEST_BOX_WHO, &cfg, &au, err, sizeof(err)), 0);
    assert_true(auth_is_configured(au));
    client_init(&c, user, pass);
    assert_int_equal(auth_start(au, &c, on_done, &r, &req), 0);
    assert_int_equal(r.n_calls, 0); /* never from inside auth_start */
    assert_int_equal(auth_n_pending(au), 1);
    run_until_done(&loop, au, &r);
    assert_int_equal(r.n_calls, 1);
    if (r.is_ok != expect_ok) {
        fail_msg("script '%s': expected %s, got %s (%s)", script, expect_ok ? "ok" : "refused",
                 r.is_ok ? "ok" : "refused", r.log_reason);
    }
    assert_string_equal(r.client_reason, expect_client_reason);
    assert_int_equal(auth_n_pending(au), 0);
    assert_int_equal(count_files(tmpdir), 0); /* credentials and control files removed */
    auth_shutdown(au);
    test_box_close(&box);
    uv_run(&loop, UV_RUN_DEFAULT);
    auth_free(au);
    test_box_free(&box, &loop);
    assert_int_equal(uv_loop_close(&loop), 0);
    rmdir(tmpdir);
    cfg.auth.auth_user_pass_verify = NULL;
    cfg.hooks.tmp_dir = NULL;
    config_free(&cfg);
}

static void exit_codes(void **state)
{
    (void)state;
    check("exit 0", true, "u", "p", true, "(none)");
    check("exit 1", true, "u", "p", false, "(none)");
    check("exit 3", true, "u", "p", false, "(none)");
    check("kill -9 $$", true, "u", "p", false, "(none)");
}

static void via_file_and_env(void **state)
{
    (void)state;
    /* via-file: the last argument names a mode-0600 file with two lines. */
    check("test \"$(sed -n 1p \"$1\")\" = alice && test \"$(sed -n 2p \"$1\")\" = 's3cret' && "
          "test \"$(stat -c %a \"$1\")\" = 600 && test -z \"$password\" && "
          "test \"$username\" = alice",
          true, "alice", "s3cret", true, "(none)");
    /* via-env: username and password in the environment, no file argument. */
    check("test $# = 0 && test \"$username\" = alice && test \"$password\" = 's3cret'", false,
          "alice", "s3cret", true, "(none)");
    /* What else a 2.6 script sees. */
    check("test \"$script_type\" = user-pass-verify && test \"$common_name\" = laptop1 && "
          "test \"$untrusted_ip\" = 198.18.0.7 && test \"$untrusted_port\" = 40000 && "
          "test \"$IV_VER\" = 2.6.14 && test \"$UV_GROUP\" = ops && test -f \"$auth_control_file\"",
          true, "alice", "pw", true, "(none)");
    /* Only the given environment: nothing of ovpnd's own. */
    setenv("OVPND_TEST_LEAK", "1", 1);
    check("test -z \"$OVPND_TEST_LEAK\"", true, "alice", "pw", true, "(none)");
}

static void deferred_and_reasons(void **state)
{
    (void)state;
    check("(sleep 0.05; echo 1 >\"$auth_control_file\") & exit 2", true, "u", "p", true, "(none)");
    check("(sleep 0.05; echo 0 >\"$auth_control_file\") & exit 2", true, "u", "p", false, "(none)");
    check("echo 1 >\"$auth_control_file\"; exit 2", true, "u", "p", true, "(none)");
    check("printf 'Account locked\\n' >\"$auth_failed_reason_file\"; exit 1", true, "u", "p", false,
          "Account locked\n");
    check("printf 'TEMP[backoff 30]: later' >\"$auth_failed_reason_file\"; "
          "(sleep 0.05; echo 0 >\"$auth_control_file\") & exit 2",
          true, "u", "p", false, "TEMP[backoff 30]: later");
}

/* Whether pid still runs: gone or a zombie (its parent died and init has not reaped it yet)
 * count as ended. */
static bool is_running(int pid)
{
    char path[64], buf[256], *close_paren;
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    f = fopen(path, "r");
    if (f == NULL) {
        return false;
    }
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    close_paren = strrchr(buf, ')');
    return close_paren != NULL && close_paren[1] == ' ' && close_paren[2] != 'Z';
}

/* A cancelled request kills its script's whole process group and never reports. */
static void cancel_kills(void **state)
{
    char tmpdir[] = "/tmp/ovpnd-test-auth-XXXXXX", *argv[5], pidfile[100], script[600];
    struct config cfg;
    struct auth_client c;
    struct auth_req *req = NULL;
    struct result r = {0};
    uv_loop_t loop;
    struct test_box box;
    struct auth *au;
    char err[256];
    FILE *f;
    int pid = 0;

    (void)state;
    assert_non_null(mkdtemp(tmpdir));
    snprintf(pidfile, sizeof(pidfile), "%s/child.pid", tmpdir);
    snprintf(script, sizeof(script), "sleep 30 & echo $! >%s.new; mv %s.new %s; wait", pidfile,
             pidfile, pidfile);
    assert_int_equal(uv_loop_init(&loop), 0);
    test_box_open(&box, &loop);
    setup_cfg(&cfg, argv, script, true, tmpdir);
    assert_int_equal(auth_new(&loop, &box.mb, TEST_BOX_WHO, &cfg, &au, err, sizeof(err)), 0);
    client_init(&c, "u", "p");
    assert_int_equal(auth_start(au, &c, on_done, &r, &req), 0);
    for (int i = 0; i < 100 && access(pidfile, F_OK) != 0; i++) {
        uv_run(&loop, UV_RUN_NOWAIT);
        usleep(10000);
    }
    f = fopen(pidfile, "r");
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%d", &pid), 1);
    fclose(f);
    unlink(pidfile);
    auth_cancel(req);
    assert_int_equal(auth_n_pending(au), 0);
    auth_shutdown(au);
    test_box_close(&box);
    uv_run(&loop, UV_RUN_DEFAULT); /* returns once the killed script's exit is seen */
    assert_int_equal(r.n_calls, 0);
    for (int i = 0; i < 100 && is_running(pid); i++) {
        usleep(10000);
    }
    assert_false(is_running(pid));
    assert_int_equal(count_files(tmpdir), 0);
    auth_free(au);
    test_box_free(&box, &loop);
    assert_int_equal(uv_loop_close(&loop), 0);
    rmdir(tmpdir);
    cfg.auth.auth_user_pass_verify = NULL;
    cfg.hooks.tmp_dir = NULL;
    config_free(&cfg);
}

/* A line break cannot be passed to a script (2.6 refuses such values as well). */
static void newline_in_credentials(void **state)
{
    char tmpdir[] = "/tmp/ovpnd-test-auth-XXXXXX", *argv[5];
    struct config cfg;
    struct auth_client c;
    struct auth_req *req = NULL;
    struct result r = {0};
    uv_loop_t loop;
    struct test_box box;
    struct auth *au;
    char err[256];

    (void)state;
    assert_non_null(mkdtemp(tmpdir));
    assert_int_equal(uv_loop_init(&loop), 0);
    test_box_open(&box, &loop);
    setup_cfg(&cfg, argv, "exit 0", true, tmpdir);
    assert_int_equal(auth_new(&loop, &box.mb, TEST_BOX_WHO, &cfg, &au, err, sizeof(err)), 0);
    client_init(&c, "alice\nbob", "p");
    assert_int_not_equal(auth_start(au, &c, on_done, &r, &req), 0);
    client_init(&c, "alice", "p\r\nq");
    assert_int_not_equal(auth_start(au, &c, on_done, &r, &req), 0);
    assert_int_equal(count_files(tmpdir), 0);
    auth_shutdown(au);
    test_box_close(&box);
    uv_run(&loop, UV_RUN_DEFAULT);
    auth_free(au);
    test_box_free(&box, &loop);
    assert_int_equal(uv_loop_close(&loop), 0);
    assert_int_equal(r.n_calls, 0);
    rmdir(tmpdir);
    cfg.auth.auth_user_pass_verify = NULL;
    cfg.hooks.tmp_dir = NULL;
    config_free(&cfg);
}

static void auth_failed_text(void **state)
{
    char out[64];

    (void)state;
    auth_failed_message(NULL, out, sizeof(out));
    assert_string_equal(out, "AUTH_FAILED");
    auth_failed_message("", out, sizeof(out));
    assert_string_equal(out, "AUTH_FAILED");
    /* The field case: a reason file ends with a newline; nothing may follow the text. */
    auth_failed_message("Password expired\n", out, sizeof(out));
    assert_string_equal(out, "AUTH_FAILED,Password expired");
    auth_failed_message("two\r\nlines", out, sizeof(out));
    assert_string_equal(out, "AUTH_FAILED,two");
    auth_failed_message("tab\there \x01\x7f ", out, sizeof(out));
    assert_string_equal(out, "AUTH_FAILED,tabhere");
    auth_failed_message("\n", out, sizeof(out));
    assert_string_equal(out, "AUTH_FAILED");
    auth_failed_message("TEMP[backoff 30]: try later", out, sizeof(out));
    assert_string_equal(out, "AUTH_FAILED,TEMP[backoff 30]: try later");
    auth_failed_message("a very long reason that does not fit in the small buffer here at all", out,
                        24);
    assert_string_equal(out, "AUTH_FAILED,a very long");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(auth_failed_text),
        cmocka_unit_test(exit_codes),
        cmocka_unit_test(via_file_and_env),
        cmocka_unit_test(deferred_and_reasons),
        cmocka_unit_test(cancel_kills),
        cmocka_unit_test(newline_in_credentials),
        cmocka_unit_test(plugins_then_script),
        cmocka_unit_test(plugin_open_errors),
        cmocka_unit_test(certless_needs_password_check),
        cmocka_unit_test(certless_admission),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
