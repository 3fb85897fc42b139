/* proto/packet_id.c: sliding replay window over 32-bit data-channel packet ids. */
#include "proto/packet_id.h"

#include <string.h>

#include "proto/errors.h"

static uint32_t slot_word(uint32_t id)
{
    return (id % PACKET_ID_WINDOW_MAX) / 64;
}

static uint64_t slot_bit(uint32_t id)
{
    return (uint64_t)1 << (id % 64);
}

static void slot_clear(struct packet_id_rx *rx, uint32_t id)
{
    rx->seen[slot_word(id)] &= ~slot_bit(id);
}

static void slot_set(struct packet_id_rx *rx, uint32_t id)
{
    rx->seen[slot_word(id)] |= slot_bit(id);
}

static int slot_is_set(const struct packet_id_rx *rx, uint32_t id)
{
    return (rx->seen[slot_word(id)] & slot_bit(id)) != 0;
}

void packet_id_rx_init(struct packet_id_rx *rx, uint32_t window)
{
    memset(rx, 0, sizeof(*rx));
    rx->window = window > PACKET_ID_WINDOW_MAX ? PACKET_ID_WINDOW_MAX : window;
}

int packet_id_rx_check(const struct packet_id_rx *rx, uint32_t id)
{
    uint32_t diff;

    if (id == 0) {
        return -PE_MALFORMED;
    }
    if (rx->window == 0) {
        /* matches openvpn 2.6 without backtracking: anything first, then strictly +1 */
        if (rx->highest == 0) {
            return 0;
        }
        if (id <= rx->highest) {
            return -PE_REPLAY;
        }
        return id == rx->highest + 1 ? 0 : -PE_MALFORMED;
    }
    if (id > rx->highest) {
        return 0;
    }
    diff = rx->highest - id;
    if (diff >= rx->window) {
        return -PE_TOO_OLD;
    }
    return slot_is_set(rx, id) ? -PE_REPLAY : 0;
}

void packet_id_rx_commit(struct packet_id_rx *rx, uint32_t id)
{
    uint32_t jump;

    if (packet_id_rx_check(rx, id) != 0) {
        return;
    }
    if (id <= rx->highest) {
        slot_set(rx, id);
        return;
    }
    if (rx->window > 0) {
        /* Forget the slots that now stand for ids highest+1 .. id (they held ids one full
         * PACKET_ID_WINDOW_MAX lower). A jump of the whole bitmap or more forgets everything. */
        jump = id - rx->highest;
        if (jump >= PACKET_ID_WINDOW_MAX) {
            memset(rx->seen, 0, sizeof(rx->seen));
        } else {
            for (uint32_t i = 1; i <= jump; i++) {
                slot_clear(rx, rx->highest + i);
            }
        }
        slot_set(rx, id);
    }
    rx->highest = id;
}
