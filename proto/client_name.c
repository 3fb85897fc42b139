/* proto/client_name.c: client-chosen names as openvpn 2.6 lets them through; see
 * client_name.h. */
#include "proto/client_name.h"

#include <string.h>

#include "proto/errors.h"

/* 2.6 buffer.c char_class(CC_PRINT) without CC_CRLF: from 0x20 up, DEL excluded. */
static char remap(unsigned char c)
{
    return c < 0x20 || c == 0x7f ? '_' : (char)c;
}

void client_name_remap(char *s)
{
    for (; *s != '\0'; s++) {
        *s = remap((unsigned char)*s);
    }
}

int client_name_from_cn(const uint8_t *val, size_t len, char *cn, size_t cap)
{
    if (cap == 0) {
        return -PE_NOSPACE;
    }
    cn[0] = '\0';
    if (len > CLIENT_NAME_CN_MAX || len >= cap) {
        return -PE_NOSPACE;
    }
    if (len > 0 && memchr(val, 0, len) != NULL) {
        return -PE_MALFORMED;
    }
    for (size_t i = 0; i < len; i++) {
        cn[i] = remap(val[i]);
    }
    cn[len] = '\0';
    return 0;
}
