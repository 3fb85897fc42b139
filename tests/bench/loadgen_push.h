/* tests/bench/loadgen_push.h: reading a PUSH_REPLY the way a 2.6 client does, for what the load
 * generator needs.
 *
 * "PUSH_REPLY,opt,opt,..." where each option is a config line with words separated by spaces
 * (openvpn 2.6 push.c process_incoming_push_msg, options.c apply_push_options). Options the load
 * generator does not use (route, dhcp-option, dns, topology, ...) are skipped, as a client with
 * route-noexec would. A reply can be split over several messages with "push-continuation 2" on
 * all but the last. Pure functions, any thread.
 */
#ifndef TESTS_BENCH_LOADGEN_PUSH_H
#define TESTS_BENCH_LOADGEN_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOADGEN_PUSH_CIPHER_MAX 64

/* The data-channel framing the server asked for (section 7 of the protocol notes). */
enum loadgen_comp {
    LOADGEN_COMP_NONE = 0, /* no option pushed: payload as is */
    LOADGEN_COMP_STUB_V2,  /* "compress stub-v2": escape a leading 0x50 byte */
    LOADGEN_COMP_LZO_STUB, /* "comp-lzo no": 0xFA before every payload */
    LOADGEN_COMP_STUB,     /* "compress" / "compress stub": 0xFB, first byte moved to the end */
};

/* What the pushed options said, accumulated over the messages of one reply. */
struct loadgen_push {
    bool has_ifconfig;
    uint32_t ifconfig_local;  /* host order */
    uint32_t ifconfig_remote; /* netmask (subnet) or the far end (net30/p2p), host order */
    bool has_route_gateway;
    uint32_t route_gateway; /* host order */
    bool has_host_route;
    uint32_t host_route; /* first "route A" or "route A 255.255.255.255": net30's server address */
    bool is_subnet;      /* "topology subnet" */
    bool has_peer_id;
    uint32_t peer_id;                     /* 0..0xFFFFFE */
    char cipher[LOADGEN_PUSH_CIPHER_MAX]; /* "" when none was pushed */
    bool tls_ekm;       /* "key-derivation tls-ekm" or "protocol-flags ... tls-ekm" */
    bool cc_exit;       /* "protocol-flags ... cc-exit": leave with the EXIT control message */
    int ping_s;         /* "ping N": send a keepalive after N idle seconds; 0 = not pushed */
    int ping_restart_s; /* "ping-restart N": give up after N silent seconds; 0 = not pushed */
    enum loadgen_comp comp;
    bool is_complete; /* the last message of the reply was seen */
    unsigned n_options;
};

/* Start a new reply: zero *p. */
void loadgen_push_init(struct loadgen_push *p);

/* Apply one PUSH_REPLY message (msg: NUL-terminated, starting with "PUSH_REPLY"; trailing CR/LF
 * allowed). Sets p->is_complete unless the message ends with "push-continuation 2".
 * Returns 0; -1 when the message is not a PUSH_REPLY or an option the load generator relies on is
 * malformed (bad address in ifconfig/route-gateway, peer-id above 0xFFFFFE, over-long cipher); -2
 * when the server pushed a compression the 2.6 client refuses by default (lz4, lzo: "server pushed
 * compression settings that are not allowed"). On error *p may be partly updated. */
int loadgen_push_apply(struct loadgen_push *p, const char *msg);

/* The server's tunnel address, where the echo requests go: route-gateway if pushed (topology
 * subnet), else the first pushed host route (net30 pushes "route <server tun address>"), else the
 * far end of a p2p ifconfig; 0 if none is known. Host order. */
uint32_t loadgen_push_gateway(const struct loadgen_push *p);

#endif /* TESTS_BENCH_LOADGEN_PUSH_H */
