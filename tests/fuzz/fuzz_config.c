/* tests/fuzz/fuzz_config.c: the config parser under a coverage-guided fuzzer.
 *
 * The input is a config file (inline <ca>/<cert>/<key>/<tls-crypt> blocks included). A bad
 * config must give a clear error, never a crash, a hang or a leak: config_parse_string()
 * returns 0, or -EINVAL/-ENOMEM with one line in errbuf that starts with the file name (as in
 * "fuzz.conf:12: port: ..."), and config_free() releases everything either way (LeakSanitizer
 * in the fuzzing build).
 *
 * The parser opens files a config names (includes, certificates, keys), relative to the working
 * directory: inputs that name anything under /dev, /proc or /sys are skipped, so that no device
 * is read, and the working directory a `cd` directive changes is put back after each input.
 *
 * Built as a libFuzzer target by scripts/fuzz.sh (clang); tests/fuzz/replay.c runs the same
 * function over the committed corpus in every ctest run.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/config/config.h"
#include "tests/fuzz/fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct config cfg;
    static char errbuf[1024];
    static int cwd_fd = -1;
    char *text;
    int rc;

    if (cwd_fd < 0) {
        cwd_fd = open(".", O_RDONLY | O_DIRECTORY);
        CHECK(cwd_fd >= 0);
    }
    text = malloc(size + 1);
    CHECK(text != NULL);
    memcpy(text, data, size);
    text[size] = '\0';
    if (strstr(text, "/dev") || strstr(text, "/proc") || strstr(text, "/sys")) {
        free(text);
        return 0;
    }
    config_init(&cfg);
    errbuf[0] = '\0';
    rc = config_parse_string(&cfg, "fuzz.conf", text, errbuf, sizeof(errbuf));
    if (rc != 0) {
        CHECK(rc == -EINVAL || rc == -ENOMEM);
        CHECK(errbuf[0] != '\0' && strchr(errbuf, '\n') == NULL);
        CHECK(strstr(errbuf, ": ") != NULL); /* FILE[:LINE]: ... */
    }
    config_free(&cfg);
    free(text);
    CHECK(fchdir(cwd_fd) == 0);
    return 0;
}
