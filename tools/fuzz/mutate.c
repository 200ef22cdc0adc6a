/* mutate.c: qdqc-fuzz --mutate, mutants of real ONNX models (docs/testing.md).
 *
 *   qdqc-fuzz --mutate [--count N] [--seed S] [--jobs J] [--timeout SEC] [--out DIR]
 *                      [--only I] [--allow-known] [--save-accepted DIR] [-v] MODEL.onnx...
 *
 * Mutant i (0 <= i < N) is made from seed model i mod #models with a generator seeded by
 * (S, i), so any mutant can be made again alone (--only I). Two kinds:
 *   - protobuf-field mutants (70 %): the model is parsed into its wire-format tree (a
 *     length-delimited field that parses as a message is a sub-message, else bytes) and 1-2
 *     fields are changed: a varint set to an interesting value (0, 1, -1, 200, 300, 2^31,
 *     2^32 + 5, a neighbour, ...), a float/double set to 0, -x, NaN, inf, a subnormal, 2x, ...,
 *     a string replaced by another string of the model or a name from a dictionary of op
 *     types, attribute names and domains, bytes (raw_data) flipped, shortened or lengthened,
 *     one value of a packed varint array (dims, ints) changed, a field deleted, duplicated or
 *     swapped with a sibling; the tree is written back with correct lengths;
 *   - byte mutants (30 %): 1-4 of bit flip, interesting byte, truncation, deletion,
 *     duplication or insertion of a range.
 * Each mutant runs in a child process (fork) with a time limit and an address-space limit:
 *   import (qdqc_module_import_onnx_bytes) -> error: a clean error if there is a diagnostic;
 *   accepted -> the default pipeline -> seeded random inputs -> the reference interpreter and
 *   the JIT, outputs compared bit for bit (two NaNs are equal).
 * Classes: clean error (import, pipeline), accepted (agree; both engines fail; not compiled:
 * the code generator refuses; not run: inputs/outputs over 64 MiB) and the failures: crash
 * (a signal or an unexpected exit), hang (time limit), jit-vs-ref (outputs differ),
 * one-engine-fails, error-without-message. A failing mutant is written to --out DIR as
 * mutant-S-I.onnx. A jit-vs-ref or one-engine-fails mutant whose imported graph has a
 * dequantize with other parameters than the quantize that produces its operand is tagged
 * "known: dq-params" (the tag points at the likely cause: a dequantize computed with its
 * operand's parameters instead of its own); --allow-known does not count tagged mutants as
 * failures. --inject mismatch|crash|hang makes every child flip a JIT output bit, die of
 * SIGSEGV or never finish, to show those are caught (lit regress/mutate-selftest.test). Exit status: 0 no failure, 1 failures, 2 usage. */
#define _POSIX_C_SOURCE 200809L
#include "fuzz.h"

#include "qdqc/qdqc.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* AddressSanitizer reserves terabytes of shadow address space, so an RLIMIT_AS cap makes every
 * child die in the sanitizer's own mmap before main; under ASan the cap is left off. */
#if defined(__SANITIZE_ADDRESS__)
#define MUTATE_CAN_CAP_AS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MUTATE_CAN_CAP_AS 0
#endif
#endif
#ifndef MUTATE_CAN_CAP_AS
#define MUTATE_CAN_CAP_AS 1
#endif

/* ---- a wire-format tree ---- */

typedef struct PbMsg PbMsg;
typedef struct PbField {
    uint32_t num;
    int wt;              /* 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32 */
    uint64_t v;          /* varint, fixed64, fixed32 */
    unsigned char *bytes; /* wt 2 without sub (owned) */
    size_t len;
    PbMsg *sub;          /* wt 2 parsed as a message */
} PbField;

struct PbMsg {
    PbField *f;
    size_t n, cap;
};

static void
msg_free(PbMsg *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        free(m->f[i].bytes);
        msg_free(m->f[i].sub);
    }
    free(m->f);
    free(m);
}

static bool
get_varint(const unsigned char *p, size_t len, size_t *pos, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*pos >= len)
            return false;
        unsigned char b = p[(*pos)++];
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

static bool
printable(const unsigned char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] < 0x20 || p[i] > 0x7e)
            return false;
    return true;
}

static void
msg_push(PbMsg *m, const PbField *f)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 8;
        m->f = realloc(m->f, m->cap * sizeof *m->f);
    }
    m->f[m->n++] = *f;
}

/* Parse p[0..len) as a message; NULL unless every byte is consumed by valid fields. */
static PbMsg *
msg_parse(const unsigned char *p, size_t len, int depth)
{
    PbMsg *m = calloc(1, sizeof *m);
    size_t pos = 0;
    while (pos < len) {
        uint64_t tag;
        if (!get_varint(p, len, &pos, &tag))
            goto bad;
        PbField f;
        memset(&f, 0, sizeof f);
        f.num = (uint32_t)(tag >> 3);
        f.wt = (int)(tag & 7);
        if (f.num == 0 || tag >> 3 > 536870911u)
            goto bad;
        if (f.wt == 0) {
            if (!get_varint(p, len, &pos, &f.v))
                goto bad;
        } else if (f.wt == 1 || f.wt == 5) {
            size_t k = f.wt == 1 ? 8 : 4;
            if (len - pos < k)
                goto bad;
            for (size_t i = 0; i < k; i++)
                f.v |= (uint64_t)p[pos + i] << (8 * i);
            pos += k;
        } else if (f.wt == 2) {
            uint64_t l;
            if (!get_varint(p, len, &pos, &l) || l > len - pos)
                goto bad;
            const unsigned char *q = p + pos;
            pos += (size_t)l;
            f.len = (size_t)l;
            if (depth < 12 && l > 0 && !printable(q, (size_t)l))
                f.sub = msg_parse(q, (size_t)l, depth + 1);
            if (!f.sub) {
                f.bytes = malloc(l ? (size_t)l : 1);
                memcpy(f.bytes, q, (size_t)l);
            }
        } else {
            goto bad;
        }
        msg_push(m, &f);
    }
    return m;
bad:
    msg_free(m);
    return NULL;
}

static size_t
varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static size_t msg_size(const PbMsg *m);

static size_t
field_payload(const PbField *f)
{
    return f->sub ? msg_size(f->sub) : f->len;
}

static size_t
msg_size(const PbMsg *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++) {
        const PbField *f = &m->f[i];
        n += varint_len((uint64_t)f->num << 3 | (uint64_t)f->wt);
        if (f->wt == 0)
            n += varint_len(f->v);
        else if (f->wt == 1)
            n += 8;
        else if (f->wt == 5)
            n += 4;
        else {
            size_t l = field_payload(f);
            n += varint_len(l) + l;
        }
    }
    return n;
}

static unsigned char *
put_varint(unsigned char *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *p++ = (unsigned char)v;
    return p;
}

static unsigned char *
msg_write(const PbMsg *m, unsigned char *p)
{
    for (size_t i = 0; i < m->n; i++) {
        const PbField *f = &m->f[i];
        p = put_varint(p, (uint64_t)f->num << 3 | (uint64_t)f->wt);
        if (f->wt == 0) {
            p = put_varint(p, f->v);
        } else if (f->wt == 1 || f->wt == 5) {
            for (int k = 0; k < (f->wt == 1 ? 8 : 4); k++)
                *p++ = (unsigned char)(f->v >> (8 * k));
        } else {
            p = put_varint(p, field_payload(f));
            if (f->sub) {
                p = msg_write(f->sub, p);
            } else {
                if (f->len)
                    memcpy(p, f->bytes, f->len);
                p += f->len;
            }
        }
    }
    return p;
}

static PbMsg *
msg_clone(const PbMsg *m)
{
    PbMsg *c = calloc(1, sizeof *c);
    for (size_t i = 0; i < m->n; i++) {
        PbField f = m->f[i];
        if (f.sub)
            f.sub = msg_clone(f.sub);
        if (f.bytes) {
            f.bytes = malloc(f.len ? f.len : 1);
            memcpy(f.bytes, m->f[i].bytes, f.len);
        }
        msg_push(c, &f);
    }
    return c;
}

/* every field with its message, for uniform choice */
typedef struct FRef {
    PbMsg *m;
    size_t i;
} FRef;

static void
collect(PbMsg *m, FRef **out, size_t *n, size_t *cap)
{
    for (size_t i = 0; i < m->n; i++) {
        if (*n == *cap) {
            *cap = *cap ? 2 * *cap : 64;
            *out = realloc(*out, *cap * sizeof **out);
        }
        (*out)[(*n)++] = (FRef){m, i};
        if (m->f[i].sub)
            collect(m->f[i].sub, out, n, cap);
    }
}

/* ---- mutations ---- */

static bool
chance_pct(Rng *r, int pct)
{
    return fz_int(r, 0, 99) < pct;
}

typedef struct Bytes {
    unsigned char *p;
    size_t len;
} Bytes;

static const char *const dict[] = {
    "QuantizeLinear", "DequantizeLinear", "Conv", "ConvTranspose", "MatMul", "Gemm", "Relu",
    "MaxPool", "AveragePool", "Add", "Mul", "Identity", "Reshape", "Transpose", "Concat",
    "Softmax", "QLinearConv", "Resize", "Clip", "Unknown", "axis", "group", "block_size",
    "saturate", "output_dtype", "pads", "strides", "kernel_shape", "dilations", "perm", "to",
    "alpha", "transB", "auto_pad", "SAME_UPPER", "VALID", "com.microsoft", "ai.onnx", "",
    "x", "y", "../x", "a/b"};

static uint64_t
interesting_varint(Rng *r, uint64_t cur)
{
    static const uint64_t vals[] = {0, 1, 2, 3, 4, 7, 8, 9, 10, 11, 13, 17, 21, 22, 64, 127, 128,
                                    200, 255, 256, 300, 1000, 32767, 32768, 65535, 65536,
                                    2147483647ull, 2147483648ull, 4294967295ull, 4294967301ull,
                                    (uint64_t)-1, (uint64_t)-2, (uint64_t)-128, (uint64_t)-129,
                                    (uint64_t)1 << 40};
    switch (fz_int(r, 0, 3)) {
    case 0: return cur + 1;
    case 1: return cur - 1;
    case 2: return (uint64_t)fz_int(r, 0, 30);
    default: return vals[fz_int(r, 0, (int)(sizeof vals / sizeof *vals) - 1)];
    }
}

static void
mutate_float(Rng *r, PbField *f)
{
    if (f->wt == 5) {
        float x;
        uint32_t u = (uint32_t)f->v;
        memcpy(&x, &u, 4);
        static const float vals[] = {0.0f, -0.0f, 1.0f, -1.0f, 1e-45f, 5.9e-39f, 1e30f, 3e38f};
        switch (fz_int(r, 0, 7)) {
        case 0: x = -x; break;
        case 1: x = NAN; break;
        case 2: x = INFINITY; break;
        case 3: x = -INFINITY; break;
        case 4: x *= 2; break;
        case 5: x *= 0.5f; break;
        case 6: x *= 1.0001f; break;
        default: x = vals[fz_int(r, 0, 7)]; break;
        }
        memcpy(&u, &x, 4);
        f->v = u;
    } else {
        double x;
        memcpy(&x, &f->v, 8);
        switch (fz_int(r, 0, 4)) {
        case 0: x = -x; break;
        case 1: x = NAN; break;
        case 2: x = 0; break;
        case 3: x = 4.9e-324; break;
        default: x *= 2; break;
        }
        memcpy(&f->v, &x, 8);
    }
}

static void
set_bytes(PbField *f, const void *p, size_t len)
{
    free(f->bytes);
    f->bytes = malloc(len ? len : 1);
    if (len)
        memcpy(f->bytes, p, len);
    f->len = len;
}

/* A string of the model (any printable bytes field), for renaming into existing names. */
static const PbField *
random_string(Rng *r, FRef *fs, size_t n)
{
    for (int tries = 0; tries < 16; tries++) {
        FRef fr = fs[fz_int(r, 0, (int)n - 1)];
        const PbField *f = &fr.m->f[fr.i];
        if (f->wt == 2 && !f->sub && f->len && printable(f->bytes, f->len))
            return f;
    }
    return NULL;
}

static void
mutate_bytes_field(Rng *r, PbField *f, FRef *fs, size_t nf)
{
    if (f->len && printable(f->bytes, f->len)) {
        if (chance_pct(r, 50)) {
            const char *s = dict[fz_int(r, 0, (int)(sizeof dict / sizeof *dict) - 1)];
            set_bytes(f, s, strlen(s));
        } else {
            const PbField *o = random_string(r, fs, nf);
            if (o && o != f) {
                unsigned char *copy = malloc(o->len);
                memcpy(copy, o->bytes, o->len);
                set_bytes(f, copy, o->len);
                free(copy);
            }
        }
        return;
    }
    /* f32 data (raw_data of scales, weights, biases): one element */
    if (f->len && f->len % 4 == 0 && chance_pct(r, 50)) {
        size_t k = (size_t)fz_int(r, 0, (int)(f->len / 4) - 1);
        PbField t;
        memset(&t, 0, sizeof t);
        t.wt = 5;
        for (int b = 0; b < 4; b++)
            t.v |= (uint64_t)f->bytes[4 * k + (size_t)b] << (8 * b);
        mutate_float(r, &t);
        for (int b = 0; b < 4; b++)
            f->bytes[4 * k + (size_t)b] = (unsigned char)(t.v >> (8 * b));
        return;
    }
    /* a packed varint array? change one value */
    size_t pos = 0, count = 0;
    uint64_t tmp;
    while (pos < f->len && get_varint(f->bytes, f->len, &pos, &tmp))
        count++;
    if (pos == f->len && count && count <= 64 && chance_pct(r, 60)) {
        uint64_t vals[64];
        pos = 0;
        for (size_t k = 0; k < count; k++)
            get_varint(f->bytes, f->len, &pos, &vals[k]);
        size_t k = (size_t)fz_int(r, 0, (int)count - 1);
        vals[k] = interesting_varint(r, vals[k]);
        unsigned char buf[64 * 10], *p = buf;
        for (size_t j = 0; j < count; j++)
            p = put_varint(p, vals[j]);
        set_bytes(f, buf, (size_t)(p - buf));
        return;
    }
    switch (fz_int(r, 0, 3)) {
    case 0:
        if (f->len)
            f->bytes[fz_int(r, 0, (int)f->len - 1)] ^= (unsigned char)(1u << fz_int(r, 0, 7));
        break;
    case 1:
        if (f->len)
            f->bytes[fz_int(r, 0, (int)f->len - 1)] = (unsigned char)(fz_int(r, 0, 1) ? 0xff : 0x80);
        break;
    case 2:
        f->len -= f->len ? (size_t)fz_int(r, 1, f->len < 4 ? (int)f->len : 4) : 0;
        break;
    default: {
        unsigned char *b = malloc(f->len + 4);
        if (f->len)
            memcpy(b, f->bytes, f->len);
        size_t add = (size_t)fz_int(r, 1, 4);
        for (size_t k = 0; k < add; k++)
            b[f->len + k] = (unsigned char)fz_next(r);
        free(f->bytes);
        f->bytes = b;
        f->len += add;
    }
    }
}

static void
field_mutation(Rng *r, PbMsg *root)
{
    FRef *fs = NULL;
    size_t n = 0, cap = 0;
    collect(root, &fs, &n, &cap);
    if (!n) {
        free(fs);
        return;
    }
    /* names are a third of the fields, and a renamed value mostly makes "not defined":
     * prefer the other fields */
    FRef fr = fs[fz_int(r, 0, (int)n - 1)];
    for (int tries = 0; tries < 4; tries++) {
        const PbField *g = &fr.m->f[fr.i];
        if (!(g->wt == 2 && !g->sub && g->len && printable(g->bytes, g->len)) ||
            chance_pct(r, 25))
            break;
        fr = fs[fz_int(r, 0, (int)n - 1)];
    }
    PbField *f = &fr.m->f[fr.i];
    int what = fz_int(r, 0, 24); /* 0-1 delete, 2-3 duplicate, 4 swap, else the value */
    if (what <= 1) { /* delete */
        PbField d = *f;
        memmove(&fr.m->f[fr.i], &fr.m->f[fr.i + 1], (fr.m->n - fr.i - 1) * sizeof *f);
        fr.m->n--;
        free(d.bytes);
        msg_free(d.sub);
    } else if (what <= 3) { /* duplicate */
        PbField c = *f;
        if (c.sub)
            c.sub = msg_clone(c.sub);
        if (c.bytes) {
            c.bytes = malloc(c.len ? c.len : 1);
            memcpy(c.bytes, f->bytes, c.len);
        }
        msg_push(fr.m, &c);
    } else if (what == 4 && fr.m->n > 1) { /* swap with a sibling */
        size_t j = (size_t)fz_int(r, 0, (int)fr.m->n - 1);
        PbField t = fr.m->f[j];
        fr.m->f[j] = fr.m->f[fr.i];
        fr.m->f[fr.i] = t;
    } else if (f->wt == 0) {
        f->v = interesting_varint(r, f->v);
    } else if (f->wt == 1 || f->wt == 5) {
        mutate_float(r, f);
    } else if (f->sub) {
        /* descend: mutate a field inside instead (keeps the structure) */
        if (f->sub->n)
            field_mutation(r, f->sub);
    } else {
        mutate_bytes_field(r, f, fs, n);
    }
    free(fs);
}

static void
byte_mutation(Rng *r, Bytes *b)
{
    if (!b->len)
        return;
    size_t at = (size_t)fz_int(r, 0, (int)b->len - 1);
    switch (fz_int(r, 0, 5)) {
    case 0: b->p[at] ^= (unsigned char)(1u << fz_int(r, 0, 7)); break;
    case 1: {
        static const unsigned char v[] = {0, 1, 0x7f, 0x80, 0xff, 0x08, 0x12, 0x1a};
        b->p[at] = v[fz_int(r, 0, 7)];
        break;
    }
    case 2: b->len = at; break; /* truncate */
    case 3: { /* delete a range */
        size_t k = (size_t)fz_int(r, 1, 16);
        if (k > b->len - at)
            k = b->len - at;
        memmove(b->p + at, b->p + at + k, b->len - at - k);
        b->len -= k;
        break;
    }
    default: { /* duplicate a range, or insert random bytes */
        size_t k = (size_t)fz_int(r, 1, 16);
        if (k > b->len - at)
            k = b->len - at;
        unsigned char *p = malloc(b->len + k);
        memcpy(p, b->p, at + k);
        if (fz_int(r, 0, 1))
            memcpy(p + at + k, b->p + at, k);
        else
            for (size_t j = 0; j < k; j++)
                p[at + k + j] = (unsigned char)fz_next(r);
        memcpy(p + at + 2 * k, b->p + at + k, b->len - at - k);
        free(b->p);
        b->p = p;
        b->len += k;
    }
    }
}

/* Mutant `index` of model `src`; sets *kind to "field" or "byte". */
static Bytes
make_mutant(const Bytes *src, uint64_t seed, long index, const char **kind)
{
    Rng r = {(seed + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)index + 1) * 0xD1B54A32D192ED03ull};
    fz_next(&r);
    Bytes out = {malloc(src->len ? src->len : 1), src->len};
    memcpy(out.p, src->p, src->len);
    PbMsg *m = fz_int(&r, 0, 9) < 7 ? msg_parse(src->p, src->len, 0) : NULL;
    if (m) {
        *kind = "field";
        int k = fz_int(&r, 1, 2);
        for (int i = 0; i < k; i++)
            field_mutation(&r, m);
        size_t len = msg_size(m);
        free(out.p);
        out.p = malloc(len ? len : 1);
        out.len = (size_t)(msg_write(m, out.p) - out.p);
        msg_free(m);
    } else {
        *kind = "byte";
        int k = fz_int(&r, 1, 4);
        for (int i = 0; i < k; i++)
            byte_mutation(&r, &out);
    }
    return out;
}

/* ---- running one mutant (in a child process) ---- */

enum { M_AGREE, M_REJECT, M_REJECT_PIPE, M_BOTH_FAIL, M_UNSUP, M_NOTRUN, M_MISMATCH,
       M_ONE_FAILS, M_NOMSG, M_CRASH, M_HANG, M_NCLASS };
static const char *const mclass_name[] = {
    "agree", "clean-error", "clean-error-pipeline", "both-engines-fail", "not-compiled",
    "not-run", "jit-vs-ref", "one-engine-fails", "error-without-message", "crash", "hang"};
static bool
mclass_fails(int c)
{
    return c >= M_MISMATCH;
}

typedef struct MBufs {
    size_t n;
    void **p;
    size_t *bytes;
    const char **et;
} MBufs;

static bool
mbufs_alloc(MBufs *b, qdqc_module *m, bool out, size_t *total)
{
    b->n = out ? qdqc_module_output_count(m) : qdqc_module_input_count(m);
    b->p = calloc(b->n + 1, sizeof *b->p);
    b->bytes = calloc(b->n + 1, sizeof *b->bytes);
    b->et = calloc(b->n + 1, sizeof *b->et);
    for (size_t i = 0; i < b->n; i++) {
        int rank = out ? qdqc_module_output_rank(m, i) : qdqc_module_input_rank(m, i);
        const int64_t *d = out ? qdqc_module_output_dims(m, i) : qdqc_module_input_dims(m, i);
        b->et[i] = out ? qdqc_module_output_elem_type(m, i) : qdqc_module_input_elem_type(m, i);
        double n = (double)qdqc_elem_type_size(b->et[i]);
        for (int k = 0; k < rank; k++)
            n *= (double)d[k];
        *total += n > 1e12 ? (size_t)1 << 40 : (size_t)n;
        if (*total > ((size_t)64 << 20))
            return false;
        b->bytes[i] = (size_t)n;
        b->p[i] = calloc(b->bytes[i] ? b->bytes[i] : 1, 1);
    }
    return true;
}

/* Does a dequantize take other parameters than the quantize that produces its operand (in
 * the printed IR, before the passes)? Such a mismatch is tagged "known: dq-params": computing
 * the dequantize with its operand's parameters is its likely cause. */
static bool
dq_own_params(const char *ir)
{
    bool found = false;
    for (const char *l = ir; l && *l && !found; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        char name[128];
        const char *dq = strstr(l, " = dequantize %");
        const char *eol = strchr(l, '\n');
        if (!dq || (eol && dq > eol))
            continue;
        if (sscanf(dq + 14, "%127[^, ]", name) != 1)
            continue;
        const char *pp = dq + 14 + strlen(name);
        const char *pe = strstr(pp, " :");
        if (!pe)
            continue;
        /* the producer's line */
        char pat[160];
        snprintf(pat, sizeof pat, "  %s = quantize %%", name);
        const char *q = strstr(ir, pat);
        if (!q) {
            /* a dequantize with run-time parameters or of a graph input: also the pattern */
            found = strncmp(pp, ", %", 3) == 0;
            continue;
        }
        const char *qp = strchr(q + strlen(pat), ',');
        const char *qe = qp ? strstr(qp, " :") : NULL;
        if (!qp || !qe || (size_t)(qe - qp) != (size_t)(pe - pp) || memcmp(qp, pp, (size_t)(pe - pp)))
            found = true;
    }
    return found;
}

static bool
same_bits(const MBufs *a, const MBufs *b, char *detail, size_t dn)
{
    for (size_t i = 0; i < a->n; i++) {
        const unsigned char *x = a->p[i], *y = b->p[i];
        if (!memcmp(x, y, a->bytes[i]))
            continue;
        if (!strcmp(a->et[i], "f32")) {
            size_t diff = 0, first = 0;
            for (size_t k = 0; k < a->bytes[i] / 4; k++) {
                float u, v;
                memcpy(&u, x + 4 * k, 4);
                memcpy(&v, y + 4 * k, 4);
                if (memcmp(&u, &v, 4) && !(isnan(u) && isnan(v)) && !diff++)
                    first = k;
            }
            if (!diff)
                continue;
            float u, v;
            memcpy(&u, x + 4 * first, 4);
            memcpy(&v, y + 4 * first, 4);
            snprintf(detail, dn, "output %zu (f32): %zu of %zu elements differ, first [%zu]: ref "
                     "%.9g, jit %.9g", i, diff, a->bytes[i] / 4, first, (double)u, (double)v);
            return false;
        }
        size_t first = 0;
        while (x[first] == y[first])
            first++;
        snprintf(detail, dn, "output %zu (%s): byte %zu differs: ref 0x%02x, jit 0x%02x", i,
                 a->et[i], first, x[first], y[first]);
        return false;
    }
    return true;
}

static void
first_line(qdqc_context *ctx, char *buf, size_t n)
{
    const char *d = qdqc_context_get_diagnostics(ctx);
    const char *e = strstr(d, "error: ");
    snprintf(buf, n, "%s", e ? e : d);
    char *nl = strchr(buf, '\n');
    if (nl)
        *nl = 0;
}

/* What a child writes back: its result line and the import's warnings. */
#define MUTATE_RESULT_MAX 4096

/* The lines of diagnostics `d` that are warnings, copied into buf[n] (cut at a line end when
 * they do not fit); their length. */
static size_t
warning_lines(const char *d, char *buf, size_t n)
{
    size_t o = 0;
    for (const char *p = d; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        bool warn = false;
        for (size_t k = 0; k + 9 <= len && !warn; k++)
            warn = memcmp(p + k, "warning: ", 9) == 0;
        if (warn) {
            if (o + len + 1 >= n)
                break;
            memcpy(buf + o, p, len);
            o += len;
            buf[o++] = '\n';
        }
        p = nl ? nl + 1 : NULL;
    }
    if (o < n)
        buf[o] = 0;
    return o;
}

/* The child: classify one mutant, write "CLASS WARNED DETAIL" (and its warnings) to fd, exit. */
/* --inject (self-test of the classification): what the child does wrong on purpose */
enum { INJ_NONE, INJ_MISMATCH, INJ_CRASH, INJ_HANG };

static void
run_child(const Bytes *mut, uint64_t input_seed, int fd, int inject)
{
    if (inject == INJ_CRASH) {
        signal(SIGSEGV, SIG_DFL); /* a sanitizer's handler would turn the signal into exit 1 */
        raise(SIGSEGV);
    }
    if (inject == INJ_HANG)
        for (;;)
            pause();
    char detail[900] = "";
    char *warnings = NULL; /* the import's diagnostics when it warned */
    int cls, warned = 0;
    qdqc_context *ctx = qdqc_context_create();
    qdqc_module *m = NULL;
    MBufs in = {0}, oref = {0}, ojit = {0};
    if (qdqc_module_import_onnx_bytes(ctx, mut->p, mut->len, "mutant.onnx", &m) != QDQC_OK) {
        first_line(ctx, detail, sizeof detail);
        cls = strstr(qdqc_context_get_diagnostics(ctx), "error") ? M_REJECT : M_NOMSG;
        goto out;
    }
    warned = strstr(qdqc_context_get_diagnostics(ctx), "warning: ") != NULL;
    if (warned)
        warnings = strdup(qdqc_context_get_diagnostics(ctx));
    char *ir = qdqc_module_print(m);
    bool dqp = ir && dq_own_params(ir);
    qdqc_string_free(ir);
    if (qdqc_module_run_passes(m, "default") != QDQC_OK) {
        first_line(ctx, detail, sizeof detail);
        cls = strstr(qdqc_context_get_diagnostics(ctx), "error") ? M_REJECT_PIPE : M_NOMSG;
        goto out;
    }
    size_t total = 0;
    if (!mbufs_alloc(&in, m, false, &total) || !mbufs_alloc(&oref, m, true, &total) ||
        !mbufs_alloc(&ojit, m, true, &total)) {
        cls = M_NOTRUN;
        snprintf(detail, sizeof detail, "inputs and outputs need more than 64 MiB");
        goto out;
    }
    Rng r = {input_seed * 0x9E3779B97F4A7C15ull + 11};
    for (size_t i = 0; i < in.n; i++) {
        if (!strcmp(in.et[i], "f32")) {
            float *f = in.p[i];
            for (size_t k = 0; k < in.bytes[i] / 4; k++)
                f[k] = (float)(fz_unif(&r) * 8.8 - 4.4);
        } else {
            unsigned char *p = in.p[i];
            for (size_t k = 0; k < in.bytes[i]; k++)
                p[k] = (unsigned char)fz_next(&r);
        }
    }
    char eref[400] = "", ejit[400] = "";
    size_t nd = qdqc_context_get_error_count(ctx);
    qdqc_status sr = qdqc_module_run_reference(m, (const void *const *)in.p, oref.p);
    if (sr != QDQC_OK) {
        first_line(ctx, eref, sizeof eref);
        if (qdqc_context_get_error_count(ctx) == nd) {
            cls = M_NOMSG;
            snprintf(detail, sizeof detail, "reference: %s without a diagnostic",
                     qdqc_status_name(sr));
            goto out;
        }
    }
    qdqc_context_clear_diagnostics(ctx);
    qdqc_jit *j = NULL;
    qdqc_status sj = qdqc_jit_create(m, NULL, &j);
    if (sj == QDQC_OK)
        sj = qdqc_jit_run(j, (const void *const *)in.p, ojit.p);
    qdqc_jit_destroy(j);
    if (inject == INJ_MISMATCH && sj == QDQC_OK && ojit.n && ojit.bytes[0])
        ((unsigned char *)ojit.p[0])[0] ^= 1;
    if (sj != QDQC_OK) {
        first_line(ctx, ejit, sizeof ejit);
        if (!*ejit && qdqc_context_get_error_count(ctx) == 0) {
            cls = M_NOMSG;
            snprintf(detail, sizeof detail, "jit: %s without a diagnostic", qdqc_status_name(sj));
            goto out;
        }
    }
    if (sr != QDQC_OK && sj != QDQC_OK) {
        cls = M_BOTH_FAIL;
        snprintf(detail, sizeof detail, "ref: %s | jit: %s", eref, ejit);
    } else if (sj != QDQC_OK && strstr(ejit, "codegen:")) {
        cls = M_UNSUP;
        snprintf(detail, sizeof detail, "%s", ejit);
    } else if (sr != QDQC_OK || sj != QDQC_OK) {
        cls = M_ONE_FAILS;
        snprintf(detail, sizeof detail, "%s%s", sr != QDQC_OK ? "only the reference fails: "
                 : "only the jit fails: ", sr != QDQC_OK ? eref : ejit);
    } else if (!same_bits(&oref, &ojit, detail, sizeof detail)) {
        cls = M_MISMATCH;
    } else {
        cls = M_AGREE;
    }
    if ((cls == M_MISMATCH || cls == M_ONE_FAILS) && dqp) {
        size_t l = strlen(detail);
        snprintf(detail + l, sizeof detail - l, " [known: dq-params]");
    }
out:
    {
        /* "CLASS WARNED DETAIL\n", then the import's warning lines (for --save-accepted) */
        char line[MUTATE_RESULT_MAX];
        int n = snprintf(line, sizeof line, "%d %d %s\n", cls, warned, detail);
        size_t len = (size_t)(n < (int)sizeof line ? n : (int)sizeof line - 1);
        if (warned)
            len += warning_lines(warnings, line + len, sizeof line - len);
        free(warnings);
        if (write(fd, line, len) < 0)
            _exit(99);
    }
    /* no cleanup: the process ends */
    _exit(0);
}

/* ---- the driver ---- */

typedef struct Slot {
    pid_t pid;
    int fd;
    long index;
    double start;
    Bytes mut;
    const char *kind;
} Slot;

static double
now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static bool
read_model(const char *path, Bytes *b)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    b->p = malloc(n > 0 ? (size_t)n : 1);
    b->len = n > 0 ? fread(b->p, 1, (size_t)n, f) : 0;
    fclose(f);
    return n >= 0;
}

/* DIR/mutant-S-I.onnx; PATH is left empty when the file could not be written (the reason is
   on stderr), so nothing announces a file that does not exist. */
static bool
write_mutant(const char *dir, uint64_t seed, long index, const Bytes *b, char *path, size_t pn)
{
    snprintf(path, pn, "%s/mutant-%llu-%ld.onnx", dir, (unsigned long long)seed, index);
    if (fz_write_file(path, b->p, b->len))
        return true;
    *path = '\0';
    return false;
}

/* DIR/mutant-S-I.warn: the import warnings of an accepted mutant saved to DIR. */
static void
write_warnings(const char *dir, uint64_t seed, long index, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/mutant-%llu-%ld.warn", dir, (unsigned long long)seed, index);
    const char *t = *text ? text : "warning: (text lost)\n";
    fz_write_file(path, t, strlen(t));
}

static void
mutate_usage(void)
{
    fprintf(stderr,
            "usage: qdqc-fuzz --mutate [--count N] [--seed S] [--jobs J] [--timeout SEC]\n"
            "                 [--mem-limit MB] [--out DIR] [--only I] [--allow-known]\n"
            "                 [--save-accepted DIR] [--max-fail N] [-v]\n"
            "                 [--inject mismatch|crash|hang] MODEL.onnx...\n");
}

/* The command line of --mutate and the campaign's totals. */
typedef struct Mut {
    long count, only;
    uint64_t seed;
    int jobs, max_fail;
    double timeout;
    long mem_mb;
    const char *outdir, *savedir;
    bool verbose, allow_known;
    int inject;
    const char *files[512];
    int nfiles;
    Bytes *models; /* [nfiles] */
    long ncls[M_NCLASS], nkind_field, nknown, nfail, nwarned;
    long nlost; /* mutants that should have been written and could not be */
} Mut;

/* a flag taking a value: 1 taken, 0 not this flag, -1 a bad value */
static int
mut_value(Mut *u, const char *a, const char *v)
{
    if (!v)
        return 0;
    if (!strcmp(a, "--count"))
        u->count = atol(v);
    else if (!strcmp(a, "--seed"))
        u->seed = strtoull(v, NULL, 0);
    else if (!strcmp(a, "--jobs"))
        u->jobs = atoi(v);
    else if (!strcmp(a, "--timeout"))
        u->timeout = atof(v);
    else if (!strcmp(a, "--mem-limit"))
        u->mem_mb = atol(v);
    else if (!strcmp(a, "--out"))
        u->outdir = v;
    else if (!strcmp(a, "--save-accepted"))
        u->savedir = v;
    else if (!strcmp(a, "--only"))
        u->only = atol(v);
    else if (!strcmp(a, "--max-fail"))
        u->max_fail = atoi(v);
    else if (!strcmp(a, "--inject")) {
        u->inject = !strcmp(v, "mismatch") ? INJ_MISMATCH : !strcmp(v, "crash") ? INJ_CRASH
                    : !strcmp(v, "hang") ? INJ_HANG : -1;
        if (u->inject < 0)
            return -1;
    } else
        return 0;
    return 1;
}

/* 0 to go on, else the exit status (2: usage, or a model that cannot be read) */
static int
mut_parse(Mut *u, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r = mut_value(u, a, i + 1 < argc ? argv[i + 1] : NULL);
        if (r < 0) {
            mutate_usage();
            return 2;
        }
        if (r > 0)
            i++;
        else if (!strcmp(a, "--mutate"))
            continue;
        else if (!strcmp(a, "--allow-known"))
            u->allow_known = true;
        else if (!strcmp(a, "-v"))
            u->verbose = true;
        else if (a[0] != '-' && u->nfiles < 512)
            u->files[u->nfiles++] = a;
        else {
            mutate_usage();
            return 2;
        }
    }
    if (!u->nfiles || u->count < 0 || u->jobs < 1 || u->jobs > 64 || u->timeout <= 0) {
        mutate_usage();
        return 2;
    }
    if ((u->savedir && !fz_mkdirs(u->savedir)) || (u->outdir && !fz_mkdirs(u->outdir)))
        return 2;
    u->models = calloc((size_t)u->nfiles, sizeof *u->models);
    for (int f = 0; f < u->nfiles; f++)
        if (!u->models || !read_model(u->files[f], &u->models[f])) {
            fprintf(stderr, "qdqc-fuzz: cannot read %s\n", u->files[f]);
            return 2;
        }
    return 0;
}

/* mutant `index` in a child process of slot sl: false when the fork failed */
static bool
launch(Mut *u, Slot *sl, long index)
{
    sl->index = index;
    int mi = (int)(sl->index % u->nfiles);
    sl->mut = make_mutant(&u->models[mi], u->seed, sl->index, &sl->kind);
    u->nkind_field += !strcmp(sl->kind, "field");
    int p[2];
    if (pipe(p) != 0) {
        perror("pipe");
        return false;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return false;
    }
    if (pid == 0) {
        close(p[0]);
        if (MUTATE_CAN_CAP_AS && u->mem_mb > 0) {
            struct rlimit rl = {(rlim_t)u->mem_mb << 20, (rlim_t)u->mem_mb << 20};
            setrlimit(RLIMIT_AS, &rl);
        }
        run_child(&sl->mut, u->seed ^ (uint64_t)sl->index, p[1], u->inject);
    }
    close(p[1]);
    sl->pid = pid;
    sl->fd = p[0];
    sl->start = now_s();
    return true;
}

/* the child's result line (and the warnings after it) into line[MUTATE_RESULT_MAX + 1] */
static const char *
read_result(int fd, char *line)
{
    size_t got = 0;
    for (ssize_t n; got < MUTATE_RESULT_MAX && (n = read(fd, line + got, MUTATE_RESULT_MAX - got)) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        got += (size_t)n;
    }
    line[got] = 0;
    char *nl = strchr(line, '\n'); /* the warnings follow the result line */
    if (!nl)
        return "";
    *nl = 0;
    return nl + 1;
}

/* the class of a finished (or killed: hang) child from its status and result line */
static int
classify(const Mut *u, bool hang, int st, const char *line, int *warned, char *detail, size_t dn)
{
    int cls = -1;
    if (hang) {
        snprintf(detail, dn, "no result after %.0f s", u->timeout);
        return M_HANG;
    }
    if (WIFSIGNALED(st)) {
        snprintf(detail, dn, "signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
        return M_CRASH;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
        sscanf(line, "%d %d %1099[^\n]", &cls, warned, detail) < 2 || cls < 0 ||
        cls >= M_NCLASS) {
        snprintf(detail, dn, "exit status %d without a result", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        return M_CRASH;
    }
    return cls;
}

/* count, write (--out, --save-accepted) and print the result of slot sl's mutant */
static void
record(Mut *u, const Slot *sl, int cls, int warned, const char *detail, const char *warn_text)
{
    bool known = strstr(detail, "[known: ") != NULL;
    u->ncls[cls]++;
    u->nwarned += warned && cls != M_REJECT && cls != M_REJECT_PIPE;
    u->nknown += known && mclass_fails(cls);
    bool fails = mclass_fails(cls) && !(known && u->allow_known);
    char path[1024] = "";
    if ((fails || u->only >= 0) && u->outdir)
        u->nlost += !write_mutant(u->outdir, u->seed, sl->index, &sl->mut, path, sizeof path);
    if (u->savedir && cls <= M_NOTRUN && cls != M_REJECT && cls != M_REJECT_PIPE) {
        char sp[1024];
        u->nlost += !write_mutant(u->savedir, u->seed, sl->index, &sl->mut, sp, sizeof sp);
        if (warned) /* mutant-S-I.warn: what test/fuzz/check_accepted.py reads */
            write_warnings(u->savedir, u->seed, sl->index, warn_text);
    }
    if (fails || u->verbose || u->only >= 0)
        printf("%s mutant %ld (%s of %s): [%s%s] %s%s%s\n", fails ? "FAIL" : "    ", sl->index,
               sl->kind, u->files[sl->index % u->nfiles], mclass_name[cls],
               warned ? ", import warning" : "", detail, *path ? "\n  written to " : "", path);
    u->nfail += fails;
}

/* slot sl's child if it finished or ran out of time: true when the slot was freed */
static bool
reap(Mut *u, Slot *sl)
{
    int st = 0;
    pid_t w = waitpid(sl->pid, &st, WNOHANG);
    bool hang = false;
    if (w == 0) {
        if (now_s() - sl->start < u->timeout)
            return false;
        kill(sl->pid, SIGKILL);
        waitpid(sl->pid, &st, 0);
        hang = true;
    }
    char line[MUTATE_RESULT_MAX + 1];
    const char *warn_text = read_result(sl->fd, line);
    close(sl->fd);
    int warned = 0;
    char detail[1100] = "";
    int cls = classify(u, hang, st, line, &warned, detail, sizeof detail);
    record(u, sl, cls, warned, detail, warn_text);
    free(sl->mut.p);
    memset(sl, 0, sizeof *sl);
    return true;
}

static void
kill_all(Slot *slots, int jobs)
{
    for (int s = 0; s < jobs; s++)
        if (slots[s].pid) {
            kill(slots[s].pid, SIGKILL);
            waitpid(slots[s].pid, NULL, 0);
            close(slots[s].fd);
            free(slots[s].mut.p);
            slots[s].pid = 0;
        }
}

static void
mut_summary(const Mut *u, long launched, double secs)
{
    const long *n = u->ncls;
    long total = 0;
    for (int c = 0; c < M_NCLASS; c++)
        total += n[c];
    long accepted = n[M_AGREE] + n[M_BOTH_FAIL] + n[M_UNSUP] + n[M_NOTRUN] + n[M_MISMATCH] +
                    n[M_ONE_FAILS];
    printf("%ld mutants (%ld field, %ld byte): %ld clean errors (%ld import, %ld pipeline), "
           "%ld accepted (%ld with an import warning; %ld agree bit for bit, %ld both engines "
           "fail, %ld not compiled, %ld not run); failures: %ld crash, %ld hang, %ld jit-vs-ref, %ld one-engine-fails, %ld "
           "error-without-message (%ld of them known%s); %.1f s\n",
           total, u->nkind_field, launched - u->nkind_field, n[M_REJECT] + n[M_REJECT_PIPE],
           n[M_REJECT], n[M_REJECT_PIPE], accepted, u->nwarned, n[M_AGREE], n[M_BOTH_FAIL],
           n[M_UNSUP], n[M_NOTRUN], n[M_CRASH], n[M_HANG], n[M_MISMATCH], n[M_ONE_FAILS],
           n[M_NOMSG], u->nknown, u->allow_known ? ", allowed" : "", secs);
    if (u->nlost)
        printf("qdqc-fuzz: %ld mutants could not be written (reasons above)\n", u->nlost);
}

int
fz_mutate_main(int argc, char **argv)
{
    static Mut u;
    memset(&u, 0, sizeof u);
    u.count = 1000;
    u.only = -1;
    u.seed = 1;
    u.jobs = 1;
    u.max_fail = 20;
    u.timeout = 60;
    u.mem_mb = 4096;
    u.inject = INJ_NONE;
    int rc = mut_parse(&u, argc, argv);
    if (rc)
        return rc;
    long first = u.only >= 0 ? u.only : 0, last = u.only >= 0 ? u.only + 1 : u.count;
    printf("qdqc-fuzz --mutate: %ld mutants of %d models from seed %llu, %d jobs, %.0f s limit\n",
           last - first, u.nfiles, (unsigned long long)u.seed, u.jobs, u.timeout);
    fflush(stdout);
    Slot *slots = calloc((size_t)u.jobs, sizeof *slots);
    if (!slots)
        return 2;
    int running = 0;
    long next = first;
    double t0 = now_s();
    while (next < last || running) {
        for (int s = 0; s < u.jobs && next < last; s++) {
            if (slots[s].pid)
                continue;
            if (!launch(&u, &slots[s], next++))
                return 2;
            running++;
        }
        bool any = false;
        for (int s = 0; s < u.jobs; s++)
            if (slots[s].pid && reap(&u, &slots[s])) {
                any = true;
                running--;
            }
        if (u.nfail >= u.max_fail && u.max_fail > 0) {
            kill_all(slots, u.jobs);
            printf("qdqc-fuzz: stopped after %ld failures (--max-fail)\n", u.nfail);
            break;
        }
        if (!any) {
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
        }
    }
    mut_summary(&u, first < last ? next - first : 0, now_s() - t0);
    for (int f = 0; f < u.nfiles; f++)
        free(u.models[f].p);
    free(u.models);
    free(slots);
    return u.nfail || u.nlost ? 1 : 0;
}
