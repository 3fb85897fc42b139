/* tests/fuzz/fuzz_fragment.c: a client's decrypted payloads through the reassembly of
 * `fragment N` (proto/fragment.c fragment_rx), as the worker runs it (server/data/worker_rx.c),
 * under a coverage-guided fuzzer.
 *
 * Input: [max_len selector][record]... where a record is [time step][length (2 bytes)][bytes]:
 * the clock moves on by the time step times 500 ms, then the bytes (length modulo 2100, cut
 * to what is left) arrive as one payload, in a heap block of exactly their size, so a read
 * outside it is an ASan report. Beyond "does not crash":
 *  - a result is either the payload itself behind the header or a packet in the reassembly
 *    memory, no longer than its buffer, with the head and tail room asked for;
 *  - an error is one of those fragment_rx() names;
 *  - what comes out goes back through fragment_plan() and a second receiver and comes out
 *    unchanged: sender and receiver agree.
 *
 * Built as a libFuzzer target by scripts/fuzz.sh (clang); tests/fuzz/replay.c runs the same
 * function over the committed corpus in every ctest run.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/errors.h"
#include "proto/fragment.h"
#include "tests/fuzz/fuzz_check.h"

#define HEAD 2
#define TAIL 1
#define MAX_RECORD 2100

/* Cut packet (len bytes) for max_payload and put it back together in a fresh receiver. */
static void roundtrip(const uint8_t *packet, size_t len, size_t max_len, size_t max_payload)
{
    struct fragment *rx = fragment_new(max_len, HEAD, TAIL, 0, max_payload);
    size_t piece;
    unsigned n;
    int rc = -1;

    CHECK(rx != NULL);
    if (fragment_plan(len, max_payload, &piece, &n) != 0) {
        CHECK(len > 32 * 4);
        fragment_free(rx);
        return;
    }
    for (unsigned i = 0; i < n; i++) {
        size_t off = (size_t)i * piece, plen = i + 1 == n ? len - off : piece;
        uint8_t *buf = malloc(FRAGMENT_HEADER_LEN + plen + 1);
        struct fragment_header h = {n == 1       ? FRAGMENT_WHOLE
                                    : i + 1 == n ? FRAGMENT_LAST
                                                 : FRAGMENT_NOT_LAST,
                                    n == 1 ? 0 : 7, n == 1 ? 0 : (uint8_t)i, (uint16_t)piece};
        struct pbuf b;

        CHECK(buf != NULL);
        CHECK(plen <= max_payload);
        fragment_header_write(&h, buf);
        memcpy(buf + FRAGMENT_HEADER_LEN, packet + off, plen);
        b = pbuf_make(buf, FRAGMENT_HEADER_LEN + plen, 0, FRAGMENT_HEADER_LEN + plen);
        rc = fragment_rx(rx, &b, 0, NULL);
        if (i + 1 < n) {
            CHECK(rc == 1);
        } else {
            CHECK(rc == 0);
            CHECK(b.len == len);
            CHECK(memcmp(pbuf_ptr(&b), packet, len) == 0);
        }
        free(buf);
    }
    fragment_free(rx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t max_lens[] = {2048, 1000, 100, 4};
    struct fragment *f;
    size_t max_len, pos = 1;
    uint64_t now_ms = 0;

    if (size < 1) {
        return 0;
    }
    max_len = max_lens[data[0] % 4];
    f = fragment_new(max_len, HEAD, TAIL, 0, 500);
    CHECK(f != NULL);
    while (pos + 3 <= size) {
        size_t len = ((size_t)data[pos + 1] << 8 | data[pos + 2]) % MAX_RECORD;
        struct fragment_rx_info info;
        uint8_t *in;
        struct pbuf b;
        int rc;

        now_ms += (uint64_t)data[pos] * 500;
        pos += 3;
        if (len > size - pos) {
            len = size - pos;
        }
        in = malloc(len ? len : 1);
        CHECK(in != NULL);
        memcpy(in, data + pos, len);
        pos += len;
        b = pbuf_make(in, len, 0, len);
        rc = fragment_rx(f, &b, now_ms, &info);
        CHECK(info.n_abandoned <= FRAGMENT_N_SLOTS);
        if (rc == 0 && b.data == in) {
            CHECK(!info.is_piece);
            CHECK(b.head == FRAGMENT_HEADER_LEN && b.head + b.len == len);
        } else if (rc == 0) {
            CHECK(info.is_piece);
            CHECK(b.head == HEAD && b.len <= max_len && b.cap == HEAD + max_len + TAIL);
        } else {
            CHECK(rc == 1 || rc == -PE_SHORT || rc == -PE_MALFORMED || rc == -PE_NOSPACE);
        }
        if (rc == 0 && b.len > 0) {
            roundtrip(pbuf_ptr(&b), b.len, 2048, 100);
        }
        free(in);
    }
    fragment_free(f);
    return 0;
}
