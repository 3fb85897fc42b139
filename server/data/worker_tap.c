/* server/data/worker_tap.c: a worker's data path with `dev tap`: the device and the tunnel carry
 * Ethernet frames, routed by MAC address as openvpn 2.6 routes them (multi.c
 * multi_process_incoming_link, multi_process_incoming_tun, multi_learn_addr, multi_bcast):
 *
 * - a frame from a client is dropped unless its source MAC is that client's or can become it
 *   (mac_table.h: never a broadcast, multicast or zero MAC, nor the tap device's own; within the
 *   client's quota; a MAC another client had moves to this one, as in 2.6). Then, with
 *   client-to-client, a broadcast or multicast frame goes to every other client and to the
 *   device, a frame for another client's MAC to that client alone; everything else to the
 *   device.
 * - a frame read from the device goes to every client when its destination is broadcast or
 *   multicast (each worker sends to its own: the others get a copy by message), else to the
 *   client that owns the destination MAC (on any worker), else it is dropped and counted.
 *
 * The TUN offloads, the TCP coalescer and the steering program assume an IP packet at offset 0
 * and are off with a tap device (server.c opens it without them). `mssfix` clamps TCP SYNs inside
 * IPv4 and IPv6 frames (also behind one 802.1Q tag, as 2.6 proto.c is_ipv_X), client-nat
 * translates IPv4 inside frames, block-ipv6 answers IPv6 frames from the device with an ICMPv6
 * no-route frame (2.6 forward.c ipv6_send_icmp_unreachable).
 *
 * With vlan-tagging (proto/vlan.h) each client is in one VLAN (its vlan-pvid): a frame from the
 * device is untagged (or dropped) as vlan-accept says before it is routed, in the VLAN of its
 * tag; MACs are learned and looked up per VLAN, broadcasts reach only the clients of their VLAN,
 * a client's tagged frames are dropped and its frames for the device tagged as vlan-accept
 * says (vlan.c vlan_decapsulate, vlan_process_outgoing_tun; multi.c multi_bcast).
 *
 * Learning happens on the worker that owns the sending client; it tells the other workers by
 * message (MSG_MAC_LEARN, from its own pool) and they apply it to their own tables. Worker
 * thread only; no lock, no allocation on the per-packet path. */
#include "server/data/worker_internal.h"

#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "proto/client_nat.h"
#include "proto/cursor.h"
#include "proto/icmp6.h"
#include "proto/mss.h"
#include "proto/pbuf.h"
#include "proto/vlan.h"

#define ETH_HEADER_LEN 14
#define ETH_VLAN_HEADER_LEN 18
#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_IPV6 0x86DD
#define ETHERTYPE_VLAN 0x8100
#define LEARN_MSG_LEN (MAC_LEN + 8 + 2) /* MAC, stamp, VID (host order) */

/* Where the IP packet of frame f (len bytes) starts, with *family 4 or 6, or 0 when it carries
 * no IP (also behind one 802.1Q tag). */
static size_t ip_offset(const uint8_t *f, size_t len, int *family)
{
    size_t off = ETH_HEADER_LEN;
    uint16_t type;

    if (len < ETH_HEADER_LEN) {
        return 0;
    }
    type = load_be16(f + 12);
    if (type == ETHERTYPE_VLAN) {
        if (len < ETH_VLAN_HEADER_LEN) {
            return 0;
        }
        type = load_be16(f + 16);
        off = ETH_VLAN_HEADER_LEN;
    }
    *family = type == ETHERTYPE_IPV4 ? 4 : type == ETHERTYPE_IPV6 ? 6 : 0;
    return *family ? off : 0;
}

/* mssfix inside a frame (2.6 process_ip_header with is_ipv4/is_ipv6 of a tap device). */
static void clamp_frame(uint8_t *f, size_t len, uint16_t mss_max)
{
    int family = 0;
    size_t off = ip_offset(f, len, &family);

    if (off == 0 || mss_max == 0) {
        return;
    }
    if (family == 4) {
        mss_clamp_ipv4(f + off, len - off, mss_max);
    } else {
        mss_clamp_ipv6(f + off, len - off, mss_max);
    }
}

/* client-nat inside a frame carrying IPv4. */
static void nat_frame(const struct worker *w, uint8_t *f, size_t len, enum client_nat_dir dir)
{
    int family = 0;
    size_t off = ip_offset(f, len, &family);

    if (off != 0 && family == 4 && w->env->cfg->net.client_nat) {
        (void)client_nat_apply(w->env->cfg->net.client_nat, f + off, len - off, dir);
    }
}

static bool is_ipv6_frame(const uint8_t *f, size_t len)
{
    int family = 0;

    return ip_offset(f, len, &family) != 0 && family == 6;
}

/* A client of this worker lost a MAC to another client: one fewer on its count. */
static void lost_mac(struct worker *w, uint32_t peer_id)
{
    const struct worker_decide_table t = wk_table(w);
    struct peer *p;

    if (peer_id == MAC_TABLE_NONE || worker_decide_owner(&t, peer_id) != w->index) {
        return;
    }
    p = worker_decide_lookup(&t, peer_id);
    if (p && p->n_macs > 0) {
        p->n_macs--;
    }
}

/* Tell the acceptor about mac of p (MSG_MAC_NOTE): learned (for the status file and
 * learn-address "delete"), or, with is_ask, to be asked of learn-address. false when the
 * message could not be taken from the pool. */
static bool note(struct worker *w, struct peer *p, const uint8_t *mac, uint32_t prev, bool is_ask)
{
    struct mac_note n;
    struct msg *m;

    memset(&n, 0, sizeof(n));
    memcpy(n.mac, mac, MAC_LEN);
    n.vid = p->vlan_pvid;
    n.prev_owner = prev;
    n.is_ask = is_ask;
    m = msg_pool_take(&w->pool, MSG_MAC_NOTE, &n, sizeof(n));
    if (!m) {
        return false;
    }
    m->peer = p;
    m->peer_id = p->peer_id;
    mailbox_post(w->env->mb, MAILBOX_ACCEPTOR, m);
    return true;
}

/* Tell every other worker that mac is p's since stamp, and the acceptor that p learned it
 * unless is_noted (learn-address accepted it: the acceptor knows). Whatever could not be told
 * (the pool is empty) is told again at the client's next frame from that MAC. */
static void announce(struct worker *w, struct peer *p, const uint8_t *mac, uint32_t prev,
                     uint64_t stamp, bool is_noted)
{
    uint8_t data[LEARN_MSG_LEN];
    uint16_t vid = p->vlan_pvid;
    bool is_ok = is_noted || note(w, p, mac, prev, false);

    memcpy(data, mac, MAC_LEN);
    memcpy(data + MAC_LEN, &stamp, sizeof(stamp));
    memcpy(data + MAC_LEN + sizeof(stamp), &vid, sizeof(vid));
    for (int i = 0; i < w->env->n_workers; i++) {
        struct msg *m;

        if (i == w->index) {
            continue;
        }
        m = msg_pool_take(&w->pool, MSG_MAC_LEARN, data, sizeof(data));
        if (!m) {
            is_ok = false;
            continue;
        }
        m->peer_id = p->peer_id;
        mailbox_post(w->env->mb, i, m);
    }
    mac_table_announced(&w->macs, mac, vid, is_ok);
}

/* Why a source MAC is not p's: the frame is dropped and counted. */
static void refuse(struct worker *w, struct peer *p, enum mac_learn r)
{
    static const char *const why[] = {
        [MAC_LEARN_MULTICAST] = "broadcast or multicast source MAC in a tap frame",
        [MAC_LEARN_ZERO] = "zero source MAC in a tap frame",
        [MAC_LEARN_SERVER] = "the server's own MAC as the source of a tap frame",
        [MAC_LEARN_QUOTA] = "source MAC beyond the client's quota (max-routes-per-client)",
        [MAC_LEARN_FULL] = "MAC table full",
    };

    wk_drop(w, &w->stats.drop_bad_source, &p->remote,
            (size_t)r < sizeof(why) / sizeof(why[0]) && why[r] ? why[r] : "tap source MAC");
}

/* The outcome r of learning mac for p (NEW or MOVED from prev, or KNOWN): counted, logged, and
 * told where needed (is_noted: the acceptor knows already). */
static void learned(struct worker *w, struct peer *p, const uint8_t *mac, enum mac_learn r,
                    uint32_t prev, uint64_t stamp, bool needs_announce, bool is_noted)
{
    char a[20];

    if (r == MAC_LEARN_NEW || r == MAC_LEARN_MOVED) {
        p->n_macs++;
    }
    if (r == MAC_LEARN_MOVED) {
        lost_mac(w, prev);
        log_msg_ratelimited(&p->rl, uv_now(&w->loop), 5, 60, LOG_INFO,
                            "peer %u %s: MAC %s moves to this client from peer %u (the newest "
                            "sender of a MAC owns it, as in openvpn 2.6)",
                            p->peer_id, p->common_name, mac_str(mac, a, sizeof(a)), prev);
    }
    if (needs_announce) {
        announce(w, p, mac, prev, stamp, is_noted);
    }
}

/* The ask about mac of peer_id, or NULL. */
static struct worker_mac_ask *find_ask(struct worker *w, const uint8_t *mac, uint32_t peer_id)
{
    for (size_t i = 0; i < WORKER_MAC_ASKS; i++) {
        struct worker_mac_ask *q = &w->mac_asks[i];

        if (q->is_used && q->peer_id == peer_id && memcmp(q->mac, mac, MAC_LEN) == 0) {
            return q;
        }
    }
    return NULL;
}

/* An ask that holds its slot: waiting for its answer, or refused less than
 * WORKER_MAC_REFUSED_MS before now. */
static bool ask_is_held(const struct worker_mac_ask *q, uint64_t now)
{
    return q->is_used && (!q->is_refused || now - q->since_ms < WORKER_MAC_REFUSED_MS);
}

/* learn-address must accept mac (NEW or MOVED from prev) before p may use it: ask the acceptor
 * once, and drop p's frames from it until it answers; after a refusal, ask again at a frame
 * WORKER_MAC_REFUSED_MS later. A client holds at most WORKER_MAC_ASKS_PER_PEER slots: its
 * further new MACs wait for one of them (their frames are dropped), and the other clients keep
 * the rest. No allocation: the asks are a fixed array, the message is from the pool; when
 * either is full, a later frame asks. */
static void ask(struct worker *w, struct peer *p, const uint8_t *mac, uint32_t prev)
{
    uint64_t now = uv_now(&w->loop);
    struct worker_mac_ask *q = find_ask(w, mac, p->peer_id), *slot = NULL;
    bool is_new = q == NULL || q->is_refused;
    unsigned n_held = 0;

    stat_inc(&w->stats.drop_bad_source);
    if (q && now - q->since_ms < (q->is_refused ? WORKER_MAC_REFUSED_MS : WORKER_MAC_ASK_MS)) {
        return; /* asked, or refused a moment ago */
    }
    for (size_t i = 0; !q && i < WORKER_MAC_ASKS; i++) {
        struct worker_mac_ask *e = &w->mac_asks[i];

        if (!ask_is_held(e, now)) {
            slot = slot ? slot : e;
        } else if (e->peer_id == p->peer_id) {
            n_held++;
        }
    }
    if (!q) {
        if (n_held >= WORKER_MAC_ASKS_PER_PEER) {
            return; /* this client's share is in use */
        }
        q = slot;
    }
    if (!q || !note(w, p, mac, prev, true)) {
        return;
    }
    memcpy(q->mac, mac, MAC_LEN);
    q->peer_id = p->peer_id;
    q->since_ms = now;
    q->is_used = true;
    q->is_refused = false;
    if (is_new) {
        p->n_macs_asked++;
    }
}

/* The source MAC of p's frame: true when the frame may go on as p's. */
static bool learn_source(struct worker *w, struct peer *p, const uint8_t *mac)
{
    const struct worker_env *env = w->env;
    const uint8_t *server_mac = env->has_tap_mac ? env->tap_mac : NULL;
    uint32_t n_owned = p->n_macs + p->n_macs_asked, prev;
    uint64_t stamp = uv_hrtime();
    bool needs_announce;
    enum mac_learn r;

    if (env->is_learn_hooked) {
        r = mac_table_check(&w->macs, mac, p->vlan_pvid, p->peer_id, n_owned, p->mac_quota,
                            server_mac, &prev);
        if (r == MAC_LEARN_NEW || r == MAC_LEARN_MOVED) {
            ask(w, p, mac, prev);
            return false;
        }
        if (r != MAC_LEARN_KNOWN) {
            refuse(w, p, r);
            return false;
        }
    }
    r = mac_table_learn(&w->macs, mac, p->vlan_pvid, p->peer_id, n_owned, p->mac_quota, server_mac,
                        &stamp, &prev, &needs_announce);
    switch (r) {
    case MAC_LEARN_KNOWN:
    case MAC_LEARN_NEW:
    case MAC_LEARN_MOVED:
        learned(w, p, mac, r, prev, stamp, needs_announce, false);
        return true;
    default:
        refuse(w, p, r);
        return false;
    }
}

void wk_tap_mac_answer(struct worker *w, struct peer *p, const uint8_t *data, size_t len)
{
    const struct worker_env *env = w->env;
    struct worker_mac_ask *q;
    struct mac_note n;
    uint64_t stamp = uv_hrtime();
    uint32_t prev;
    bool needs_announce;
    enum mac_learn r;
    char a[20];

    if (len != sizeof(n) || !w->macs.slots) {
        return;
    }
    memcpy(&n, data, sizeof(n));
    q = find_ask(w, n.mac, p->peer_id);
    if (!q || q->is_refused) {
        return;
    }
    p->n_macs_asked--;
    if (!n.is_ok) {
        q->is_refused = true;
        q->since_ms = uv_now(&w->loop);
        return;
    }
    q->is_used = false;
    r = mac_table_learn(&w->macs, n.mac, p->vlan_pvid, p->peer_id, p->n_macs + p->n_macs_asked,
                        p->mac_quota, env->has_tap_mac ? env->tap_mac : NULL, &stamp, &prev,
                        &needs_announce);
    if (r == MAC_LEARN_KNOWN || r == MAC_LEARN_NEW || r == MAC_LEARN_MOVED) {
        learned(w, p, n.mac, r, prev, stamp, needs_announce, true);
    } else {
        log_msg_ratelimited(&p->rl, uv_now(&w->loop), 5, 60, LOG_WARN,
                            "peer %u %s: MAC %s accepted by learn-address but not learned (%s)",
                            p->peer_id, p->common_name, mac_str(n.mac, a, sizeof(a)),
                            r == MAC_LEARN_QUOTA ? "max-routes-per-client" : "MAC table full");
    }
}

/* Write frame f (len bytes) of a client in VLAN vid (0 without vlan-tagging) to the device:
 * with vlan-tagging as it is, tagged with vid, or not at all, as vlan-accept says (2.6
 * vlan_process_outgoing_tun). A tag goes in front through writev, without moving the frame.
 * remote (or NULL) names the client in messages. */
static void write_device(struct worker *w, const uint8_t *f, size_t len, uint16_t vid,
                         const union udp_addr *remote)
{
    const struct config_net *net = &w->env->cfg->net;
    enum vlan_out out =
        net->vlan_tagging ? vlan_to_device(net->vlan_accept, net->vlan_pvid, vid) : VLAN_OUT_AS_IS;
    uint8_t hdr[VLAN_TAGGED_LEN];
    struct iovec iov[2];
    size_t used;
    ssize_t n;

    switch (out) {
    case VLAN_OUT_DROP:
        /* vlan-accept untagged: a client outside the server's VLAN has no way to the device */
        stat_inc(&w->stats.drop_vlan);
        return;
    case VLAN_OUT_TAG:
        used = vlan_tag_header(f, len, vid, hdr);
        if (used == 0) {
            stat_inc(&w->stats.drop_vlan);
            return;
        }
        iov[0] = (struct iovec){hdr, sizeof(hdr)};
        iov[1] = (struct iovec){(void *)(uintptr_t)(f + used), len - used};
        n = writev(w->tun_fd, iov, 2);
        break;
    case VLAN_OUT_AS_IS:
    default:
        n = write(w->tun_fd, f, len);
        break;
    }
    if (n < 0) {
        wk_drop(w, &w->stats.drop_tun_write, remote, "TAP write failed");
    }
}

/* block-ipv6: answer frame f (an IPv6 frame from the device, in VLAN vid) with an ICMPv6
 * no-route frame back into the device, the MACs swapped (2.6 ipv6_send_icmp_unreachable; with
 * vlan-tagging 2.6 writes the answer as its client's frames, vid being that client's VLAN). */
static void block_ipv6_answer(struct worker *w, const uint8_t *f, size_t len, uint16_t vid)
{
    uint8_t out[ETH_VLAN_HEADER_LEN + ICMP6_UNREACH_MAX];
    int family = 0;
    size_t off = ip_offset(f, len, &family), n;

    if (off != ETH_HEADER_LEN) {
        return; /* 2.6 writes a plain Ethernet header: answer only untagged frames */
    }
    n = icmp6_unreach_build(out + off, sizeof(out) - off, f + off, len - off,
                            w->env->block_ipv6_src);
    if (n == 0) {
        return;
    }
    memcpy(out, f + MAC_LEN, MAC_LEN);
    memcpy(out + MAC_LEN, f, MAC_LEN);
    store_be16(out + 12, ETHERTYPE_IPV6);
    write_device(w, out, off + n, vid, NULL);
}

/* A unicast frame (in VLAN vid) for peer_id's client: sent if this worker owns it, else handed
 * to the owner. */
static void deliver(struct worker *w, uint32_t peer_id, struct pbuf *pkt, bool is_from_client,
                    uint16_t vid)
{
    const struct worker_decide_table t = wk_table(w);
    uint8_t *f = pbuf_ptr(pkt);
    struct peer *p = NULL;
    int owner;

    if (w->env->block_ipv6 && is_ipv6_frame(f, pkt->len)) {
        if (!is_from_client) {
            block_ipv6_answer(w, f, pkt->len, vid);
        }
        stat_inc(&w->stats.drop_no_route);
        return;
    }
    switch (worker_decide_deliver(&t, peer_id, &owner, &p)) {
    case WORKER_DELIVER_HAND_OVER:
        wk_hand_over(w, owner, f, pkt->len, is_from_client, vid);
        return;
    case WORKER_DELIVER_NOT_INSTALLED:
        stat_inc(&w->stats.drop_no_route);
        return;
    case WORKER_DELIVER_SEND:
        break;
    }
    if (!is_from_client) {
        nat_frame(w, f, pkt->len, CLIENT_NAT_OUTGOING);
    }
    clamp_frame(f, pkt->len, p->mss_max);
    wk_touch_last_ref(w, p, pkt->len);
    wk_send_to_peer(w, p, pkt);
}

void wk_tap_bcast_local(struct worker *w, const uint8_t *frame, size_t len, uint32_t except_peer_id,
                        uint16_t vid)
{
    const struct worker_env *env = w->env;

    if (len > WORKER_BUF_LEN || (env->block_ipv6 && is_ipv6_frame(frame, len))) {
        stat_inc(&w->stats.drop_no_route);
        return;
    }
    for (size_t i = 0; i < env->max_local_peers; i++) {
        struct peer *p = w->by_local[i];
        struct pbuf b;

        if (!p || !p->is_installed || p->peer_id == except_peer_id) {
            continue;
        }
        if (vid != 0 && p->vlan_pvid != vid) {
            continue; /* another VLAN's client (2.6 multi_bcast) */
        }
        /* each client's copy is framed (and maybe compressed) on its own */
        b = pbuf_make(w->bcast_buf, sizeof(w->bcast_buf), COMP_HEADROOM, len);
        memcpy(pbuf_ptr(&b), frame, len);
        wk_send_to_peer(w, p, &b);
    }
}

/* A broadcast or multicast frame (in VLAN vid, 0: any): every other worker gets a copy for its
 * clients, this worker sends it to its own; except_peer_id (the sender, or MAC_TABLE_NONE) gets
 * nothing. */
static void bcast(struct worker *w, const uint8_t *frame, size_t len, uint32_t except_peer_id,
                  uint16_t vid)
{
    for (int i = 0; i < w->env->n_workers; i++) {
        struct msg *m;

        if (i == w->index) {
            continue;
        }
        m = msg_pool_take(&w->pool, MSG_PACKET, frame, len);
        if (!m) {
            wk_drop(w, &w->stats.drop_handover, NULL,
                    "broadcast copy refused: the other worker is behind");
            continue;
        }
        m->from_tun = true;
        m->is_bcast = true;
        m->is_from_client = except_peer_id != MAC_TABLE_NONE;
        m->peer_id = except_peer_id;
        m->vid = vid;
        mailbox_post(w->env->mb, i, m);
    }
    wk_tap_bcast_local(w, frame, len, except_peer_id, vid);
}

void wk_tap_from_client(struct worker *w, struct peer *p, struct pbuf *pkt)
{
    uint8_t *f = pbuf_ptr(pkt);
    size_t len = pkt->len;
    uint32_t to;

    if (len < ETH_HEADER_LEN) {
        wk_drop(w, &w->stats.drop_not_ip, &p->remote, "tap frame shorter than its header");
        return;
    }
    if (w->env->cfg->net.vlan_tagging && !vlan_client_frame_ok(f, len)) {
        wk_drop(w, &w->stats.drop_vlan, &p->remote,
                "802.1Q-tagged frame from a client (with vlan-tagging only the server tags)");
        return;
    }
    if (!learn_source(w, p, f + MAC_LEN)) {
        return;
    }
    wk_touch_last_ref(w, p, len);
    /* clamped with the sender's limit before it is routed, as for tun */
    clamp_frame(f, len, p->mss_max);
    if (w->env->cfg->net.client_to_client) {
        if (mac_is_multicast(f)) {
            /* 2.6: to every other client, and to the device as well */
            stat_inc(&w->stats.client_to_client);
            bcast(w, f, len, p->peer_id, p->vlan_pvid);
        } else {
            to = mac_table_lookup(&w->macs, f, p->vlan_pvid);
            if (worker_decide_c2c(true, false, to, p->peer_id)) {
                stat_inc(&w->stats.client_to_client);
                deliver(w, to, pkt, true, p->vlan_pvid);
                return;
            }
        }
    }
    nat_frame(w, f, len, CLIENT_NAT_INCOMING); /* what goes to the device only, as for tun */
    write_device(w, f, len, p->vlan_pvid, &p->remote);
}

void wk_tap_from_device(struct worker *w, struct pbuf *pkt)
{
    const struct config_net *net = &w->env->cfg->net;
    size_t strip = 0;
    int vid = 0;

    if (net->vlan_tagging) {
        vid = vlan_from_device(pbuf_ptr(pkt), pkt->len, net->vlan_accept, net->vlan_pvid, &strip);
        if (vid < 0) {
            /* untagged with vlan-accept tagged, tagged with vlan-accept untagged, or too short:
             * counted, not logged (2.6 at verb 7) */
            stat_inc(&w->stats.drop_vlan);
            return;
        }
        (void)pbuf_pull(pkt, strip);
    }
    wk_tap_route_frame(w, pkt, false, (uint16_t)vid);
}

void wk_tap_route_frame(struct worker *w, struct pbuf *pkt, bool is_from_client, uint16_t vid)
{
    const uint8_t *f = pbuf_ptr(pkt);
    uint32_t to;

    if (pkt->len < ETH_HEADER_LEN) {
        stat_inc(&w->stats.drop_not_ip);
        return;
    }
    if (mac_is_multicast(f)) {
        if (is_from_client) {
            stat_inc(&w->stats.drop_no_route); /* clients' broadcasts come as is_bcast copies */
            return;
        }
        bcast(w, f, pkt->len, MAC_TABLE_NONE, vid);
        return;
    }
    to = mac_table_lookup(&w->macs, f, vid);
    if (to == MAC_TABLE_NONE) {
        /* a frame for a MAC no client has shown (yet): dropped, as 2.6 does; not logged, a
         * bridge floods such frames to every port */
        stat_inc(&w->stats.drop_no_route);
        return;
    }
    deliver(w, to, pkt, is_from_client, vid);
}

void wk_tap_mac_learned(struct worker *w, uint32_t peer_id, const uint8_t *data, size_t len)
{
    uint64_t stamp;
    uint32_t replaced;
    uint16_t vid;

    if (len != LEARN_MSG_LEN || !w->macs.slots) {
        return;
    }
    memcpy(&stamp, data + MAC_LEN, sizeof(stamp));
    memcpy(&vid, data + MAC_LEN + sizeof(stamp), sizeof(vid));
    if (mac_table_apply(&w->macs, data, vid, peer_id, stamp, &replaced)) {
        lost_mac(w, replaced);
    }
}

void wk_tap_forget(struct worker *w, uint32_t peer_id, bool tell_others)
{
    if (!w->macs.slots) {
        return;
    }
    mac_table_forget_peer(&w->macs, peer_id);
    for (size_t i = 0; i < WORKER_MAC_ASKS; i++) {
        if (w->mac_asks[i].peer_id == peer_id) {
            w->mac_asks[i].is_used = false;
        }
    }
    for (int i = 0; tell_others && i < w->env->n_workers; i++) {
        struct msg *m;

        if (i == w->index) {
            continue;
        }
        m = msg_new(MSG_MAC_FORGET, NULL, NULL, 0);
        if (!m) {
            log_msg(LOG_ERR, "worker %d: out of memory: worker %d keeps the MACs of peer %u",
                    w->index, i, peer_id);
            continue;
        }
        m->peer_id = peer_id;
        mailbox_post(w->env->mb, i, m);
    }
}
