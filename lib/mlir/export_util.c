/* export_util.c: the MLIR exporter's toolkit, shared by export.c (the function and its
 * boundary), export_ops.c and export_elem.c (the ops): element and tensor types, SSA lines,
 * constants, diagnostics, and the tosa building blocks every op uses (transpose, reshape,
 * rescale, clamp). It calls none of the op files, so the exporter's files form no loop. */
#include "export.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- types ---- */

const char *
exp_et(ElemType e)
{
    switch (e) {
    case ET_F32: return "f32";
    case ET_F16: return "f16";
    case ET_I8:
    case ET_U8: return "i8";
    case ET_I16:
    case ET_U16: return "i16";
    case ET_I4:
    case ET_U4: return "i4";
    case ET_I32: return "i32";
    case ET_I64: return "i64";
    case ET_BOOL: return "i1";
    default: return NULL;
    }
}

int32_t
exp_shift(ElemType e)
{
    return e == ET_U8 ? -128 : e == ET_U16 ? -32768 : e == ET_U4 ? -8 : 0;
}

ElemType
exp_signless(ElemType e)
{
    return e == ET_U8 ? ET_I8 : e == ET_U16 ? ET_I16 : e == ET_U4 ? ET_I4 : e;
}

void
exp_ttype(StrBuf *b, int rank, const int64_t *dims, const char *et)
{
    sb_puts(b, "tensor<");
    for (int i = 0; i < rank; i++)
        sb_printf(b, "%lldx", (long long)dims[i]);
    sb_printf(b, "%s>", et ? et : "?");
}

const char *
exp_tt(Exp *x, int slot, int rank, const int64_t *dims, const char *et)
{
    StrBuf b;
    sb_init(&b);
    exp_ttype(&b, rank, dims, et);
    snprintf(x->tbuf[slot], sizeof x->tbuf[slot], "%s", b.data ? b.data : "");
    sb_free(&b);
    return x->tbuf[slot];
}

/* ---- emission ---- */

bool
exp_fail(Exp *x, const Node *n, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *opn = n ? op_info(n->op)->name : "";
    size_t k = strlen(opn);
    const char *m = n && !strncmp(msg, opn, k) && !strncmp(msg + k, ": ", 2) ? msg + k + 2 : msg;
    if (n) /* node_error puts the op name first */
        node_error(x->g, n, "MLIR export: %s", m);
    else
        diag_error(x->g->m->ctx, &(Loc){.file = x->g->m->filename}, "MLIR export: %s", msg);
    x->failed = true;
    return false;
}

uint32_t
exp_line(Exp *x, const char *fmt, ...)
{
    uint32_t id = ++x->next;
    sb_printf(&x->b, "    %%v%u = ", id);
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&x->b, fmt, ap);
    va_end(ap);
    sb_putc(&x->b, '\n');
    return id;
}

static uint32_t
const_line(Exp *x, const char *tt, StrBuf *vals)
{
    return exp_line(x, "\"tosa.const\"() {values = dense<%s> : %s} : () -> %s", vals->data, tt,
                    tt);
}

/* Small constants are written as lists (readable in tests), large ones as hex bytes. */
uint32_t
exp_const_i(Exp *x, const char *et, int rank, const int64_t *dims, const int64_t *v, size_t n)
{
    StrBuf vals;
    sb_init(&vals);
    bool splat = true;
    for (size_t i = 1; i < n && splat; i++)
        splat = v[i] == v[0];
    if (splat) {
        if (!strcmp(et, "i1"))
            sb_puts(&vals, v[0] ? "true" : "false");
        else
            sb_printf(&vals, "%lld", (long long)v[0]);
    } else if (rank <= 1 && n <= 64) {
        sb_putc(&vals, '[');
        for (size_t i = 0; i < n; i++)
            sb_printf(&vals, i ? ", %lld" : "%lld", (long long)v[i]);
        sb_putc(&vals, ']');
    } else {
        /* MLIR's dense hex storage pads sub-byte integers to a byte: an i4 element is one
         * byte (it was written as 8 bytes, which the verifier rejects) */
        int bytes = !strcmp(et, "i8") || !strcmp(et, "i1") || !strcmp(et, "i4") ? 1
                    : !strcmp(et, "i16")                                         ? 2
                    : !strcmp(et, "i32")                                         ? 4 : 8;
        sb_puts(&vals, "\"0x");
        for (size_t i = 0; i < n; i++)
            for (int k = 0; k < bytes; k++)
                sb_printf(&vals, "%02X", (unsigned)(((uint64_t)v[i] >> (8 * k)) & 0xFF));
        sb_putc(&vals, '"');
    }
    uint32_t id = const_line(x, exp_tt(x, 5, rank, dims, et), &vals);
    sb_free(&vals);
    return id;
}

uint32_t
exp_const_f(Exp *x, int rank, const int64_t *dims, const float *v, size_t n)
{
    StrBuf vals;
    sb_init(&vals);
    bool splat = true;
    for (size_t i = 1; i < n && splat; i++)
        splat = memcmp(&v[i], &v[0], sizeof *v) == 0;
    if (splat) {
        uint32_t bits;
        memcpy(&bits, &v[0], 4);
        sb_printf(&vals, "0x%08X", bits);
    } else {
        sb_puts(&vals, "\"0x");
        for (size_t i = 0; i < n; i++) {
            uint32_t bits;
            memcpy(&bits, &v[i], 4);
            for (int k = 0; k < 4; k++)
                sb_printf(&vals, "%02X", (bits >> (8 * k)) & 0xFF);
        }
        sb_putc(&vals, '"');
    }
    uint32_t id = const_line(x, exp_tt(x, 5, rank, dims, "f32"), &vals);
    sb_free(&vals);
    return id;
}

uint32_t
exp_zp(Exp *x, const char *et, int64_t zp)
{
    int64_t one = 1;
    return exp_const_i(x, et, 1, &one, &zp, 1);
}

uint32_t
exp_transpose(Exp *x, uint32_t v, const Type *t, const int64_t *perm, Type *out)
{
    *out = *t;
    out->q = NULL;
    StrBuf p;
    sb_init(&p);
    for (int i = 0; i < t->rank; i++) {
        out->dims[i] = t->dims[perm[i]];
        sb_printf(&p, i ? ", %lld" : "%lld", (long long)perm[i]);
    }
    uint32_t id = exp_line(x, "tosa.transpose %%v%u {perms = array<i32: %s>} : (%s) -> %s", v,
                           p.data, EXP_TT(x, 0, t), EXP_TT(x, 1, out));
    sb_free(&p);
    return id;
}

uint32_t
exp_reshape(Exp *x, uint32_t v, const Type *t, int rank, const int64_t *dims)
{
    StrBuf p;
    sb_init(&p);
    for (int i = 0; i < rank; i++)
        sb_printf(&p, i ? ", %lld" : "%lld", (long long)dims[i]);
    uint32_t s = exp_line(x, "tosa.const_shape {values = dense<[%s]> : tensor<%dxindex>} : () "
                          "-> !tosa.shape<%d>", p.data ? p.data : "", rank, rank);
    sb_free(&p);
    return exp_line(x, "tosa.reshape %%v%u, %%v%u : (%s, !tosa.shape<%d>) -> %s", v, s,
                    EXP_TT(x, 0, t), rank, exp_tt(x, 1, rank, dims, exp_et(t->elem)));
}

bool
exp_fixed(Exp *x, const Node *n, double m, QnFixed *f)
{
    if (qn_fixed_from_real(m, f))
        return true;
    return exp_fail(x, n, "requantization multiplier %g is outside what tosa.rescale represents "
                    "([2^-32, 2^29])", m);
}

uint32_t
exp_rescale(Exp *x, uint32_t v, const Type *t, const char *in_et, const char *out_et,
            int64_t nch, const QnFixed *f, int64_t in_zp, int64_t out_zp, bool in_unsigned,
            bool out_unsigned)
{
    int64_t *mv = xcalloc((size_t)nch, sizeof *mv), *sv = xcalloc((size_t)nch, sizeof *sv);
    for (int64_t i = 0; i < nch; i++) {
        mv[i] = f[i].mult;
        sv[i] = f[i].shift;
    }
    uint32_t m = exp_const_i(x, "i32", 1, &nch, mv, (size_t)nch);
    uint32_t s = exp_const_i(x, "i8", 1, &nch, sv, (size_t)nch);
    free(mv);
    free(sv);
    uint32_t iz = exp_zp(x, in_et, in_zp), oz = exp_zp(x, out_et, out_zp);
    const char *ti = exp_tt(x, 0, t->rank, t->dims, in_et);
    const char *to = exp_tt(x, 1, t->rank, t->dims, out_et);
    char tm[64], ts[64];
    snprintf(tm, sizeof tm, "tensor<%lldxi32>", (long long)nch);
    snprintf(ts, sizeof ts, "tensor<%lldxi8>", (long long)nch);
    return exp_line(x, "tosa.rescale %%v%u, %%v%u, %%v%u, %%v%u, %%v%u {scale32 = true, "
                    "rounding_mode = SINGLE_ROUND, per_channel = %s, input_unsigned = %s, "
                    "output_unsigned = %s} : (%s, %s, %s, tensor<1x%s>, tensor<1x%s>) -> %s",
                    v, m, s, iz, oz, nch > 1 ? "true" : "false", in_unsigned ? "true" : "false",
                    out_unsigned ? "true" : "false", ti, tm, ts, in_et, out_et, to);
}

uint32_t
exp_clamp(Exp *x, uint32_t v, const Type *t, int64_t lo, int64_t hi)
{
    const char *et = exp_et(t->elem);
    int64_t tlo = 0, thi = 0;
    elem_range(exp_signless(t->elem), &tlo, &thi);
    if (lo <= tlo && hi >= thi)
        return v;
    lo = lo < tlo ? tlo : lo;
    hi = hi > thi ? thi : hi;
    return exp_line(x, "tosa.clamp %%v%u {min_val = %lld : %s, max_val = %lld : %s} : (%s) -> %s",
                    v, (long long)lo, et, (long long)hi, et, EXP_TT(x, 0, t), EXP_TT(x, 1, t));
}

/* A constant's exported form (u8 shifted, like every u8 value). */
static uint32_t
emit_const(Exp *x, const Tensor *tn)
{
    const Type *t = &tn->type;
    size_t n = type_numel_unchecked(t);
    size_t k = n ? n : 1;
    if (t->elem == ET_F32)
        return exp_const_f(x, t->rank, t->dims, (const float *)tn->data, n);
    const char *et = exp_et(t->elem);
    if (!et || elem_is_float(t->elem))
        return 0;
    int64_t *v = xcalloc(k, sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = tensor_get_i(tn, i) + exp_shift(t->elem);
    uint32_t id = exp_const_i(x, et, t->rank, t->dims, v, n);
    free(v);
    return id;
}

uint32_t
exp_operand(Exp *x, ValueId v)
{
    if (!v.id)
        return 0;
    if (!x->ssa[v.id]) {
        const Tensor *tn = ir_const_of(x->g, v);
        if (tn)
            x->ssa[v.id] = emit_const(x, tn);
        if (!x->ssa[v.id]) {
            Node *d = ir_def(x->g, v);
            exp_fail(x, d, "value %%%s (%s) has no MLIR form", ir_value_name(x->g, v),
                     elem_name(ir_value(x->g, v)->type.elem));
        }
    }
    return x->ssa[v.id];
}

/* ---- values ---- */

const Type *
exp_vtype(Exp *x, ValueId v)
{
    return &ir_value(x->g, v)->type;
}

void
exp_bind(Exp *x, Node *n, uint32_t id)
{
    if (id)
        x->ssa[n->out[0].id] = id;
}

/* ---- linalg.generic ---- */

void
exp_map(StrBuf *b, int nd, const int *res, int nres)
{
    sb_puts(b, "affine_map<(");
    for (int i = 0; i < nd; i++)
        sb_printf(b, i ? ", d%d" : "d%d", i);
    sb_puts(b, ") -> (");
    for (int i = 0; i < nres; i++) {
        if (res[i] < 0)
            sb_puts(b, i ? ", 0" : "0");
        else
            sb_printf(b, i ? ", d%d" : "d%d", res[i]);
    }
    sb_puts(b, ")>");
}

void
exp_bcast_map(StrBuf *b, const Type *t, const Type *y)
{
    int res[IR_MAX_RANK];
    int off = y->rank - t->rank;
    for (int i = 0; i < t->rank; i++)
        res[i] = t->dims[i] == 1 && y->dims[off + i] != 1 ? -1 : off + i;
    exp_map(b, y->rank, res, t->rank);
}

uint32_t
exp_generic(Exp *x, const ExpIn *in, int nin, uint32_t init, const char *out_tt,
            const char *out_map, const char *out_et, const char *iters, const char *body)
{
    if (!init)
        init = exp_line(x, "tensor.empty() : %s", out_tt);
    StrBuf s;
    sb_init(&s);
    sb_puts(&s, "linalg.generic {indexing_maps = [");
    for (int i = 0; i < nin; i++)
        sb_printf(&s, "%s, ", in[i].map);
    sb_printf(&s, "%s], iterator_types = [%s]}", out_map, iters);
    if (nin) { /* no operands: no ins clause */
        sb_puts(&s, " ins(");
        for (int i = 0; i < nin; i++)
            sb_printf(&s, i ? ", %%v%u" : "%%v%u", in[i].v);
        sb_puts(&s, " : ");
        for (int i = 0; i < nin; i++)
            sb_printf(&s, i ? ", %s" : "%s", in[i].tt);
        sb_puts(&s, ")");
    }
    sb_printf(&s, " outs(%%v%u : %s) {\n    ^bb0(", init, out_tt);
    for (int i = 0; i < nin; i++)
        sb_printf(&s, "%%a%d: %s, ", i, in[i].et);
    sb_printf(&s, "%%out: %s):\n%s    } -> %s", out_et, body, out_tt);
    uint32_t id = exp_line(x, "%s", s.data);
    sb_free(&s);
    return id;
}

char *
exp_ttype_dup(const Type *t, const char *et)
{
    StrBuf b;
    sb_init(&b);
    exp_ttype(&b, t->rank, t->dims, et);
    return b.data;
}
