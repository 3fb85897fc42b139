/* server/config/resolve.c: see resolve.h. */
#include "server/config/resolve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>

#include "server/log/log.h"

int config_resolve_local(const struct config *cfg, const struct config_socket *sock,
                         union udp_addr *sa)
{
    struct addrinfo hints, *res = NULL;
    struct in6_addr a6;
    int family = AF_INET, err;

    if (sock->proto == CONFIG_PROTO_UDP6 || sock->proto == CONFIG_PROTO_TCP6 ||
        ((sock->proto == CONFIG_PROTO_UDP || sock->proto == CONFIG_PROTO_TCP) && sock->host &&
         inet_pton(AF_INET6, sock->host, &a6) == 1)) {
        family = AF_INET6;
    }
    memset(sa, 0, sizeof(*sa));
    if (!sock->host) {
        if (family == AF_INET6) {
            sa->in6.sin6_family = AF_INET6;
            sa->in6.sin6_port = htons(sock->port);
            sa->in6.sin6_addr = in6addr_any;
        } else {
            sa->in4.sin_family = AF_INET;
            sa->in4.sin_port = htons(sock->port);
            sa->in4.sin_addr.s_addr = htonl(INADDR_ANY);
        }
        return 0;
    }
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = family;
    hints.ai_socktype = SOCK_DGRAM;
    err = getaddrinfo(sock->host, NULL, &hints, &res);
    if (err || !res) {
        log_msg(LOG_ERR, "%s: local: cannot resolve '%s' as an %s address: %s", config_origin(cfg),
                sock->host, family == AF_INET6 ? "IPv6" : "IPv4", gai_strerror(err));
        return -EINVAL;
    }
    memcpy(sa, res->ai_addr, res->ai_addrlen < sizeof(*sa) ? res->ai_addrlen : sizeof(*sa));
    if (family == AF_INET6) {
        sa->in6.sin6_port = htons(sock->port);
    } else {
        sa->in4.sin_port = htons(sock->port);
    }
    freeaddrinfo(res);
    return 0;
}

int config_resolve_port_share(const struct config *cfg, union udp_addr *sa)
{
    struct addrinfo hints, *res = NULL;
    char port[8];
    int err;

    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    snprintf(port, sizeof(port), "%u", cfg->net.port_share_port);
    err = getaddrinfo(cfg->net.port_share_host, port, &hints, &res);
    if (err || !res) {
        log_msg(LOG_ERR, "%s: port-share: cannot resolve '%s': %s", config_origin(cfg),
                cfg->net.port_share_host, gai_strerror(err));
        return -EINVAL;
    }
    memset(sa, 0, sizeof(*sa));
    memcpy(sa, res->ai_addr, res->ai_addrlen < sizeof(*sa) ? res->ai_addrlen : sizeof(*sa));
    freeaddrinfo(res);
    return 0;
}
