/* npy.c: NumPy .npy reader and writer (see npy.h). The header parser accepts exactly the
 * Python dict literal numpy writes ({'descr': ..., 'fortran_order': ..., 'shape': (...), })
 * and reports the first problem it finds. */
#include "runtime/npy.h"
#include "support/file_write.h"
#include "support/support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    NpyType t;
    const char *name;
    const char *descr;
    size_t size;
} types[] = {
    {NPY_F32, "f32", "<f4", 4}, {NPY_F16, "f16", "<f2", 2}, {NPY_F64, "f64", "<f8", 8},
    {NPY_I8, "i8", "|i1", 1},   {NPY_U8, "u8", "|u1", 1},   {NPY_I16, "i16", "<i2", 2},
    {NPY_U16, "u16", "<u2", 2}, {NPY_I32, "i32", "<i4", 4}, {NPY_U32, "u32", "<u4", 4},
    {NPY_I64, "i64", "<i8", 8}, {NPY_BOOL, "bool", "|b1", 1},
};

const char *
npy_type_name(NpyType t)
{
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (types[i].t == t)
            return types[i].name;
    return "none";
}

NpyType
npy_type_from_name(const char *s)
{
    for (size_t i = 0; s && i < sizeof types / sizeof types[0]; i++)
        if (strcmp(types[i].name, s) == 0)
            return types[i].t;
    return NPY_NONE;
}

size_t
npy_type_size(NpyType t)
{
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (types[i].t == t)
            return types[i].size;
    return 0;
}

void
npy_free(NpyArray *a)
{
    if (!a)
        return;
    free(a->data);
    memset(a, 0, sizeof *a);
}

/* ---- header parsing ---- */

typedef struct Hdr {
    const char *p, *end;
    char *err;
    size_t errlen;
} Hdr;

static void
skip_ws(Hdr *h)
{
    while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
        h->p++;
}

static bool
accept_ch(Hdr *h, char c)
{
    skip_ws(h);
    if (h->p < h->end && *h->p == c) {
        h->p++;
        return true;
    }
    return false;
}

/* A quoted string ('...' or "..."), no escapes; copied into buf (truncation is an error). */
static bool
parse_str(Hdr *h, char *buf, size_t len, const char *what)
{
    skip_ws(h);
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
        return errbuf_fail(h->err, h->errlen, "npy header: expected a quoted %s", what);
    char q = *h->p++;
    size_t n = 0;
    while (h->p < h->end && *h->p != q) {
        if (*h->p == '\\' || (unsigned char)*h->p < 0x20 || (unsigned char)*h->p >= 0x7f)
            return errbuf_fail(h->err, h->errlen, "npy header: unsupported character in %s", what);
        if (n + 1 >= len)
            return errbuf_fail(h->err, h->errlen, "npy header: %s is too long", what);
        buf[n++] = *h->p++;
    }
    if (h->p >= h->end)
        return errbuf_fail(h->err, h->errlen, "npy header: unterminated %s", what);
    h->p++;
    buf[n] = 0;
    return true;
}

static bool
parse_word(Hdr *h, const char *w)
{
    size_t n = strlen(w);
    skip_ws(h);
    if ((size_t)(h->end - h->p) >= n && memcmp(h->p, w, n) == 0) {
        const char *q = h->p + n;
        if (q < h->end && ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
                           (*q >= '0' && *q <= '9') || *q == '_'))
            return false;
        h->p = q;
        return true;
    }
    return false;
}

static bool
parse_shape(Hdr *h, int *rank, int64_t *dims)
{
    if (!accept_ch(h, '('))
        return errbuf_fail(h->err, h->errlen, "npy header: 'shape' must be a tuple");
    int r = 0;
    bool trailing_comma = false;
    for (;;) {
        skip_ws(h);
        if (accept_ch(h, ')'))
            break;
        if (h->p >= h->end || *h->p < '0' || *h->p > '9')
            return errbuf_fail(h->err, h->errlen, "npy header: shape entries must be non-negative "
                                           "integers");
        int64_t v = 0;
        while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
            if (v > ((int64_t)1 << 40))
                return errbuf_fail(h->err, h->errlen, "npy header: dimension is too large");
            v = v * 10 + (*h->p++ - '0');
        }
        if (h->p < h->end && (*h->p == 'L' || *h->p == 'l'))
            h->p++; /* Python 2 long suffix, as old numpy wrote */
        if (r >= NPY_MAX_RANK)
            return errbuf_fail(h->err, h->errlen, "npy header: rank exceeds %d", NPY_MAX_RANK);
        dims[r++] = v;
        trailing_comma = false;
        if (accept_ch(h, ',')) {
            trailing_comma = true;
            continue;
        }
        if (accept_ch(h, ')'))
            break;
        return errbuf_fail(h->err, h->errlen, "npy header: expected ',' or ')' in shape");
    }
    if (r == 1 && !trailing_comma)
        return errbuf_fail(h->err, h->errlen, "npy header: 'shape' must be a tuple, e.g. (3,)");
    *rank = r;
    return true;
}

static bool
parse_header(const char *text, size_t len, NpyArray *a, char *err, size_t errlen)
{
    Hdr h = {text, text + len, err, errlen};
    bool seen_descr = false, seen_fo = false, seen_shape = false;
    char descr[16];
    if (len == 0 || text[len - 1] != '\n')
        return errbuf_fail(err, errlen, "npy header: must end with a newline");
    if (!accept_ch(&h, '{'))
        return errbuf_fail(err, errlen, "npy header: expected '{'");
    for (;;) {
        if (accept_ch(&h, '}'))
            break;
        char key[32];
        if (!parse_str(&h, key, sizeof key, "key"))
            return false;
        if (!accept_ch(&h, ':'))
            return errbuf_fail(err, errlen, "npy header: expected ':' after '%s'", key);
        if (strcmp(key, "descr") == 0) {
            if (seen_descr)
                return errbuf_fail(err, errlen, "npy header: duplicate key 'descr'");
            seen_descr = true;
            if (!parse_str(&h, descr, sizeof descr, "descr"))
                return false;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (seen_fo)
                return errbuf_fail(err, errlen, "npy header: duplicate key 'fortran_order'");
            seen_fo = true;
            if (parse_word(&h, "True"))
                return errbuf_fail(err, errlen, "npy: fortran_order True is not supported (save a "
                                         "C-contiguous array)");
            if (!parse_word(&h, "False"))
                return errbuf_fail(err, errlen, "npy header: fortran_order must be True or False");
        } else if (strcmp(key, "shape") == 0) {
            if (seen_shape)
                return errbuf_fail(err, errlen, "npy header: duplicate key 'shape'");
            seen_shape = true;
            if (!parse_shape(&h, &a->rank, a->dims))
                return false;
        } else {
            return errbuf_fail(err, errlen, "npy header: unexpected key '%s'", key);
        }
        if (accept_ch(&h, ','))
            continue;
        if (accept_ch(&h, '}'))
            break;
        return errbuf_fail(err, errlen, "npy header: expected ',' or '}'");
    }
    skip_ws(&h);
    if (h.p != h.end)
        return errbuf_fail(err, errlen, "npy header: unexpected text after the dict");
    if (!seen_descr || !seen_fo || !seen_shape)
        return errbuf_fail(err, errlen, "npy header: missing key '%s'",
                    !seen_descr ? "descr" : !seen_fo ? "fortran_order" : "shape");
    a->type = NPY_NONE;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        const char *d = types[i].descr;
        if (strcmp(descr, d) == 0 ||
            (types[i].size == 1 && (descr[0] == '<' || descr[0] == '=') &&
             strcmp(descr + 1, d + 1) == 0))
            a->type = types[i].t;
    }
    if (a->type == NPY_NONE) {
        if (descr[0] == '>')
            return errbuf_fail(err, errlen, "npy: big-endian dtype '%s' is not supported", descr);
        return errbuf_fail(err, errlen, "npy: dtype '%s' is not supported (<f4 <f2 <f8 |i1 |u1 <i2 "
                                 "<u2 <i4 <u4 <i8 |b1)", descr);
    }
    return true;
}

bool
npy_parse(const void *buf, size_t len, NpyArray *out, char *err, size_t errlen)
{
    const unsigned char *b = buf;
    memset(out, 0, sizeof *out);
    if (!b || len < 10 || memcmp(b, "\x93NUMPY", 6) != 0)
        return errbuf_fail(err, errlen, "not a .npy file (bad magic)");
    unsigned major = b[6], minor = b[7];
    if (major < 1 || major > 3 || minor != 0)
        return errbuf_fail(err, errlen, "npy: format version %u.%u is not supported (1.0, 2.0, 3.0)",
                    major, minor);
    size_t hlen, start;
    if (major == 1) {
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
        start = 10;
    } else {
        if (len < 12)
            return errbuf_fail(err, errlen, "npy: truncated header length");
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        start = 12;
    }
    if (hlen > NPY_MAX_HEADER)
        return errbuf_fail(err, errlen, "npy: header of %zu bytes exceeds %zu", hlen, NPY_MAX_HEADER);
    if (hlen > len - start)
        return errbuf_fail(err, errlen, "npy: truncated header (%zu bytes declared, %zu present)", hlen,
                    len - start);
    NpyArray a = {0};
    if (!parse_header((const char *)b + start, hlen, &a, err, errlen))
        return false;
    size_t n = 1, es = npy_type_size(a.type);
    for (int i = 0; i < a.rank; i++) {
        if (a.dims[i] != 0 && n > NPY_MAX_DATA / (size_t)a.dims[i])
            return errbuf_fail(err, errlen, "npy: array is too large");
        n *= (size_t)a.dims[i];
    }
    if (n > NPY_MAX_DATA / es)
        return errbuf_fail(err, errlen, "npy: array of %zu elements exceeds %zu bytes", n, NPY_MAX_DATA);
    size_t nbytes = n * es, have = len - start - hlen;
    if (have != nbytes)
        return errbuf_fail(err, errlen, "npy: data has %zu bytes, shape and dtype need %zu", have,
                    nbytes);
    a.data = try_malloc(nbytes ? nbytes : 1);
    if (!a.data)
        return errbuf_fail(err, errlen, "npy: out of memory");
    memcpy(a.data, b + start + hlen, nbytes);
    a.nbytes = nbytes;
    *out = a;
    return true;
}

bool
npy_serialize(NpyType t, int rank, const int64_t *dims, const void *data, void **out,
              size_t *outlen, char *err, size_t errlen)
{
    size_t es = npy_type_size(t);
    if (!es)
        return errbuf_fail(err, errlen, "npy: unsupported element type");
    if (rank < 0 || rank > NPY_MAX_RANK)
        return errbuf_fail(err, errlen, "npy: rank %d is not supported", rank);
    const char *descr = NULL;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (types[i].t == t)
            descr = types[i].descr;
    char hdr[64 + 24 * NPY_MAX_RANK + 64];
    int o = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    size_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0 || (dims[i] && n > NPY_MAX_DATA / (size_t)dims[i]))
            return errbuf_fail(err, errlen, "npy: invalid or too large shape");
        n *= (size_t)dims[i];
        o += snprintf(hdr + o, sizeof hdr - (size_t)o, i ? ", %lld" : "%lld", (long long)dims[i]);
    }
    if (n > NPY_MAX_DATA / es)
        return errbuf_fail(err, errlen, "npy: array is too large");
    o += snprintf(hdr + o, sizeof hdr - (size_t)o, "%s), }", rank == 1 ? "," : "");
    size_t hl = (size_t)o + 1; /* + '\n' */
    size_t pre = 10, total = pre + hl;
    size_t padded = (total + 63) / 64 * 64;
    size_t hlen = padded - pre, nbytes = n * es;
    unsigned char *buf = try_malloc(padded + nbytes);
    if (!buf)
        return errbuf_fail(err, errlen, "npy: out of memory");
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(hlen & 0xff);
    buf[9] = (unsigned char)(hlen >> 8);
    memcpy(buf + pre, hdr, (size_t)o);
    memset(buf + pre + o, ' ', hlen - (size_t)o - 1);
    buf[padded - 1] = '\n';
    if (nbytes)
        memcpy(buf + padded, data, nbytes);
    *out = buf;
    *outlen = padded + nbytes;
    return true;
}

bool
npy_read_file(const char *path, NpyArray *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f)
        return errbuf_fail(err, errlen, "cannot open '%s'", path);
    size_t cap = 1 << 16, n = 0, k;
    unsigned char *buf = try_malloc(cap);
    bool ok = buf != NULL;
    while (ok && (k = fread(buf + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) {
            if (cap > NPY_MAX_DATA + NPY_MAX_HEADER + 16) {
                ok = false;
                errbuf_fail(err, errlen, "'%s' is too large", path);
                break;
            }
            unsigned char *nb = try_realloc(buf, cap * 2);
            if (!nb) {
                ok = false;
                errbuf_fail(err, errlen, "out of memory reading '%s'", path);
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    if (ok && ferror(f))
        ok = errbuf_fail(err, errlen, "cannot read '%s'", path);
    fclose(f);
    if (ok) {
        char e[256];
        ok = npy_parse(buf, n, out, e, sizeof e);
        if (!ok)
            errbuf_fail(err, errlen, "%s: %s", path, e);
    }
    free(buf);
    return ok;
}

bool
npy_write_file(const char *path, NpyType t, int rank, const int64_t *dims, const void *data,
               char *err, size_t errlen)
{
    void *buf;
    size_t len;
    if (!npy_serialize(t, rank, dims, data, &buf, &len, err, errlen))
        return false;
    bool ok = write_file_atomic(path, buf, len, err, errlen);
    free(buf);
    return ok;
}
