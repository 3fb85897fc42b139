/* proto/errors.c: names of the proto/ error codes. */
#include "proto/errors.h"

#include <string.h>

const char *proto_strerror(int err)
{
    int e = err < 0 ? -err : err;

    switch (e) {
    case PE_SHORT:
        return "packet too short";
    case PE_MALFORMED:
        return "malformed packet";
    case PE_AUTH:
        return "authentication failed";
    case PE_REPLAY:
        return "replayed packet id";
    case PE_TOO_OLD:
        return "packet id too old";
    case PE_NOSPACE:
        return "buffer too small";
    case PE_UNSUPPORTED:
        return "unsupported";
    case PE_CRYPTO:
        return "crypto library error";
    case PE_STATE:
        return "not allowed in this state";
    case PE_WINDOW:
        return "outside the reliability window";
    case PE_WANT_IO:
        return "needs more input";
    case PE_TLS:
        return "TLS error";
    case PE_WANT_SIGN:
        return "waits for an external signature";
    default:
        break;
    }
    if (e > 0 && e < PE_SHORT) {
        return strerror(e);
    }
    return "unknown error";
}
