/* proto/errors.h: error codes returned by proto/ functions.
 *
 * proto/ functions return 0 on success or a negative code: -PE_* from this file. Codes start at
 * 1000 so they never collide with -errno values returned by server/ code.
 */
#ifndef PROTO_ERRORS_H
#define PROTO_ERRORS_H

enum proto_error {
    PE_SHORT = 1000, /* input ended before a field was complete */
    PE_MALFORMED,    /* a field has a value the protocol does not allow */
    PE_AUTH,         /* HMAC or AEAD tag did not verify */
    PE_REPLAY,       /* packet id already seen */
    PE_TOO_OLD,      /* packet id below the replay window */
    PE_NOSPACE,      /* output buffer too small */
    PE_UNSUPPORTED,  /* valid but not supported (opcode, cipher, key method) */
    PE_CRYPTO,       /* the crypto library failed */
    PE_STATE,        /* the call is not allowed in the current state */
    PE_WINDOW,       /* outside the reliability window */
    PE_WANT_IO,      /* needs more input from the peer before it can go on */
    PE_TLS,          /* the TLS engine reported a fatal error */
    PE_WANT_SIGN,    /* waits for a signature from outside (management-external-key) */
};

/* Name of an error code: -PE_* or -errno. Returns a static string; never NULL. Any thread. */
const char *proto_strerror(int err);

#endif /* PROTO_ERRORS_H */
