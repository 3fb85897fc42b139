/* proto/occ.c: ping and OCC payloads, the OCC options string. */
#include "proto/occ.h"

#include <string.h>
#include <strings.h>

#include "proto/errors.h"

const uint8_t occ_ping_magic[OCC_STRING_SIZE] = {0x2a, 0x18, 0x7b, 0xf3, 0x64, 0x1e, 0xb4, 0xcb,
                                                 0x07, 0xed, 0x2d, 0x0a, 0x98, 0x1f, 0xc7, 0x48};

const uint8_t occ_magic[OCC_STRING_SIZE] = {0x28, 0x7f, 0x34, 0x6b, 0xd4, 0xef, 0x7a, 0x81,
                                            0x2d, 0x56, 0xb8, 0xd3, 0xaf, 0xc5, 0x45, 0x9c};

bool occ_is_ping(const uint8_t *p, size_t len)
{
    return len == OCC_STRING_SIZE && memcmp(p, occ_ping_magic, OCC_STRING_SIZE) == 0;
}

int occ_parse(const uint8_t *p, size_t len, enum occ_type *type)
{
    if (len < OCC_STRING_SIZE || memcmp(p, occ_magic, OCC_STRING_SIZE) != 0) {
        return -PE_MALFORMED;
    }
    if (len == OCC_STRING_SIZE) {
        return -PE_SHORT;
    }
    if (p[OCC_STRING_SIZE] > OCC_EXIT) {
        return -PE_UNSUPPORTED;
    }
    *type = (enum occ_type)p[OCC_STRING_SIZE];
    return 0;
}

int occ_write(enum occ_type type, uint8_t *out, size_t cap, size_t *out_len)
{
    if (type != OCC_REQUEST && type != OCC_MTU_REQUEST && type != OCC_EXIT) {
        return -PE_UNSUPPORTED;
    }
    if (cap < OCC_STRING_SIZE + 1) {
        return -PE_NOSPACE;
    }
    memcpy(out, occ_magic, OCC_STRING_SIZE);
    out[OCC_STRING_SIZE] = (uint8_t)type;
    *out_len = OCC_STRING_SIZE + 1;
    return 0;
}

/* --- options string ------------------------------------------------------------------------ */

enum cipher_mode { MODE_NONE, MODE_CBC, MODE_OFB_CFB, MODE_AEAD };

/* Sizes as 2.6 sees them through OpenSSL: block is that of the -CBC variant of the cipher when one
 * exists (crypto_openssl.c cipher_kt_block_size), so AES-GCM counts 16 and ChaCha20 1. */
struct cipher_row {
    const char *name;
    enum cipher_mode mode;
    unsigned iv, block, keybits;
};

static const struct cipher_row ciphers[] = {
    {"none", MODE_NONE, 0, 0, 0},
    {"AES-128-GCM", MODE_AEAD, 12, 16, 128},
    {"AES-192-GCM", MODE_AEAD, 12, 16, 192},
    {"AES-256-GCM", MODE_AEAD, 12, 16, 256},
    {"CHACHA20-POLY1305", MODE_AEAD, 12, 1, 256},
    {"AES-128-CBC", MODE_CBC, 16, 16, 128},
    {"AES-192-CBC", MODE_CBC, 16, 16, 192},
    {"AES-256-CBC", MODE_CBC, 16, 16, 256},
    {"CAMELLIA-128-CBC", MODE_CBC, 16, 16, 128},
    {"CAMELLIA-192-CBC", MODE_CBC, 16, 16, 192},
    {"CAMELLIA-256-CBC", MODE_CBC, 16, 16, 256},
    {"DES-EDE3-CBC", MODE_CBC, 8, 8, 192},
    {"AES-128-CFB", MODE_OFB_CFB, 16, 16, 128},
    {"AES-192-CFB", MODE_OFB_CFB, 16, 16, 192},
    {"AES-256-CFB", MODE_OFB_CFB, 16, 16, 256},
    {"AES-128-OFB", MODE_OFB_CFB, 16, 16, 128},
    {"AES-192-OFB", MODE_OFB_CFB, 16, 16, 192},
    {"AES-256-OFB", MODE_OFB_CFB, 16, 16, 256},
};

struct digest_row {
    const char *name;
    unsigned size;
};

static const struct digest_row digests[] = {
    {"none", 0},    {"MD5", 16},    {"SHA1", 20},   {"RIPEMD160", 20},
    {"SHA224", 28}, {"SHA256", 32}, {"SHA384", 48}, {"SHA512", 64},
};

#define AEAD_TAG_LEN 16    /* OPENVPN_AEAD_TAG_LENGTH */
#define TAP_MTU_EXTRA 32   /* mtu.h TAP_MTU_EXTRA_DEFAULT */
#define BF_CBC_OVERHEAD 16 /* 64-bit block + 64-bit IV, added by hand in 2.6 */

static const struct cipher_row *find_cipher(const char *name)
{
    for (size_t i = 0; i < sizeof(ciphers) / sizeof(ciphers[0]); i++) {
        if (strcasecmp(name, ciphers[i].name) == 0) {
            return &ciphers[i];
        }
    }
    return NULL;
}

static const struct digest_row *find_digest(const char *name)
{
    for (size_t i = 0; i < sizeof(digests) / sizeof(digests[0]); i++) {
        if (strcasecmp(name, digests[i].name) == 0) {
            return &digests[i];
        }
    }
    return NULL;
}

static const char *cipher_name(const struct occ_options *o)
{
    return o->cipher != NULL ? o->cipher : "BF-CBC";
}

static bool is_bf_cbc(const char *name)
{
    return strcasecmp(name, "BF-CBC") == 0;
}

void occ_options_init(struct occ_options *o)
{
    memset(o, 0, sizeof(*o));
    o->dev_type = "tun";
    o->tun_mtu = 1500;
    o->is_server = true;
    o->keydir = -1;
}

int occ_link_mtu(const struct occ_options *o, unsigned *link_mtu)
{
    const char *name = cipher_name(o);
    const struct cipher_row *c = find_cipher(is_bf_cbc(name) ? "none" : name);
    const struct digest_row *d = find_digest(o->auth != NULL ? o->auth : "SHA1");
    unsigned total = 0;

    if (c == NULL || d == NULL || o->tun_mtu < 0) {
        return -PE_UNSUPPORTED;
    }
    if (is_bf_cbc(name)) {
        total += BF_CBC_OVERHEAD;
    }
    /* AEAD ciphers ignore --auth (crypto.c init_key_type) */
    unsigned digest_len = c->mode == MODE_AEAD ? 0 : d->size;
    unsigned packet_id_len = c->mode == MODE_OFB_CFB ? 8 : 4; /* long form only for OFB/CFB */

    /* payload: tun-mtu plus what travels inside the encryption */
    total += (unsigned)o->tun_mtu;
    if (o->dev_type != NULL && strcmp(o->dev_type, "tap") == 0) {
        total += TAP_MTU_EXTRA;
    }
    total += o->comp_v1_framing ? 1u : 0u;
    total += o->fragment ? 4u : 0u; /* the fragment header */
    total += c->mode == MODE_CBC ? packet_id_len : 0;
    /* header: TCP length, opcode (2.6 counts 1 byte: no peer-id when the string is built) */
    total += (o->is_tcp ? 2u : 0u) + 1u;
    /* crypto overhead, with the extra bytes 2.6 adds for OCC compatibility */
    total += c->mode != MODE_CBC ? packet_id_len : 0;
    if (c->mode == MODE_AEAD) {
        total += AEAD_TAG_LEN + c->iv + c->block;
    } else {
        total += c->mode != MODE_NONE ? c->block + c->iv : 0;
        total += digest_len;
    }
    *link_mtu = total;
    return 0;
}

/* Bounded string builder: remembers overflow instead of failing each call. */
struct sb {
    char *p;
    size_t cap, len;
    bool overflow;
};

static void sb_put(struct sb *b, const char *s)
{
    size_t n = strlen(s);

    if (b->overflow || n >= b->cap - b->len) {
        b->overflow = true;
        return;
    }
    memcpy(b->p + b->len, s, n + 1);
    b->len += n;
}

/* Upper-cased copy of a cipher or digest name; "none" keeps its bracketed OCC spelling. */
static void sb_put_upper(struct sb *b, const char *s)
{
    for (; *s != '\0' && !b->overflow; s++) {
        char ch[2] = {*s, '\0'};
        if (ch[0] >= 'a' && ch[0] <= 'z') {
            ch[0] = (char)(ch[0] - 'a' + 'A');
        }
        sb_put(b, ch);
    }
}

static void sb_put_uint(struct sb *b, unsigned v)
{
    char tmp[12];
    size_t i = sizeof(tmp) - 1;

    tmp[i] = '\0';
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    sb_put(b, tmp + i);
}

static bool clean_word(const char *s)
{
    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == ',' || ch < 0x20 || ch == 0x7f) {
            return false;
        }
    }
    return true;
}

int occ_options_string(const struct occ_options *o, char *out, size_t cap)
{
    const char *name = cipher_name(o);
    const char *dev = o->dev_type != NULL ? o->dev_type : "tun";
    const char *auth = o->auth != NULL ? o->auth : "SHA1";
    const struct cipher_row *c = find_cipher(is_bf_cbc(name) ? "none" : name);
    unsigned link_mtu = o->link_mtu;
    struct sb b = {out, cap, 0, false};

    if (cap == 0) {
        return -PE_NOSPACE;
    }
    out[0] = '\0';
    if (!clean_word(name) || !clean_word(dev) || !clean_word(auth)) {
        return -PE_MALFORMED;
    }
    if (c == NULL) {
        return -PE_UNSUPPORTED;
    }
    if (link_mtu == 0) {
        int err = occ_link_mtu(o, &link_mtu);
        if (err) {
            return err;
        }
    }
    bool is_aead = c->mode == MODE_AEAD;
    bool local_server = o->remote ? !o->is_server : o->is_server;

    sb_put(&b, "V4,dev-type ");
    sb_put(&b, dev);
    sb_put(&b, ",link-mtu ");
    sb_put_uint(&b, link_mtu);
    sb_put(&b, ",tun-mtu ");
    sb_put_uint(&b, o->tun_mtu > 0 ? (unsigned)o->tun_mtu : 0);
    sb_put(&b, !o->is_tcp     ? ",proto UDPv4"
               : local_server ? ",proto TCPv4_SERVER"
                              : ",proto TCPv4_CLIENT");
    if (o->comp) {
        sb_put(&b, ",comp-lzo");
    }
    if (o->fragment) {
        sb_put(&b, ",mtu-dynamic"); /* 2.6 options_string: fragment's old name */
    }
    if (o->keydir == 0 || o->keydir == 1) {
        sb_put(&b, (o->keydir == 1) != o->remote ? ",keydir 1" : ",keydir 0");
    }
    if (o->cipher_in_data_ciphers) {
        sb_put(&b, ",cipher ");
        if (strcasecmp(name, "none") == 0) {
            sb_put(&b, "[null-cipher]");
        } else {
            sb_put_upper(&b, name);
        }
    }
    sb_put(&b, ",auth ");
    if (is_aead || strcasecmp(auth, "none") == 0) {
        sb_put(&b, "[null-digest]");
    } else {
        sb_put_upper(&b, auth);
    }
    sb_put(&b, ",keysize ");
    sb_put_uint(&b, is_bf_cbc(name) ? 128 : c->keybits);
    if (o->tls_auth) {
        sb_put(&b, ",tls-auth");
    }
    sb_put(&b, ",key-method 2");
    sb_put(&b, local_server ? ",tls-server" : ",tls-client");
    if (b.overflow) {
        out[0] = '\0';
        return -PE_NOSPACE;
    }
    return 0;
}

bool occ_options_get(const char *options, const char *name, char *out, size_t cap)
{
    size_t name_len = strlen(name);

    for (const char *p = options; p != NULL;) {
        if (strncmp(p, name, name_len) == 0 && p[name_len] == ' ' && p[name_len + 1] != '\0') {
            const char *start = p + name_len + 1;
            const char *end = strchr(start, ',');
            size_t n = end != NULL ? (size_t)(end - start) : strlen(start);
            if (n >= cap) {
                return false;
            }
            memcpy(out, start, n);
            out[n] = '\0';
            return true;
        }
        p = strchr(p, ',');
        if (p != NULL) {
            p++;
        }
    }
    return false;
}

bool occ_options_has_comp(const char *options)
{
    return options != NULL && strstr(options, ",comp-lzo,") != NULL;
}
