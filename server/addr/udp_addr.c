/* server/addr/udp_addr.c: a client's UDP address, shown, compared and hashed. */
#include "server/addr/udp_addr.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

socklen_t udp_addr_len(const union udp_addr *a)
{
    return a->sa.sa_family == AF_INET6 ? sizeof(a->in6) : sizeof(a->in4);
}

void udp_addr_plain(const union udp_addr *a, union udp_addr *out)
{
    if (a->sa.sa_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&a->in6.sin6_addr)) {
        memset(out, 0, sizeof(*out));
        out->in4.sin_family = AF_INET;
        out->in4.sin_port = a->in6.sin6_port;
        memcpy(&out->in4.sin_addr, a->in6.sin6_addr.s6_addr + 12, 4);
        return;
    }
    *out = *a;
}

const char *udp_addr_str(const union udp_addr *a, char *buf, size_t len)
{
    char ip[INET6_ADDRSTRLEN];
    union udp_addr p;

    udp_addr_plain(a, &p);
    if (p.sa.sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &p.in6.sin6_addr, ip, sizeof(ip));
        snprintf(buf, len, "[%s]:%u", ip, (unsigned)ntohs(p.in6.sin6_port));
    } else if (p.sa.sa_family == AF_INET) {
        inet_ntop(AF_INET, &p.in4.sin_addr, ip, sizeof(ip));
        snprintf(buf, len, "%s:%u", ip, (unsigned)ntohs(p.in4.sin_port));
    } else {
        snprintf(buf, len, "?");
    }
    return buf;
}

bool udp_addr_equal(const union udp_addr *a, const union udp_addr *b)
{
    if (a->sa.sa_family != b->sa.sa_family) {
        return false;
    }
    if (a->sa.sa_family == AF_INET6) {
        return a->in6.sin6_port == b->in6.sin6_port &&
               memcmp(&a->in6.sin6_addr, &b->in6.sin6_addr, 16) == 0;
    }
    return a->in4.sin_addr.s_addr == b->in4.sin_addr.s_addr && a->in4.sin_port == b->in4.sin_port;
}

size_t udp_addr_bytes(const union udp_addr *a, uint8_t out[18])
{
    if (a->sa.sa_family == AF_INET6) {
        memcpy(out, &a->in6.sin6_addr, 16);
        memcpy(out + 16, &a->in6.sin6_port, 2);
        return 18;
    }
    memcpy(out, &a->in4.sin_addr, 4);
    memcpy(out + 4, &a->in4.sin_port, 2);
    return 6;
}
