/* proto/peer_info.c: parse the client's peer-info lines. */
#include "proto/peer_info.h"

#include <limits.h>
#include <string.h>

/* Which variables were already seen: the first occurrence of a name wins. */
enum seen_bit {
    SEEN_VER,
    SEEN_PLAT,
    SEEN_PLAT_VER,
    SEEN_GUI_VER,
    SEEN_SSO,
    SEEN_SSL,
    SEEN_PROTO,
    SEEN_CIPHERS,
    SEEN_NCP,
    SEEN_MTU,
    SEEN_TCPNL,
    SEEN_LZ4,
    SEEN_LZ4V2,
    SEEN_LZO,
    SEEN_LZO_STUB,
    SEEN_COMP_STUB,
    SEEN_COMP_STUBV2,
};

struct span {
    const char *p;
    size_t len;
};

static bool span_is(struct span s, const char *lit)
{
    size_t n = strlen(lit);

    return s.len == n && memcmp(s.p, lit, n) == 0;
}

/* Copy a value into a fixed field, cut to fit, control characters replaced so it can be logged. */
static void copy_value(char *dst, size_t cap, struct span v)
{
    size_t n = v.len < cap - 1 ? v.len : cap - 1;

    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)v.p[i];
        dst[i] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
    }
    dst[n] = '\0';
}

/* IV_CIPHERS: cut at the last ':' that fits so a shortened list never holds half a name. */
static void copy_ciphers(struct peer_info *pi, struct span v)
{
    if (v.len < sizeof(pi->ciphers)) {
        copy_value(pi->ciphers, sizeof(pi->ciphers), v);
        return;
    }
    size_t keep = sizeof(pi->ciphers) - 1;
    while (keep > 0 && v.p[keep] != ':') {
        keep--;
    }
    v.len = keep;
    copy_value(pi->ciphers, sizeof(pi->ciphers), v);
    pi->ciphers_truncated = true;
}

/* Like sscanf("%d"): optional blanks and sign, then at least one digit; the rest is ignored.
 * Values outside int are treated as not a number (sscanf's behaviour there is undefined). */
static bool parse_int(struct span v, int *out)
{
    size_t i = 0;
    bool neg = false;
    long long val = 0;

    while (i < v.len && (v.p[i] == ' ' || v.p[i] == '\t')) {
        i++;
    }
    if (i < v.len && (v.p[i] == '+' || v.p[i] == '-')) {
        neg = v.p[i] == '-';
        i++;
    }
    if (i >= v.len || v.p[i] < '0' || v.p[i] > '9') {
        return false;
    }
    for (; i < v.len && v.p[i] >= '0' && v.p[i] <= '9'; i++) {
        val = val * 10 + (v.p[i] - '0');
        if (val > (long long)INT_MAX + 1) {
            return false;
        }
    }
    if (neg) {
        val = -val;
    }
    if (val > INT_MAX || val < INT_MIN) {
        return false;
    }
    *out = (int)val;
    return true;
}

static bool first_time(uint32_t *seen, enum seen_bit bit)
{
    uint32_t m = 1u << bit;

    if (*seen & m) {
        return false;
    }
    *seen |= m;
    return true;
}

/* IV_LZ4=1 style flags: set only by the exact value "1", as 2.6 tests "IV_COMP_STUBv2=1". */
static void set_flag(bool *flag, uint32_t *seen, enum seen_bit bit, struct span v)
{
    if (first_time(seen, bit)) {
        *flag = span_is(v, "1");
    }
}

static void one_var(struct peer_info *pi, uint32_t *seen, struct span name, struct span v)
{
    int num;

    if (span_is(name, "IV_VER") && first_time(seen, SEEN_VER)) {
        copy_value(pi->version, sizeof(pi->version), v);
    } else if (span_is(name, "IV_PLAT") && first_time(seen, SEEN_PLAT)) {
        copy_value(pi->platform, sizeof(pi->platform), v);
    } else if (span_is(name, "IV_PLAT_VER") && first_time(seen, SEEN_PLAT_VER)) {
        copy_value(pi->plat_ver, sizeof(pi->plat_ver), v);
    } else if (span_is(name, "IV_GUI_VER") && first_time(seen, SEEN_GUI_VER)) {
        copy_value(pi->gui_ver, sizeof(pi->gui_ver), v);
    } else if (span_is(name, "IV_SSO") && first_time(seen, SEEN_SSO)) {
        copy_value(pi->sso, sizeof(pi->sso), v);
    } else if (span_is(name, "IV_SSL") && first_time(seen, SEEN_SSL)) {
        copy_value(pi->ssl, sizeof(pi->ssl), v);
    } else if (span_is(name, "IV_PROTO") && first_time(seen, SEEN_PROTO)) {
        /* ssl_util.c extract_iv_proto: only a positive number counts */
        pi->iv_proto = (parse_int(v, &num) && num > 0) ? (uint32_t)num : 0;
    } else if (span_is(name, "IV_CIPHERS") && first_time(seen, SEEN_CIPHERS)) {
        pi->has_ciphers = true;
        copy_ciphers(pi, v);
    } else if (span_is(name, "IV_NCP") && first_time(seen, SEEN_NCP)) {
        pi->ncp = parse_int(v, &num) ? num : 0;
    } else if (span_is(name, "IV_MTU") && first_time(seen, SEEN_MTU)) {
        pi->has_mtu = parse_int(v, &num);
        pi->mtu = pi->has_mtu ? num : 0;
    } else if (span_is(name, "IV_TCPNL")) {
        set_flag(&pi->tcpnl, seen, SEEN_TCPNL, v);
    } else if (span_is(name, "IV_LZ4")) {
        set_flag(&pi->lz4, seen, SEEN_LZ4, v);
    } else if (span_is(name, "IV_LZ4v2")) {
        set_flag(&pi->lz4v2, seen, SEEN_LZ4V2, v);
    } else if (span_is(name, "IV_LZO")) {
        set_flag(&pi->lzo, seen, SEEN_LZO, v);
    } else if (span_is(name, "IV_LZO_STUB")) {
        set_flag(&pi->lzo_stub, seen, SEEN_LZO_STUB, v);
    } else if (span_is(name, "IV_COMP_STUB")) {
        set_flag(&pi->comp_stub, seen, SEEN_COMP_STUB, v);
    } else if (span_is(name, "IV_COMP_STUBv2")) {
        set_flag(&pi->comp_stubv2, seen, SEEN_COMP_STUBV2, v);
    }
}

int peer_info_parse(const char *text, size_t len, struct peer_info *out)
{
    uint32_t seen = 0;
    size_t end = 0;

    memset(out, 0, sizeof(*out));
    if (text == NULL) {
        return 0;
    }
    while (end < len && text[end] != '\0') {
        end++;
    }
    for (size_t pos = 0; pos < end;) {
        size_t eol = pos;
        while (eol < end && text[eol] != '\n') {
            eol++;
        }
        struct span line = {text + pos, eol - pos};
        if (line.len > 0 && line.p[line.len - 1] == '\r') {
            line.len--;
        }
        const char *eq = memchr(line.p, '=', line.len);
        if (eq != NULL) {
            struct span name = {line.p, (size_t)(eq - line.p)};
            struct span value = {eq + 1, line.len - name.len - 1};
            one_var(out, &seen, name, value);
        }
        pos = eol + 1;
    }
    return 0;
}

bool peer_info_supports_ncp(const struct peer_info *pi)
{
    return pi != NULL && (pi->ncp >= 2 || pi->has_ciphers);
}

bool peer_info_value(const char *text, const char *name, char *out, size_t cap)
{
    size_t name_len = strlen(name);

    if (cap > 0) {
        out[0] = '\0';
    }
    for (const char *l = text; l && *l;) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);

        if (len > name_len && l[name_len] == '=' && strncmp(l, name, name_len) == 0) {
            const char *v = l + name_len + 1;
            size_t n = len - name_len - 1;

            if (n > 0 && v[n - 1] == '\r') {
                n--;
            }
            if (cap > 0) {
                n = n < cap - 1 ? n : cap - 1;
                memcpy(out, v, n);
                out[n] = '\0';
            }
            return true;
        }
        l += len + (e ? 1 : 0);
    }
    return false;
}
