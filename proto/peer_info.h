/* proto/peer_info.h: the client's peer-info text (the last string of its key-method-2 message).
 *
 * Peer-info is a list of "NAME=value\n" lines (IV_VER, IV_PLAT, IV_PROTO, IV_CIPHERS, ...). The
 * server only reads it: it decides which data format, key derivation, cipher, compression framing
 * and control messages the client understands. Pure functions, any thread.
 */
#ifndef PROTO_PEER_INFO_H
#define PROTO_PEER_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* IV_PROTO bits, as defined in openvpn 2.6 ssl.h (bits 10..12 from 2.7 and openvpn3). Bit 0 is
 * reserved and never set by a client. */
#define IV_PROTO_DATA_V2 (1u << 1)         /* P_DATA_V2: assign and push a peer-id */
#define IV_PROTO_REQUEST_PUSH (1u << 2)    /* PUSH_REPLY may be sent without a PUSH_REQUEST */
#define IV_PROTO_TLS_KEY_EXPORT (1u << 3)  /* data keys from the TLS exporter (tls-ekm) */
#define IV_PROTO_AUTH_PENDING_KW (1u << 4) /* understands "AUTH_PENDING,timeout N" */
#define IV_PROTO_NCP_P2P (1u << 5)         /* peer runs in p2p mode, will not pull */
#define IV_PROTO_DNS_OPTION (1u << 6)      /* understands the 2.6 "dns" push option */
#define IV_PROTO_CC_EXIT_NOTIFY (1u << 7)  /* EXIT on the control channel, protocol-flags */
#define IV_PROTO_AUTH_FAIL_TEMP (1u << 8)  /* understands "AUTH_FAILED,TEMP..." */
#define IV_PROTO_DYN_TLS_CRYPT (1u << 9)   /* dynamic tls-crypt for renegotiations */
#define IV_PROTO_DATA_EPOCH (1u << 10)     /* 2.7/openvpn3 epoch data format */
#define IV_PROTO_DNS_OPTION_V2 (1u << 11)  /* 2.7/openvpn3 newer "dns" option */
#define IV_PROTO_PUSH_UPDATE (1u << 12)    /* 2.7/openvpn3 PUSH_UPDATE */

#define PEER_INFO_CIPHERS_MAX 256 /* IV_CIPHERS incl. NUL; 2.6 caps its own list at 127 chars */

/* What the server needs from peer-info. Strings are NUL-terminated and never overflow: longer
 * values are cut (IV_CIPHERS only at a ':' so no partial cipher name remains) and control
 * characters (below 0x20, 0x7f) are replaced by '?', so the strings are safe to log. */
struct peer_info {
    char version[32];  /* IV_VER, "" if absent */
    char platform[32]; /* IV_PLAT */
    char plat_ver[64]; /* IV_PLAT_VER */
    char gui_ver[64];  /* IV_GUI_VER */
    char sso[64];      /* IV_SSO: comma list of webauth, openurl, crtext */
    char ssl[64];      /* IV_SSL */
    uint32_t iv_proto; /* IV_PROTO bit field; 0 if absent, not a number, < 1 or > INT32_MAX */
    bool has_ciphers;  /* IV_CIPHERS present (even empty): client does NCP with that list */
    bool ciphers_truncated;
    char ciphers[PEER_INFO_CIPHERS_MAX]; /* IV_CIPHERS colon list */
    int ncp;                             /* IV_NCP; 0 if absent or not a number */
    bool has_mtu;                        /* IV_MTU present and a number */
    int mtu;                             /* IV_MTU: largest tun-mtu the client accepts by push */
    bool tcpnl;                          /* IV_TCPNL=1 */
    bool lz4, lz4v2, lzo, lzo_stub, comp_stub, comp_stubv2; /* IV_LZ4=1 ... IV_COMP_STUBv2=1 */
};

/* Parse peer-info text of len bytes (need not be NUL-terminated; parsing stops at the first NUL).
 * Lines are "NAME=value" separated by '\n' (a trailing '\r' is dropped); unknown names, lines
 * without '=' and empty lines are skipped. When a name repeats, the first one counts (openvpn 2.6
 * finds variables with strstr). Unlike 2.6, a name only matches at the start of a line, so
 * "UV_X=IV_PROTO=1" sets nothing. text may be NULL when len is 0 (client sent no peer-info).
 * Writes every field of *out. Returns 0; odd content never makes it fail (ssl_util.c
 * extract_var_peer_info / extract_iv_proto, ssl_ncp.c tls_peer_info_ncp_ver, push.c IV_MTU). */
int peer_info_parse(const char *text, size_t len, struct peer_info *out);

/* The client negotiates ciphers (NCP): IV_NCP >= 2 or IV_CIPHERS present (ssl_ncp.c
 * tls_peer_supports_ncp). Only such clients get a pushed "cipher". pi may be NULL (false). */
bool peer_info_supports_ncp(const struct peer_info *pi);

/* The value of NAME in peer-info text (NUL-terminated, "NAME=value" lines as
 * peer_info_parse() reads them; the first NAME at the start of a line counts), copied into out
 * (cap bytes, cut if longer, a trailing '\r' dropped). Returns whether NAME was there; out is
 * "" when not. text may be NULL. */
bool peer_info_value(const char *text, const char *name, char *out, size_t cap);

#endif /* PROTO_PEER_INFO_H */
