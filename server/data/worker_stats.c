/* server/data/worker_stats.c: a worker's counters summed and logged, for readers on any thread. */
#include "server/data/worker_stats.h"

#include <inttypes.h>

#include "server/log/log.h"

void worker_stats_log(const struct worker_stats *s, int index)
{
    log_msg(
        LOG_INFO,
        "worker %d: packets in %" PRIu64 ", out %" PRIu64 ", handed over %" PRIu64
        "; dropped: short %" PRIu64 ", unknown peer-id %" PRIu64 ", no key %" PRIu64
        ", authentication %" PRIu64 ", replay %" PRIu64 ", bad source %" PRIu64 ", not IP %" PRIu64
        ", no route %" PRIu64 ", send %" PRIu64 ", IPv6 link-local source %" PRIu64
        "; client-to-client %" PRIu64 "; sent by UDP GSO %" PRIu64
        "; TUN super-packets read %" PRIu64 " (segments %" PRIu64 "), written %" PRIu64
        " (segments %" PRIu64 "), TUN reads dropped %" PRIu64 ", TUN writes failed %" PRIu64
        ", UDP receive errors %" PRIu64 ", TUN multicast not forwarded %" PRIu64
        "; polling periods %" PRIu64 "; hand-overs dropped (owner behind) %" PRIu64
        "; datagrams from an address not floated to %" PRIu64 "; compression: decompressed %" PRIu64
        ", compressed %" PRIu64 ", dropped compressed (not accepted) %" PRIu64
        ", dropped bad framing or compressed data %" PRIu64 "; fragments received %" PRIu64
        " (packets reassembled %" PRIu64 ", given up %" PRIu64 "), packets fragmented %" PRIu64
        " (fragments sent %" PRIu64 "), dropped bad fragments %" PRIu64
        "; TCP connections accepted %" PRIu64 ", closed %" PRIu64 ", bytes read %" PRIu64
        ", packets over tcp-queue-limit %" PRIu64 ", bad framing %" PRIu64
        ", no handshake in hand-window %" PRIu64 ", refused %" PRIu64
        ", proxied (port-share) %" PRIu64 "; frames dropped by VLAN rules %" PRIu64,
        index, stat_get(&s->rx_packets), stat_get(&s->tx_packets), stat_get(&s->handed_over),
        stat_get(&s->drop_short), stat_get(&s->drop_unknown_peer), stat_get(&s->drop_no_key),
        stat_get(&s->drop_auth), stat_get(&s->drop_replay), stat_get(&s->drop_bad_source),
        stat_get(&s->drop_not_ip), stat_get(&s->drop_no_route), stat_get(&s->drop_send),
        stat_get(&s->drop_link_local), stat_get(&s->client_to_client), stat_get(&s->tx_gso),
        stat_get(&s->tun_tso_reads), stat_get(&s->tun_tso_segments), stat_get(&s->tun_gro_writes),
        stat_get(&s->tun_gro_segments), stat_get(&s->drop_tun_read), stat_get(&s->drop_tun_write),
        stat_get(&s->udp_recv_errors), stat_get(&s->drop_tun_multicast),
        stat_get(&s->polling_entered), stat_get(&s->drop_handover), stat_get(&s->drop_float),
        stat_get(&s->comp_rx), stat_get(&s->comp_tx), stat_get(&s->drop_compressed),
        stat_get(&s->drop_comp_malformed), stat_get(&s->frag_rx_pieces),
        stat_get(&s->frag_rx_packets), stat_get(&s->frag_abandoned), stat_get(&s->frag_tx_packets),
        stat_get(&s->frag_tx_pieces), stat_get(&s->drop_frag), stat_get(&s->tcp_accepted),
        stat_get(&s->tcp_closed), stat_get(&s->tcp_bytes_in), stat_get(&s->drop_tcp_queue),
        stat_get(&s->drop_tcp_framing), stat_get(&s->drop_tcp_hand_window),
        stat_get(&s->drop_tcp_refused), stat_get(&s->tcp_port_share), stat_get(&s->drop_vlan));
}

uint64_t worker_stats_dropped(const struct worker_stats *s)
{
    return stat_get(&s->drop_short) + stat_get(&s->drop_unknown_peer) + stat_get(&s->drop_no_key) +
           stat_get(&s->drop_auth) + stat_get(&s->drop_replay) + stat_get(&s->drop_bad_source) +
           stat_get(&s->drop_not_ip) + stat_get(&s->drop_no_route) + stat_get(&s->drop_send) +
           stat_get(&s->drop_compressed) + stat_get(&s->drop_link_local) +
           stat_get(&s->drop_tun_read) + stat_get(&s->drop_tun_write) +
           stat_get(&s->drop_tun_multicast) + stat_get(&s->drop_float) +
           stat_get(&s->drop_handover) + stat_get(&s->drop_comp_malformed) +
           stat_get(&s->drop_tcp_queue) + stat_get(&s->drop_frag) + stat_get(&s->drop_vlan);
}
