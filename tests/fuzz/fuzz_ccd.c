/* tests/fuzz/fuzz_ccd.c: the per-client files the server reads while running, under a
 * coverage-guided fuzzer. First input byte even: the rest is a client-config-dir file
 * (ccd_parse_string), read at every connect of that client; odd: lines of an
 * ifconfig-pool-persist file (pool_persist_parse_line), which openvpn 2.6 may have written.
 * A bad file must give a clear error, never a crash or a leak: a ccd file parses or fails with
 * one "NAME:LINE: ..." line; a pool line is taken (a common name and at least one address),
 * skipped, or refused with a reason.
 *
 * Built as a libFuzzer target by scripts/fuzz.sh (clang); tests/fuzz/replay.c runs the same
 * function over the committed corpus in every ctest run.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/config/ccd.h"
#include "server/addr/pool_persist.h"
#include "tests/fuzz/fuzz_check.h"

static void ccd_file(const char *text)
{
    static struct ccd c;
    static char errbuf[512];
    int rc;

    errbuf[0] = '\0';
    rc = ccd_parse_string(&c, "fuzz-ccd", text, errbuf, sizeof(errbuf));
    if (rc != 0) {
        CHECK(rc == -EINVAL || rc == -ENOMEM);
        CHECK(strncmp(errbuf, "fuzz-ccd:", 9) == 0 && strchr(errbuf, '\n') == NULL);
    }
    ccd_free(&c);
}

static void pool_lines(char *text)
{
    char *save = NULL;

    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        struct pool_persist_line out;
        char why[256] = "";
        int rc = pool_persist_parse_line(line, &out, why, sizeof(why));

        CHECK(rc == 1 || rc == 0 || rc == -1);
        if (rc == 1) {
            CHECK(memchr(out.cn, '\0', sizeof(out.cn)) != NULL && out.cn[0] != '\0');
            CHECK(out.has_ipv4 || out.has_ipv6);
        } else if (rc == -1) {
            CHECK(why[0] != '\0');
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text;

    if (size < 1) {
        return 0;
    }
    text = malloc(size);
    CHECK(text != NULL);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    if (data[0] & 1) {
        pool_lines(text);
    } else {
        ccd_file(text);
    }
    free(text);
    return 0;
}
