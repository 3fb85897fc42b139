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

/* What one client's data packets add around a tunnelled IP packet, in bytes (2.6 mtu.c
 * frame_calculate_protocol_header_size and frame_calculate_payload_overhead, per client once
 * its cipher is negotiated). */
struct mss_frame {
    size_t transport_len; /* outer IP and UDP or TCP headers: 28 (IPv4/UDP), 48 (IPv6/UDP),
                           * 40 (IPv4/TCP), 60 (IPv6/TCP) */
    size_t header_len;    /* opcode (1, P_DATA_V1) or opcode and peer-id (4, P_DATA_V2), plus
                           * the 2-byte length of the TCP framing */
    size_t crypto_len;    /* AEAD: packet id and tag (20); CBC: IV and HMAC */
    size_t cbc_block;     /* CBC: the block size (the space is rounded down to whole blocks
                           * and one byte of padding taken off); 0 for AEAD */
    size_t payload_len;   /* inside the encryption, before the IP packet: the 1-byte framing
                           * of the v1 compression schemes, the 4-byte fragment header, CBC's
                           * 4-byte packet id */
};

/* The largest MSS to allow for mssfix value mssfix_value in mode for a client whose packets
 * add what f says: mssfix minus f's headers (the outer ones only in MSS_MODE_MTU, none in
 * MSS_MODE_FIXED) minus the inner IPv4 and TCP headers without options (40 bytes), as 2.6
 * mss.c frame_calculate_mssfix. 0 means clamping is off (mssfix 0); never below 64 otherwise.
 * Any thread. */
uint16_t mss_max_for(int mssfix_value, enum mss_mode mode, const struct mss_frame *f);

/* If pkt (len bytes, an IPv4 packet, modified in place) is a TCP SYN with an MSS option above
 * max_mss, lower it to max_mss and fix the TCP checksum. Anything else, including truncated or
 * malformed packets, fragments and max_mss 0, is left unchanged. Returns 1 if changed, else 0. */
int mss_clamp_ipv4(uint8_t *pkt, size_t len, uint16_t max_mss);

/* The same for an IPv6 packet whose next header is TCP: max_mss is the IPv4 value from
 * mss_max_for(), lowered by the 20 bytes an IPv6 header adds (openvpn mss.c, mss_fixup_ipv6).
 * Packets with extension headers before TCP are left unchanged. Returns 1 if changed, else 0. */
int mss_clamp_ipv6(uint8_t *pkt, size_t len, uint16_t max_mss);

#endif /* PROTO_MSS_H */
