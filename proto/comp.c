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

void comp_frame(enum comp_framing f, uint8_t *payload, size_t len, uint8_t **out, size_t *out_len)
{
    switch (f) {
    case COMP_FRAMING_LZO_STUB:
        payload[-1] = LZO_NO_COMPRESS;
        *out = payload - 1;
        *out_len = len + 1;
        return;
    case COMP_FRAMING_STUB_V2:
        /* Only a payload that would look like the escape byte needs the 2-byte marker
         * (compv2_escape_data_ifneeded). */
        if (len > 0 && payload[0] == COMP_V2_ESCAPE) {
            payload[-2] = COMP_V2_ESCAPE;
            payload[-1] = COMP_V2_UNCOMPRESSED;
            *out = payload - 2;
            *out_len = len + 2;
            return;
        }
        break;
    case COMP_FRAMING_NONE:
        break;
    }
    *out = payload;
    *out_len = len;
}

int comp_unframe(enum comp_framing f, uint8_t *buf, size_t len, uint8_t **out, size_t *out_len)
{
    switch (f) {
    case COMP_FRAMING_LZO_STUB:
        if (len < 1) {
            return -PE_MALFORMED;
        }
        if (buf[0] != LZO_NO_COMPRESS) {
            return -PE_UNSUPPORTED; /* 0x66: LZO-compressed, never asked for */
        }
        *out = buf + 1;
        *out_len = len - 1;
        return 0;
    case COMP_FRAMING_STUB_V2:
        if (len > 0 && buf[0] == COMP_V2_ESCAPE) {
            if (len < 2) {
                return -PE_MALFORMED;
            }
            if (buf[1] != COMP_V2_UNCOMPRESSED) {
                return -PE_UNSUPPORTED; /* 0x50 0x01: LZ4-v2 compressed */
            }
            *out = buf + 2;
            *out_len = len - 2;
            return 0;
        }
        break;
    case COMP_FRAMING_NONE:
        break;
    }
    *out = buf;
    *out_len = len;
    return 0;
}
