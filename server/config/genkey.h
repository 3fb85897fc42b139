/* server/config/genkey.h: `ovpnd --genkey`: new tls-auth / tls-crypt / static keys and
 * tls-crypt-v2 server and client keys, written in openvpn 2.6's file formats so that either
 * program reads what the other makes (openvpn 2.6 src/openvpn/init.c do_genkey(), crypto.c
 * write_key_file() and write_pem_key_file(), tls_crypt.c tls_crypt_v2_write_client_key_file()).
 */
#ifndef SERVER_CONFIG_GENKEY_H
#define SERVER_CONFIG_GENKEY_H

#include <stddef.h>

/* Make the key of type (argv[0]: "secret", "tls-auth", "tls-crypt", "tls-crypt-v2-server" or
 * "tls-crypt-v2-client") and write it to argv[1] (mode 0600, replacing it), or to standard
 * output when argv[1] is absent or empty. For tls-crypt-v2-client, server_key_path names the
 * server key it is wrapped with (required) and argv[2], if present, is the user metadata in
 * base64 (decoded at most 733 bytes); without it the metadata is the creation time, as openvpn.
 * argc counts argv (1..3). Main thread, at start-up; randomness from getrandom(2).
 * Returns 0, or -1 with the reason in errbuf (errbuf_len bytes, NUL-terminated). */
int genkey_write(int argc, char **argv, const char *server_key_path, char *errbuf,
                 size_t errbuf_len);

/* A new tls-crypt-v2 client key (Kc and its WKc, wrapped with the server key given as the PEM
 * text server_key_text, server_key_len bytes) in openvpn 2.6's "OpenVPN tls-crypt-v2 client
 * key" PEM form into out (out_cap bytes; 4096 hold any key), its length (no NUL) in *out_len.
 * b64_metadata as for genkey_write (NULL: the creation time). Main thread; randomness from
 * getrandom(2); no files. Returns 0, or -1 with the reason in errbuf (errbuf_len bytes,
 * NUL-terminated). The caller wipes out when done: it is secret. */
int genkey_tls_crypt_v2_client_text(const char *server_key_text, size_t server_key_len,
                                    const char *b64_metadata, char *out, size_t out_cap,
                                    size_t *out_len, char *errbuf, size_t errbuf_len);

#endif /* SERVER_CONFIG_GENKEY_H */
