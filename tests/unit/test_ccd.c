/* tests/unit/test_ccd.c: client-config-dir files, the per-client push list and the route table.
 *
 * Expected behaviour from openvpn 2.6 (options.c for the directives, push.c push_reset /
 * push_remove_option for the list edits, multi.c multi_client_connect_source_ccd for the file
 * choice). IPv6 prefixes come from 2001:2::/48 (RFC 5180, the IPv6 benchmarking range).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "proto/errors.h"
#include "proto/peer_info.h"
#include "proto/push.h"
#include "proto/comp.h"
#include "server/config/ccd.h"
#include "server/addr/vroute.h"

#define ERR_LEN 600

static void parse_ok(struct ccd *c, const char *text)
{
    char err[ERR_LEN] = "";

    if (ccd_parse_string(c, "ccd/alice", text, err, sizeof(err)) != 0) {
        fail_msg("unexpected error: %s", err);
    }
}

static void parse_error(const char *text, const char *expected)
{
    struct ccd c;
    char err[ERR_LEN] = "";

    assert_int_equal(ccd_parse_string(&c, "ccd/alice", text, err, sizeof(err)), -EINVAL);
    assert_string_equal(err, expected);
    ccd_free(&c);
}

static void directives(void **state)
{
    struct ccd c;
    char text[80];
    uint8_t a6[16];

    (void)state;
    parse_ok(&c, "# alice's laptop\n"
                 "ifconfig-push 198.19.0.50 255.255.255.0\n"
                 "ifconfig-ipv6-push 2001:2:0:19::50/64 2001:2:0:19::1\n"
                 "iroute 198.19.50.0 255.255.255.0\n"
                 "iroute 198.19.51.7\n"
                 "iroute-ipv6 2001:2:0:50::/64\n"
                 "push \"route 198.19.60.0 255.255.255.0\"\n"
                 "push-remove dhcp-option\n"
                 "push-reset\n");
    assert_true(c.has_ifconfig_push);
    assert_int_equal(c.ifconfig_local, 0xC6130032u);
    assert_int_equal(c.ifconfig_netmask, 0xFFFFFF00u);
    assert_true(c.has_ifconfig_ipv6_push);
    assert_int_equal(c.ifconfig_ipv6_bits, 64);
    inet_pton(AF_INET6, "2001:2:0:19::50", a6);
    assert_memory_equal(c.ifconfig_ipv6, a6, 16);
    assert_true(c.has_ifconfig_ipv6_remote);
    assert_int_equal(c.n_iroutes, 3);
    assert_string_equal(vroute_key_str(&c.iroutes[0], text, sizeof(text)), "198.19.50.0/24");
    assert_string_equal(vroute_key_str(&c.iroutes[1], text, sizeof(text)), "198.19.51.7/32");
    assert_string_equal(vroute_key_str(&c.iroutes[2], text, sizeof(text)), "2001:2:0:50::/64");
    assert_int_equal(c.n_push_ops, 3);
    assert_int_equal(c.push_ops[0].kind, CCD_PUSH);
    assert_string_equal(c.push_ops[0].text, "route 198.19.60.0 255.255.255.0");
    assert_int_equal(c.push_ops[1].kind, CCD_PUSH_REMOVE);
    assert_int_equal(c.push_ops[2].kind, CCD_PUSH_RESET);
    assert_false(c.is_disabled);
    ccd_free(&c);

    parse_ok(&c, "disable\r\n");
    assert_true(c.is_disabled);
    ccd_free(&c);

    /* A file written with CRLF whose last line has no LF (this once looped for ever). */
    parse_ok(&c, "iroute 198.19.52.0 255.255.255.0\r\npush-reset\r");
    assert_int_equal(c.n_iroutes, 1);
    assert_int_equal(c.n_push_ops, 1);
    assert_int_equal(c.push_ops[0].kind, CCD_PUSH_RESET);
    ccd_free(&c);
}

static void bad_lines(void **state)
{
    (void)state;
    parse_error("\n\nifconfig-push 198.19.0.300 255.255.255.0\n",
                "ccd/alice:3: ifconfig-push: '198.19.0.300' is not an IPv4 address");
    parse_error("ifconfig-push 198.19.0.5 255.0.255.300\n",
                "ccd/alice:1: ifconfig-push: '255.0.255.300' is not an IPv4 netmask or remote "
                "address");
    parse_error("ifconfig-push 198.19.0.5\n", "ccd/alice:1: ifconfig-push: needs 2 arguments");
    parse_error("iroute 198.19.50.1 255.255.255.0\n",
                "ccd/alice:1: iroute: '198.19.50.1' has bits set outside its prefix");
    parse_error("iroute-ipv6 2001:2:0:50::\n",
                "ccd/alice:1: iroute-ipv6: '2001:2:0:50::' needs a prefix length (ADDRESS/BITS)");
    parse_error("push \"route 198.19.1.0 255.255.255.0,route 198.19.2.0\"\n",
                "ccd/alice:1: push: a pushed option cannot contain a comma (','): 'route "
                "198.19.1.0 255.255.255.0,route 198.19.2.0'");
    parse_error("push \"unterminated\n", "ccd/alice:1: push: no closing quotation (\")");
    parse_error("disable now\n", "ccd/alice:1: disable: takes at most 0 arguments");
    parse_error("port 1194\n", "ccd/alice:1: port: not allowed in a client-config-dir file");
    parse_error("ping 10\n",
                "ccd/alice:1: ping: not implemented yet in ovpnd in a client-config-dir file");
    parse_error("inactive -5\n",
                "ccd/alice:1: inactive: '-5' is not a number from 0 to 2147483647");
    parse_error("max-routes-per-client 0\n",
                "ccd/alice:1: max-routes-per-client: '0' is not a number from 1 to 2147483647");
    parse_error("session-timeout 5 6\n", "ccd/alice:1: session-timeout: takes at most 1 argument");
    parse_error("frobnicate\n", "ccd/alice:1: frobnicate: unknown directive");
}

static void push_list_edits(void **state)
{
    static const char *const global[] = {
        "route 198.19.1.0 255.255.255.0",
        "dhcp-option DNS 198.19.0.1",
        "dhcp-option DOMAIN example.org",
        "route-gateway 198.19.0.1",
        "topology subnet",
    };
    const char *out[16];
    size_t n;
    bool no_if, no_if6;
    struct ccd c;

    (void)state;
    /* No file: the global list as is. */
    assert_int_equal(ccd_push_list(NULL, global, 5, out, 16, &n, &no_if, &no_if6), 0);
    assert_int_equal(n, 5);
    assert_false(no_if);

    /* push-remove is a plain prefix match on the option text; a later push stays. */
    parse_ok(&c, "push-remove dhcp-option\npush \"dhcp-option DNS 198.19.0.53\"\n"
                 "push-remove ifconfig\n");
    assert_int_equal(ccd_push_list(&c, global, 5, out, 16, &n, &no_if, &no_if6), 0);
    assert_int_equal(n, 4);
    assert_string_equal(out[0], "route 198.19.1.0 255.255.255.0");
    assert_string_equal(out[1], "route-gateway 198.19.0.1");
    assert_string_equal(out[3], "dhcp-option DNS 198.19.0.53");
    assert_true(no_if);
    assert_false(no_if6);
    ccd_free(&c);

    /* push-reset drops everything before it, route-gateway and topology included (as 2.6). */
    parse_ok(&c, "push \"route 198.19.9.0 255.255.255.0\"\npush-reset\n"
                 "push \"topology subnet\"\n");
    assert_int_equal(ccd_push_list(&c, global, 5, out, 16, &n, &no_if, &no_if6), 0);
    assert_int_equal(n, 1);
    assert_string_equal(out[0], "topology subnet");
    ccd_free(&c);

    parse_ok(&c, "push \"route 198.19.9.0 255.255.255.0\"\n");
    assert_int_equal(ccd_push_list(&c, global, 5, out, 5, &n, &no_if, &no_if6), -ENOSPC);
    ccd_free(&c);
}

/* client-connect outputs apply after the client-config-dir file (ccd_merge), as in 2.6. */
static void merge_outputs(void **state)
{
    static const char *const global[] = {"route 198.19.1.0 255.255.255.0"};
    const char *out[16];
    size_t n;
    bool no_if, no_if6;
    struct ccd file, script;

    (void)state;
    parse_ok(&file, "ifconfig-push 198.19.0.10 255.255.255.0\niroute 198.19.50.0 255.255.255.0\n"
                    "push \"route 198.19.2.0 255.255.255.0\"\n");
    file.path = strdup("ccd/laptop1");
    parse_ok(&script,
             "ifconfig-push 198.19.0.20 255.255.255.0\npush-reset\n"
             "push \"route 198.19.3.0 255.255.255.0\"\niroute 198.19.51.0 255.255.255.0\n");
    script.path = strdup("client-connect script output");
    assert_int_equal(ccd_merge(&file, &script), 0);
    assert_null(script.path);
    assert_int_equal(script.n_push_ops, 0);
    assert_string_equal(file.path, "ccd/laptop1, client-connect script output");
    assert_true(file.has_ifconfig_push);
    assert_int_equal(file.ifconfig_local, 0xc6130014); /* the later one: 198.19.0.20 */
    assert_int_equal(file.n_iroutes, 2);
    assert_int_equal(file.iroutes[1].addr[2], 51);
    assert_false(file.is_disabled);
    /* The script's push-reset drops the global list and the file's push; its own stays. */
    assert_int_equal(ccd_push_list(&file, global, 1, out, 16, &n, &no_if, &no_if6), 0);
    assert_int_equal(n, 1);
    assert_string_equal(out[0], "route 198.19.3.0 255.255.255.0");

    /* `disable` from a later output refuses the client; an empty earlier one takes the path. */
    parse_ok(&script, "disable\n");
    script.path = strdup("plugin config");
    assert_int_equal(ccd_merge(&file, &script), 0);
    assert_true(file.is_disabled);
    assert_true(file.has_ifconfig_push);
    ccd_free(&file);
    memset(&file, 0, sizeof(file));
    parse_ok(&script, "ifconfig-ipv6-push 2001:2::5/64\n");
    script.path = strdup("plugin config");
    assert_int_equal(ccd_merge(&file, &script), 0);
    assert_string_equal(file.path, "plugin config");
    assert_true(file.has_ifconfig_ipv6_push);
    assert_int_equal(file.ifconfig_ipv6_bits, 64);
    ccd_free(&file);
}

static void write_file(const char *path, const char *text);

/* The file a client-connect script wrote: absent or empty is nothing, a bad line is named. */
static void load_written_file(void **state)
{
    char path[] = "/tmp/ovpnd-test-ccd-XXXXXX", err[256] = "";
    struct ccd c;
    bool found = true;
    int fd = mkstemp(path);

    (void)state;
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(
        ccd_load_path(&c, path, "client-connect script output", &found, err, sizeof(err)), 0);
    assert_false(found);
    ccd_free(&c);
    write_file(path, "ifconfig-push 198.19.0.30 255.255.255.0\n");
    assert_int_equal(
        ccd_load_path(&c, path, "client-connect script output", &found, err, sizeof(err)), 0);
    assert_true(found);
    assert_true(c.has_ifconfig_push);
    assert_string_equal(c.path, "client-connect script output");
    ccd_free(&c);
    write_file(path, "ifconfig-push 198.19.0.30\n");
    assert_int_equal(
        ccd_load_path(&c, path, "client-connect script output", &found, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "client-connect script output:1: ifconfig-push"));
    ccd_free(&c);
    unlink(path);
    assert_int_equal(ccd_load_path(&c, path, "x", &found, err, sizeof(err)), 0);
    assert_false(found);
    ccd_free(&c);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A '/' in a common name reads the file with '_' there (openvpn 2.6 platform_gen_path), and a
 * FIFO named after a client does not stop the thread that reads the directory. */
static void load_slash_name_and_fifo(void **state)
{
    char dir[] = "/tmp/ovpnd-ccd-test.XXXXXX", path[128], err[ERR_LEN];
    struct ccd c;
    bool found;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/a_b", dir);
    write_file(path, "ifconfig-push 198.19.0.77 255.255.255.0\n");
    assert_int_equal(ccd_load(&c, dir, "a/b", &found, err, sizeof(err)), 0);
    assert_true(found);
    assert_false(c.is_default);
    assert_true(c.has_ifconfig_push);
    ccd_free(&c);
    unlink(path);

    snprintf(path, sizeof(path), "%s/fifo", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_not_equal(ccd_load(&c, dir, "fifo", &found, err, sizeof(err)), 0);
    ccd_free(&c);
    unlink(path);
    rmdir(dir);
}

static void load_from_directory(void **state)
{
    char dir[] = "/tmp/ovpnd-ccd-test.XXXXXX", path[128], err[ERR_LEN];
    struct ccd c;
    bool found;

    (void)state;
    assert_non_null(mkdtemp(dir));
    /* Nothing there yet. */
    assert_int_equal(ccd_load(&c, dir, "alice", &found, err, sizeof(err)), 0);
    assert_false(found);
    ccd_free(&c);

    snprintf(path, sizeof(path), "%s/DEFAULT", dir);
    write_file(path, "push \"route 198.19.70.0 255.255.255.0\"\n");
    snprintf(path, sizeof(path), "%s/alice", dir);
    write_file(path, "ifconfig-push 198.19.0.50 255.255.255.0\n");

    assert_int_equal(ccd_load(&c, dir, "alice", &found, err, sizeof(err)), 0);
    assert_true(found);
    assert_false(c.is_default);
    assert_true(c.has_ifconfig_push);
    ccd_free(&c);

    /* Another client, and names that cannot be files, get DEFAULT. */
    assert_int_equal(ccd_load(&c, dir, "bob", &found, err, sizeof(err)), 0);
    assert_true(found);
    assert_true(c.is_default);
    assert_int_equal(c.n_push_ops, 1);
    ccd_free(&c);
    assert_int_equal(ccd_load(&c, dir, "../alice", &found, err, sizeof(err)), 0);
    assert_true(c.is_default);
    ccd_free(&c);

    /* A bad line names the file and the line. */
    write_file(path, "ifconfig-push 198.19.0.50 255.255.255.0\niroute nonsense\n");
    assert_int_equal(ccd_load(&c, dir, "alice", &found, err, sizeof(err)), -EINVAL);
    snprintf(path, sizeof(path), "%s/alice:2: iroute: 'nonsense' is not an IPv4 network", dir);
    assert_string_equal(err, path);
    ccd_free(&c);

    snprintf(path, sizeof(path), "%s/alice", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/DEFAULT", dir);
    unlink(path);
    rmdir(dir);
}

struct scan_seen {
    int n_files, n_bad, n_push;
    char bad_error[ERR_LEN];
};

static void scan_cb(void *ctx, const char *path, const struct ccd *c, const char *error)
{
    struct scan_seen *seen = ctx;

    assert_non_null(path);
    seen->n_files++;
    if (!c) {
        assert_non_null(error);
        seen->n_bad++;
        snprintf(seen->bad_error, sizeof(seen->bad_error), "%s", error);
        return;
    }
    assert_null(error);
    if (c->has_ifconfig_push) {
        seen->n_push++;
        assert_int_equal(c->ifconfig_local, 0xC6130032); /* 198.19.0.50 */
    }
}

/* ccd_scan_dir (start-up: the pool keeps the addresses the files push) hands over every regular
 * file, a bad one with its reason, and skips the rest. */
static void scan_directory(void **state)
{
    char dir[] = "/tmp/ovpnd-ccd-scan.XXXXXX", path[160], want[200];
    struct scan_seen seen = {0};

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/alice", dir);
    write_file(path, "ifconfig-push 198.19.0.50 255.255.255.0\n");
    snprintf(path, sizeof(path), "%s/DEFAULT", dir);
    write_file(path, "push \"route 198.19.70.0 255.255.255.0\"\n");
    snprintf(path, sizeof(path), "%s/bob", dir);
    write_file(path, "iroute nonsense\n");
    snprintf(path, sizeof(path), "%s/sub", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/fifo", dir);
    assert_int_equal(mkfifo(path, 0600), 0); /* opening it would wait for a writer */

    assert_int_equal(ccd_scan_dir(dir, scan_cb, &seen), 3);
    assert_int_equal(seen.n_files, 3);
    assert_int_equal(seen.n_bad, 1);
    assert_int_equal(seen.n_push, 1);
    snprintf(want, sizeof(want), "%s/bob:1: iroute: 'nonsense' is not an IPv4 network", dir);
    assert_string_equal(seen.bad_error, want);

    const char *names[] = {"alice", "DEFAULT", "bob", "fifo"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        unlink(path);
    }
    snprintf(path, sizeof(path), "%s/sub", dir);
    rmdir(path);
    rmdir(dir);
    assert_int_equal(ccd_scan_dir(dir, scan_cb, &seen), -ENOENT);
}

struct check_seen {
    int n;
    char msgs[4][200];
};

static void check_cb(void *ctx, const char *msg)
{
    struct check_seen *seen = ctx;

    if (seen->n < 4) {
        snprintf(seen->msgs[seen->n], sizeof(seen->msgs[0]), "%s", msg);
    }
    seen->n++;
}

/* ccd_check_dir (--test-config) reports every bad line of every file, with the connect's
 * parser and messages, and counts the bad files. */
static void check_directory(void **state)
{
    char dir[] = "/tmp/ovpnd-ccd-check.XXXXXX", path[160], want[200];
    struct check_seen seen = {0};

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/alice", dir);
    write_file(path, "ifconfig-push 198.19.0.50 255.255.255.0\n");
    snprintf(path, sizeof(path), "%s/bob", dir);
    write_file(path, "push \"route 198.19.70.0 255.255.255.0\"\npussh \"x\"\niroute nonsense\n");
    assert_int_equal(ccd_check_dir(dir, check_cb, &seen), 1);
    assert_int_equal(seen.n, 2);
    snprintf(want, sizeof(want), "%s/bob:2: pussh: ", dir);
    assert_memory_equal(seen.msgs[0], want, strlen(want));
    snprintf(want, sizeof(want), "%s/bob:3: iroute: 'nonsense' is not an IPv4 network", dir);
    assert_string_equal(seen.msgs[1], want);
    unlink(path);
    snprintf(path, sizeof(path), "%s/alice", dir);
    unlink(path);
    memset(&seen, 0, sizeof(seen));
    assert_int_equal(ccd_check_dir(dir, check_cb, &seen), 0);
    assert_int_equal(seen.n, 0);
    rmdir(dir);
    assert_int_equal(ccd_check_dir(dir, check_cb, &seen), -ENOENT);
}

/* The sample file shipped in sample-config/ccd parses, with what its comments promise. */
static void sample_file(void **state)
{
    char err[ERR_LEN] = "";
    struct ccd c;
    bool found;

    (void)state;
    if (ccd_load(&c, OVPND_SOURCE_DIR "/sample-config/ccd", "branch-router", &found, err,
                 sizeof(err)) != 0) {
        fail_msg("sample-config/ccd/branch-router: %s", err);
    }
    assert_true(found);
    assert_true(c.has_ifconfig_push);
    assert_int_equal(c.n_iroutes, 1);
    assert_int_equal(c.n_push_ops, 1);
    assert_false(c.is_disabled);
    ccd_free(&c);
}

static void route_table(void **state)
{
    struct vroute_table t;
    struct vroute_key k;
    uint8_t a4[4], a6[16];

    (void)state;
    vroute_table_init(&t);
    inet_pton(AF_INET, "198.19.50.0", a4);
    assert_int_equal(vroute_key_make(&k, 4, a4, 24), 0);
    assert_int_equal(vroute_add(&t, &k, 7), 0);
    inet_pton(AF_INET, "198.19.50.128", a4);
    assert_int_equal(vroute_key_make(&k, 4, a4, 25), 0);
    assert_int_equal(vroute_add(&t, &k, 9), 0);
    inet_pton(AF_INET6, "2001:2:0:19::1000", a6);
    assert_int_equal(vroute_key_make(&k, 6, a6, 128), 0);
    assert_int_equal(vroute_add(&t, &k, 3), 0);

    inet_pton(AF_INET, "198.19.50.5", a4);
    assert_int_equal(vroute_lookup(&t, 4, a4), 7);
    inet_pton(AF_INET, "198.19.50.200", a4); /* the longer prefix wins */
    assert_int_equal(vroute_lookup(&t, 4, a4), 9);
    inet_pton(AF_INET, "198.19.51.1", a4);
    assert_int_equal(vroute_lookup(&t, 4, a4), VROUTE_NONE);
    assert_int_equal(vroute_lookup(&t, 6, a6), 3);
    a6[15] ^= 1;
    assert_int_equal(vroute_lookup(&t, 6, a6), VROUTE_NONE);

    /* Delete only removes a route the peer still owns; a newer owner keeps it. */
    inet_pton(AF_INET, "198.19.50.0", a4);
    vroute_key_make(&k, 4, a4, 24);
    assert_int_equal(vroute_add(&t, &k, 11), 0);
    vroute_del(&t, &k, 7);
    inet_pton(AF_INET, "198.19.50.5", a4);
    assert_int_equal(vroute_lookup(&t, 4, a4), 11);
    vroute_key_make(&k, 4, a4, 24); /* host bits are cleared when the key is made */
    vroute_del(&t, &k, 11);
    assert_int_equal(vroute_lookup(&t, 4, a4), VROUTE_NONE);
    assert_int_equal(t.n_entries, 2);
    assert_int_equal(vroute_key_make(&k, 4, a4, 33), -EINVAL);
    assert_int_equal(vroute_key_make(&k, 5, a4, 8), -EINVAL);
    vroute_table_free(&t);
}

static void dns_for_old_clients(void **state)
{
    char out[8][256];
    size_t n;

    (void)state;
    assert_true(push_client_knows_dns(IV_PROTO_DNS_OPTION));
    assert_true(push_client_knows_dns(IV_PROTO_DNS_OPTION_V2));
    assert_false(push_client_knows_dns(IV_PROTO_DATA_V2 | IV_PROTO_TLS_KEY_EXPORT));

    assert_int_equal(push_dns_as_dhcp_option("dns server 1 address 198.19.0.53 "
                                             "[2001:2:0:19::53]:53 198.19.0.54:5353",
                                             out, 8, &n),
                     0);
    assert_int_equal(n, 3);
    assert_string_equal(out[0], "dhcp-option DNS 198.19.0.53");
    assert_string_equal(out[1], "dhcp-option DNS6 2001:2:0:19::53");
    assert_string_equal(out[2], "dhcp-option DNS 198.19.0.54");
    assert_int_equal(
        push_dns_as_dhcp_option("dns search-domains corp.example example.org", out, 8, &n), 0);
    assert_int_equal(n, 2);
    assert_string_equal(out[1], "dhcp-option DOMAIN-SEARCH example.org");
    assert_int_equal(
        push_dns_as_dhcp_option("dns server 1 resolve-domains corp.example", out, 8, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(push_dns_as_dhcp_option("route 198.19.1.0", out, 8, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(push_dns_as_dhcp_option("dns search-domains a b c", out, 2, &n), -PE_NOSPACE);
}

/* inactive, session-timeout and max-routes-per-client: parsed, and a later output's values win
 * when merged (as a client-connect script's file after the client-config-dir file). */
static void session_limits(void **state)
{
    struct ccd a, b;

    (void)state;
    parse_ok(&a, "inactive 600 100000\nsession-timeout 3600\n");
    assert_true(a.has_inactive);
    assert_int_equal(a.inactive_s, 600);
    assert_int_equal(a.inactive_bytes, 100000);
    assert_true(a.has_session_timeout);
    assert_int_equal(a.session_timeout_s, 3600);
    assert_false(a.has_max_routes);
    parse_ok(&b, "inactive 0\nmax-routes-per-client 4\n");
    assert_int_equal(ccd_merge(&a, &b), 0);
    assert_int_equal(a.inactive_s, 0);
    assert_int_equal(a.inactive_bytes, 0);
    assert_int_equal(a.session_timeout_s, 3600);
    assert_true(a.has_max_routes);
    assert_int_equal(a.max_routes, 4);
    ccd_free(&a);
    ccd_free(&b);
}

/* compress / comp-lzo: that client's compression (2.6 OPT_P_COMP in a client instance); a later
 * file's line wins. */
static void compression(void **state)
{
    struct ccd a, b;

    (void)state;
    parse_ok(&a, "compress lz4-v2\n");
    assert_true(a.has_comp);
    assert_int_equal(a.comp_alg, COMP_FRAMING_LZ4_V2);
    parse_ok(&b, "comp-lzo\n");
    assert_int_equal(b.comp_alg, COMP_FRAMING_LZO);
    assert_true(b.comp_is_adaptive);
    assert_int_equal(ccd_merge(&a, &b), 0);
    assert_int_equal(a.comp_alg, COMP_FRAMING_LZO);
    ccd_free(&a);
    ccd_free(&b);
    parse_ok(&a, "comp-lzo no\n");
    assert_int_equal(a.comp_alg, COMP_FRAMING_LZO_STUB);
    ccd_free(&a);
    parse_error("compress zstd\n",
                "ccd/alice:1: compress: 'zstd' must be stub, stub-v2, migrate, lzo, lz4 or lz4-v2");
    parse_error("comp-lzo maybe\n", "ccd/alice:1: comp-lzo: 'maybe' must be yes, no or adaptive");
}

/* vlan-pvid: the client's VLAN (2.6 OPT_P_INSTANCE), 1..4094; a later output's line wins. */
static void vlan_pvid(void **state)
{
    struct ccd a, b;

    (void)state;
    parse_ok(&a, "vlan-pvid 10\n");
    assert_true(a.has_vlan_pvid);
    assert_int_equal(a.vlan_pvid, 10);
    parse_ok(&b, "vlan-pvid 4094\n");
    assert_int_equal(ccd_merge(&a, &b), 0);
    assert_int_equal(a.vlan_pvid, 4094);
    ccd_free(&a);
    ccd_free(&b);
    parse_ok(&a, "disable\n");
    assert_false(a.has_vlan_pvid);
    ccd_free(&a);
    parse_error("vlan-pvid 0\n", "ccd/alice:1: vlan-pvid: '0' is not a number from 1 to 4094");
    parse_error("vlan-pvid 4095\n",
                "ccd/alice:1: vlan-pvid: '4095' is not a number from 1 to 4094");
    parse_error("vlan-pvid\n", "ccd/alice:1: vlan-pvid: needs 1 argument");
}

/* override-username (2.7 OPT_P_INSTANCE): the client's new username; a later output's wins, an
 * output without it keeps the earlier one. */
static void override_username(void **state)
{
    struct ccd a, b;
    char *text = malloc(400);

    (void)state;
    parse_ok(&a, "override-username alice\n");
    assert_string_equal(a.override_username, "alice");
    parse_ok(&b, "push \"route 198.19.1.0 255.255.255.0\"\n");
    assert_int_equal(ccd_merge(&a, &b), 0);
    assert_string_equal(a.override_username, "alice");
    parse_ok(&b, "override-username carol\n");
    assert_int_equal(ccd_merge(&a, &b), 0);
    assert_string_equal(a.override_username, "carol");
    assert_null(b.override_username);
    ccd_free(&a);
    ccd_free(&b);
    parse_error("override-username\n", "ccd/alice:1: override-username: needs 1 argument");
    assert_non_null(text);
    strcpy(text, "override-username ");
    memset(text + strlen(text), 'x', 300);
    strcpy(text + strlen("override-username ") + 300, "\n");
    parse_error(text, "ccd/alice:1: override-username: a word is too long (256 characters max)");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(directives),        cmocka_unit_test(bad_lines),
        cmocka_unit_test(push_list_edits),   cmocka_unit_test(load_from_directory),
        cmocka_unit_test(route_table),       cmocka_unit_test(dns_for_old_clients),
        cmocka_unit_test(sample_file),       cmocka_unit_test(merge_outputs),
        cmocka_unit_test(load_written_file), cmocka_unit_test(session_limits),
        cmocka_unit_test(scan_directory),    cmocka_unit_test(load_slash_name_and_fifo),
        cmocka_unit_test(compression),       cmocka_unit_test(vlan_pvid),
        cmocka_unit_test(check_directory),   cmocka_unit_test(override_username),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
