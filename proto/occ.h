/* proto/occ.h: keepalive ping, OCC messages and the OCC options string.
 *
 * The ping and OCC messages are data-channel payloads (after decryption and decompression)
 * recognised by a 16-byte magic prefix. The options string is the "V4,dev-type tun,..." text
 * both sides put in their key-method-2 message; 2.6 only warns when the two disagree, but it
 * reads the peer's cipher and compression setting from it. Pure functions, any thread.
 */
#ifndef PROTO_OCC_H
#define PROTO_OCC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OCC_STRING_SIZE 16 /* length of both magics */
#define OCC_OPTIONS_STRING_MAX                                                                     \
    256 /* 2.6 builds the string in a 256-byte buffer (OPTION_LINE_SIZE) */

/* The data-channel keepalive: a payload of exactly these 16 bytes (ping.c ping_string). */
extern const uint8_t occ_ping_magic[OCC_STRING_SIZE];
/* Prefix of every OCC message, followed by a type byte (occ.c occ_magic). */
extern const uint8_t occ_magic[OCC_STRING_SIZE];

/* OCC message types (occ.h). */
enum occ_type {
    OCC_REQUEST = 0,          /* send me your options string */
    OCC_REPLY = 1,            /* NUL-terminated options string follows */
    OCC_MTU_LOAD_REQUEST = 2, /* u16 size follows */
    OCC_MTU_LOAD = 3,         /* random filler */
    OCC_MTU_REQUEST = 4,      /* no body */
    OCC_MTU_REPLY = 5,        /* u16 max received, u16 max sent */
    OCC_EXIT = 6,             /* peer is going away: tear the session down */
};

/* The payload is a keepalive ping: exactly 16 bytes equal to occ_ping_magic (ping.h is_ping_msg
 * compares the whole buffer, so longer payloads are not pings). Never forward it to the tun. */
bool occ_is_ping(const uint8_t *p, size_t len);

/* Classify a data-channel payload that may be an OCC message. Returns 0 and the type, -PE_MALFORMED
 * if it does not start with occ_magic (not an OCC message: treat as normal traffic), -PE_SHORT if
 * the magic is there but the type byte is missing, -PE_UNSUPPORTED for a type above OCC_EXIT (2.6
 * drops such messages without acting). Bytes after the type are not checked. */
int occ_parse(const uint8_t *p, size_t len, enum occ_type *type);

/* Write an OCC message without a body (OCC_REQUEST, OCC_MTU_REQUEST, OCC_EXIT): the magic and the
 * type byte, 17 bytes, into out (cap bytes). Returns 0, -PE_NOSPACE, or -PE_UNSUPPORTED for types
 * that carry a body. */
int occ_write(enum occ_type type, uint8_t *out, size_t cap, size_t *out_len);

/* Inputs of the options string, named like the openvpn options they come from. */
struct occ_options {
    const char *dev_type; /* "tun", "tap" or "null"; NULL means "tun" */
    int tun_mtu;          /* --tun-mtu, 1500 by default */
    bool is_tcp;          /* proto tcp: "TCPv4_SERVER"/"TCPv4_CLIENT" and 2 more link-mtu bytes */
    bool is_server;       /* tls-server (else tls-client) */
    bool remote;          /* build the string expected from the peer instead of our own */
    bool comp;            /* any compression option configured: ",comp-lzo" */
    bool comp_v1_framing; /* comp-lzo / compress stub / compress lz4: 1 framing byte in link-mtu */
    bool fragment;        /* `fragment N`: ",mtu-dynamic" and its 4-byte header in link-mtu */
    int keydir;           /* tls-auth key direction 0 or 1, -1 for none (also for tls-crypt) */
    bool tls_auth;        /* tls-auth in use: ",tls-auth" */
    const char *cipher;   /* --cipher or --data-ciphers-fallback; NULL means 2.6's BF-CBC default */
    bool cipher_in_data_ciphers; /* announce ",cipher X" (2.6 does only if X is in data-ciphers) */
    const char *auth;            /* --auth digest; NULL means "SHA1" */
    unsigned link_mtu;           /* 0: compute as 2.6 does (occ_link_mtu); else use this value */
};

/* Fill o with what a 2.6 server with no related options sends: tun, tun-mtu 1500, UDP,
 * tls-server, no compression, no tls-auth, cipher BF-CBC (not announced), auth SHA1. */
void occ_options_init(struct occ_options *o);

/* The link-mtu value 2.6 writes into the options string (mtu.c calc_options_string_link_mtu,
 * crypto.c calculate_crypto_overhead; block sizes as the OpenSSL build reports them). Only
 * compared by the peer, never enforced. Returns 0, or -PE_UNSUPPORTED for a cipher or digest
 * name not in the built-in table (AES-GCM/CBC/CFB/OFB, ChaCha20-Poly1305, Camellia-CBC,
 * DES-EDE3-CBC, BF-CBC, none; MD5, SHA1, RIPEMD160, SHA224..SHA512, none). */
int occ_link_mtu(const struct occ_options *o, unsigned *link_mtu);

/* Build the options string as 2.6 options.c options_string() does for a client/server TLS
 * session, e.g. for the default server
 * "V4,dev-type tun,link-mtu 1541,tun-mtu 1500,proto UDPv4,auth SHA1,keysize 128,key-method
 * 2,tls-server" and with data-ciphers-fallback AES-256-GCM "V4,dev-type tun,link-mtu 1549,tun-mtu
 * 1500,proto UDPv4,cipher AES-256-GCM,auth [null-digest],keysize 256,key-method 2,tls-server" (both
 * captured from 2.6.14). Cipher and digest names are upper-cased; "none" is written as
 * [null-cipher] / [null-digest]. Writes a NUL-terminated string into out (cap bytes; 256 always
 * suffices). Returns 0, -PE_NOSPACE, -PE_MALFORMED (names that would break the comma list), or
 * -PE_UNSUPPORTED (cipher not in the table; a digest not in the table is only an error when
 * link_mtu has to be computed). */
int occ_options_string(const struct occ_options *o, char *out, size_t cap);

/* Value of option name in an options string ("cipher" in "V4,...,cipher AES-256-GCM,..." gives
 * "AES-256-GCM"), as 2.6 options_string_extract_option: name must start a comma-separated field
 * and be followed by a space and at least one character; the value runs to the next comma; the
 * first match wins. Returns true and writes the NUL-terminated value into out (cap bytes); false if
 * absent or if the value does not fit. options may be NULL (false). */
bool occ_options_get(const char *options, const char *name, char *out, size_t cap);

/* The peer has compression configured: its options string contains ",comp-lzo," (2.6 ssl.c
 * key_method_2_read sets remote_usescomp this way). Section 7: decides what to push. */
bool occ_options_has_comp(const char *options);

#endif /* PROTO_OCC_H */
