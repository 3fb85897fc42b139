/* tests/fuzz/fuzz_check.h: what every fuzz target shares: the entry point libFuzzer (or
 * tests/fuzz/replay.c) calls, and CHECK, which reports a broken expectation with its place in
 * the source and aborts, so the fuzzer saves the input and ctest fails. */
#ifndef TESTS_FUZZ_FUZZ_CHECK_H
#define TESTS_FUZZ_FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* One input of size bytes (owned by the caller, read only). Returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif /* TESTS_FUZZ_FUZZ_CHECK_H */
