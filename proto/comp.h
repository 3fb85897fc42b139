/* proto/comp.h: compression framing of data-channel payloads, and LZ4 / LZO compression.
 *
 * A client whose config has a compression option frames every payload (section 7 of
 * docs/openvpn-protocol.md; comp.h, compstub.c, comp-lz4.c and lzo.c of openvpn 2.6). Three
 * wire framings exist, each with a stub (framing only) and a compressing variant:
 *   - LZO   ("comp-lzo"): 0xFA before an uncompressed payload, 0x66 before an LZO1X block;
 *   - swap  ("compress", "compress lz4"): 0xFB (uncompressed) or 0x69 (LZ4 block) replaces the
 *           first byte, which moves to the end;
 *   - v2    ("compress stub-v2", "compress lz4-v2"): nothing before an uncompressed payload
 *           unless it starts with 0x50 (then 0x50 0x00), 0x50 0x01 before an LZ4 block.
 * Which framing a client uses, whether ovpnd accepts compressed payloads from it and whether it
 * compresses towards it is decided once per client (comp_choose, allow-compression); the
 * per-packet functions then take no lock and allocate nothing: the caller gives them scratch
 * memory (normally per worker).
 */
#ifndef PROTO_COMP_H
#define PROTO_COMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/pbuf.h"

struct peer_info;

enum comp_framing {
    COMP_FRAMING_NONE = 0, /* no framing byte at all (no compression option) */
    COMP_FRAMING_LZO_STUB, /* "comp-lzo no": 0xFA before every payload */
    COMP_FRAMING_STUB_V2,  /* "compress stub-v2": 0x50 0x00 only before payloads starting 0x50 */
    COMP_FRAMING_STUB,     /* "compress [stub]": 0xFB swapped in, no compression */
    COMP_FRAMING_LZO,      /* "comp-lzo [yes|adaptive]", "compress lzo": LZO_STUB's, or 0x66 */
    COMP_FRAMING_LZ4,      /* "compress lz4": STUB's, or 0x69 swapped in before an LZ4 block */
    COMP_FRAMING_LZ4_V2,   /* "compress lz4-v2": STUB_V2's, or 0x50 0x01 before an LZ4 block */
};

/* allow-compression of the server config (2.6 options.c, COMP_F_ALLOW_*). */
enum comp_allow {
    COMP_ALLOW_DEFAULT = 0, /* not given: as asym with a compressing compress/comp-lzo, else no */
    COMP_ALLOW_NO,          /* stub framings only: compressed payloads are dropped */
    COMP_ALLOW_ASYM,        /* decompress what clients send, never compress */
    COMP_ALLOW_YES,         /* also compress towards clients that announced the algorithm */
};

/* The server config's compression settings. */
struct comp_config {
    enum comp_framing alg; /* compress / comp-lzo; NONE when absent or "compress migrate" */
    enum comp_allow allow;
    bool
        is_adaptive; /* comp-lzo [adaptive] without comp-noadapt: LZO pauses when it does not pay */
};

/* One client's compression: chosen at connect (comp_choose), then owned by the client's worker. */
struct comp_peer {
    enum comp_framing framing; /* what the client uses; compressed payloads are accepted only
                                * with LZO, LZ4 or LZ4_V2 */
    bool is_compress;          /* compress payloads of COMP_THRESHOLD bytes and more */
    bool is_adaptive;          /* LZO only: the 2.6 adaptive test below */
    bool ac_is_paused;         /* adaptive: compression is off until ac_next_ms */
    uint64_t ac_next_ms;       /* adaptive: end of the sample period or of the pause */
    uint32_t ac_n_total;       /* adaptive: bytes offered to the compressor in this period... */
    uint32_t ac_n_comp;        /* ...and what they compressed to */
};

#define COMP_HEADROOM 2    /* the most bytes framing puts in front of a payload */
#define COMP_TAILROOM 1    /* the swap framing's moved byte, after the payload */
#define COMP_THRESHOLD 100 /* shorter payloads are never compressed (2.6 COMPRESS_THRESHOLD) */
/* Bytes of compressor output buffer (struct comp_work.out) for payloads of up to max bytes:
 * LZO1X's worst case plus the framing around it. */
#define COMP_WORK_OUT_LEN(max) (COMP_HEADROOM + (max) + (max) / 16 + 64 + 3 + COMP_TAILROOM)

/* Scratch memory of the compressor, owned by the caller (one per thread). */
struct comp_work {
    uint8_t *out;     /* compressed payload and its framing: COMP_WORK_OUT_LEN(max_in) bytes */
    size_t out_cap;   /* bytes at out */
    size_t max_in;    /* longer payloads are sent uncompressed */
    void *lzo_wrkmem; /* comp_lzo_wrkmem_len() bytes, or NULL: LZO payloads go uncompressed */
};

/* Bytes of LZO work memory the compressor needs (struct comp_work.lzo_wrkmem). */
size_t comp_lzo_wrkmem_len(void);

/* Initialise the LZO library once, before any other call, on one thread. 0 or -PE_CRYPTO. */
int comp_library_init(void);

/* If option (a pushed option's text: "compress lz4-v2", "comp-lzo", ...) is a compression
 * option, set *f to the framing a 2.6 client then uses ("compress migrate" is NONE) and return
 * true; otherwise false, *f unchanged. Follows 2.6 options.c (compress, comp-lzo). */
bool comp_option_parse(const char *option, enum comp_framing *f);

/* The framing a pushed compression option selects (comp_option_parse); NULL or any other
 * option is COMP_FRAMING_NONE. */
enum comp_framing comp_framing_for_push(const char *pushed);

/* True for the framings that carry compressed payloads (LZO, LZ4, LZ4_V2). */
bool comp_framing_compresses(enum comp_framing f);

/* Decide a client's compression at connect, on the control thread:
 *  - pushed (the last compress/comp-lzo option of the client's push list, or NULL): the client
 *    switches to it, so its framing is that one;
 *  - else, if the client's config has compression (has_comp: ",comp-lzo," in its options
 *    string) and the server config names LZO, LZ4 or LZ4-v2: that one, as 2.6 uses its own for
 *    every client;
 *  - else, if has_comp: 2.6's "compress migrate": *push_out is set to "compress stub-v2" (pi
 *    announced IV_COMP_STUBv2) or "comp-lzo no", to push, and the framing is that stub;
 *  - else no framing.
 * A compressing framing is accepted on receive unless allow-compression is no (then its stub);
 * is_compress is set with allow-compression yes when pi announced the algorithm (IV_LZO,
 * IV_LZ4, IV_LZ4v2). *push_out is NULL when nothing is to be added. pi may be NULL (nothing
 * announced). Writes every field of *out. */
void comp_choose(const struct comp_config *cfg, const struct peer_info *pi, bool has_comp,
                 const char *pushed, struct comp_peer *out, const char **push_out);

/* Frame the payload in b for sending, uncompressed, in place: the framing bytes
 * (COMP_HEADROOM at most) go into b's headroom, the swap framing's moved byte into its tailroom
 * (or, when b has none, the payload moves one byte into the headroom). Returns 0, or
 * -PE_NOSPACE when b lacks the room this framing needs for this payload (b unchanged, nothing
 * written): give every buffer that may be framed COMP_HEADROOM bytes of headroom. */
int comp_frame(enum comp_framing f, struct pbuf *b);

/* Compress and frame the payload in b for sending, when cp says so and it pays (at least
 * COMP_THRESHOLD bytes, at most w->max_in, and smaller once framed, as 2.6): then b describes
 * the framed packet in w->out and 1 is returned. Otherwise 0 and b is unchanged: frame it with
 * comp_frame. Updates cp's adaptive state (now_ms: a monotonic clock). Never fails. */
int comp_compress(struct comp_peer *cp, struct pbuf *b, const struct comp_work *w, uint64_t now_ms);

/* Strip the framing of a received, decrypted payload; b then holds the payload. An uncompressed
 * payload stays where it is (the framing bytes become headroom; the swap framing is undone in
 * place). A compressed one (framings LZO, LZ4, LZ4_V2 only) is decompressed into out, at
 * offset COMP_HEADROOM, at most out_cap - COMP_HEADROOM - COMP_TAILROOM bytes (so the result
 * can be framed again), and b then describes it there. Returns 0, -PE_UNSUPPORTED (a compressed
 * payload this framing does not accept, or out NULL), or -PE_MALFORMED (framing missing,
 * truncated or unknown; a block that does not decompress or would decompress to more than the
 * room in out: nothing is written past it). On error b must be dropped: the swap framing's
 * bytes may have been moved back. */
int comp_unframe(enum comp_framing f, struct pbuf *b, uint8_t *out, size_t out_cap);

#endif /* PROTO_COMP_H */
