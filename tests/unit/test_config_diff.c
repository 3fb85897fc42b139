/* tests/unit/test_config_diff.c: what a reload (SIGHUP) applies and what needs a restart
 * (server/config/config_diff.h). Each case parses the running config and the edited one, as
 * the server does at a reload, and compares them.
 *
 * Every test runs in tests/unit/data/config (the certificates of test_config.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/config/config.h"
#include "server/config/config_diff.h"

#define DATA_DIR OVPND_SOURCE_DIR "/tests/unit/data/config"

#define BASE                                                                                       \
    "dev tun\n"                                                                                    \
    "topology subnet\n"                                                                            \
    "ca ca.crt\n"                                                                                  \
    "cert server.crt\n"                                                                            \
    "key server.key\n"

static void parse(struct config *cfg, const char *text)
{
    char err[512];

    config_init(cfg);
    if (config_parse_string(cfg, "t.conf", text, err, sizeof(err)) != 0) {
        fail_msg("'%s' does not parse: %s", text, err);
    }
}

/* The diff from old to next (config texts). */
static struct config_diff diff(const char *old, const char *next)
{
    struct config o, n;
    struct config_diff d;

    parse(&o, old);
    parse(&n, next);
    config_diff(&o, &n, &d);
    config_free(&o);
    config_free(&n);
    return d;
}

static bool names(const struct config_diff *d, const char *name)
{
    for (size_t i = 0; i < d->n_restart; i++) {
        if (strcmp(d->restart[i], name) == 0) {
            return true;
        }
    }
    return false;
}

#define SERVER24 "server 198.19.0.0 255.255.255.0\n"

static void same_config_changes_nothing(void **state)
{
    struct config_diff d = diff(BASE SERVER24 "keepalive 10 60\npush \"route 198.19.9.0 "
                                              "255.255.255.0\"\n",
                                BASE SERVER24 "keepalive 10 60\npush \"route 198.19.9.0 "
                                              "255.255.255.0\"\n");

    (void)state;
    assert_int_equal(d.applied, 0);
    assert_int_equal(d.n_restart, 0);
}

static void inline_block_with_the_same_text_is_no_change(void **state)
{
    char *text = NULL;
    FILE *f = fopen("ca.crt", "r");
    char pem[8192];
    size_t len;
    struct config_diff d;

    (void)state;
    assert_non_null(f);
    len = fread(pem, 1, sizeof(pem) - 1, f);
    fclose(f);
    pem[len] = '\0';
    assert_true(asprintf(&text,
                         "dev tun\ntopology subnet\n<ca>\n%s</ca>\ncert server.crt\nkey "
                         "server.key\n" SERVER24,
                         pem) > 0);
    d = diff(BASE SERVER24, text);
    free(text);
    assert_int_equal(d.applied & CONFIG_RELOAD_TLS, 0);
    assert_int_equal(d.n_restart, 0);
}

static void reloadable_parts(void **state)
{
    struct config_diff d;

    (void)state;
    d = diff(BASE SERVER24, BASE SERVER24 "push \"route 198.19.77.0 255.255.255.0\"\n");
    assert_int_equal(d.applied, CONFIG_RELOAD_PUSH);
    assert_int_equal(d.n_restart, 0);
    d = diff(BASE SERVER24, BASE SERVER24 "crl-verify crl.pem\n");
    assert_int_equal(d.applied, CONFIG_RELOAD_CRL);
    d = diff(BASE SERVER24, BASE SERVER24 "extra-certs ca.crt\n");
    assert_int_equal(d.applied, CONFIG_RELOAD_TLS);
    d = diff(BASE SERVER24 "keepalive 10 60\n", BASE SERVER24 "keepalive 5 30\n");
    assert_int_equal(d.applied, CONFIG_RELOAD_KEEPALIVE);
    d = diff(BASE SERVER24 "verb 1\n", BASE SERVER24 "verb 4\n");
    assert_int_equal(d.applied, CONFIG_RELOAD_VERB);
    d = diff(BASE SERVER24, BASE SERVER24 "max-clients 10\n");
    assert_int_equal(d.applied, CONFIG_RELOAD_MAX_CLIENTS);
    d = diff(BASE SERVER24, BASE SERVER24 "connect-freq 5 10\n");
    assert_int_equal(d.applied, CONFIG_RELOAD_CONNECT_FREQ);
    d = diff(BASE SERVER24, BASE SERVER24 "client-config-dir " DATA_DIR "\n");
    assert_int_equal(d.applied, CONFIG_RELOAD_CCD);
    d = diff(BASE SERVER24 "script-security 2\n",
             BASE SERVER24 "script-security 2\nclient-connect /bin/true\n");
    assert_int_equal(d.applied, CONFIG_RELOAD_SCRIPTS);
    assert_int_equal(d.n_restart, 0);
}

static void pool_grows_and_shrinks(void **state)
{
    struct config_diff d;

    (void)state;
    d = diff(BASE SERVER24, BASE "server 198.19.0.0 255.255.254.0\n");
    assert_int_equal(d.applied, CONFIG_RELOAD_POOL);
    assert_int_equal(d.n_restart, 0);
    assert_false(d.is_pool_shrink);
    d = diff(BASE SERVER24, BASE "server 198.19.0.0 255.255.255.128\n");
    assert_int_equal(d.applied, CONFIG_RELOAD_POOL);
    assert_int_equal(d.n_restart, 0);
    assert_true(d.is_pool_shrink);
    d = diff(BASE SERVER24, BASE "server 198.19.4.0 255.255.255.0\n");
    assert_int_equal(d.applied, 0);
    assert_true(names(&d, "server"));
    assert_false(d.is_pool_shrink);
}

static void restart_only_directives_are_named(void **state)
{
    struct config_diff d;

    (void)state;
    d = diff(BASE SERVER24 "port 1194\nproto udp\nworkers 2\n",
             "dev tun3\ntopology subnet\nca ca.crt\ncert server.crt\nkey server.key\n" SERVER24
             "port 1195\nproto udp\nworkers 3\nuser nobody\ntun-mtu 1400\n"
             "push \"route 198.19.77.0 255.255.255.0\"\n");
    assert_int_equal(d.applied, CONFIG_RELOAD_PUSH);
    assert_true(names(&d, "dev"));
    assert_true(names(&d, "local/port/proto"));
    assert_true(names(&d, "workers"));
    assert_true(names(&d, "user"));
    assert_true(names(&d, "tun-mtu"));
    assert_true(names(&d, "mssfix")); /* (its default follows tun-mtu) */
    assert_int_equal(d.n_restart, 6);
    d = diff(BASE SERVER24, BASE SERVER24 "tls-crypt ta.key\n");
    assert_true(names(&d, "tls-crypt"));
    d = diff(BASE SERVER24, BASE "topology net30\n" SERVER24);
    assert_true(names(&d, "topology"));
    d = diff(BASE SERVER24 "client-nat snat 198.19.0.0 255.255.255.0 198.19.7.0\n",
             BASE SERVER24 "client-nat snat 198.19.0.0 255.255.255.0 198.19.8.0\n");
    assert_true(names(&d, "client-nat"));
    assert_int_equal(d.n_restart, 1);
    d = diff(BASE SERVER24 "client-nat snat 198.19.0.0 255.255.255.0 198.19.7.0\n",
             BASE SERVER24 "client-nat snat 198.19.0.0 255.255.255.0 198.19.7.0\n");
    assert_int_equal(d.n_restart, 0);
    /* applied once at start-up (the device's queue, the nice value before any thread): a reload
     * keeps the running values; remap-usr1 changes nothing a server does, so nothing to keep */
    d = diff(BASE SERVER24 "txqueuelen 77\nnice 5\nremap-usr1 SIGTERM\n",
             BASE SERVER24 "txqueuelen 100\nnice 2\nremap-usr1 SIGHUP\n");
    assert_true(names(&d, "txqueuelen"));
    assert_true(names(&d, "nice"));
    assert_false(names(&d, "remap-usr1"));
    assert_int_equal(d.n_restart, 2);
    assert_int_equal(d.applied, 0);
#define TAP "dev tap\nca ca.crt\ncert server.crt\nkey server.key\n" SERVER24
    /* the VLAN settings: a worker reads them for every frame */
    d = diff(TAP, TAP "vlan-tagging\n");
    assert_true(names(&d, "vlan-tagging/vlan-accept/vlan-pvid"));
    assert_int_equal(d.n_restart, 1);
    d = diff(TAP "vlan-tagging\n", TAP "vlan-tagging\nvlan-pvid 10\n");
    assert_true(names(&d, "vlan-tagging/vlan-accept/vlan-pvid"));
    d = diff(TAP "vlan-tagging\n", TAP "vlan-tagging\nvlan-accept untagged\n");
    assert_true(names(&d, "vlan-tagging/vlan-accept/vlan-pvid"));
    d = diff(TAP "vlan-tagging\nvlan-pvid 10\n", TAP "vlan-pvid 10\nvlan-tagging\n");
    assert_int_equal(d.n_restart, 0);
#undef TAP
}

/* The overlay the server builds: a copy of the config in force that takes the reloadable
 * settings of the new file; freeing it frees those and nothing of the running config (run
 * under ASan, a double free or leak fails here). */
static void take_and_free_reloadable(void **state)
{
    struct config o, n, overlay;

    (void)state;
    parse(&o, BASE SERVER24 "push \"route 198.19.9.0 255.255.255.0\"\n");
    parse(&n, BASE SERVER24 "push \"route 198.19.77.0 255.255.255.0\"\ncrl-verify crl.pem\n"
                            "client-config-dir " DATA_DIR "\nkeepalive 5 30\n");
    overlay = o;
    config_reload_take(&overlay, &n);
    assert_int_equal(overlay.net.push.n_items, 1);
    assert_string_equal(overlay.net.push.items[0], "route 198.19.77.0 255.255.255.0");
    assert_non_null(overlay.tls.crl.data);
    assert_int_equal(overlay.timers.keepalive_ping_s, 5);
    assert_null(n.net.push.items);
    assert_null(n.tls.ca.data);
    assert_string_equal(overlay.net.dev, o.net.dev); /* the running config's, shared */
    config_free(&n);
    config_reload_free(&overlay);
    assert_string_equal(o.net.push.items[0], "route 198.19.9.0 255.255.255.0");
    config_free(&o);
}

static int setup(void **state)
{
    (void)state;
    return chdir(DATA_DIR);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_config_changes_nothing),
        cmocka_unit_test(inline_block_with_the_same_text_is_no_change),
        cmocka_unit_test(reloadable_parts),
        cmocka_unit_test(pool_grows_and_shrinks),
        cmocka_unit_test(restart_only_directives_are_named),
        cmocka_unit_test(take_and_free_reloadable),
    };

    return cmocka_run_group_tests(tests, setup, NULL);
}
