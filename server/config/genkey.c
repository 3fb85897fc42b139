/* server/config/genkey.c: `ovpnd --genkey` for the control-channel key files (see genkey.h). */
#include "server/config/genkey.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <mbedtls/base64.h>
#include <mbedtls/platform_util.h>

#include "proto/static_key.h"
#include "proto/tls_crypt_v2.h"

#define KEY_TEXT_MAX 4096
#define SERVER_KEY_FILE_MAX 65536

static int random_bytes(uint8_t *out, size_t len)
{
    size_t got = 0;

    while (got < len) {
        ssize_t n = getrandom(out + got, len - got, 0);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        got += (size_t)n;
    }
    return 0;
}

/* Write text (len bytes) to path (mode 0600, truncated) or, with no path, to standard output. */
static int write_text(const char *path, const char *text, size_t len, char *errbuf,
                      size_t errbuf_len)
{
    bool is_stdout = path == NULL || path[0] == '\0';
    int fd = is_stdout ? STDOUT_FILENO
                       : open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);
    size_t done = 0;

    if (fd < 0) {
        snprintf(errbuf, errbuf_len, "cannot open %s for writing: %s", path, strerror(errno));
        return -1;
    }
    while (done < len) {
        ssize_t n = write(fd, text + done, len - done);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            snprintf(errbuf, errbuf_len, "cannot write %s: %s", is_stdout ? "the key" : path,
                     strerror(errno));
            if (!is_stdout) {
                close(fd);
            }
            return -1;
        }
        done += (size_t)n;
    }
    if (!is_stdout && close(fd) != 0) {
        snprintf(errbuf, errbuf_len, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* The text of the server key file at path into *text (malloc'd, NUL-terminated; the caller
 * wipes and frees it) and its length into *len. */
static int read_server_key(const char *path, char **text_out, size_t *len_out, char *errbuf,
                           size_t errbuf_len)
{
    char *text = malloc(SERVER_KEY_FILE_MAX);
    FILE *f = text ? fopen(path, "re") : NULL;
    size_t len;

    if (!f) {
        snprintf(errbuf, errbuf_len, "cannot read the tls-crypt-v2 server key %s: %s", path,
                 text ? strerror(errno) : "out of memory");
        free(text);
        return -1;
    }
    len = fread(text, 1, SERVER_KEY_FILE_MAX - 1, f);
    if (ferror(f) || len == SERVER_KEY_FILE_MAX - 1) {
        snprintf(errbuf, errbuf_len, "cannot read the tls-crypt-v2 server key %s", path);
        fclose(f);
        mbedtls_platform_zeroize(text, len);
        free(text);
        return -1;
    }
    fclose(f);
    text[len] = '\0';
    *text_out = text;
    *len_out = len;
    return 0;
}

/* metadata = type || data: user data decoded from b64, or the creation time (big-endian u64). */
static int make_metadata(const char *b64, uint8_t *md, size_t md_cap, size_t *md_len, char *errbuf,
                         size_t errbuf_len)
{
    size_t n = 0;

    if (!b64) {
        uint64_t now = (uint64_t)time(NULL);

        md[0] = TLS_CRYPT_V2_METADATA_TYPE_TIMESTAMP;
        for (int i = 0; i < 8; i++) {
            md[1 + i] = (uint8_t)(now >> (56 - 8 * i));
        }
        *md_len = 9;
        return 0;
    }
    md[0] = TLS_CRYPT_V2_METADATA_TYPE_USER;
    int rc = mbedtls_base64_decode(md + 1, md_cap - 1, &n, (const unsigned char *)b64, strlen(b64));

    if (rc == MBEDTLS_ERR_BASE64_BUFFER_TOO_SMALL) {
        snprintf(errbuf, errbuf_len, "metadata too long (max %d bytes)",
                 TLS_CRYPT_V2_MAX_METADATA_LEN - 1);
        return -1;
    }
    if (rc != 0) {
        snprintf(errbuf, errbuf_len, "failed to base64 decode the metadata");
        return -1;
    }
    *md_len = 1 + n;
    return 0;
}

int genkey_tls_crypt_v2_client_text(const char *server_key_text, size_t server_key_len,
                                    const char *b64_metadata, char *out, size_t out_cap,
                                    size_t *out_len, char *errbuf, size_t errbuf_len)
{
    struct tls_crypt_v2_server_key sk;
    uint8_t buf[TLS_CRYPT_V2_CLIENT_KEY_LEN + TLS_CRYPT_V2_MAX_WKC_LEN];
    uint8_t md[TLS_CRYPT_V2_MAX_METADATA_LEN], kc[TLS_CRYPT_V2_CLIENT_KEY_LEN];
    size_t md_len = 0, wkc_len = 0, text_len = 0, chk_len = 0;
    int err = -1;

    if (tls_crypt_v2_server_key_parse(server_key_text, server_key_len, &sk) != 0) {
        snprintf(errbuf, errbuf_len,
                 "not a tls-crypt-v2 server key (ovpnd --genkey tls-crypt-v2-server FILE)");
        return -1;
    }
    if (make_metadata(b64_metadata, md, sizeof(md), &md_len, errbuf, errbuf_len) != 0) {
        goto out;
    }
    if (random_bytes(buf, TLS_CRYPT_V2_CLIENT_KEY_LEN) != 0) {
        snprintf(errbuf, errbuf_len, "cannot make a random key: %s", strerror(errno));
        goto out;
    }
    if (tls_crypt_v2_wrap(&sk, buf, md, md_len, buf + TLS_CRYPT_V2_CLIENT_KEY_LEN,
                          sizeof(buf) - TLS_CRYPT_V2_CLIENT_KEY_LEN, &wkc_len) != 0 ||
        tls_crypt_v2_pem_encode(TLS_CRYPT_V2_CLIENT_PEM, buf, TLS_CRYPT_V2_CLIENT_KEY_LEN + wkc_len,
                                out, out_cap, &text_len) != 0) {
        snprintf(errbuf, errbuf_len, "could not wrap the client key");
        goto out;
    }
    /* As openvpn does: read back what was made, as a server would. */
    if (tls_crypt_v2_client_key_parse(out, text_len, kc, buf + TLS_CRYPT_V2_CLIENT_KEY_LEN,
                                      sizeof(buf) - TLS_CRYPT_V2_CLIENT_KEY_LEN, &wkc_len) != 0 ||
        tls_crypt_v2_unwrap(&sk, buf + TLS_CRYPT_V2_CLIENT_KEY_LEN, wkc_len, kc, md, sizeof(md),
                            &chk_len) != 0 ||
        memcmp(kc, buf, sizeof(kc)) != 0) {
        snprintf(errbuf, errbuf_len, "the new client key does not unwrap");
        mbedtls_platform_zeroize(out, out_cap);
        goto out;
    }
    *out_len = text_len;
    err = 0;
out:
    tls_crypt_v2_server_key_wipe(&sk);
    mbedtls_platform_zeroize(buf, sizeof(buf));
    mbedtls_platform_zeroize(kc, sizeof(kc));
    return err;
}

static int genkey_v2_client(const char *path, const char *b64_metadata, const char *server_key_path,
                            char *errbuf, size_t errbuf_len)
{
    char *sk_text;
    char text[KEY_TEXT_MAX];
    size_t sk_len = 0, text_len = 0;
    int err;

    if (!server_key_path) {
        snprintf(errbuf, errbuf_len,
                 "tls-crypt-v2-client needs the server key: --tls-crypt-v2 SERVER-KEY");
        return -1;
    }
    if (read_server_key(server_key_path, &sk_text, &sk_len, errbuf, errbuf_len) != 0) {
        return -1;
    }
    err = genkey_tls_crypt_v2_client_text(sk_text, sk_len, b64_metadata, text, sizeof(text),
                                          &text_len, errbuf, errbuf_len);
    if (err == 0) {
        err = write_text(path, text, text_len, errbuf, errbuf_len);
    } else if (strncmp(errbuf, "not a tls-crypt-v2 server key", 29) == 0) {
        snprintf(errbuf, errbuf_len,
                 "%s is not a tls-crypt-v2 server key (ovpnd --genkey tls-crypt-v2-server FILE)",
                 server_key_path);
    } else if (strcmp(errbuf, "the new client key does not unwrap") == 0) {
        snprintf(errbuf, errbuf_len, "the new client key does not unwrap: not written");
    }
    mbedtls_platform_zeroize(sk_text, sk_len);
    free(sk_text);
    mbedtls_platform_zeroize(text, sizeof(text));
    return err;
}

int genkey_write(int argc, char **argv, const char *server_key_path, char *errbuf,
                 size_t errbuf_len)
{
    const char *type = argc >= 1 ? argv[0] : "";
    const char *path = argc >= 2 ? argv[1] : NULL;
    uint8_t key[STATIC_KEY_LEN];
    char text[KEY_TEXT_MAX];
    size_t len = 0;
    int err = -1;

    if (strcmp(type, "tls-crypt-v2-client") == 0) {
        if (argc > 3) {
            snprintf(errbuf, errbuf_len, "usage: --genkey tls-crypt-v2-client [FILE [METADATA]]");
            return -1;
        }
        return genkey_v2_client(path, argc == 3 ? argv[2] : NULL, server_key_path, errbuf,
                                errbuf_len);
    }
    if (argc > 2) {
        snprintf(errbuf, errbuf_len, "usage: --genkey %s [FILE]", type);
        return -1;
    }
    if (strcmp(type, "secret") == 0 || strcmp(type, "tls-auth") == 0 ||
        strcmp(type, "tls-crypt") == 0) {
        if (random_bytes(key, sizeof(key)) == 0 &&
            static_key_format(key, text, sizeof(text), &len) == 0) {
            err = 0;
        }
    } else if (strcmp(type, "tls-crypt-v2-server") == 0) {
        if (random_bytes(key, TLS_CRYPT_V2_SERVER_KEY_LEN) == 0 &&
            tls_crypt_v2_pem_encode(TLS_CRYPT_V2_SERVER_PEM, key, TLS_CRYPT_V2_SERVER_KEY_LEN, text,
                                    sizeof(text), &len) == 0) {
            err = 0;
        }
    } else {
        snprintf(errbuf, errbuf_len,
                 "unknown key type '%s' (secret, tls-auth, tls-crypt, tls-crypt-v2-server, "
                 "tls-crypt-v2-client, auth-token)",
                 type);
        return -1;
    }
    if (err) {
        snprintf(errbuf, errbuf_len, "cannot make a random key");
    } else {
        err = write_text(path, text, len, errbuf, errbuf_len);
    }
    mbedtls_platform_zeroize(key, sizeof(key));
    mbedtls_platform_zeroize(text, sizeof(text));
    return err;
}
