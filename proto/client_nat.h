/* proto/client_nat.h: `client-nat`, openvpn 2.6's stateless one-to-one NAT of IPv4 addresses in
 * the tunnel.
 *
 * Each rule `client-nat snat|dnat NETWORK NETMASK ALIAS` maps the addresses of NETWORK/NETMASK to
 * those of ALIAS/NETMASK (the host bits are kept). 2.6 applies the rules of a server's config to
 * every client's IPv4 packets in both directions (forward.c process_ip_header, clinat.c
 * client_nat_transform): packets from the TUN device to a client "outgoing", packets from a
 * client to the TUN device "incoming"; client-to-client packets are not translated.
 *  - snat: outgoing, the source in NETWORK becomes ALIAS; incoming, the destination in ALIAS
 *    becomes NETWORK.
 *  - dnat: outgoing, the destination in NETWORK becomes ALIAS; incoming, the source in ALIAS
 *    becomes NETWORK.
 * Rules are tried in order, and each of the two addresses is rewritten at most once (by the
 * first rule that matches it). A rule matches when the address masked with NETMASK equals
 * NETWORK (or ALIAS) as written, so a NETWORK with host bits set never matches (as in 2.6).
 *
 * The IPv4 header checksum and the TCP or UDP checksum are updated incrementally (RFC 1624).
 * Unlike 2.6, which assumes a 20-byte IPv4 header, the TCP/UDP header is found through the
 * header length, a UDP checksum of 0 (none) is left 0, and a fragment that is not the first is
 * left without a transport header fix (it has none). Pure: no I/O, no allocation.
 */
#ifndef PROTO_CLIENT_NAT_H
#define PROTO_CLIENT_NAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLIENT_NAT_MAX 64 /* rules; 2.6's MAX_CLIENT_NAT (more are dropped with a warning) */

enum client_nat_type {
    CLIENT_NAT_SNAT = 0,
    CLIENT_NAT_DNAT = 1,
};

enum client_nat_dir {
    CLIENT_NAT_OUTGOING = 0, /* TUN device to client */
    CLIENT_NAT_INCOMING = 1, /* client to TUN device */
};

struct client_nat_rule {
    enum client_nat_type type;
    uint32_t network; /* host byte order, as written */
    uint32_t netmask;
    uint32_t alias;
};

struct client_nat {
    size_t n_rules;
    struct client_nat_rule rules[CLIENT_NAT_MAX];
};

/* Translate the IPv4 packet of len bytes at pkt in place for direction dir. Returns true when an
 * address was rewritten. Anything that is not a whole IPv4 header (too short, another version,
 * a header length out of range) is left untouched; so is a TCP or UDP header cut short (only the
 * IPv4 header is fixed then). Any thread; nat is read only. */
bool client_nat_apply(const struct client_nat *nat, uint8_t *pkt, size_t len,
                      enum client_nat_dir dir);

/* Parse one `client-nat TYPE NETWORK NETMASK ALIAS` (the four words after the directive) into
 * *rule. 0, or -1 with the reason in why (why_len bytes) naming the word that is wrong: TYPE
 * must be snat or dnat, the others dotted-quad IPv4 addresses (2.6 resolves no names here). */
int client_nat_parse(const char *type, const char *network, const char *netmask, const char *alias,
                     struct client_nat_rule *rule, char *why, size_t why_len);

#endif /* PROTO_CLIENT_NAT_H */
