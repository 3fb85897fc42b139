/* proto/comp.c: compression framing of data-channel payloads, without compression. */
#include "proto/comp.h"

#include <string.h>

#include "proto/errors.h"

#define LZO_NO_COMPRESS 0xFA /* comp.h NO_COMPRESS_BYTE */
#define COMP_V2_ESCAPE 0x50  /* comp.h COMP_ALGV2_INDICATOR_BYTE */
#define COMP_V2_UNCOMPRESSED 0x00

enum comp_framing comp_framing_for_push(const char *pushed)
{
    if (!pushed) {
        return COMP_FRAMING_NONE;
    }
    if (strcmp(pushed, "compress stub-v2") == 0) {
        return COMP_FRAMING_STUB_V2;
    }
    if (strcmp(pushed, "comp-lzo no") == 0) {
        return COMP_FRAMING_LZO_STUB;
    }
    return COMP_FRAMING_NONE;
}

int comp_frame(enum comp_framing f, struct pbuf *b)
{
    uint8_t *front;

    switch (f) {
    case COMP_FRAMING_LZO_STUB:
        front = pbuf_push(b, 1);
        if (!front) {
            return -PE_NOSPACE;
        }
        front[0] = LZO_NO_COMPRESS;
        return 0;
    case COMP_FRAMING_STUB_V2:
        /* Only a payload that would look like the escape byte needs the 2-byte marker
         * (compv2_escape_data_ifneeded). */
        if (b->len > 0 && pbuf_ptr(b)[0] == COMP_V2_ESCAPE) {
            front = pbuf_push(b, 2);
            if (!front) {
                return -PE_NOSPACE;
            }
            front[0] = COMP_V2_ESCAPE;
            front[1] = COMP_V2_UNCOMPRESSED;
        }
        return 0;
    case COMP_FRAMING_NONE:
        break;
    }
    return 0;
}

int comp_unframe(enum comp_framing f, struct pbuf *b)
{
    const uint8_t *p = pbuf_ptr(b);

    switch (f) {
    case COMP_FRAMING_LZO_STUB:
        if (b->len < 1) {
            return -PE_MALFORMED;
        }
        if (p[0] != LZO_NO_COMPRESS) {
            return -PE_UNSUPPORTED; /* 0x66: LZO-compressed, never asked for */
        }
        return pbuf_pull(b, 1);
    case COMP_FRAMING_STUB_V2:
        if (b->len > 0 && p[0] == COMP_V2_ESCAPE) {
            if (b->len < 2) {
                return -PE_MALFORMED;
            }
            if (p[1] != COMP_V2_UNCOMPRESSED) {
                return -PE_UNSUPPORTED; /* 0x50 0x01: LZ4-v2 compressed */
            }
            return pbuf_pull(b, 2);
        }
        break;
    case COMP_FRAMING_NONE:
        break;
    }
    return 0;
}
