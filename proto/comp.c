/* proto/comp.c: compression framing of data-channel payloads, and LZ4 / LZO compression.
 * Byte values and rules from openvpn 2.6 comp.h, compstub.c, comp-lz4.c, lzo.c and options.c
 * (section 7 of the protocol doc); the code is this project's own. */
#include "proto/comp.h"

#include <limits.h>
#include <string.h>

#include <lz4.h>
#include <lzo1x.h>

#include "proto/errors.h"
#include "proto/peer_info.h"
#include "proto/push.h"

#define LZO_COMPRESSED 0x66    /* comp.h LZO_COMPRESS_BYTE */
#define LZO_UNCOMPRESSED 0xFA  /* comp.h NO_COMPRESS_BYTE */
#define LZ4_COMPRESSED 0x69    /* comp.h LZ4_COMPRESS_BYTE (swap framing) */
#define SWAP_UNCOMPRESSED 0xFB /* comp.h NO_COMPRESS_BYTE_SWAP */
#define V2_ESCAPE 0x50         /* comp.h COMP_ALGV2_INDICATOR_BYTE, then: */
#define V2_UNCOMPRESSED 0x00
#define V2_LZ4 0x01
#define V2_LZO 0x02    /* never sent by 2.6 */
#define V2_SNAPPY 0x03 /* no longer supported by 2.6 */

/* 2.6 lzo.h: the adaptive test's sample period, minimum sample, and the pause when compression
 * saved less than AC_SAVE_PCT percent. */
#define AC_SAMPLE_MS 2000
#define AC_MIN_BYTES 1000
#define AC_SAVE_PCT 5
#define AC_OFF_MS 60000

size_t comp_lzo_wrkmem_len(void)
{
    return LZO1X_1_15_MEM_COMPRESS;
}

int comp_library_init(void)
{
    return lzo_init() == LZO_E_OK ? 0 : -PE_CRYPTO;
}

/* The next whitespace-separated word of *s into word (cap bytes); false at the end or when the
 * word does not fit. */
static bool next_word(const char **s, char *word, size_t cap)
{
    const char *p = *s;
    size_t n = 0;

    while (*p == ' ' || *p == '\t') {
        p++;
    }
    if (*p == '\0') {
        return false;
    }
    while (*p != '\0' && *p != ' ' && *p != '\t') {
        if (n + 1 >= cap) {
            return false;
        }
        word[n++] = *p++;
    }
    word[n] = '\0';
    *s = p;
    return true;
}

bool comp_option_parse(const char *option, enum comp_framing *f)
{
    char w0[16], w1[16];
    const char *s = option;
    bool has_arg;

    if (!option || !next_word(&s, w0, sizeof(w0))) {
        return false;
    }
    has_arg = next_word(&s, w1, sizeof(w1));
    while (*s == ' ' || *s == '\t') {
        s++;
    }
    if (*s != '\0') {
        return false; /* 2.6 refuses a third word (or w1 was too long for any argument) */
    }
    if (strcmp(w0, "comp-lzo") == 0) {
        if (!has_arg || strcmp(w1, "yes") == 0 || strcmp(w1, "adaptive") == 0) {
            *f = COMP_FRAMING_LZO;
        } else if (strcmp(w1, "no") == 0) {
            *f = COMP_FRAMING_LZO_STUB;
        } else {
            return false;
        }
        return true;
    }
    if (strcmp(w0, "compress") != 0) {
        return false;
    }
    if (!has_arg || strcmp(w1, "stub") == 0) {
        *f = COMP_FRAMING_STUB;
    } else if (strcmp(w1, "stub-v2") == 0) {
        *f = COMP_FRAMING_STUB_V2;
    } else if (strcmp(w1, "migrate") == 0) {
        *f = COMP_FRAMING_NONE;
    } else if (strcmp(w1, "lzo") == 0) {
        *f = COMP_FRAMING_LZO;
    } else if (strcmp(w1, "lz4") == 0) {
        *f = COMP_FRAMING_LZ4;
    } else if (strcmp(w1, "lz4-v2") == 0) {
        *f = COMP_FRAMING_LZ4_V2;
    } else {
        return false;
    }
    return true;
}

enum comp_framing comp_framing_for_push(const char *pushed)
{
    enum comp_framing f = COMP_FRAMING_NONE;

    (void)comp_option_parse(pushed, &f);
    return f;
}

bool comp_framing_compresses(enum comp_framing f)
{
    return f == COMP_FRAMING_LZO || f == COMP_FRAMING_LZ4 || f == COMP_FRAMING_LZ4_V2;
}

/* The framing-only variant of a compressing framing (the same bytes on the wire). */
static enum comp_framing stub_of(enum comp_framing f)
{
    switch (f) {
    case COMP_FRAMING_LZO:
        return COMP_FRAMING_LZO_STUB;
    case COMP_FRAMING_LZ4:
        return COMP_FRAMING_STUB;
    case COMP_FRAMING_LZ4_V2:
        return COMP_FRAMING_STUB_V2;
    default:
        return f;
    }
}

/* Whether the client announced that it decompresses f's algorithm (2.6 comp.c
 * comp_generate_peer_info_string: only clients whose config allows compression do). */
static bool announced(const struct peer_info *pi, enum comp_framing f)
{
    if (!pi) {
        return false;
    }
    switch (f) {
    case COMP_FRAMING_LZO:
        return pi->lzo;
    case COMP_FRAMING_LZ4:
        return pi->lz4;
    case COMP_FRAMING_LZ4_V2:
        return pi->lz4v2;
    default:
        return false;
    }
}

void comp_choose(const struct comp_config *cfg, const struct peer_info *pi, bool has_comp,
                 const char *pushed, struct comp_peer *out, const char **push_out)
{
    enum comp_framing f = COMP_FRAMING_NONE;
    bool may_decompress, may_compress;

    memset(out, 0, sizeof(*out));
    *push_out = NULL;
    /* 2.6 options.c: without allow-compression, a compressing compress/comp-lzo means asym
     * (receive only), anything else means "no". */
    may_decompress = cfg->allow == COMP_ALLOW_ASYM || cfg->allow == COMP_ALLOW_YES ||
                     (cfg->allow == COMP_ALLOW_DEFAULT && comp_framing_compresses(cfg->alg));
    may_compress = cfg->allow == COMP_ALLOW_YES;
    if (pushed && comp_option_parse(pushed, &f)) {
        /* the client switches to what it is pushed */
    } else if (has_comp && comp_framing_compresses(cfg->alg)) {
        f = cfg->alg;
    } else if (has_comp) {
        *push_out = push_compress_migrate(pi, ",comp-lzo,");
        f = comp_framing_for_push(*push_out);
    }
    if (comp_framing_compresses(f) && !may_decompress) {
        f = stub_of(f);
    }
    out->framing = f;
    out->is_compress = may_compress && comp_framing_compresses(f) && announced(pi, f);
    out->is_adaptive = f == COMP_FRAMING_LZO && cfg->is_adaptive;
}

/* --- sending ---------------------------------------------------------------------------------- */

int comp_frame(enum comp_framing f, struct pbuf *b)
{
    uint8_t *p = pbuf_ptr(b), *front;
    uint8_t first;

    if (b->len == 0) {
        return 0; /* 2.6 frames nothing that is empty */
    }
    switch (f) {
    case COMP_FRAMING_LZO_STUB:
    case COMP_FRAMING_LZO:
        front = pbuf_push(b, 1);
        if (!front) {
            return -PE_NOSPACE;
        }
        front[0] = LZO_UNCOMPRESSED;
        return 0;
    case COMP_FRAMING_STUB_V2:
    case COMP_FRAMING_LZ4_V2:
        /* Only a payload that would look like the escape byte needs the 2-byte marker
         * (compv2_escape_data_ifneeded). */
        if (p[0] == V2_ESCAPE) {
            front = pbuf_push(b, 2);
            if (!front) {
                return -PE_NOSPACE;
            }
            front[0] = V2_ESCAPE;
            front[1] = V2_UNCOMPRESSED;
        }
        return 0;
    case COMP_FRAMING_STUB:
    case COMP_FRAMING_LZ4:
        first = p[0];
        if (b->cap - b->head - b->len >= 1) {
            p[b->len] = first; /* the first byte moves to the end */
            p[0] = SWAP_UNCOMPRESSED;
            b->len++;
            return 0;
        }
        front = pbuf_push(b, 1); /* no tailroom: shift the payload one byte forward */
        if (!front) {
            return -PE_NOSPACE;
        }
        memmove(front + 1, front + 2, b->len - 2);
        front[b->len - 1] = first;
        front[0] = SWAP_UNCOMPRESSED;
        return 0;
    case COMP_FRAMING_NONE:
        break;
    }
    return 0;
}

/* 2.6 lzo.c lzo_adaptive_compress_test: whether to try compressing now. */
static bool adaptive_allows(struct comp_peer *cp, uint64_t now_ms)
{
    if (!cp->ac_is_paused) {
        if (now_ms >= cp->ac_next_ms) {
            /* signed: data that does not compress grows */
            if (cp->ac_n_total > AC_MIN_BYTES &&
                (int64_t)cp->ac_n_total - (int64_t)cp->ac_n_comp <
                    (int64_t)(cp->ac_n_total / (100 / AC_SAVE_PCT))) {
                cp->ac_is_paused = true;
                cp->ac_next_ms = now_ms + AC_OFF_MS;
            } else {
                cp->ac_next_ms = now_ms + AC_SAMPLE_MS;
            }
            cp->ac_n_total = cp->ac_n_comp = 0;
        }
    } else if (now_ms >= cp->ac_next_ms) {
        cp->ac_next_ms = now_ms + AC_SAMPLE_MS;
        cp->ac_n_total = cp->ac_n_comp = 0;
        cp->ac_is_paused = false;
    }
    return !cp->ac_is_paused;
}

static void adaptive_count(struct comp_peer *cp, size_t in, size_t out)
{
    /* saturate rather than wrap: a sample is 2 s of one client's traffic */
    cp->ac_n_total =
        (uint32_t)(in > UINT32_MAX - cp->ac_n_total ? UINT32_MAX : cp->ac_n_total + in);
    cp->ac_n_comp = (uint32_t)(out > UINT32_MAX - cp->ac_n_comp ? UINT32_MAX : cp->ac_n_comp + out);
}

/* LZ4 block of src (len bytes) at dst, at most cap bytes; its length, or 0 when it does not fit
 * (then it would not pay either). */
static size_t lz4_compress_into(const uint8_t *src, size_t len, uint8_t *dst, size_t cap)
{
    int n;

    if (len > INT_MAX || cap > INT_MAX) {
        return 0;
    }
    n = LZ4_compress_default((const char *)src, (char *)dst, (int)len, (int)cap);
    return n > 0 ? (size_t)n : 0;
}

int comp_compress(struct comp_peer *cp, struct pbuf *b, const struct comp_work *w, uint64_t now_ms)
{
    const uint8_t *src = pbuf_ptr(b);
    uint8_t *dst;
    size_t len = b->len, zlen = 0;
    lzo_uint lzo_len = 0;

    if (!cp->is_compress || len < COMP_THRESHOLD || len > w->max_in || !w->out ||
        w->out_cap < COMP_WORK_OUT_LEN(len)) {
        return 0;
    }
    dst = w->out + COMP_HEADROOM;
    switch (cp->framing) {
    case COMP_FRAMING_LZO:
        if (!w->lzo_wrkmem || (cp->is_adaptive && !adaptive_allows(cp, now_ms))) {
            return 0;
        }
        if (lzo1x_1_15_compress(src, len, dst, &lzo_len, w->lzo_wrkmem) != LZO_E_OK) {
            return 0;
        }
        zlen = lzo_len;
        if (cp->is_adaptive) {
            adaptive_count(cp, len, zlen);
        }
        if (zlen >= len) {
            return 0;
        }
        dst[-1] = LZO_COMPRESSED;
        *b = pbuf_make(w->out, w->out_cap, COMP_HEADROOM - 1, zlen + 1);
        return 1;
    case COMP_FRAMING_LZ4:
        zlen = lz4_compress_into(src, len, dst, len - 1);
        if (zlen == 0) {
            return 0;
        }
        dst[zlen] = dst[0]; /* swap: the block's first byte to the end, the marker in front */
        dst[0] = LZ4_COMPRESSED;
        *b = pbuf_make(w->out, w->out_cap, COMP_HEADROOM, zlen + 1);
        return 1;
    case COMP_FRAMING_LZ4_V2:
        zlen = lz4_compress_into(src, len, dst, len - 3); /* pays only with its 2 bytes */
        if (zlen == 0) {
            return 0;
        }
        dst[-2] = V2_ESCAPE;
        dst[-1] = V2_LZ4;
        *b = pbuf_make(w->out, w->out_cap, 0, zlen + 2);
        return 1;
    default:
        return 0;
    }
}

/* --- receiving -------------------------------------------------------------------------------- */

/* Decompress the LZ4 block src (len bytes) into out; b then describes the result. */
static int lz4_decompress_into(const uint8_t *src, size_t len, uint8_t *out, size_t out_cap,
                               struct pbuf *b)
{
    size_t room;
    int n;

    if (!out) {
        return -PE_UNSUPPORTED;
    }
    if (out_cap <= COMP_HEADROOM + COMP_TAILROOM || len == 0 || len > INT_MAX) {
        return -PE_MALFORMED;
    }
    room = out_cap - COMP_HEADROOM - COMP_TAILROOM;
    if (room > INT_MAX) {
        room = INT_MAX;
    }
    /* Bounded by room: a block that would produce more is an error, not a longer write. */
    n = LZ4_decompress_safe((const char *)src, (char *)out + COMP_HEADROOM, (int)len, (int)room);
    if (n <= 0) {
        return -PE_MALFORMED;
    }
    *b = pbuf_make(out, out_cap, COMP_HEADROOM, (size_t)n);
    return 0;
}

/* Decompress the LZO1X block src (len bytes) into out; b then describes the result. */
static int lzo_decompress_into(const uint8_t *src, size_t len, uint8_t *out, size_t out_cap,
                               struct pbuf *b)
{
    lzo_uint n;

    if (!out) {
        return -PE_UNSUPPORTED;
    }
    if (out_cap <= COMP_HEADROOM + COMP_TAILROOM || len == 0) {
        return -PE_MALFORMED;
    }
    n = out_cap - COMP_HEADROOM - COMP_TAILROOM; /* in: the room; out: the length */
    /* The _safe decoder checks every read and write against the lengths given. */
    if (lzo1x_decompress_safe(src, len, out + COMP_HEADROOM, &n, NULL) != LZO_E_OK || n == 0) {
        return -PE_MALFORMED;
    }
    *b = pbuf_make(out, out_cap, COMP_HEADROOM, n);
    return 0;
}

static int unframe_lzo(bool is_lzo, struct pbuf *b, uint8_t *out, size_t out_cap)
{
    const uint8_t *p = pbuf_ptr(b);

    if (b->len < 1) {
        return -PE_MALFORMED;
    }
    if (p[0] == LZO_UNCOMPRESSED) {
        return pbuf_pull(b, 1);
    }
    if (p[0] != LZO_COMPRESSED) {
        return -PE_MALFORMED;
    }
    if (!is_lzo) {
        return -PE_UNSUPPORTED; /* LZO-compressed, never allowed */
    }
    return lzo_decompress_into(p + 1, b->len - 1, out, out_cap, b);
}

static int unframe_swap(bool is_lz4, struct pbuf *b, uint8_t *out, size_t out_cap)
{
    uint8_t *p = pbuf_ptr(b);
    uint8_t c;

    if (b->len < 2) {
        return -PE_MALFORMED;
    }
    c = p[0];
    if (c != SWAP_UNCOMPRESSED && c != LZ4_COMPRESSED) {
        return -PE_MALFORMED;
    }
    if (c == LZ4_COMPRESSED && !is_lz4) {
        return -PE_UNSUPPORTED;
    }
    p[0] = p[b->len - 1]; /* the moved byte back in front */
    b->len--;
    if (c == SWAP_UNCOMPRESSED) {
        return 0;
    }
    return lz4_decompress_into(p, b->len, out, out_cap, b);
}

static int unframe_v2(bool is_lz4, struct pbuf *b, uint8_t *out, size_t out_cap)
{
    const uint8_t *p = pbuf_ptr(b);

    if (b->len == 0 || p[0] != V2_ESCAPE) {
        return 0; /* unframed */
    }
    if (b->len < 2) {
        return -PE_MALFORMED;
    }
    switch (p[1]) {
    case V2_UNCOMPRESSED:
        return pbuf_pull(b, 2);
    case V2_LZ4:
        if (!is_lz4) {
            return -PE_UNSUPPORTED;
        }
        return lz4_decompress_into(p + 2, b->len - 2, out, out_cap, b);
    case V2_LZO:
    case V2_SNAPPY:
        return -PE_UNSUPPORTED;
    default:
        return -PE_MALFORMED;
    }
}

int comp_unframe(enum comp_framing f, struct pbuf *b, uint8_t *out, size_t out_cap)
{
    switch (f) {
    case COMP_FRAMING_LZO_STUB:
    case COMP_FRAMING_LZO:
        return unframe_lzo(f == COMP_FRAMING_LZO, b, out, out_cap);
    case COMP_FRAMING_STUB:
    case COMP_FRAMING_LZ4:
        return unframe_swap(f == COMP_FRAMING_LZ4, b, out, out_cap);
    case COMP_FRAMING_STUB_V2:
    case COMP_FRAMING_LZ4_V2:
        return unframe_v2(f == COMP_FRAMING_LZ4_V2, b, out, out_cap);
    case COMP_FRAMING_NONE:
        break;
    }
    return 0;
}
