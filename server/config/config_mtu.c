/* server/config/config_mtu.c: the MTU directives that openvpn 2.6 keeps for old configs:
 * `link-mtu N` / `udp-mtu N` (the tun MTU is derived from them as 2.6 derives it) and
 * `max-packet-size N` (the control channel's packet size and mssfix); and `fragment N [mtu]`
 * (openvpn's own fragmentation of data-channel packets, UDP only). Facts from openvpn 2.6
 * src/openvpn/options.c ("link-mtu", "max-packet-size", options_postprocess_verify_ce),
 * init.c (get_frame_mtu), mtu.c (frame_calculate_protocol_header_size) and crypto.c
 * (calculate_crypto_overhead).
 */
#include "server/config/config_internal.h"

#include <openssl/evp.h>
#include <string.h>

#include "proto/fragment.h"

#define TLS_MTU_MIN 512  /* 2.6 TLS_CHANNEL_MTU_MIN */
#define TLS_MTU_MAX 2048 /* 2.6 TLS_CHANNEL_BUF_SIZE */

int config_h_link_mtu(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    ps->seen_link_mtu = config_here(ps);
    /* 2.6 reads it with positive_atoi; the tun MTU it leads to is checked after the last line */
    return config_parse_int(ps, NULL, argv[1], 1, 65535, &ps->link_mtu);
}

int config_h_max_packet_size(struct config_parser *ps, int argc, char **argv)
{
    struct config *cfg = ps->cfg;
    int n, err;

    (void)argc;
    err = config_parse_int(ps, NULL, argv[1], 1, 65535, &n);
    if (err) {
        return err;
    }
    /* the control channel's packets, within 2.6's bounds; and `mssfix N mtu` */
    cfg->net.tls_mtu = n < TLS_MTU_MIN ? TLS_MTU_MIN : n > TLS_MTU_MAX ? TLS_MTU_MAX : n;
    cfg->net.mssfix = n;
    cfg->net.mssfix_mode = CONFIG_MSSFIX_MTU;
    ps->is_mssfix_default = false;
    if (n != cfg->net.tls_mtu) {
        return config_warn(ps, NULL,
                           "Note: max-packet-size value outside of allowed control channel "
                           "packet size (%d to %d), will use %d instead.",
                           TLS_MTU_MIN, TLS_MTU_MAX, cfg->net.tls_mtu);
    }
    return 0;
}

int config_h_fragment(struct config_parser *ps, int argc, char **argv)
{
    struct config *cfg = ps->cfg;
    int err;

    ps->seen_fragment = config_here(ps);
    /* 2.6 options.c "fragment": at least 68; the only flag is "mtu" (an unknown one stops 2.6
     * reading a config file) */
    err = config_parse_int(ps, NULL, argv[1], FRAGMENT_MIN, 65535, &cfg->net.fragment);
    if (err) {
        return err;
    }
    cfg->net.fragment_mtu = false;
    if (argc == 3) {
        if (strcmp(argv[2], "mtu") != 0) {
            return config_error(ps, "unknown flag '%s' (mtu)", argv[2]);
        }
        cfg->net.fragment_mtu = true;
    }
    return 0;
}

int config_check_fragment(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;
    const struct config_where *at = &ps->seen_fragment;
    int err = 0;

    if (cfg->net.fragment == 0) {
        return 0;
    }
    if (cfg->net.n_sockets < 2 && config_proto_is_tcp(cfg->net.proto)) {
        /* 2.6 options.c: "--fragment can only be used with --proto udp" */
        return config_error_at(ps, at, "fragment", "can only be used with proto udp");
    }
    if (cfg->net.n_sockets == 2) {
        err = config_warn(ps, at,
                          "fragment applies to the clients of the UDP socket only (openvpn 2.6 "
                          "refuses fragment with proto tcp)");
    }
    /* 2.6 init.c, do_option_warnings: an mssfix that does not go with fragment */
    if (!err && !ps->is_mssfix_default && cfg->net.mssfix > cfg->net.fragment) {
        err = config_warn(ps, at,
                          "if you use mssfix and fragment, you should set fragment (%d) larger "
                          "or equal than mssfix (%d)",
                          cfg->net.fragment, cfg->net.mssfix);
    }
    if (!err && !ps->is_mssfix_default && cfg->net.mssfix > 0 &&
        cfg->net.fragment_mtu != (cfg->net.mssfix_mode == CONFIG_MSSFIX_MTU)) {
        err = config_warn(ps, at,
                          "if you use mssfix and fragment, you should use the \"mtu\" flag for "
                          "both or none of them");
    }
    return err;
}

/* The block size 2.6 counts for cipher name (crypto_openssl.c, cipher_kt_block_size): OpenSSL
 * says 1 for GCM, OFB and CFB, so 2.6 takes the block size of the same cipher in CBC mode
 * ("AES-256-GCM" counts 16), when there is one ("CHACHA20-POLY1305" counts 1). */
static int block_size(const char *name, const EVP_CIPHER *c)
{
    char cbc[64];
    const char *mode = strrchr(name, '-');
    const EVP_CIPHER *as_cbc;

    if (mode && strlen(mode) >= 4 && (size_t)(mode - name) + 5 <= sizeof(cbc)) {
        memcpy(cbc, name, (size_t)(mode - name));
        memcpy(cbc + (mode - name), "-CBC", 5);
        if ((as_cbc = EVP_get_cipherbyname(cbc)) != NULL) {
            return EVP_CIPHER_block_size(as_cbc);
        }
    }
    return EVP_CIPHER_block_size(c);
}

/* What 2.6 subtracts from link-mtu: the opcode (peer-id is not known yet at start-up), the TCP
 * length field, and the crypto overhead of the server's own cipher (`cipher`, else
 * data-ciphers-fallback, else none) with `auth`, counted as pre-2.6 peers count it. Returns
 * -1 when the cipher or digest is unknown to OpenSSL. */
static int link_overhead(const struct config *cfg)
{
    const char *name = cfg->tls.cipher ? cfg->tls.cipher : cfg->tls.data_ciphers_fallback;
    const EVP_CIPHER *c = NULL;
    const EVP_MD *md = NULL;
    int n = 1 + (config_proto_is_tcp(cfg->net.proto) ? 2 : 0);
    int packet_id = 4;

    if (name && strcmp(name, "NONE") != 0 && (c = EVP_get_cipherbyname(name)) == NULL) {
        return -1;
    }
    if (c && (EVP_CIPHER_flags(c) & EVP_CIPH_FLAG_AEAD_CIPHER)) {
        /* packet id and tag, plus the IV and block that old peers add to link-mtu */
        return n + packet_id + 16 + EVP_CIPHER_iv_length(c) + block_size(name, c);
    }
    if (c && EVP_CIPHER_mode(c) == EVP_CIPH_CBC_MODE) {
        packet_id = 0; /* inside the encrypted payload */
    } else if (c && (EVP_CIPHER_mode(c) == EVP_CIPH_OFB_MODE ||
                     EVP_CIPHER_mode(c) == EVP_CIPH_CFB_MODE)) {
        packet_id = 8; /* the long form, with a time stamp */
    }
    n += packet_id;
    if (c) {
        n += block_size(name, c) + EVP_CIPHER_iv_length(c);
    }
    if (strcmp(cfg->tls.auth, "NONE") != 0 && strcmp(cfg->tls.auth, "none") != 0) {
        if ((md = EVP_get_digestbyname(cfg->tls.auth)) == NULL) {
            return -1;
        }
        n += EVP_MD_size(md);
    }
    return n;
}

int config_check_mtu(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;
    int overhead;

    if (ps->seen_link_mtu.line == 0) {
        return 0;
    }
    if (ps->seen_tun_mtu.line != 0) {
        return config_error_at(ps, &ps->seen_link_mtu, "link-mtu",
                               "only one of tun-mtu or link-mtu may be defined");
    }
    overhead = link_overhead(cfg);
    if (overhead < 0) {
        return config_error_at(ps, &ps->seen_link_mtu, "link-mtu",
                               "cannot compute the overhead of cipher %s with auth %s",
                               cfg->tls.cipher ? cfg->tls.cipher : "none", cfg->tls.auth);
    }
    if (ps->link_mtu - overhead < TUN_MTU_MIN) {
        return config_error_at(ps, &ps->seen_link_mtu, "link-mtu",
                               "the tun MTU it leaves (%d - %d bytes of overhead) must be at "
                               "least %d",
                               ps->link_mtu, overhead, TUN_MTU_MIN);
    }
    cfg->net.tun_mtu = ps->link_mtu - overhead;
    if (ps->is_mssfix_default && cfg->net.fragment == 0) {
        /* 2.6 derives no mssfix from link-mtu: without an `mssfix` line it is off (with
         * `fragment` it follows that, check_defaults) */
        ps->is_mssfix_default = false;
        cfg->net.mssfix = 0;
    }
    return config_warn(ps, &ps->seen_link_mtu,
                       "link-mtu %d: tun-mtu %d, as openvpn 2.6 derives it (%d bytes of "
                       "overhead for cipher %s, auth %s); link-mtu is deprecated, write "
                       "'tun-mtu %d' instead",
                       ps->link_mtu, cfg->net.tun_mtu, overhead,
                       cfg->tls.cipher                  ? cfg->tls.cipher
                       : cfg->tls.data_ciphers_fallback ? cfg->tls.data_ciphers_fallback
                                                        : "none",
                       cfg->tls.auth, cfg->net.tun_mtu);
}
