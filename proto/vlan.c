/* proto/vlan.c: 802.1Q tags of a tap server's frames (see vlan.h). */
#include "proto/vlan.h"

#include <string.h>

#include "proto/cursor.h"

#define MACS_LEN 12      /* destination and source MAC */
#define TCI_VID 0x0FFFu  /* the VID bits of a tag's control information */
#define TCI_PRIO 0xF000u /* priority (3 bits) and DEI */

int vlan_frame_vid(const uint8_t *f, size_t len)
{
    if (len < VLAN_TAGGED_LEN || load_be16(f + MACS_LEN) != VLAN_TPID) {
        return -1;
    }
    return load_be16(f + MACS_LEN + 2) & TCI_VID;
}

int vlan_from_device(uint8_t *f, size_t len, enum vlan_accept accept, uint16_t pvid, size_t *strip)
{
    int vid;

    *strip = 0;
    if (len < VLAN_ETH_LEN) {
        return -1;
    }
    if (load_be16(f + MACS_LEN) != VLAN_TPID) {
        return accept == VLAN_ACCEPT_TAGGED ? -1 : pvid;
    }
    vid = vlan_frame_vid(f, len);
    if (vid < 0) {
        return -1; /* 0x8100 but too short for the tag */
    }
    if (vid == 0) {
        return pvid; /* priority-tagged: kept as it is, in the server's VLAN (any vlan-accept) */
    }
    if (accept == VLAN_ACCEPT_UNTAGGED) {
        return -1;
    }
    memmove(f + VLAN_TAG_LEN, f, MACS_LEN);
    *strip = VLAN_TAG_LEN;
    return vid;
}

bool vlan_client_frame_ok(const uint8_t *f, size_t len)
{
    return vlan_frame_vid(f, len) <= 0;
}

enum vlan_out vlan_to_device(enum vlan_accept accept, uint16_t pvid, uint16_t client_pvid)
{
    switch (accept) {
    case VLAN_ACCEPT_TAGGED:
        return VLAN_OUT_TAG;
    case VLAN_ACCEPT_UNTAGGED:
        return client_pvid == pvid ? VLAN_OUT_AS_IS : VLAN_OUT_DROP;
    case VLAN_ACCEPT_ALL:
    default:
        return client_pvid == pvid ? VLAN_OUT_AS_IS : VLAN_OUT_TAG;
    }
}

size_t vlan_tag_header(const uint8_t *f, size_t len, uint16_t vid, uint8_t *hdr)
{
    uint16_t tci = 0;
    size_t used = VLAN_ETH_LEN;

    if (len < VLAN_ETH_LEN) {
        return 0;
    }
    if (load_be16(f + MACS_LEN) == VLAN_TPID) {
        if (len < VLAN_TAGGED_LEN) {
            return 0;
        }
        tci = load_be16(f + MACS_LEN + 2);
        if ((tci & TCI_VID) != 0) {
            return 0;
        }
        used = VLAN_TAGGED_LEN;
    }
    memcpy(hdr, f, MACS_LEN);
    store_be16(hdr + MACS_LEN, VLAN_TPID);
    store_be16(hdr + MACS_LEN + 2, (uint16_t)((tci & TCI_PRIO) | (vid & TCI_VID)));
    memcpy(hdr + MACS_LEN + VLAN_TAG_LEN, f + used - 2, 2); /* the EtherType */
    return used;
}
