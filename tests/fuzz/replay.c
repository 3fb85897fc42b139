/* tests/fuzz/replay.c: runs a fuzz target's LLVMFuzzerTestOneInput() over files and directories
 * of inputs, for builds without libFuzzer (gcc): ctest replays the committed corpus of each
 * target this way, so an input that once found a bug keeps being checked. A target signals a
 * failure by aborting; this program exits 1 when an input cannot be read, or when it was given
 * no input at all (an empty or missing corpus would otherwise test nothing). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/fuzz/fuzz_check.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    long n;

    if (!f) {
        perror(path);
        return -1;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "%s: cannot tell its size\n", path);
        fclose(f);
        return -1;
    }
    buf = malloc(n ? (size_t)n : 1); /* exact size, as libFuzzer gives it */
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "%s: cannot read it\n", path);
        free(buf);
        fclose(f);
        return -1;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, (size_t)n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    unsigned n_inputs = 0;

    for (int i = 1; i < argc; i++) {
        struct stat st;
        DIR *d;
        struct dirent *e;

        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[i]) != 0) {
                return 1;
            }
            n_inputs++;
            continue;
        }
        d = opendir(argv[i]);
        if (!d) {
            perror(argv[i]);
            return 1;
        }
        while ((e = readdir(d)) != NULL) {
            char path[4096];

            if (e->d_name[0] == '.') {
                continue;
            }
            snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
            if (run_file(path) != 0) {
                closedir(d);
                return 1;
            }
            n_inputs++;
        }
        closedir(d);
    }
    printf("%u inputs passed\n", n_inputs);
    return n_inputs > 0 ? 0 : 1;
}
