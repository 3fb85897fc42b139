/* tests/fuzz/fuzz_replay.c: the data channel's replay window (proto/packet_id.c) against a
 * model, under a coverage-guided fuzzer.
 *
 * Input: two bytes of --replay-window (little-endian, taken modulo 1200 so that clamping to
 * PACKET_ID_WINDOW_MAX is reached), then records of 5 bytes: a mode byte and 4 bytes of value.
 * Mode bit 0: the value is an absolute id, else a signed distance (modulo 2048, minus 1024) from
 * the highest id accepted so far, so ids cluster where the window matters. Mode bit 1: the packet
 * fails authentication, so the id is checked but never committed.
 *
 * The model is the rule of openvpn 2.6 packet_id.c as proto/packet_id.h states it, kept with
 * the plain list of every id accepted so far: packet_id_rx_check() must give exactly its verdict
 * for every id, and an id is accepted at most once.
 *
 * Built as a libFuzzer target by scripts/fuzz.sh (clang); tests/fuzz/replay.c runs the same
 * function over the committed corpus in every ctest run.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "proto/errors.h"
#include "proto/packet_id.h"
#include "tests/fuzz/fuzz_check.h"

#define MAX_IDS 4096

struct model {
    uint32_t window;
    uint32_t highest; /* 0: nothing accepted yet */
    uint32_t accepted[MAX_IDS];
    size_t n;
};

static bool model_seen(const struct model *m, uint32_t id)
{
    for (size_t i = 0; i < m->n; i++) {
        if (m->accepted[i] == id) {
            return true;
        }
    }
    return false;
}

static int model_check(const struct model *m, uint32_t id)
{
    if (id == 0) {
        return -PE_MALFORMED;
    }
    if (m->window == 0) {
        if (m->highest == 0) {
            return 0;
        }
        if (id <= m->highest) {
            return -PE_REPLAY;
        }
        return id == m->highest + 1 ? 0 : -PE_MALFORMED;
    }
    if (id > m->highest) {
        return 0;
    }
    if (m->highest - id >= m->window) {
        return -PE_TOO_OLD;
    }
    return model_seen(m, id) ? -PE_REPLAY : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct model m;
    struct packet_id_rx rx;
    uint32_t window;

    if (size < 2) {
        return 0;
    }
    window = (uint32_t)(data[0] | data[1] << 8) % 1200;
    data += 2;
    size -= 2;
    packet_id_rx_init(&rx, window);
    m.window = window < PACKET_ID_WINDOW_MAX ? window : PACKET_ID_WINDOW_MAX;
    m.highest = 0;
    m.n = 0;
    while (size >= 5 && m.n < MAX_IDS) {
        uint32_t value = (uint32_t)data[1] | (uint32_t)data[2] << 8 | (uint32_t)data[3] << 16 |
                         (uint32_t)data[4] << 24;
        uint32_t id = data[0] & 1 ? value : m.highest + value % 2048 - 1024;
        bool is_authentic = !(data[0] & 2);
        int want = model_check(&m, id), got = packet_id_rx_check(&rx, id);

        data += 5;
        size -= 5;
        if (got != want) {
            fprintf(stderr, "window %u, highest %u, id %u: got %d, the rule says %d\n", m.window,
                    m.highest, id, got, want);
        }
        CHECK(got == want);
        if (got == 0 && is_authentic) {
            packet_id_rx_commit(&rx, id);
            m.accepted[m.n++] = id;
            if (id > m.highest) {
                m.highest = id;
            }
        }
        CHECK(rx.highest == m.highest);
    }
    return 0;
}
