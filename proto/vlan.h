/* proto/vlan.h: 802.1Q VLAN tags on a tap server's frames (`vlan-tagging`, `vlan-accept`,
 * `vlan-pvid`), as openvpn 2.6 handles them (vlan.c, multi.c multi_process_incoming_link and
 * multi_process_incoming_tun, multi_bcast).
 *
 * With vlan-tagging every client belongs to one VLAN, its VID being its `vlan-pvid` (from its
 * client-config-dir file or client-connect output; else the server's `vlan-pvid`, default 1).
 * Clients see untagged frames only; the tap device carries the VLANs as 2.6 puts them there:
 *
 * - a frame from a client that carries a tag with a VID (1..4095) is dropped, whatever the VID
 *   (2.6 vlan_is_tagged), its own included; untagged and priority-tagged (VID 0) frames belong
 *   to the client's VID;
 * - such a frame is written to the device (vlan_to_device) with `vlan-accept all` untagged when
 *   the client's VID is the server's vlan-pvid, else tagged with the client's VID; with
 *   `vlan-accept tagged` always tagged; with `vlan-accept untagged` untagged when the client's
 *   VID is the server's vlan-pvid, else dropped. Tagging an untagged frame adds a tag with
 *   priority 0 and DEI 0; a priority-tagged frame keeps its tag, priority and DEI, and gets the
 *   VID. A frame between clients (client-to-client) is never tagged;
 * - a frame read from the device (vlan_from_device): untagged, it belongs to the server's
 *   vlan-pvid, except with `vlan-accept tagged` (dropped); priority-tagged (VID 0), it belongs
 *   to the server's vlan-pvid and goes on with its priority tag (any vlan-accept); tagged with
 *   VID 1..4095, it is dropped with `vlan-accept untagged`, else its tag is removed (priority and
 *   DEI are lost) and it belongs to that VID;
 * - MACs are learned and looked up per VID (the same MAC in two VLANs is two entries), and a
 *   broadcast or multicast frame, from the device or with client-to-client from a client, goes
 *   only to the clients of its VID.
 *
 * Pure functions on caller-owned bytes, no allocation; any thread.
 */
#ifndef PROTO_VLAN_H
#define PROTO_VLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VLAN_VID_MIN 1     /* the smallest vlan-pvid (2.6 OPENVPN_8021Q_MIN_VID) */
#define VLAN_VID_MAX 4094  /* the largest (2.6 OPENVPN_8021Q_MAX_VID) */
#define VLAN_TPID 0x8100   /* the EtherType of an 802.1Q tag */
#define VLAN_TAG_LEN 4     /* bytes a tag adds to an Ethernet header */
#define VLAN_ETH_LEN 14    /* an untagged Ethernet header */
#define VLAN_TAGGED_LEN 18 /* a tagged one */

/* `vlan-accept`: which frames the tap device carries. */
enum vlan_accept {
    VLAN_ACCEPT_ALL = 0,  /* `all` (2.6's default): tagged and untagged */
    VLAN_ACCEPT_TAGGED,   /* `tagged`: tagged (and priority-tagged) only */
    VLAN_ACCEPT_UNTAGGED, /* `untagged`: untagged and priority-tagged only */
};

/* What becomes of a client's frame on its way to the device. */
enum vlan_out {
    VLAN_OUT_AS_IS = 0, /* written as the client sent it */
    VLAN_OUT_TAG,       /* written tagged with the client's VID (vlan_tag_header) */
    VLAN_OUT_DROP,      /* not written */
};

/* The VID of f's 802.1Q tag (len bytes): 0..4095, 0 for a priority tag; -1 when f has none
 * (its EtherType is not 0x8100, or it is shorter than a tagged header). */
int vlan_frame_vid(const uint8_t *f, size_t len);

/* A frame read from the device (f, len bytes), with the server's vlan-accept and vlan-pvid:
 * the VID it belongs to (1..4095), or -1 to drop it. When its tag is to be removed, f is
 * rewritten in place (the two MAC addresses move VLAN_TAG_LEN bytes on, over the tag) and
 * *strip is VLAN_TAG_LEN: the untagged frame is f + VLAN_TAG_LEN, len - VLAN_TAG_LEN bytes;
 * else *strip is 0 and f is unchanged. */
int vlan_from_device(uint8_t *f, size_t len, enum vlan_accept accept, uint16_t pvid, size_t *strip);

/* Whether a client's frame (f, len bytes) may go on with vlan-tagging: false when it carries a
 * tag with a VID (1..4095), which 2.6 drops whatever the VID. */
bool vlan_client_frame_ok(const uint8_t *f, size_t len);

/* What to do with a frame of a client whose VID is client_pvid, on its way to the device, with
 * the server's vlan-accept and vlan-pvid (2.6 vlan_process_outgoing_tun). */
enum vlan_out vlan_to_device(enum vlan_accept accept, uint16_t pvid, uint16_t client_pvid);

/* The tagged form of f (len bytes, untagged or priority-tagged) for VID vid: hdr (VLAN_TAGGED_LEN
 * bytes) gets f's MAC addresses, the tag (an untagged frame's with priority 0 and DEI 0, a
 * priority-tagged one's with its priority and DEI) and f's EtherType. Returns how many bytes of
 * f hdr replaces (VLAN_ETH_LEN or VLAN_TAGGED_LEN): the tagged frame is hdr followed by
 * f[ret .. len). 0 when f cannot be tagged (shorter than its header, or tagged with a VID
 * already: 2.6 drops it then). */
size_t vlan_tag_header(const uint8_t *f, size_t len, uint16_t vid, uint8_t *hdr);

#endif /* PROTO_VLAN_H */
