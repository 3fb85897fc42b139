/* server/ops/status.h: the --status file, in the three formats openvpn 2.6 writes (multi.c
 * multi_print_status; --status-version 1, 2 or 3).
 *
 * Version 1:
 *   OpenVPN CLIENT LIST
 *   Updated,<time>
 *   Common Name,Real Address,Bytes Received,Bytes Sent,Connected Since
 *   <one row per client>
 *   ROUTING TABLE
 *   Virtual Address,Common Name,Real Address,Last Ref
 *   <one row per client virtual address>
 *   GLOBAL STATS
 *   Max bcast/mcast queue length,0
 *   END
 * Version 2: TITLE, TIME (<time>,<time_t>), HEADER,CLIENT_LIST,... then CLIENT_LIST rows,
 *   HEADER,ROUTING_TABLE,... then ROUTING_TABLE rows, GLOBAL_STATS (max bcast/mcast queue
 *   length 0, dco_enabled 0), END; comma-separated. Version 3: version 2 with tabs.
 * Header rows and field order are those of openvpn 2.6.14 (checked against files its server
 * wrote). Times are local, "YYYY-MM-DD HH:MM:SS" (otime.c time_string); a time of 0 prints as
 * the `now` argument, as openvpn prints the current time for 0. An empty common name or
 * username prints as "UNDEF", an absent virtual address as an empty field (ssl_verify.c,
 * socket.c print_in_addr_t with IA_EMPTY_IF_UNDEF). The real address is "a.b.c.d:port" for IPv4
 * and IPv4-mapped IPv6, and the bare address for other IPv6 (mroute.c mroute_addr_print_ex).
 * Lines end in "\n".
 *
 * Where we differ from openvpn on purpose: openvpn writes fields verbatim, so a common name with
 * a comma breaks the row. Here, in versions 1 and 2 a field containing a comma, a double quote,
 * CR or LF is written as RFC 4180 asks (wrapped in double quotes, inner quotes doubled), so a CSV
 * reader gets it back intact and each row keeps its field count. Version 3 has no quoting
 * convention, so a tab, CR or LF inside a field is written as a space there (quotes are kept).
 * Fields without those characters come out byte for byte as openvpn writes them.
 */
#ifndef SERVER_OPS_STATUS_H
#define SERVER_OPS_STATUS_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>

/* What the server calls itself where openvpn 2.6 gives its title_string: the management
 * interface's `version` ("OpenVPN Version: ...") and the status file's TITLE. Dashboards read
 * the word after "OpenVPN" as openvpn's version to choose the status layout (openvpn-monitor:
 * 2.4 and later have the IPv6 and client-ID columns ovpnd writes), so it starts like 2.6's.
 * No comma: it is a field of status version 2. */
#define OVPND_TITLE "OpenVPN 2.6.0 compatible (ovpnd " OVPND_VERSION ")"

#include "server/addr/vroute.h"

/* dev tap: one MAC address a client sends from, listed in the routing table as "MAC@VID"
 * (mroute.c mroute_addr_print_ex). */
struct status_mac {
    uint8_t mac[6];
    uint16_t vid; /* 0: untagged */
};

/* One connected client as the status file shows it: a snapshot the caller fills. The strings
 * are read up to their NUL or the end of their array, whichever comes first. */
struct status_client {
    char common_name[256];        /* "" prints as UNDEF */
    char username[256];           /* "" prints as UNDEF */
    struct sockaddr_storage real; /* AF_INET or AF_INET6; anything else prints as UNKNOWN */
    uint32_t virt_addr;           /* host order; 0: none (empty field, no routing row) */
    struct in6_addr virt_addr6;   /* all zero: none (empty field, no routing row) */
    uint64_t bytes_rx;            /* link bytes received from the client */
    uint64_t bytes_tx;            /* link bytes sent to it */
    time_t connected_since;
    time_t last_ref;         /* last packet from the client: the routing table's Last Ref */
    unsigned long client_id; /* the management interface's CID */
    uint32_t peer_id;
    char cipher[32]; /* data-channel cipher in openvpn's spelling, e.g. "AES-256-GCM" */
    /* Subnets routed to the client (iroute, iroute-ipv6), borrowed for the call; the routing
     * table lists each as "NETWORK/BITS" (a host route without /BITS), as openvpn 2.6 does.
     * Entries equal to the client's own addresses are left out. */
    const struct vroute_key *iroutes;
    size_t n_iroutes;
    /* dev tap: the routing table lists the MACs the client has sent from, borrowed for the
     * call, instead of its addresses and iroutes (2.6 learns no address with tap) */
    bool is_tap;
    const struct status_mac *macs;
    size_t n_macs;
};

/* One data-plane worker's load, shown as "Worker N ..." GLOBAL STATS rows (ovpnd's own;
 * openvpn has one thread and no such rows). */
struct status_worker {
    uint64_t sessions;    /* clients it carries now */
    uint64_t packets_in;  /* data packets received and decrypted */
    uint64_t packets_out; /* data packets sent */
    uint64_t bytes_in;    /* link bytes of those packets: the sum of its clients' Bytes Received */
    uint64_t bytes_out;   /* the same for packets sent */
    uint64_t handed_over; /* packets that reached it but belonged to another worker */
    uint64_t client_to_client; /* packets it forwarded from one client to another */
    uint64_t dropped;          /* packets dropped, all reasons */
};

/* Write the status text (version 1, 2 or 3) for n_clients clients to out, in array order;
 * title is version 2/3's TITLE field (NULL: "ovpnd"); now is the time the snapshot was taken.
 * Returns 0, -EINVAL for another version, or -EIO when out reports an error. Any thread that
 * owns out. workers (n_workers entries, may be 0) add per-worker rows to GLOBAL STATS. */
int status_print(FILE *out, int version, const char *title, time_t now,
                 const struct status_client *clients, size_t n_clients,
                 const struct status_worker *workers, size_t n_workers);

/* status_print to path, atomically: the text goes to "<path>.tmp" (created mode 0600, or with
 * the permission bits of an existing path), which is then renamed over path, so a reader sees
 * the old file or the new one, never a partial one. Returns 0 or -errno (-EINVAL for a bad
 * version, -ENAMETOOLONG); on error path is untouched and the .tmp file removed. Blocks on disk:
 * main thread or a worker pool, never an event loop. */
int status_write(const char *path, int version, const char *title, time_t now,
                 const struct status_client *clients, size_t n_clients,
                 const struct status_worker *workers, size_t n_workers);

/* Whether path can be opened with oflags (O_WRONLY or O_RDWR; O_RDONLY takes a missing file as
 * fine), the way the status file and the ifconfig-pool-persist file are opened at start-up:
 * an existing file is opened without being changed, a missing one is created and removed
 * again. 0 or -errno (e.g. -ENOENT for a missing directory, -EISDIR, -EROFS, -EACCES). Blocks
 * on disk: main thread, at start-up and --test-config. */
int status_probe_file(const char *path, int oflags);

/* Log, as a warning, that directive's file path could not be opened (-err, for oflags as in
 * status_probe_file) and that ovpnd runs without it: when is_retried, it tries again at each
 * write; else (a chroot, where the path would name another file) it does not write the file
 * until it is started again. openvpn 2.6 also starts then ("Note: cannot open FILE for WRITE",
 * status.c status_open) and never tries again while it runs. Any thread. */
void status_warn_unopened(const char *directive, const char *path, int oflags, int err,
                          bool is_retried);

#endif /* SERVER_OPS_STATUS_H */
