/* tests/unit/test_pool_persist.c: the ifconfig-pool-persist file (server/addr/pool_persist.c).
 *
 * The format is openvpn 2.6's (pool.c ifconfig_pool_list / ifconfig_pool_read): "CN,IPv4,IPv6"
 * per entry with a common name, IPv4 being the /30 block with topology net30, an empty field
 * for a family without a pool ("alice,198.19.0.2,"). A name 2.6 would write so that it reads
 * back as another (a comma, a leading quote, '#' or ';' first, blanks at either end) is quoted
 * as in RFC 4180; every name reads back exactly as it was.
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
#include <arpa/inet.h>
#include <cmocka.h>

#include "server/addr/pool.h"
#include "server/addr/pool_persist.h"

#define IP(a, b, c, d)                                                                             \
    ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

struct warnings {
    char text[8][300];
    size_t n;
};

static void collect(void *ctx, const char *text)
{
    struct warnings *w = ctx;

    if (w->n < 8) {
        snprintf(w->text[w->n++], sizeof(w->text[0]), "%s", text);
    }
}

static void pool_make(struct ip_pool *p, enum ip_pool_type type, uint32_t start, uint32_t end,
                      const char *ipv6_base)
{
    struct ip_pool_params pp = {.type = type, .start = start, .end = end};
    char why[200];

    if (ipv6_base) {
        pp.has_ipv6 = true;
        pp.ipv6_bits = 64;
        assert_int_equal(inet_pton(AF_INET6, ipv6_base, pp.ipv6_base), 1);
    }
    assert_int_equal(ip_pool_init(p, &pp, why, sizeof(why), NULL, 0), 0);
}

static void parse_lines(void **state)
{
    struct pool_persist_line l;
    char why[300];
    uint8_t want6[16];

    (void)state;
    assert_int_equal(pool_persist_parse_line("alice,198.19.0.2,", &l, why, sizeof(why)), 1);
    assert_string_equal(l.cn, "alice");
    assert_true(l.has_ipv4);
    assert_false(l.has_ipv6);
    assert_int_equal(l.ipv4, IP(198, 19, 0, 2));
    assert_int_equal(pool_persist_parse_line("bob,198.19.0.3", &l, why, sizeof(why)), 1);
    assert_int_equal(l.ipv4, IP(198, 19, 0, 3));
    assert_int_equal(
        pool_persist_parse_line("carol,198.19.0.4,2001:2::1002\r", &l, why, sizeof(why)), 1);
    inet_pton(AF_INET6, "2001:2::1002", want6);
    assert_true(l.has_ipv6);
    assert_memory_equal(l.ipv6, want6, 16);
    assert_int_equal(pool_persist_parse_line("dave,,2001:2::1003", &l, why, sizeof(why)), 1);
    assert_false(l.has_ipv4);
    assert_true(l.has_ipv6);
    /* skipped silently */
    assert_int_equal(pool_persist_parse_line("", &l, why, sizeof(why)), 0);
    assert_int_equal(pool_persist_parse_line("# comment", &l, why, sizeof(why)), 0);
    assert_int_equal(pool_persist_parse_line("; comment", &l, why, sizeof(why)), 0);
    /* malformed */
    assert_int_equal(pool_persist_parse_line("erin,198.19.0.300,", &l, why, sizeof(why)), -1);
    assert_string_equal(why, "invalid IPv4 (198.19.0.300) for CN=erin");
    assert_int_equal(pool_persist_parse_line("erin,198.19.0.5,2001:2::zz", &l, why, sizeof(why)),
                     -1);
    assert_string_equal(why, "invalid IPv6 (2001:2::zz) for CN=erin");
    assert_int_equal(pool_persist_parse_line("erin", &l, why, sizeof(why)), -1);
    assert_string_equal(why, "no address for CN=erin (want CN,IPv4[,IPv6])");
    assert_int_equal(pool_persist_parse_line(",198.19.0.5,", &l, why, sizeof(why)), -1);
    assert_string_equal(why, "no common name");
}

static void parse_quoted(void **state)
{
    struct pool_persist_line l;
    char why[300];

    (void)state;
    assert_int_equal(pool_persist_parse_line("\"a,b\",198.19.0.2,", &l, why, sizeof(why)), 1);
    assert_string_equal(l.cn, "a,b");
    assert_int_equal(l.ipv4, IP(198, 19, 0, 2));
    assert_int_equal(
        pool_persist_parse_line("\"odd, \"\"quoted\"\" client\",198.19.0.3,", &l, why, sizeof(why)),
        1);
    assert_string_equal(l.cn, "odd, \"quoted\" client");
    assert_int_equal(pool_persist_parse_line(" \" x \" ,198.19.0.4\r", &l, why, sizeof(why)), 1);
    assert_string_equal(l.cn, " x ");
    assert_int_equal(pool_persist_parse_line("\"#x\",198.19.0.4,", &l, why, sizeof(why)), 1);
    assert_string_equal(l.cn, "#x");
    /* a quote inside an unquoted name is an ordinary character, as 2.6 reads it */
    assert_int_equal(pool_persist_parse_line("a\"b,198.19.0.5,", &l, why, sizeof(why)), 1);
    assert_string_equal(l.cn, "a\"b");
    /* malformed */
    assert_int_equal(pool_persist_parse_line("\"a,198.19.0.2,", &l, why, sizeof(why)), -1);
    assert_string_equal(why, "common name: no closing quote");
    assert_int_equal(pool_persist_parse_line("\"a\"b,198.19.0.2,", &l, why, sizeof(why)), -1);
    assert_string_equal(why, "common name: text after the closing quote");
    assert_int_equal(pool_persist_parse_line("\"\",198.19.0.2,", &l, why, sizeof(why)), -1);
    assert_string_equal(why, "no common name");
}

/* Names as they come from certificates and usernames (control characters already '_'): each
 * is written, read back into a fresh pool, and finds its own entry, byte for byte. */
static void odd_names_round_trip(void **state)
{
    static const char *const names[] = {
        "odd, \"quoted\" client", /* a comma and quotes */
        "\"quoted\" first",       /* a quote first: 2.6 writes it raw and reads it back */
        "nl_line_client2,198.19.0.9,",
        "x,198.19.0.9",   /* 2.6 would give 198.19.0.9 to "x" on reading */
        "#not a comment", /* a line starting with '#' or ';' would be skipped */
        ";nor this",
        " blank around ",       /* blanks at the ends are trimmed from unquoted fields */
        "back\\slash 'single'", /* nothing special */
        "\xc3\xa9t\xc3\xa9",    /* UTF-8 */
    };
    const size_t n = sizeof(names) / sizeof(names[0]);
    struct warnings w = {.n = 0};
    struct ip_pool p, q;
    char *text = NULL;
    size_t len = 0, idx[16], i = 0;

    (void)state;
    pool_make(&p, IP_POOL_INDIV, IP(198, 19, 0, 2), IP(198, 19, 0, 254), "2001:2::1000");
    pool_make(&q, IP_POOL_INDIV, IP(198, 19, 0, 2), IP(198, 19, 0, 254), "2001:2::1000");
    /* an earlier entry, so that none of the names sits where a fresh pool would put it */
    assert_int_equal(ip_pool_acquire(&p, "first", &i), 0);
    for (size_t k = 0; k < n; k++) {
        assert_int_equal(ip_pool_acquire(&p, names[k], &idx[k]), 0);
    }
    assert_int_equal(pool_persist_format(&p, &text, &len), 0);
    assert_int_equal(strlen(text), len);
    assert_int_equal(pool_persist_apply(&q, "t", text, false, collect, &w), n + 1);
    assert_int_equal(w.n, 0);
    for (size_t k = 0; k < n; k++) {
        assert_string_equal(ip_pool_cn(&q, idx[k]), names[k]);
    }
    /* a name that plain "CN,IPv4,IPv6" would have split claims nothing for its first part */
    assert_int_equal(ip_pool_acquire(&q, "x", &i), 0);
    assert_int_not_equal(ip_pool_addr(&q, i), IP(198, 19, 0, 9));
    free(text);
    ip_pool_clear(&q);
    ip_pool_clear(&p);
}

/* A name with a line break or another control character cannot come from the server (they
 * are '_' by then); if one is in the pool it is left out of the file, not written as lines. */
static void control_characters_not_written(void **state)
{
    struct ip_pool p;
    char *text = NULL;
    size_t len = 0, i = 0;

    (void)state;
    pool_make(&p, IP_POOL_INDIV, IP(198, 19, 0, 2), IP(198, 19, 0, 254), NULL);
    assert_int_equal(ip_pool_acquire(&p, "alice", &i), 0);
    assert_int_equal(ip_pool_acquire(&p, "evil\nclient2,198.19.0.9,", &i), 0);
    assert_int_equal(ip_pool_acquire(&p, "tab\there", &i), 0);
    assert_int_equal(ip_pool_acquire(&p, "bob", &i), 0);
    assert_int_equal(pool_persist_format(&p, &text, &len), 0);
    assert_string_equal(text, "alice,198.19.0.2,\nbob,198.19.0.5,\n");
    free(text);
    ip_pool_clear(&p);
}

static void apply_file(void **state)
{
    static const char text[] = "# written by hand\n"
                               "alice,198.19.0.7,\n"
                               "bob,198.19.0.2,\n"
                               "not an address line\n"
                               "carol,198.19.1.9,\n"
                               "\n"
                               "dave,198.19.0.3,2001:2::1009\n"
                               "erin,,2001:2::1004";
    struct warnings w = {.n = 0};
    struct ip_pool p;
    size_t i = 0;

    (void)state;
    pool_make(&p, IP_POOL_INDIV, IP(198, 19, 0, 2), IP(198, 19, 0, 20), "2001:2::1000");
    assert_int_equal(pool_persist_apply(&p, "ipp.txt", text, false, collect, &w), 4);
    assert_int_equal(w.n, 3);
    assert_string_equal(w.text[0], "ipp.txt:4: no address for CN=not an address line (want "
                                   "CN,IPv4[,IPv6])");
    assert_string_equal(w.text[1], "ipp.txt:5: IPv4 (198.19.1.9) out of pool range for CN=carol");
    assert_string_equal(w.text[2], "ipp.txt:7: IPv4 and IPv6 (2001:2::1009) name different "
                                   "pool entries for CN=dave: the IPv4 one is used");
    assert_string_equal(ip_pool_cn(&p, 5), "alice");
    assert_string_equal(ip_pool_cn(&p, 0), "bob");
    assert_string_equal(ip_pool_cn(&p, 1), "dave");
    assert_string_equal(ip_pool_cn(&p, 4), "erin"); /* from the IPv6 address alone */
    /* each gets its own back, in any order; others get the entries nobody had */
    assert_int_equal(ip_pool_acquire(&p, "alice", &i), 0);
    assert_int_equal(i, 5);
    assert_int_equal(ip_pool_acquire(&p, "frank", &i), 0);
    assert_int_equal(i, 2);
    assert_int_equal(ip_pool_acquire(&p, "bob", &i), 0);
    assert_int_equal(i, 0);
    ip_pool_clear(&p);
}

static void format_round_trip(void **state)
{
    struct warnings w = {.n = 0};
    struct ip_pool p, q;
    char *text = NULL;
    size_t len = 0, i = 0;

    (void)state;
    /* net30: the file names the block, as 2.6 writes it */
    pool_make(&p, IP_POOL_NET30, IP(198, 19, 0, 4), IP(198, 19, 0, 251), NULL);
    assert_int_equal(ip_pool_acquire(&p, "alice", &i), 0);
    assert_int_equal(ip_pool_acquire(&p, "bob", &i), 0);
    assert_int_equal(ip_pool_acquire(&p, NULL, &i), 0); /* remembers nobody: not written */
    assert_int_equal(pool_persist_format(&p, &text, &len), 0);
    assert_string_equal(text, "alice,198.19.0.4,\nbob,198.19.0.8,\n");
    assert_int_equal(len, strlen(text));
    pool_make(&q, IP_POOL_NET30, IP(198, 19, 0, 4), IP(198, 19, 0, 251), NULL);
    assert_int_equal(pool_persist_apply(&q, "t", text, false, collect, &w), 2);
    assert_int_equal(w.n, 0);
    assert_int_equal(ip_pool_acquire(&q, "bob", &i), 0);
    assert_int_equal(ip_pool_addr(&q, i), IP(198, 19, 0, 10));
    free(text);
    ip_pool_clear(&q);
    ip_pool_clear(&p);

    /* IPv6 too */
    pool_make(&p, IP_POOL_INDIV, IP(198, 19, 0, 2), IP(198, 19, 0, 254), "2001:2::1000");
    assert_int_equal(ip_pool_acquire(&p, "alice", &i), 0);
    assert_int_equal(pool_persist_format(&p, &text, &len), 0);
    assert_string_equal(text, "alice,198.19.0.2,2001:2::1000\n");
    free(text);
    ip_pool_clear(&p);
}

static void write_and_load(void **state)
{
    char dir[] = "/tmp/test_pool_persist.XXXXXX", path[300], *text = NULL;
    struct ip_pool p;
    size_t i = 0;
    FILE *f;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/ipp.txt", dir);
    pool_make(&p, IP_POOL_INDIV, IP(198, 19, 0, 2), IP(198, 19, 0, 254), NULL);
    assert_int_equal(pool_persist_load(&p, path, false), 0); /* no file yet: nothing */
    assert_int_equal(ip_pool_acquire(&p, "alice", &i), 0);
    assert_int_equal(ip_pool_acquire(&p, "bob", &i), 0);
    assert_int_equal(pool_persist_write(&p, path, -1), 0);
    ip_pool_clear(&p);
    f = fopen(path, "r");
    assert_non_null(f);
    text = calloc(1, 200);
    assert_int_equal(fread(text, 1, 199, f), strlen("alice,198.19.0.2,\nbob,198.19.0.3,\n"));
    fclose(f);
    assert_string_equal(text, "alice,198.19.0.2,\nbob,198.19.0.3,\n");
    free(text);
    /* fixed (SECONDS 0): bob's address is his alone */
    pool_make(&p, IP_POOL_INDIV, IP(198, 19, 0, 2), IP(198, 19, 0, 3), NULL);
    assert_int_equal(pool_persist_load(&p, path, true), 2);
    assert_int_equal(ip_pool_acquire(&p, "carol", &i), -ENOSPC);
    assert_int_equal(ip_pool_acquire(&p, "bob", &i), 0);
    assert_int_equal(i, 1);
    ip_pool_clear(&p);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_lines),          cmocka_unit_test(parse_quoted),
        cmocka_unit_test(odd_names_round_trip), cmocka_unit_test(control_characters_not_written),
        cmocka_unit_test(apply_file),           cmocka_unit_test(format_round_trip),
        cmocka_unit_test(write_and_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
