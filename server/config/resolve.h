/* server/config/resolve.h: the addresses a config names, resolved at start-up (as openvpn 2.6
 * resolves them once): the local address each listening socket binds, and the port-share
 * server's. Main thread (getaddrinfo may block on DNS); errors are logged with the config's
 * origin.
 */
#ifndef SERVER_CONFIG_RESOLVE_H
#define SERVER_CONFIG_RESOLVE_H

#include "server/addr/udp_addr.h"
#include "server/config/config.h"

/* The address to bind for socket sock (host, port and proto filled in) into *sa: the host
 * (literal or name) or the wildcard, of the family its proto asks for: udp4/tcp4 IPv4,
 * udp6/tcp6 IPv6 (dual-stack), udp/tcp IPv4 unless the host is an IPv6 address. 0, or -EINVAL
 * when the name does not resolve (logged). */
int config_resolve_local(const struct config *cfg, const struct config_socket *sock,
                         union udp_addr *sa);

/* `port-share HOST PORT` (cfg->net.port_share_host set): the server's address into *sa, resolved
 * once as 2.6 does. 0, or -EINVAL when HOST does not resolve (logged). */
int config_resolve_port_share(const struct config *cfg, union udp_addr *sa);

#endif /* SERVER_CONFIG_RESOLVE_H */
