/* tests/fuzz/fuzz_comp.c: a client's decrypted payloads through the compression framing and
 * the LZ4 / LZO decompressors (proto/comp.c comp_unframe), as the worker runs them
 * (server/data/worker_rx.c), under a coverage-guided fuzzer.
 *
 * Input: [framing selector][payload...]. The selector picks the framing (modulo the number of
 * framings) and, in bit 7, whether the payload sits in a buffer without any room around it. The
 * payload and the decompression buffer are heap blocks of exactly their size, so a read or
 * write outside either is an ASan report (and, since liblz4 and liblzo2 are not instrumented, a
 * canary after the room the decompressors are given must stay intact). Beyond "does not
 * crash":
 *  - a result lies inside its memory, and a decompressed one fits the room the worker gives
 *    (out_cap - COMP_HEADROOM - COMP_TAILROOM);
 *  - what was accepted goes back out framed (and, where the framing compresses, compressed
 *    when it pays) and comes back in unchanged: the sender and the receiver agree.
 *
 * Built as a libFuzzer target by scripts/fuzz.sh (clang); tests/fuzz/replay.c runs the same
 * function over the committed corpus in every ctest run.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/comp.h"
#include "proto/errors.h"
#include "tests/fuzz/fuzz_check.h"

#define ROOM 2048 /* the worker's WORKER_BUF_LEN */
#define OUT_CAP (COMP_HEADROOM + ROOM + COMP_TAILROOM)
#define N_FRAMINGS 7
#define CANARY_LEN 64 /* bytes after the output buffer that must stay untouched */

static uint8_t work_out[COMP_WORK_OUT_LEN(ROOM)];
static void *lzo_wrkmem; /* comp_lzo_wrkmem_len() bytes, allocated at the first input */

/* Send payload (len bytes) framed as f, compressed when it pays, and receive it again. */
static void roundtrip(enum comp_framing f, const uint8_t *payload, size_t len)
{
    const struct comp_work w = {work_out, sizeof(work_out), ROOM, lzo_wrkmem};
    struct comp_peer cp = {.framing = f, .is_compress = true};
    uint8_t *buf = malloc(COMP_HEADROOM + len + COMP_TAILROOM), *out = malloc(OUT_CAP);
    struct pbuf b;

    CHECK(buf != NULL && out != NULL);
    memcpy(buf + COMP_HEADROOM, payload, len);
    b = pbuf_make(buf, COMP_HEADROOM + len + COMP_TAILROOM, COMP_HEADROOM, len);
    if (comp_compress(&cp, &b, &w, 0) == 0) {
        CHECK(comp_frame(f, &b) == 0);
    }
    CHECK(b.head + b.len <= b.cap);
    CHECK(comp_unframe(f, &b, out, OUT_CAP) == 0);
    CHECK(b.len == len);
    CHECK(memcmp(pbuf_ptr(&b), payload, len) == 0);
    free(out);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum comp_framing f;
    bool is_tight;
    uint8_t *in, *out;
    size_t len, head;
    struct pbuf b;
    int err;

    if (!lzo_wrkmem) {
        CHECK(comp_library_init() == 0);
        lzo_wrkmem = malloc(comp_lzo_wrkmem_len());
        CHECK(lzo_wrkmem != NULL);
    }
    if (size < 1 || size - 1 > ROOM) {
        return 0;
    }
    f = (enum comp_framing)(data[0] % N_FRAMINGS);
    is_tight = (data[0] & 0x80) != 0;
    len = size - 1;
    head = is_tight ? 0 : COMP_HEADROOM;
    in = malloc(head + len + 1);
    out = malloc(OUT_CAP + CANARY_LEN);
    CHECK(in != NULL && out != NULL);
    memset(out + OUT_CAP - COMP_TAILROOM, 0xA5, COMP_TAILROOM + CANARY_LEN);
    memcpy(in + head, data + 1, len);
    b = pbuf_make(in, head + len, head, len);
    err = comp_unframe(f, &b, out, OUT_CAP);
    /* the decompressors are libraries ASan does not instrument: a canary after the room */
    for (size_t i = OUT_CAP - COMP_TAILROOM; i < OUT_CAP + CANARY_LEN; i++) {
        CHECK(out[i] == 0xA5);
    }
    if (err == 0) {
        CHECK(b.head + b.len <= b.cap);
        if (b.data == out) {
            CHECK(comp_framing_compresses(f));
            CHECK(b.len <= OUT_CAP - COMP_HEADROOM - COMP_TAILROOM);
        } else {
            CHECK(b.data == in);
        }
        if (b.len > 0) {
            roundtrip(f, pbuf_ptr(&b), b.len);
        }
    } else {
        CHECK(err == -PE_MALFORMED || err == -PE_UNSUPPORTED);
    }
    free(out);
    free(in);
    return 0;
}
