/* tests/unit/test_ncp.c: server-side cipher choice (section 9.3 of docs/openvpn-protocol.md).
 * Cases marked "captured" are what a stock 2.6.14 server pushed (or refused) for a stock 2.6.14
 * client with the given data-ciphers on both sides; the others follow ssl_ncp.c rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "proto/errors.h"
#include "proto/ncp.h"
#include "proto/peer_info.h"

#define SERVER_DEFAULT "AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305"
#define OPTS_NO_CIPHER                                                                             \
    "V4,dev-type tun,link-mtu 1541,tun-mtu 1500,proto UDPv4,auth SHA1,keysize 128,key-method 2,"   \
    "tls-client"
#define OPTS_CIPHER(c)                                                                             \
    "V4,dev-type tun,link-mtu 1557,tun-mtu 1500,proto UDPv4,cipher " c ",auth SHA1,keysize 256,"   \
    "key-method 2,tls-client"

struct ncp_case {
    const char *name;
    const char *server;
    const char *peer_info; /* NULL: client sent none */
    const char *options;
    const char *fallback;
    const char *want; /* NULL: -PE_UNSUPPORTED */
};

static const struct ncp_case cases[] = {
    /* captured: 2.6.14 defaults on both sides */
    {"defaults", SERVER_DEFAULT,
     "IV_NCP=2\nIV_CIPHERS=AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305\nIV_PROTO=990\n",
     OPTS_NO_CIPHER, NULL, "AES-256-GCM"},
    /* captured: client data-ciphers CHACHA20-POLY1305:AES-128-GCM (no IV_NCP then): server order */
    {"server order wins", SERVER_DEFAULT,
     "IV_CIPHERS=CHACHA20-POLY1305:AES-128-GCM\nIV_PROTO=990\n", OPTS_NO_CIPHER, NULL,
     "AES-128-GCM"},
    /* captured: server data-ciphers CHACHA20-POLY1305:AES-256-GCM, client default */
    {"server prefers chacha", "CHACHA20-POLY1305:AES-256-GCM",
     "IV_NCP=2\nIV_CIPHERS=AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305\n", OPTS_NO_CIPHER, NULL,
     "CHACHA20-POLY1305"},
    /* captured: server AES-128-GCM:AES-256-GCM, client AES-256-GCM:CHACHA20-POLY1305 */
    {"first common in server order", "AES-128-GCM:AES-256-GCM",
     "IV_CIPHERS=AES-256-GCM:CHACHA20-POLY1305\n", OPTS_NO_CIPHER, NULL, "AES-256-GCM"},
    /* captured: server AES-256-GCM, client CHACHA20-POLY1305 -> AUTH_FAILED */
    {"no shared cipher", "AES-256-GCM", "IV_CIPHERS=CHACHA20-POLY1305\n", OPTS_NO_CIPHER, NULL,
     NULL},
    /* IV_NCP=2 without IV_CIPHERS (2.4 clients) means both AES-GCM ciphers */
    {"IV_NCP=2 only", "CHACHA20-POLY1305:AES-128-GCM:AES-256-GCM", "IV_NCP=2\n", OPTS_NO_CIPHER,
     NULL, "AES-128-GCM"},
    {"IV_NCP=2 no overlap", "CHACHA20-POLY1305", "IV_NCP=2\n", OPTS_NO_CIPHER, "AES-256-CBC", NULL},
    {"IV_NCP=1 is no list", "AES-256-GCM", "IV_NCP=1\n", OPTS_NO_CIPHER, NULL, NULL},
    /* IV_NCP=2 plus the OCC cipher: either may match, server order decides */
    {"IV_NCP=2 and OCC cipher", "BF-CBC:AES-256-GCM", "IV_NCP=2\n", OPTS_CIPHER("BF-CBC"), NULL,
     "BF-CBC"},
    /* no NCP at all: the cipher in the client's options string */
    {"OCC cipher only", "AES-256-GCM:AES-256-CBC", "IV_VER=2.3.18\n", OPTS_CIPHER("AES-256-CBC"),
     NULL, "AES-256-CBC"},
    {"OCC cipher, no peer-info", "AES-256-GCM:AES-256-CBC", NULL, OPTS_CIPHER("AES-256-CBC"), NULL,
     "AES-256-CBC"},
    /* with IV_CIPHERS the OCC cipher is ignored */
    {"IV_CIPHERS beats OCC", "AES-256-CBC:AES-128-GCM", "IV_CIPHERS=AES-128-GCM\n",
     OPTS_CIPHER("AES-256-CBC"), NULL, "AES-128-GCM"},
    {"IV_CIPHERS, OCC not used", "AES-256-CBC", "IV_CIPHERS=AES-128-GCM\n",
     OPTS_CIPHER("AES-256-CBC"), "AES-256-CBC", NULL},
    /* fallback only for clients that said nothing about ciphers */
    {"fallback", SERVER_DEFAULT, "IV_VER=2.3.18\n", OPTS_NO_CIPHER, "AES-256-CBC", "AES-256-CBC"},
    {"fallback, no options", SERVER_DEFAULT, NULL, NULL, "BF-CBC", "BF-CBC"},
    {"no fallback configured", SERVER_DEFAULT, NULL, NULL, NULL, NULL},
    {"OCC cipher blocks fallback", SERVER_DEFAULT, NULL, OPTS_CIPHER("AES-128-CBC"), "AES-128-CBC",
     NULL},
    {"empty IV_CIPHERS", SERVER_DEFAULT, "IV_CIPHERS=\n", OPTS_NO_CIPHER, "AES-256-CBC",
     "AES-256-CBC"},
    /* server list normalised like 2.6 reads --data-ciphers */
    {"server list case", "aes-256-gcm:?chacha20-poly1305", "IV_CIPHERS=CHACHA20-POLY1305\n",
     OPTS_NO_CIPHER, NULL, "CHACHA20-POLY1305"},
    {"null cipher", "AES-256-GCM:none", NULL, OPTS_CIPHER("[null-cipher]"), NULL, "none"},
    /* names are whole list entries, never prefixes */
    {"no prefix match", "AES-256-GCM", "IV_CIPHERS=AES-256-GCMX:AES-256-GC\n", OPTS_NO_CIPHER, NULL,
     NULL},
    {"empty server entries skipped", "::AES-128-GCM:", "IV_CIPHERS=AES-128-GCM\n", OPTS_NO_CIPHER,
     NULL, "AES-128-GCM"},
};

static void table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct ncp_case *c = &cases[i];
        struct peer_info pi;
        char out[NCP_CIPHER_NAME_MAX];

        if (c->peer_info != NULL) {
            assert_int_equal(peer_info_parse(c->peer_info, strlen(c->peer_info), &pi), 0);
        }
        int err = ncp_select(c->server, c->peer_info != NULL ? &pi : NULL, c->options, c->fallback,
                             out, sizeof(out));
        if (c->want == NULL) {
            if (err != -PE_UNSUPPORTED) {
                fail_msg("%s: expected no shared cipher, got %d", c->name, err);
            }
        } else {
            if (err != 0 || strcmp(out, c->want) != 0) {
                fail_msg("%s: expected %s, got %d '%s'", c->name, c->want, err, err ? "" : out);
            }
        }
    }
}

static void bad_arguments(void **state)
{
    struct peer_info pi;
    char out[NCP_CIPHER_NAME_MAX];
    char small[11]; /* "AES-256-GCM" needs 12 */
    char longname[100];

    (void)state;
    assert_int_equal(peer_info_parse("IV_NCP=2\n", 9, &pi), 0);
    assert_int_equal(ncp_select(SERVER_DEFAULT, &pi, NULL, NULL, small, sizeof(small)),
                     -PE_NOSPACE);
    assert_int_equal(ncp_select(SERVER_DEFAULT, &pi, NULL, NULL, out, 12), 0);
    assert_string_equal(out, "AES-256-GCM");
    assert_int_equal(ncp_select(NULL, &pi, NULL, NULL, out, sizeof(out)), -PE_MALFORMED);
    memset(longname, 'A', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    assert_int_equal(ncp_select(longname, &pi, NULL, NULL, out, sizeof(out)), -PE_MALFORMED);
    assert_int_equal(ncp_select("", &pi, NULL, NULL, out, sizeof(out)), -PE_UNSUPPORTED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table),
        cmocka_unit_test(bad_arguments),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
