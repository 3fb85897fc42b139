/* proto/key_method.h: the key-method-2 message, the first TLS application data each side sends.
 *
 * Layout (openvpn 2.6 ssl.c key_method_2_write/key_method_2_read): u32 0, u8 key method (low
 * nibble 2, high nibble reserved for flags), [48-byte pre_master, client only], 32-byte random1,
 * 32-byte random2, then four strings (options, username, password, peer-info), each a u16 length
 * counting a trailing NUL followed by that many bytes; an empty string is just 00 00.
 * Pure functions, any thread.
 */
#ifndef PROTO_KEY_METHOD_H
#define PROTO_KEY_METHOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KEY_METHOD2_OPTIONS_MAX 512   /* TLS_OPTIONS_LEN: options string incl. NUL */
#define KEY_METHOD2_USERPASS_MAX 4096 /* USER_PASS_LEN of PKCS#11 builds (Debian's), incl. NUL */
/* Peer-info incl. NUL. 2.6 accepts any length its u16 allows, so a longer peer-info is not an
 * error: it is cut after the last complete line that fits and peer_info_truncated is set. Real
 * clients send 150..600 bytes. */
#define KEY_METHOD2_PEER_INFO_MAX 8192
#define KEY_METHOD2_PRE_MASTER_LEN 48
#define KEY_METHOD2_RANDOM_LEN 32

/* One side's key-method-2 message. Holds secrets (pre_master, randoms, password): wipe it with
 * key_method2_wipe() once the keys are derived and the credentials checked. */
struct key_method2 {
    bool has_pre_master; /* only the client sends one */
    uint8_t pre_master[KEY_METHOD2_PRE_MASTER_LEN];
    uint8_t random1[KEY_METHOD2_RANDOM_LEN];
    uint8_t random2[KEY_METHOD2_RANDOM_LEN];
    char options[KEY_METHOD2_OPTIONS_MAX];     /* OCC options string, "" if the peer sent none */
    char username[KEY_METHOD2_USERPASS_MAX];   /* "" if absent or too long */
    char password[KEY_METHOD2_USERPASS_MAX];   /* "" if absent or too long */
    char peer_info[KEY_METHOD2_PEER_INFO_MAX]; /* NAME=value\n lines, see peer_info_parse() */
    bool username_too_long, password_too_long; /* 2.6 reports these as AUTH_FAILED, not a parse
                                                  error: the message is still accepted */
    bool peer_info_truncated;
};

/* Parse a key-method-2 message of len bytes. from_client: the message was sent by the client
 * (then it carries pre_master); a server passes true, the test client false. Strings are cut at
 * their first NUL; a string whose last byte is not NUL is malformed. Bytes after the peer-info
 * are ignored (2.6 discards them).
 * Returns 0 (all fields of *out written), -PE_SHORT (message ends inside a field or before the
 * peer-info string: real 2.6 and openvpn3 peers always send all four strings), -PE_MALFORMED (key
 * method nibble != 2, options string longer than 512 bytes incl. NUL, missing NUL). On error *out
 * is wiped. */
int key_method2_parse(const uint8_t *msg, size_t len, bool from_client, struct key_method2 *out);

/* Serialise km. from_client: write pre_master (client side: tests and the load generator). A
 * server passes false and, like 2.6, leaves username, password and peer-info "" (each written as
 * 00 00); the options string is always written with its NUL, even when empty. The caller fills
 * the randoms (and pre_master) from its rng. Writes at most cap bytes to out and sets *out_len.
 * Returns 0, -PE_NOSPACE (out is zeroed), or -PE_MALFORMED (a string field without NUL). */
int key_method2_write(const struct key_method2 *km, bool from_client, uint8_t *out, size_t cap,
                      size_t *out_len);

/* Zero all of km (mbedtls_platform_zeroize). Safe on a zeroed struct. */
void key_method2_wipe(struct key_method2 *km);

#endif /* PROTO_KEY_METHOD_H */
