/* proto/mss.h: TCP MSS clamping for packets passing through the tunnel (--mssfix).
 *
 * OpenVPN clamps the MSS option of TCP SYN packets in both directions so that TCP segments,
 * once encapsulated, fit the path MTU without fragmentation (mss.c mss_fixup_ipv4 and
 * frame_calculate_mssfix in openvpn 2.6). The checksum is updated incrementally (RFC 1624).
 */
#ifndef PROTO_MSS_H
#define PROTO_MSS_H

#include <stddef.h>
#include <stdint.h>

/* How a --mssfix value is meant: the bound of the UDP payload (`mssfix N`), of the whole outer
 * IP packet (`mssfix N mtu`, 2.6's default 1492), or of the inner TCP packet (`mssfix N fixed`). */
enum mss_mode {
    MSS_MODE_PAYLOAD = 0,
    MSS_MODE_MTU,
    MSS_MODE_FIXED,
};

/* The largest MSS to allow for mssfix value mssfix_value in mode, when each data packet adds
 * data_overhead bytes (opcode/peer-id, packet id, tag, compression framing) and the outer
 * transport is IPv4/UDP. 0 means clamping is off (mssfix 0). Inner IPv4 + TCP headers without
 * options take 40 bytes. */
uint16_t mss_max_for(int mssfix_value, enum mss_mode mode, size_t data_overhead);

/* If pkt (len bytes, an IPv4 packet, modified in place) is a TCP SYN with an MSS option above
 * max_mss, lower it to max_mss and fix the TCP checksum. Anything else, including truncated or
 * malformed packets, fragments and max_mss 0, is left unchanged. Returns 1 if changed, else 0. */
int mss_clamp_ipv4(uint8_t *pkt, size_t len, uint16_t max_mss);

/* The same for an IPv6 packet whose next header is TCP: max_mss is the IPv4 value from
 * mss_max_for(), lowered by the 20 bytes an IPv6 header adds (openvpn mss.c, mss_fixup_ipv6).
 * Packets with extension headers before TCP are left unchanged. Returns 1 if changed, else 0. */
int mss_clamp_ipv6(uint8_t *pkt, size_t len, uint16_t max_mss);

#endif /* PROTO_MSS_H */
