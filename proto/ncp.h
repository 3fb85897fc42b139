/* proto/ncp.h: data-channel cipher negotiation (NCP) on the server, as openvpn 2.6 does it.
 *
 * Pure function of the server's --data-ciphers, the client's peer-info and the client's OCC
 * options string (ssl_ncp.c ncp_get_best_cipher, multi.c multi_client_set_protocol_options).
 * Any thread.
 */
#ifndef PROTO_NCP_H
#define PROTO_NCP_H

#include <stddef.h>

struct peer_info;

#define NCP_CIPHER_NAME_MAX 64 /* enough for any cipher name incl. NUL */

/* Choose the data-channel cipher for one client.
 *
 * server_ciphers: the --data-ciphers colon list in order of preference (2.6 default
 * "AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305"). Each entry is normalised as 2.6 does when it reads
 * the option: a leading '?' (optional cipher) is dropped, names are upper-cased except "none".
 * pi: the client's parsed peer-info, or NULL if it sent none. client_options: the options string
 * from its key-method-2 message (its "cipher X" is used), or NULL. fallback:
 * --data-ciphers-fallback or NULL.
 *
 * Rules (2.6): the client list is IV_CIPHERS if present, else "AES-256-GCM:AES-128-GCM" if
 * IV_NCP >= 2, else empty. The first server cipher that is in the client list wins; without
 * IV_CIPHERS a server cipher equal to the client's OCC "cipher" also counts ("[null-cipher]" read
 * as "none"). If nothing matches, fallback is used only when the client sent neither a cipher list
 * nor an OCC cipher. Names in the client's list are compared exactly (clients send canonical
 * upper-case names).
 *
 * Writes the chosen name, NUL-terminated, to out (out_cap bytes). Returns 0; -PE_UNSUPPORTED when
 * there is no shared cipher (send "AUTH_FAILED,Data channel cipher negotiation failed (no shared
 * cipher)"); -PE_NOSPACE if out is too small; -PE_MALFORMED if server_ciphers is NULL or a name
 * is longer than NCP_CIPHER_NAME_MAX - 1.
 * Whether to push the result: only to clients for which peer_info_supports_ncp() is true. */
int ncp_select(const char *server_ciphers, const struct peer_info *pi, const char *client_options,
               const char *fallback, char *out, size_t out_cap);

#endif /* PROTO_NCP_H */
