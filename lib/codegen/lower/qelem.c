/* qelem.c: quantize / dequantize at island boundaries, lut (64-byte table permutes on
 * AVX-512 VBMI, blocks across the parallel-for hook), requantize, qadd, qsub, qmul
 * (numpy broadcasting; the flat vector form is qelem_vec.c; pools are qpool.c).
 * Each arithmetic sequence is the one of lib/numerics (numerics.h, elementwise.h), emitted as
 * scalar loops in the logical layout; see irb/kb.c for the rounding helpers. The arithmetic
 * of requantize / qadd / qsub / qmul is the requantize mode's (CgRqMode.elem, irb/rq.c): the
 * f32 sequence, or under --requant=fixed integers only (the *_fixed functions of
 * elementwise.h, constants from their *_params at compile time). */
#include "codegen/lower/lower.h"
#include "codegen/target/isa.h"
#include "codegen/target/module.h"
#include "codegen/lower/qconv.h"
#include "numerics/elementwise.h"

#include <llvm-c/Core.h>

#include <stdlib.h>
#include <string.h>

/* Per-axis split of a type: [outer, dim, inner] around q->axis (per-tensor: dim = 1). */
static void
axis_split(const Type *t, const QParams *q, int64_t *outer, int64_t *dim, int64_t *inner)
{
    int64_t n = (int64_t)type_numel_unchecked(t);
    if (!q || q->axis < 0) {
        *outer = 1;
        *dim = 1;
        *inner = n;
        return;
    }
    *outer = 1;
    *inner = 1;
    for (int d = 0; d < q->axis; d++)
        *outer *= t->dims[d];
    *dim = t->dims[q->axis];
    for (int d = q->axis + 1; d < t->rank; d++)
        *inner *= t->dims[d];
}

/* quantize: qn_quantize_f32 = sat(rne(x / s) + zp, qmin, qmax), NaN -> sat(zp). */
bool
cg_emit_qdq_int(Kb *k, Node *n, const CgNodeArgs *a)
{
    Graph *g = k->g;
    bool isq = n->op == OP_QUANTIZE;
    if (n->nin > 1 && n->in[1].id)
        return cg_fail(k, n, "dynamic %s is not supported", op_info(n->op)->name);
    const Type *x = &ir_value(g, n->in[0])->type, *y = &ir_value(g, n->out[0])->type;
    /* the node's own parameters (ONNX: a DequantizeLinear reads its integers with its own
     * scale and zero point); the integer type's only for a node without them */
    const QParams *q = n->q ? n->q : isq ? y->q : x->q;
    if (!q)
        return cg_fail(k, n, "missing quantization parameters");
    if ((isq && x->elem != ET_F32) || (!isq && y->elem != ET_F32))
        return cg_fail(k, n, "only f32 %s is supported", isq ? "input" : "output");
    int64_t outer, dim, inner;
    axis_split(isq ? y : x, q, &outer, &dim, &inner);
    LLVMValueRef gs = cg_const_bytes(k, q->scale, q->n * sizeof(float), "scale");
    LLVMValueRef gz = cg_const_bytes(k, q->zp, q->n * sizeof(int32_t), "zp");
    /* units of (row = (o, c), block of QDQ_BLOCK elements of the row) split across the
     * parallel-for hook (a graph input's quantize is otherwise serial work of every run) */
    const int64_t QDQ_BLOCK = 8192;
    int64_t nb = (inner + QDQ_BLOCK - 1) / QDQ_BLOCK;
    Par par;
    LLVMValueRef io[2] = {a->in[0], a->out[0]};
    LLVMValueRef vu = cg_par_begin(k, &par, outer * dim * nb, io, 2);
    LLVMValueRef row = LLVMBuildSDiv(k->b, vu, cg_i64(k, nb), "");
    LLVMValueRef vc = LLVMBuildSRem(k->b, row, cg_i64(k, dim), "");
    LLVMValueRef i0 = cg_mul(k, LLVMBuildSRem(k->b, vu, cg_i64(k, nb), ""), cg_i64(k, QDQ_BLOCK));
    LLVMValueRef s = cg_load_raw(k, ET_F32, gs, vc), zp = cg_load_i64(k, ET_I32, gz, vc);
    /* quantize in i32 lanes: the quotient clamped in f32 to [qmin - zp, qmax - zp] (integers
     * exact in f32 for storage up to 16 bits; NaN -> 0), rounded half to even, + zp: the same
     * as qn_saturate(rne(x / s) + zp, qmin, qmax), rounding being monotone and keeping those
     * bounds (the loop vectorises on i32 rather than i64 lanes) */
    LLVMValueRef flo = NULL, fhi = NULL, zp32 = NULL;
    if (isq) {
        zp32 = LLVMBuildTrunc(k->b, zp, k->i32, "");
        flo = LLVMBuildSIToFP(k->b, LLVMBuildSub(k->b, cg_i64(k, q->qmin), zp, ""), k->f32, "");
        fhi = LLVMBuildSIToFP(k->b, LLVMBuildSub(k->b, cg_i64(k, q->qmax), zp, ""), k->f32, "");
    }
    CgLoop li;
    LLVMValueRef cnt = cg_smin(k, cg_i64(k, QDQ_BLOCK), LLVMBuildSub(k->b, cg_i64(k, inner), i0, ""));
    LLVMValueRef vi = cg_add(k, i0, cg_loop_begin(k, &li, cnt));
    LLVMValueRef idx = cg_add(k, cg_mul(k, row, cg_i64(k, inner)), vi);
    if (isq) {
        LLVMBuilderRef b = k->b;
        LLVMValueRef v = LLVMBuildFDiv(b, cg_load_raw(k, ET_F32, io[0], idx), s, "");
        v = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNO, v, v, ""), cg_f32(k, 0.0f), v, "");
        v = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, v, flo, ""), flo, v, "");
        v = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, v, fhi, ""), fhi, v, "");
        LLVMValueRef r = LLVMBuildAdd(b, LLVMBuildFPToSI(b, cg_roundeven_f32(k, v), k->i32, ""), zp32, "");
        cg_store_i64(k, y->elem, io[1], idx, LLVMBuildSExt(b, r, k->i64, ""));
    } else {
        LLVMValueRef d = LLVMBuildSub(k->b, cg_load_i64(k, x->elem, io[0], idx), zp, "");
        LLVMValueRef f = LLVMBuildFMul(k->b, LLVMBuildSIToFP(k->b, d, k->f32, ""), s, "");
        cg_store_raw(k, ET_F32, io[1], idx, f);
    }
    cg_loop_end(k, &li);
    cg_par_end(k, &par, a);
    return true;
}

/* lut on AVX-512 VBMI: 64 bytes per step, the 256-entry table in four zmm registers; each
 * byte's index x - lo picks from the low (two-source vpermt2b over entries 0..127) or the high
 * half (128..255) by its bit 7. Same bytes as the scalar form (a table read). */
static LLVMValueRef
lut_vec64(Kb *k, LLVMValueRef gt, LLVMValueRef x, int64_t lo)
{
    LLVMTypeRef vt = LLVMVectorType(k->i8, 64);
    LLVMValueRef idx = LLVMBuildSub(k->b, x, cg_vsplat(k, LLVMConstInt(k->i8, (uint64_t)lo & 0xff, 0), 64), "");
    LLVMValueRef tb[4], half[2];
    for (int q = 0; q < 4; q++) {
        LLVMValueRef off = cg_i64(k, 64 * q);
        tb[q] = irb_load(&k->ir, vt, LLVMBuildGEP2(k->b, k->i8, gt, &off, 1, ""), 64);
    }
    for (int h = 0; h < 2; h++) {
        LLVMValueRef args[3] = {tb[2 * h], idx, tb[2 * h + 1]};
        half[h] = irb_intr(k->b, k->c, k->mod, "llvm.x86.avx512.vpermi2var.qi.512", NULL, 0, args, 3);
    }
    LLVMValueRef hi = LLVMBuildICmp(k->b, LLVMIntSLT, idx, LLVMConstNull(vt), "");
    return LLVMBuildSelect(k->b, hi, half[1], half[0], "");
}

/* y = table[x - lo]: blocks of LUT_BLOCK bytes split across the parallel-for hook; 64-byte
 * vectors where the target has VBMI and both sides are bytes, else one element at a time. */
enum { LUT_BLOCK = 16384 };

static void
lut_range(Kb *k, const Type *x, const Type *y, LLVMValueRef gt, LLVMValueRef *io, LLVMValueRef start,
          LLVMValueRef cnt, bool vec)
{
    int64_t lo, hi;
    elem_range(x->elem, &lo, &hi);
    LLVMValueRef nvec = vec ? LLVMBuildUDiv(k->b, cnt, cg_i64(k, 64), "") : cg_i64(k, 0);
    if (vec) {
        LLVMTypeRef vt = LLVMVectorType(k->i8, 64);
        CgLoop l;
        LLVMValueRef i = cg_add(k, start, cg_mul(k, cg_loop_begin(k, &l, nvec), cg_i64(k, 64)));
        LLVMValueRef xv = irb_load(&k->ir, vt, LLVMBuildGEP2(k->b, k->i8, io[0], &i, 1, ""), 1);
        LLVMValueRef yp = LLVMBuildGEP2(k->b, k->i8, io[1], &i, 1, "");
        irb_store(&k->ir, lut_vec64(k, gt, xv, lo), yp, 1);
        cg_loop_end_novec(k, &l);
    }
    CgLoop l;
    LLVMValueRef done = cg_mul(k, nvec, cg_i64(k, 64));
    LLVMValueRef i = cg_add(k, cg_add(k, start, done), cg_loop_begin(k, &l, LLVMBuildSub(k->b, cnt, done, "")));
    LLVMValueRef v = LLVMBuildSub(k->b, cg_load_i64(k, x->elem, io[0], i), cg_i64(k, lo), "");
    cg_store_raw(k, y->elem, io[1], i, cg_load_raw(k, y->elem, gt, v));
    if (vec)
        cg_loop_end_novec(k, &l);
    else
        cg_loop_end(k, &l);
}

bool
cg_emit_lut(Kb *k, Node *n, const CgNodeArgs *a)
{
    Graph *g = k->g;
    const Type *x = &ir_value(g, n->in[0])->type, *y = &ir_value(g, n->out[0])->type;
    const Attr *ta = ir_attr(g, n, "table");
    if (!ta || ta->kind != ATTR_TENSOR || type_numel_unchecked(&ta->t->type) != 256 ||
        ta->t->type.elem != y->elem || elem_size(x->elem) != 1)
        return cg_fail(k, n, "'table' must be a tensor of 256 %s entries over 8-bit input",
                       elem_name(y->elem));
    LLVMValueRef gt = cg_const_bytes(k, ta->t->data, ta->t->nbytes, "lut");
    bool bytes = (x->elem == ET_I8 || x->elem == ET_U8) && (y->elem == ET_I8 || y->elem == ET_U8);
    bool vec = bytes && cg_isa_desc(k->t, k->isa)->vector_bits == 512 &&
               cg_target_has_feature(k->t, "avx512vbmi"); /* vpermi2b zmm */
    int64_t total = (int64_t)type_numel_unchecked(x), nb = total / LUT_BLOCK;
    if (nb > 0) {
        Par par;
        LLVMValueRef io[2] = {a->in[0], a->out[0]};
        LLVMValueRef b = cg_par_begin(k, &par, nb, io, 2);
        if (vec)
            cg_function_set_target(par.fn, k->t, 512);
        lut_range(k, x, y, gt, io, cg_mul(k, b, cg_i64(k, LUT_BLOCK)), cg_i64(k, LUT_BLOCK), vec);
        cg_par_end(k, &par, a);
    }
    if (total > nb * LUT_BLOCK) {
        LLVMValueRef io[2] = {a->in[0], a->out[0]};
        if (vec)
            cg_function_set_target(k->fn, k->t, 512);
        lut_range(k, x, y, gt, io, cg_i64(k, nb * LUT_BLOCK), cg_i64(k, total - nb * LUT_BLOCK), vec);
    }
    return true;
}

static bool
per_tensor(const QParams *q)
{
    return q && q->axis < 0;
}

/* requantize, qadd, qsub, qmul over broadcast operands. */
static bool
emit_elemwise(Kb *k, Node *n, const CgNodeArgs *a)
{
    Graph *g = k->g;
    const Type *y = &ir_value(g, n->out[0])->type;
    uint32_t nop = n->op == OP_REQUANTIZE ? 1 : 2;
    const Type *t[2];
    for (uint32_t i = 0; i < nop; i++) {
        t[i] = &ir_value(g, n->in[i])->type;
        if (!per_tensor(t[i]->q))
            return cg_fail(k, n, "operand %u must be per-tensor quantized", i);
    }
    if (!per_tensor(y->q))
        return cg_fail(k, n, "the result must be per-tensor quantized");
    CgRqElem e = {.n = n, .nop = nop, .t = {t[0], nop > 1 ? t[1] : NULL}, .y = y};
    ir_clamp_range(k->g, n, y->q, &e.lo, &e.hi);
    if (!k->rq->elem_init(k, &e, false))
        return false;
    int64_t ys[IR_MAX_RANK], st[2][IR_MAX_RANK];
    type_strides(y, ys);
    for (uint32_t i = 0; i < nop; i++)
        type_bcast_strides(t[i], y, st[i]);
    CgLoop l[IR_MAX_RANK];
    LLVMValueRef yi = cg_i64(k, 0), xi[2] = {cg_i64(k, 0), cg_i64(k, 0)};
    for (int d = 0; d < y->rank; d++) {
        LLVMValueRef iv = cg_loop_begin(k, &l[d], cg_i64(k, y->dims[d]));
        yi = cg_add(k, yi, cg_mul(k, iv, cg_i64(k, ys[d])));
        for (uint32_t i = 0; i < nop; i++)
            xi[i] = cg_add(k, xi[i], cg_mul(k, iv, cg_i64(k, st[i][d])));
    }
    LLVMValueRef dz[2];
    for (uint32_t i = 0; i < nop; i++)
        dz[i] = LLVMBuildSub(k->b, cg_load_i64(k, t[i]->elem, a->in[i], xi[i]),
                             cg_i64(k, t[i]->q->zp[0]), "");
    LLVMValueRef r = k->rq->elem(k, &e, dz);
    cg_store_i64(k, y->elem, a->out[0], yi, r);
    for (int d = y->rank - 1; d >= 0; d--)
        cg_loop_end(k, &l[d]);
    return true;
}

/* requantize, qadd, qsub, qmul: the flat vector form (qelem_vec.c) where it applies */
bool
cg_emit_qelem(Kb *k, Node *n, const CgNodeArgs *a)
{
    if (cg_elemwise_vec_ok(k, n))
        return cg_emit_elemwise_vec(k, n, a); /* qelem_vec.c */
    return emit_elemwise(k, n, a);
}
