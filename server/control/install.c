/* server/control/install.c: an admitted client's keys: answering key method 2, installing the
 * peer in a worker, duplicate-cn, and the new keys of a renegotiation. Acceptor thread only. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/platform_util.h>
#include <mbedtls/sha256.h>

#include "proto/comp.h"
#include "proto/cursor.h"
#include "proto/fragment.h"
#include "proto/kdf.h"
#include "proto/mss.h"
#include "proto/key_method.h"
#include "proto/occ.h"
#include "proto/peer_info.h"
#include "proto/push.h"
#include "proto/tls_session.h"
#include "server/config/ccd.h"
#include "server/data/peer.h"
#include "server/data/worker.h"

#include "server/control/acceptor_internal.h"

void acc_cert_fingerprint(const struct tls_session *tls, uint8_t out[32])
{
    const mbedtls_x509_crt *crt = mbedtls_ssl_get_peer_cert(&tls->ssl);

    memset(out, 0, 32);
    if (crt) {
        (void)mbedtls_sha256_ret(crt->raw.p, crt->raw.len, out, 0);
    }
}

void acc_turn_away(struct acceptor *a, struct ctl_session *cs, const char *reason)
{
    a->stats.auth_failed++;
    acc_metrics_refused(a, cs);
    acc_cs_log(a, cs, LOG_WARN, "turned away: %s (the client will retry)", reason);
    acc_cs_close(a, cs, 0);
}

#define REPLACED_TEXT "AUTH_FAILED,replaced by a new connection with the same certificate"

/* Another session with the same common name: with duplicate-cn off, the newer one replaces it
 * (openvpn multi.c: "new connection by client '%s' will cause previous active sessions by this
 * client to be dropped"), and takes over the pool address of a replaced or closing one (a
 * client that restarted from another port, after its EXIT or without one), which 2.6 gives it
 * back once the old instance is gone (pool.c ifconfig_pool_acquire prefers the common name's
 * last entry). Returns how many sessions it closed. */
static size_t drop_duplicate_cn(struct acceptor *a, struct ctl_session *keep)
{
    size_t n = 0;

    if (!keep->client.has_cn) {
        return 0;
    }
    /* Only sessions with a peer can be replaced (the others are skipped below), and those are in
     * the common-name index: one bucket instead of every session. */
    {
        struct ctl_session *cs =
            a->sessions.by_cn[acc_cn_hash(keep->client.cn, a->sessions.table_size)];

        for (; cs; cs = cs->cn_next) {
            /* A client without a common name is nobody's duplicate (2.6 multi_delete_dup
             * skips it: tls_common_name is NULL then). */
            if (cs == keep || cs->is_dead || !keep->client.has_cn || !cs->client.has_cn ||
                strcmp(cs->client.cn, keep->client.cn) != 0 || (cs->state == CS_TLS && !cs->peer)) {
                continue; /* not authenticated yet: it is replaced when it gets here */
            }
            if (cs->state != CS_CLOSING) { /* connected, or in client-connect/learn-address */
                acc_cs_log(a, cs, LOG_INFO,
                           "new connection by the same common name from another address "
                           "replaces this one (duplicate-cn is off)");
                /* Tell the replaced client, so that it stops instead of reconnecting after its
                 * ping-restart and replacing the new one in turn (2.6 says nothing, and two
                 * devices sharing a certificate take turns). A client that has itself moved on
                 * to a new session drops this: it is for the old session id. */
                if (cs->state == CS_ACTIVE) {
                    /* (not before its key-method 2 reply: the client would take the text for
                     * that and fail its TLS; it stops with its handshake instead) */
                    acc_send_message(a, cs, REPLACED_TEXT);
                }
                acc_cs_close(a, cs, CLOSE_LINGER_MS);
                n++;
            }
            if (cs->peer && keep->takeover_index == SIZE_MAX &&
                routes_holder(a->env->routes, cs->peer->pool_index) == cs->peer) {
                keep->takeover_index = cs->peer->pool_index;
            }
        }
    }
    return n; /* their slots count until the workers let go of them */
}

/* When to renegotiate a key that started at start_ms: reneg-sec minus up to 10 % jitter, as a
 * 2.6 server does (init.c do_init_crypto_tls), so that clients do not all rekey at once. */
static uint64_t reneg_deadline(struct acceptor *a, uint64_t start_ms)
{
    uint64_t period_ms = (uint64_t)a->cfg->timers.reneg_sec * 1000;
    uint32_t r = 0;

    if (a->cfg->timers.reneg_sec <= 0) {
        return UINT64_MAX;
    }
    (void)mbedtls_ctr_drbg_random(&a->crypto.drbg, (unsigned char *)&r, sizeof(r));
    return start_ms + period_ms - (period_ms / 10 ? r % (period_ms / 10) : 0);
}

struct key_method2 *acc_send_key_method2(struct acceptor *a, struct key_state *ks)
{
    struct key_method2 *server = acc_km2_take(a);
    uint8_t out[1024];
    size_t out_len;

    if (!server) {
        return NULL;
    }
    if (ks->job || !ks->tls->is_handshake_done) { /* the TLS session is not ours to write */
        acc_km2_give(a, server);
        return NULL;
    }
    snprintf(server->options, sizeof(server->options), "%s", a->options_string);
    if (mbedtls_ctr_drbg_random(&a->crypto.drbg, server->random1, sizeof(server->random1)) ||
        mbedtls_ctr_drbg_random(&a->crypto.drbg, server->random2, sizeof(server->random2)) ||
        key_method2_write(server, false, out, sizeof(out), &out_len) ||
        tls_session_write(ks->tls, out, out_len)) {
        acc_km2_give(a, server);
        return NULL;
    }
    ks->has_sent_key_method2 = true;
    return server;
}

/* Our half of key method 2 on ks: the message we sent already (sent), or a new one with fresh
 * randoms written into ks's TLS session now, and from it data keys for ks->key_id into *key.
 * Keys come from the TLS exporter when the client announced IV_PROTO_TLS_KEY_EXPORT (we then
 * push tls-ekm), else from the OpenVPN PRF over both sides' randoms and the session ids (ssl.c
 * generate_key_expansion). Returns NULL or a reason. */
static const char *answer_key_method2(struct acceptor *a, struct ctl_session *cs,
                                      struct key_state *ks, const struct key_method2 *client,
                                      const struct key_method2 *sent, enum data_cipher cipher,
                                      struct data_key *key)
{
    struct key_method2 *fresh = NULL;
    const struct key_method2 *server = sent;
    uint8_t block[KEY_BLOCK_LEN];
    bool use_ekm = (cs->client.pi.iv_proto & IV_PROTO_TLS_KEY_EXPORT) != 0;
    enum data_digest digest = DATA_DIGEST_SHA1;
    int err;

    if (!server) {
        server = fresh = acc_send_key_method2(a, ks);
        if (!server) {
            return "cannot write the key-method 2 reply";
        }
    }
    if (use_ekm) {
        err = tls_session_export(ks->tls, EKM_LABEL_DATA, block, KEY_BLOCK_LEN);
    } else {
        err = kdf_openvpn_prf(client->pre_master, client->random1, server->random1, client->random2,
                              server->random2, cs->peer_sid, cs->own_sid, block);
    }
    /* a CBC cipher's HMAC is `auth` (2.6 does not negotiate it); config_check.c made sure it
     * names a digest whenever a CBC cipher can be chosen */
    if (!err && data_cipher_is_cbc(cipher) && data_digest_from_name(a->cfg->tls.auth, &digest)) {
        err = -PE_UNSUPPORTED;
    }
    err = err ? err
              : data_key_init_auth(key, data_crypto_default_backend(), cipher, digest, ks->key_id,
                                   block, true, (uint32_t)a->cfg->tls.replay_window);
    mbedtls_platform_zeroize(block, sizeof(block));
    acc_km2_give(a, fresh);
    return err ? "data channel key setup failed" : NULL;
}

void acc_rekey(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
               const struct key_method2 *client, const struct key_method2 *sent)
{
    struct peer *p = cs->peer;
    enum data_cipher cipher;
    struct data_key key;
    const char *why;
    struct msg *m;

    memset(&key, 0, sizeof(key));
    if (data_cipher_from_name(p->cipher, &cipher)) {
        acc_reneg_failed(a, cs, ks, "data cipher lost");
        return;
    }
    why = answer_key_method2(a, cs, ks, client, sent, cipher, &key);
    if (why) {
        acc_reneg_failed(a, cs, ks, why);
        return;
    }
    m = msg_new(MSG_NEW_KEY, p, &key, sizeof(key)); /* the worker owns the key from here on */
    if (!m) {
        data_key_clear(&key);
        acc_reneg_failed(a, cs, ks, "out of memory");
        return;
    }
    m->peer_id = p->peer_id;
    mailbox_post(a->env->mb, p->worker, m);
    ks->state = KS_ACTIVE;
    cs->primary = (int)(ks - cs->ks);
    cs->reneg.next_ms = reneg_deadline(a, ks->start_ms);
    acc_cs_touch(a, cs);
    a->mx.renegotiations_ok++;
    acc_cs_log(a, cs, LOG_INFO, "renegotiation done: data channel key_id %u", ks->key_id);
}

bool acc_install_prepare(struct acceptor *a, struct ctl_session *cs,
                         const struct key_method2 *client)
{
    enum data_cipher cipher;
    struct peer *p = NULL, *prev = NULL;
    size_t n_replaced = 0;
    char why_buf[700];

    (void)client; /* its options string decides the compression at acc_install_finish */
    if (data_cipher_from_name(cs->client.cipher_name, &cipher)) {
        acc_auth_failed(a, cs, "data cipher lost");
        return false;
    }
    /* the session this client had before at this address (kept until now: receive.c) */
    n_replaced = acc_close_others_at(a, cs, false, &prev);
    if (!a->cfg->clients.duplicate_cn) {
        n_replaced += drop_duplicate_cn(a, cs);
    }
    if (a->sessions.n_clients - n_replaced >= (size_t)a->cfg->clients.max_clients) {
        acc_turn_away(a, cs, "max-clients reached");
        return false;
    }
    if (a->cfg->net.client_config_dir && acc_load_ccd(a, cs)) {
        return false;
    }
    p = calloc(1, sizeof(*p));
    if (!p) {
        acc_auth_failed(a, cs, "out of memory");
        return false;
    }
    p->pool_index = SIZE_MAX;
    p->link = cs->link;
    switch (acc_assign_addresses(a, cs, p, why_buf, sizeof(why_buf))) {
    case 0:
        break;
    case 1:
        free(p->routes);
        free(p);
        acc_turn_away(a, cs, why_buf);
        return false;
    default:
        free(p->routes);
        free(p);
        acc_auth_failed(a, cs, why_buf);
        return false;
    }
    if (prev) {
        acc_peer_slot_hand_over(a, prev, p); /* its routes go before p's are announced */
    } else if (acc_pick_peer_slot(a, p)) {
        acc_unassign(a, p);
        free(p->routes);
        free(p);
        acc_auth_failed(a, cs, "no free peer-id");
        return false;
    }
    a->sessions.n_clients++;
    cs->peer = p; /* from here on acc_cs_free() returns the address and the peer-id */
    acc_cn_index_add(a, cs);
    p->ctl = cs;
    p->remote = cs->remote;
    p->ping_s = a->cfg->timers.ping_s;
    p->ping_restart_s = a->cfg->timers.ping_restart_s;
    p->local = cs->local;
    p->connected_since = time(NULL);
    atomic_store_explicit(&p->last_ref_s, (int64_t)p->connected_since, memory_order_relaxed);
    p->use_data_v2 = (cs->client.pi.iv_proto & IV_PROTO_DATA_V2) != 0;
    snprintf(p->common_name, sizeof(p->common_name), "%s", cs->client.cn);
    snprintf(p->cipher, sizeof(p->cipher), "%s", cs->client.cipher_name);
    return true;
}

/* The last compress or comp-lzo option in what cs will be pushed (the config's push lines as
 * its client-config-dir file and client-connect changed them), or NULL; it points into the
 * config or cs->ccd. Control thread. */
static const char *pushed_comp_option(const struct acceptor *a, const struct ctl_session *cs)
{
    const struct config_push *push = &a->cfg->net.push;
    size_t cap = push->n_items + (cs->ccd ? cs->ccd->n_push_ops : 0) + 1, n = 0;
    const char **list = calloc(cap, sizeof(*list));
    const char *last = NULL;
    bool no_ifconfig, no_ifconfig_ipv6;
    enum comp_framing f;

    if (!list) {
        return NULL;
    }
    if (ccd_push_list(cs->ccd, (const char *const *)push->items, push->n_items, list, cap, &n,
                      &no_ifconfig, &no_ifconfig_ipv6) == 0) {
        for (size_t i = 0; i < n; i++) {
            if (comp_option_parse(list[i], &f)) {
                last = list[i];
            }
        }
    }
    free(list);
    return last;
}

/* `fragment N [mtu]` for p, a UDP client whose first key is installed: the reassembly
 * buffers, and the largest payload per datagram for its packet header, cipher and address
 * family (2.6 computes it per client once the cipher is negotiated: ssl.c
 * tls_session_update_crypto_params, mss.c frame_calculate_fragment). Room around each
 * reassembled packet as around any received one (COMP_HEADROOM/COMP_TAILROOM, so that
 * client-to-client can frame it again). NULL when out of memory. Control thread. */
static struct fragment *new_fragment(struct acceptor *a, const struct peer *p)
{
    const struct data_key *k = &p->key_store[0];
    bool is_cbc = data_cipher_is_cbc(k->cipher);
    bool is_v6 =
        p->remote.sa.sa_family == AF_INET6 && !IN6_IS_ADDR_V4MAPPED(&p->remote.in6.sin6_addr);
    size_t max_payload = fragment_max_payload(
        a->cfg->net.fragment, a->cfg->net.fragment_mtu, is_v6 ? 48 : 28,
        p->use_data_v2 ? DATA_V2_HEADER_LEN : DATA_V1_HEADER_LEN,
        is_cbc ? DATA_CBC_IV_LEN + data_digest_len(k->digest) : DATA_AEAD_OVERHEAD,
        is_cbc ? DATA_CBC_BLOCK_LEN : 0);
    uint8_t first_seq_id = 0;

    /* 2.6 starts at a random seq_id, so that a restarted session's pieces do not join the
     * previous one's (fragment.c fragment_init) */
    (void)mbedtls_ctr_drbg_random(&a->crypto.drbg, &first_seq_id, 1);
    return fragment_new(WORKER_BUF_LEN, COMP_HEADROOM, COMP_TAILROOM, first_seq_id, max_payload);
}

/* `mssfix` for p, a client whose first key is installed and whose framing is chosen: the
 * largest MSS of the TCP SYNs to and from it, for its cipher, packet header, compression
 * framing, `fragment` and transport (2.6 computes it per client once the cipher is negotiated:
 * ssl.c tls_session_update_crypto_params, mss.c frame_calculate_mssfix). An IPv4 client on a
 * dual-stack socket counts as IPv4 (2.6 counts the IPv6 header for it). Control thread. */
#define TAP_MSS_EXTRA 32 /* 2.6 mtu.h TAP_MTU_EXTRA_DEFAULT, the frame's extra_tun */

static uint16_t peer_mss_max(const struct acceptor *a, const struct peer *p)
{
    const struct config_net *net = &a->cfg->net;
    const struct data_key *k = &p->key_store[0];
    bool is_cbc = data_cipher_is_cbc(k->cipher);
    bool is_tcp = p->link != 0;
    bool is_v6 =
        p->remote.sa.sa_family == AF_INET6 && !IN6_IS_ADDR_V4MAPPED(&p->remote.in6.sin6_addr);
    enum comp_framing fr = p->comp.framing;
    struct mss_frame f = {
        .transport_len = (is_v6 ? 40 : 20) + (is_tcp ? 20 : 8),
        .header_len = (p->use_data_v2 ? DATA_V2_HEADER_LEN : DATA_V1_HEADER_LEN) + (is_tcp ? 2 : 0),
        .crypto_len = is_cbc ? DATA_CBC_IV_LEN + data_digest_len(k->digest) : DATA_AEAD_OVERHEAD,
        .cbc_block = is_cbc ? DATA_CBC_BLOCK_LEN : 0,
        /* the v1 schemes' framing byte (2.6 counts it for lz4, stub and lzo, whose "comp-lzo
         * no" is a stub too); the v2 ones add nothing to most packets */
        .payload_len = (fr == COMP_FRAMING_LZO_STUB || fr == COMP_FRAMING_STUB ||
                                fr == COMP_FRAMING_LZO || fr == COMP_FRAMING_LZ4
                            ? 1
                            : 0) +
                       (net->fragment > 0 && !is_tcp ? FRAGMENT_HEADER_LEN : 0) +
                       (is_cbc ? DATA_PACKET_ID_LEN : 0) +
                       /* dev tap: 2.6 counts tun-mtu-extra (32) for the Ethernet header */
                       (net->is_tap ? TAP_MSS_EXTRA : 0),
    };

    return mss_max_for(net->mssfix,
                       net->mssfix_mode == CONFIG_MSSFIX_MTU     ? MSS_MODE_MTU
                       : net->mssfix_mode == CONFIG_MSSFIX_FIXED ? MSS_MODE_FIXED
                                                                 : MSS_MODE_PAYLOAD,
                       &f);
}

/* dyn-tls-crypt for a client that announced it (IV_PROTO_DYN_TLS_CRYPT; 2.6 multi.c and
 * tls_crypt.c tls_session_generate_dynamic_tls_crypt_key): from the first key's TLS session,
 * the key that wraps its renegotiations, the exporter's bytes XORed with the key that wraps
 * this session now (the tls-auth or tls-crypt file, or its tls-crypt-v2 Kc). The push reply
 * then says dyn-tls-crypt. NULL, or why it failed (2.6 fails the key generation then). */
static const char *start_dyn_tls_crypt(struct acceptor *a, struct ctl_session *cs,
                                       struct key_state *ks)
{
    uint8_t ekm[STATIC_KEY_LEN], kc[STATIC_KEY_LEN];
    const uint8_t *wrap_key2 = NULL;
    int err;

    if (!(cs->client.pi.iv_proto & IV_PROTO_DYN_TLS_CRYPT) || cs->wrap.has_dyn) {
        return NULL;
    }
    if (cs->wrap.has_kc) {
        err = tls_wrap_crypt_key2(&cs->wrap.kc, true, kc);
        wrap_key2 = kc;
    } else {
        err = 0;
        wrap_key2 = a->crypto.wrap.mode != TLS_WRAP_NONE ? a->crypto.wrap_key2 : NULL;
    }
    err = err ? err : tls_session_export(ks->tls, TLS_WRAP_DYN_LABEL, ekm, sizeof(ekm));
    err = err ? err : tls_wrap_init_dyn(&cs->wrap.dyn, ekm, wrap_key2, true);
    mbedtls_platform_zeroize(ekm, sizeof(ekm));
    mbedtls_platform_zeroize(kc, sizeof(kc));
    if (err) {
        return "dynamic tls-crypt key setup failed";
    }
    cs->wrap.has_dyn = true;
    cs->wrap.dyn_tx_id = 1;
    cs->wrap.dyn_tx_time = (uint32_t)time(NULL);
    return NULL;
}

void acc_install_finish(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
                        const struct key_method2 *client, const struct key_method2 *sent)
{
    const struct acceptor_env *env = a->env;
    struct peer *p = cs->peer;
    enum data_cipher cipher;
    struct comp_config comp;
    const char *why;

    if (data_cipher_from_name(cs->client.cipher_name, &cipher)) {
        acc_auth_failed(a, cs, "data cipher lost");
        return;
    }
    comp = a->cfg->net.comp;
    if (cs->ccd && cs->ccd->has_comp) {
        /* its client-config-dir file's compress / comp-lzo replaces the server's for it (2.6
         * applies them to the client instance and refuses the client when allow-compression no
         * forbids them: multi.c check_compression_settings_valid) */
        comp.alg = (enum comp_framing)cs->ccd->comp_alg;
        comp.is_adaptive = cs->ccd->comp_is_adaptive;
        if (comp.allow == COMP_ALLOW_NO && comp_framing_compresses(comp.alg)) {
            acc_auth_failed(a, cs,
                            "its client-config-dir file enables compression, which "
                            "allow-compression no forbids");
            return;
        }
    }
    why = answer_key_method2(a, cs, ks, client, sent, cipher, &p->key_store[0]);
    why = why ? why : start_dyn_tls_crypt(a, cs, ks);
    if (why) {
        acc_auth_failed(a, cs, why);
        return;
    }
    p->keys[0] = &p->key_store[0];
    p->tx_key = &p->key_store[0];
    /* The framing the client will use and whether to compress towards it, once the push list
     * is final (client-config-dir, client-connect); with compression in the client's config
     * and none configured here, a stub is pushed (2.6 "compress migrate"). */
    comp_choose(&comp, &cs->client.pi, occ_options_has_comp(client->options),
                pushed_comp_option(a, cs), &p->comp, &cs->push.comp);
    p->mss_max = peer_mss_max(a, p);
    p->vlan_pvid = 0;
    if (a->cfg->net.vlan_tagging) {
        /* 2.6: the client instance's vlan-pvid, inherited from the server's unless its
         * client-config-dir file or client-connect output sets one */
        p->vlan_pvid =
            cs->ccd && cs->ccd->has_vlan_pvid ? cs->ccd->vlan_pvid : a->cfg->net.vlan_pvid;
    }
    if (a->cfg->net.fragment > 0 && p->link == 0 && !p->frag) {
        p->frag = new_fragment(a, p);
        if (!p->frag) {
            acc_auth_failed(a, cs, "out of memory");
            return;
        }
    }
    ks->state = KS_ACTIVE;
    cs->state = CS_ACTIVE;
    cs->is_connected = true;
    cs->reneg.next_ms = reneg_deadline(a, ks->start_ms);
    acc_limits_start(a, cs);
    cs->is_peer_live = true;
    if (acc_route_peer(a, p, cs->hooks.is_vaddr_unlearned)) {
        acc_cs_log(a, cs, LOG_WARN,
                   "cannot add %s to the TUN steering map: its worker gets the "
                   "packets handed over",
                   cs->client.cn);
    }
    {
        struct msg *m = msg_new(MSG_INSTALL, p, NULL, 0);

        if (!m) {
            cs->is_peer_live = false;
            acc_auth_failed(a, cs, "out of memory");
            return;
        }
        mailbox_post(env->mb, p->worker, m);
    }
    a->stats.handshakes_ok++;
    acc_hs_landed(a, cs); /* connected: room for another (admission_decide.h) */
    metrics_count_handshake(&a->mx, METRICS_HS_OK, acc_now_ms(a) - ks->start_ms);
    {
        char vaddr[INET_ADDRSTRLEN];
        struct in_addr in = {.s_addr = htonl(p->vaddr)};

        if (p->vaddr == 0) {
            snprintf(vaddr, sizeof(vaddr), "none"); /* dev tap without a pool */
        } else {
            inet_ntop(AF_INET, &in, vaddr, sizeof(vaddr));
        }
        acc_cs_log(a, cs, LOG_INFO, "client connected: peer-id %u, address %s, cipher %s, keys %s",
                   p->peer_id, vaddr, cs->client.cipher_name,
                   (cs->client.pi.iv_proto & IV_PROTO_TLS_KEY_EXPORT) ? "tls-ekm" : "openvpn-prf");
    }
    acc_mgmt_addresses(a, cs);
    acc_mgmt_established(a, cs);
    /* PUSH_REPLY waits for the worker's MSG_INSTALLED: the client starts sending data as soon
     * as it has the reply, and the worker must know the peer-id by then. */
}
