/* server/control/acceptor_decide.c: the stateless handshake's cookie (the rest of the acceptor's
 * decisions are inline in acceptor_decide.h). */
#include "server/control/acceptor_decide.h"

#include <mbedtls/constant_time.h>
#include <mbedtls/md.h>

int64_t acceptor_decide_cookie_slot(int64_t now_s, int hand_window_s)
{
    int64_t period = ((int64_t)hand_window_s + 1) / 2;

    return now_s / (period > 0 ? period : 1);
}

void acceptor_decide_cookie_sid(const uint8_t key[ACCEPTOR_DECIDE_COOKIE_KEY_LEN],
                                const union udp_addr *from,
                                const uint8_t client_sid[SESSION_ID_LEN], int64_t slot,
                                uint8_t out[SESSION_ID_LEN])
{
    uint8_t input[4 + 18 + SESSION_ID_LEN], mac[32];
    size_t n;

    store_be32(input, (uint32_t)slot);
    n = 4 + udp_addr_bytes(from, input + 4);
    memcpy(input + n, client_sid, SESSION_ID_LEN);
    n += SESSION_ID_LEN;
    mbedtls_md_hmac(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), key,
                    ACCEPTOR_DECIDE_COOKIE_KEY_LEN, input, n, mac);
    memcpy(out, mac, SESSION_ID_LEN);
}

bool acceptor_decide_cookie_valid(const uint8_t key[ACCEPTOR_DECIDE_COOKIE_KEY_LEN],
                                  const struct control_packet *pkt, const union udp_addr *from,
                                  int64_t now_s, int hand_window_s)
{
    int64_t slot = acceptor_decide_cookie_slot(now_s, hand_window_s);
    uint8_t expect[SESSION_ID_LEN];

    if (pkt->acks.n_acks == 0) {
        return false;
    }
    for (int64_t off = -2; off <= 1; off++) {
        acceptor_decide_cookie_sid(key, from, pkt->session_id, slot + off, expect);
        if (mbedtls_ct_memcmp(expect, pkt->acks.remote_session_id, SESSION_ID_LEN) == 0) {
            return true;
        }
    }
    return false;
}
