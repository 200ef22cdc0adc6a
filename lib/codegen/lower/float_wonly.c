/* float_wonly.c: `wmatmul` (float activations x constant 4- or 8-bit weights, weight-only
 * quantization; docs/ir.md) as a vector kernel that reads the packed weights and dequantizes
 * them in registers.
 *
 * Packing (compile time): the columns are cut into panels of NR = NV * V columns (V = the
 * lanes of the kernel path's record, target/isa.h: 16 on avx512vnni, 8 on avx2 / avxvnni, 4 on
 * generic, neon, dotprod, i8mm); panel p holds its K rows of NR bytes contiguously ([P][K][NR], the last
 * panel padded with zeros), so a panel is one sequential stream. 4-bit weights (i4, u4) are
 * stored two per byte, [P][K][NR / 2]: byte l of the pair of vectors (2i, 2i + 1) holds column
 * 2i·V + l in its low nibble and column (2i + 1)·V + l in its high nibble, so one load of V
 * bytes gives both vectors with a mask or a shift (sign-extending shifts for i4) and no lane
 * shuffle; NV is even on every path. On the avx512vnni GEMV tile (V = 16, NV = 8: a panel row is
 * 64 bytes = 16 dwords of 8 nibbles) with no zero point or one zero point for the whole weight,
 * nibble j of dword d holds column j·V + d instead, and the kernel converts by table: vpermps
 * (the path record's lut16_f32, target/isa.h) reads only the low 4 bits of each index, so the row as 16
 * dwords, shifted right by 4j, looks vector j up in the 16 floats (float)(value(code) - zp)
 * directly: one shift and one permute per 16 weights instead of a widening, shifts and a
 * conversion (35 vs 24 G weights/s with the weights in L1 on Zen 4: bench/wonly_uk.c). Its
 * scales and zero points
 * are [P][G][NR] (G blocks of block_size rows, 1 without block_size), its bias [P][NR].
 * Kernel (run time): the panels are the rows of a parallel-for (cg_par_begin: split over N).
 * In a panel, MR rows of x at a time (the rows past M repeat row M - 1, whose identical
 * results are stored twice) keep MR x NV vector accumulators in registers: for each k, NV
 * vectors of V weight bytes are sign/zero-extended to i32 (minus the zero points, if any),
 * converted to f32 and fused-multiply-added with x[m, k] broadcast; the panel's weights are
 * read once per MR rows (for 4-bit weights, half a byte per weight: the GEMV reads half as
 * much). At the end of a block each accumulator is folded into the row's
 * total with one fma by the block's scales, and the bias is added once. Per lane this is
 * exactly the summation order that defines the op (lib/ref/ref_wonly.c: sequential in k per
 * column, fmaf, blocks in order, then + bias), so the JIT and the reference agree bit for bit
 * on every path (llvm.fma is a fused multiply-add on every target; without a native one LLVM
 * calls libm's fmaf, still exact). Tiles: M == 1 (GEMV, bound by the weight read) MR = 1 with
 * NV = 8 independent accumulators, enough to hide the fma latency; M > 1 MR = 4, NV = 4 (32
 * vector registers: AVX-512, AArch64) or MR = 2, NV = 4 (16 registers: AVX2, SSE). */
#include "codegen/lower/lower.h"
#include "codegen/lower/qconv.h"

#include <llvm-c/Core.h>

#include <stdlib.h>
#include <string.h>

#define WO_MAXR 4
#define WO_MAXV 8

typedef struct WoPlan {
    int64_t M, K, N, G, bs, P, last; /* last: rows of the last block */
    int V, NV, MR, NR;
    int64_t NRB; /* bytes per packed row of a panel: NR (8-bit) or NR / 2 (4-bit) */
    bool zp, bias, uns, w4;
    bool lut;    /* 4-bit GEMV by table (see the file comment); zpu: the one zero point */
    int32_t zpu;
} WoPlan;

static const Tensor *
operand_const(Kb *k, Node *n, uint32_t i)
{
    return i < n->nin && n->in[i].id ? ir_const_of(k->g, n->in[i]) : NULL;
}

static bool
wo_plan(Kb *k, Node *n, WoPlan *p)
{
    Graph *g = k->g;
    const Type *xt = &ir_value(g, n->in[0])->type, *yt = &ir_value(g, n->out[0])->type;
    const Tensor *w = operand_const(k, n, 1), *s = operand_const(k, n, 2);
    for (uint32_t i = 1; i < n->nin; i++)
        if (n->in[i].id && !ir_const_of(g, n->in[i]))
            return cg_fail(k, n, "operand %u must be a constant", i);
    if (xt->elem != ET_F32 || yt->elem != ET_F32)
        return cg_fail(k, n, "input and result must be f32");
    ElemType we = w ? w->type.elem : ET_NONE;
    if (!w || !s || (we != ET_I8 && we != ET_U8 && we != ET_I4 && we != ET_U4) ||
        w->type.rank != 2 || s->type.elem != ET_F32)
        return cg_fail(k, n, "the weight must be an i8, u8, i4 or u4 matrix and the scales f32");
    memset(p, 0, sizeof *p);
    p->K = w->type.dims[0];
    p->N = w->type.dims[1];
    p->M = p->K ? (int64_t)(type_numel_unchecked(xt) / (size_t)p->K) : 0;
    p->bs = ir_attr_int(g, n, "block_size", 0);
    if (p->bs <= 0)
        p->bs = p->K;
    p->G = p->K ? (p->K + p->bs - 1) / p->bs : 0;
    p->last = p->K - (p->G - 1) * p->bs;
    if (type_numel_unchecked(&s->type) != (size_t)(p->G * p->N))
        return cg_fail(k, n, "expected %lld scales", (long long)(p->G * p->N));
    p->uns = we == ET_U8 || we == ET_U4;
    p->w4 = we == ET_I4 || we == ET_U4;
    p->zp = operand_const(k, n, 3) != NULL;
    p->bias = operand_const(k, n, 4) != NULL;
    const CgIsaDesc *isa = cg_isa_desc(k->t, k->isa);
    p->V = (int)isa->i32_lanes;
    bool regs16 = isa->vregs < 32;
    p->MR = p->M <= 1 ? 1 : regs16 ? 2 : 4;
    p->NV = p->M <= 1 ? 8 : 4;
    p->NR = p->NV * p->V;
    p->NRB = p->w4 ? p->NR / 2 : p->NR;
    p->P = (p->N + p->NR - 1) / p->NR;
    /* 4-bit GEMV by table: every zero point equal (or none) */
    const Tensor *z = operand_const(k, n, 3);
    bool uniform = true;
    size_t nz = z ? type_numel_unchecked(&z->type) : 0;
    for (size_t i = 1; i < nz && uniform; i++)
        uniform = tensor_get_i(z, i) == tensor_get_i(z, 0);
    p->lut = p->w4 && p->V == 16 && p->NV == 8 && isa->lut16_f32 && uniform;
    if (p->lut && z) {
        p->zpu = nz ? (int32_t)tensor_get_i(z, 0) : 0;
        p->zp = false;
    }
    return true;
}

/* Packed constants: weights [P][K][NRB] (two 4-bit weights per byte: see the file comment), scales (and zero points as i32) [P][G][NR], bias
 * [P][NR]. */
static bool
wo_pack(Kb *k, Node *n, const WoPlan *p, LLVMValueRef *gw, LLVMValueRef *gs, LLVMValueRef *gz,
        LLVMValueRef *gb)
{
    const Tensor *w = operand_const(k, n, 1), *s = operand_const(k, n, 2);
    const Tensor *z = operand_const(k, n, 3), *b = operand_const(k, n, 4);
    size_t nw = (size_t)(p->P * p->K * p->NRB), ns = (size_t)(p->P * p->G * p->NR);
    uint8_t *pw = xcalloc(nw ? nw : 1, 1);
    float *ps = xcalloc(ns ? ns : 1, sizeof *ps);
    int32_t *pz = p->zp ? xcalloc(ns ? ns : 1, sizeof *pz) : NULL;
    float *pb = p->bias ? xcalloc((size_t)(p->P * p->NR) + 1, sizeof *pb) : NULL;
    const uint8_t *wd = w->data;
    const float *sd = s->data;
    for (int64_t pp = 0; pp < p->P; pp++)
        for (int64_t c = 0; c < p->NR; c++) {
            int64_t col = pp * p->NR + c;
            if (col >= p->N)
                break;
            /* 4-bit: column c = j·V + l goes to byte (j / 2)·V + l, nibble j % 2 */
            int64_t j = c / p->V, l = c % p->V;
            int64_t at = p->lut ? l * 4 + j / 2 : p->w4 ? (j / 2) * p->V + l : c;
            int sh = p->w4 ? 4 * (int)(j % 2) : 0;
            for (int64_t kk = 0; kk < p->K; kk++) {
                uint8_t v = wd[kk * p->N + col];
                pw[(pp * p->K + kk) * p->NRB + at] |= (uint8_t)((p->w4 ? v & 15u : v) << sh);
            }
            for (int64_t g = 0; g < p->G; g++) {
                ps[(pp * p->G + g) * p->NR + c] = sd[g * p->N + col];
                if (pz)
                    pz[(pp * p->G + g) * p->NR + c] = (int32_t)tensor_get_i(z, (size_t)(g * p->N + col));
            }
            if (pb)
                pb[pp * p->NR + c] = ((const float *)b->data)[col];
        }
    *gw = cg_const_bytes(k, pw, nw ? nw : 1, "wonly.w");
    *gs = cg_const_bytes(k, ps, (ns ? ns : 1) * sizeof *ps, "wonly.s");
    *gz = pz ? cg_const_bytes(k, pz, ns * sizeof *pz, "wonly.z") : NULL;
    *gb = pb ? cg_const_bytes(k, pb, (size_t)(p->P * p->NR) * sizeof *pb, "wonly.b") : NULL;
    free(pw), free(ps), free(pz), free(pb);
    return true;
}

typedef struct WoEmit {
    const WoPlan *p;
    LLVMTypeRef vf, vi, vb;
    LLVMValueRef wpan, gs, gz, panel;
    LLVMValueRef xrow[WO_MAXR];
    LLVMValueRef acc[WO_MAXR][WO_MAXV], tot[WO_MAXR][WO_MAXV]; /* allocas */
} WoEmit;

/* The NV = 8 weight vectors of a 4-bit GEMV row by table: the 64-byte row as 16 dwords,
 * vector j = vpermps(table, row >> 4j) (vpermps reads bits 0-3 of each index). */
static void
wo_lut_row(Kb *k, const WoEmit *e, LLVMValueRef wrow, LLVMValueRef *wf)
{
    const WoPlan *p = e->p;
    LLVMValueRef tv[16];
    for (int c = 0; c < 16; c++) {
        int v = p->uns ? c : (c < 8 ? c : c - 16);
        tv[c] = LLVMConstReal(k->f32, (double)(v - p->zpu));
    }
    LLVMValueRef table = LLVMConstVector(tv, 16);
    LLVMValueRef row = cg_load_at(k, e->vi, wrow, cg_i64(k, 0), 4);
    LLVMTypeRef pt[2] = {e->vf, e->vi};
    for (int j = 0; j < p->NV; j++) {
        LLVMValueRef idx = j ? LLVMBuildLShr(k->b, row, cg_vsplat(k, cg_i32(k, 4 * j), 16), "") : row;
        LLVMValueRef args[2] = {table, idx};
        wf[j] = cg_call(k, cg_isa_desc(k->t, k->isa)->lut16_f32, e->vf, pt, args, 2);
    }
}

/* One block: rows [k0, k0 + len) of the panel, block index b (i64 values). */
static void
wo_block(Kb *k, WoEmit *e, LLVMValueRef b, LLVMValueRef k0, LLVMValueRef len)
{
    const WoPlan *p = e->p;
    LLVMBuilderRef B = k->b;
    LLVMValueRef zero = LLVMConstNull(e->vf);
    for (int r = 0; r < p->MR; r++)
        for (int j = 0; j < p->NV; j++)
            LLVMBuildStore(B, zero, e->acc[r][j]);
    /* element offset of this block's scales / zero points in the packed [P][G][NR] arrays */
    LLVMValueRef soff = cg_mul(k, cg_add(k, cg_mul(k, e->panel, cg_i64(k, p->G)), b), cg_i64(k, p->NR));
    LLVMValueRef zv[WO_MAXV] = {0};
    if (e->gz)
        for (int j = 0; j < p->NV; j++)
            zv[j] = cg_load_at(k, e->vi, e->gz, cg_mul(k, cg_add(k, soff, cg_i64(k, j * p->V)), cg_i64(k, 4)), 4);
    CgLoop lk;
    LLVMValueRef kk = cg_add(k, k0, cg_loop_begin(k, &lk, len));
    LLVMValueRef wrow = cg_gep(k, e->wpan, cg_mul(k, kk, cg_i64(k, p->NRB)));
    LLVMValueRef wf[WO_MAXV];
    if (p->lut)
        wo_lut_row(k, e, wrow, wf);
    for (int j = 0; j < p->NV && !p->lut; j++) {
        LLVMValueRef wi;
        if (!p->w4) {
            LLVMValueRef w8 = cg_load_at(k, e->vb, wrow, cg_i64(k, j * p->V), 1);
            wi = p->uns ? LLVMBuildZExt(B, w8, e->vi, "") : LLVMBuildSExt(B, w8, e->vi, "");
        } else {
            /* the pair (j - 1, j) shares one load: low nibbles for even j, high for odd */
            LLVMValueRef w8 = cg_load_at(k, e->vb, wrow, cg_i64(k, (j / 2) * p->V), 1);
            LLVMValueRef c4 = LLVMConstInt(k->i32, 4, 0), c28 = LLVMConstInt(k->i32, 28, 0);
            LLVMValueRef s4 = cg_vsplat(k, c4, (unsigned)p->V), s28 = cg_vsplat(k, c28, (unsigned)p->V);
            if (p->uns) {
                wi = LLVMBuildZExt(B, w8, e->vi, "");
                wi = j % 2 ? LLVMBuildLShr(B, wi, s4, "")
                           : LLVMBuildAnd(B, wi, cg_vsplat(k, LLVMConstInt(k->i32, 15, 0), (unsigned)p->V), "");
            } else {
                wi = LLVMBuildSExt(B, w8, e->vi, "");
                wi = j % 2 ? LLVMBuildAShr(B, wi, s4, "") : LLVMBuildAShr(B, LLVMBuildShl(B, wi, s28, ""), s28, "");
            }
        }
        if (zv[j])
            wi = LLVMBuildSub(B, wi, zv[j], "");
        wf[j] = LLVMBuildSIToFP(B, wi, e->vf, "");
    }
    for (int r = 0; r < p->MR; r++) {
        LLVMValueRef xs = cg_load_raw(k, ET_F32, e->xrow[r], kk);
        LLVMValueRef xv = cg_vsplat(k, xs, (unsigned)p->V);
        for (int j = 0; j < p->NV; j++)
            LLVMBuildStore(B, cg_fma(k, xv, wf[j], LLVMBuildLoad2(B, e->vf, e->acc[r][j], "")), e->acc[r][j]);
    }
    cg_loop_end(k, &lk);
    for (int j = 0; j < p->NV; j++) {
        LLVMValueRef sc = cg_load_at(k, e->vf, e->gs, cg_mul(k, cg_add(k, soff, cg_i64(k, j * p->V)), cg_i64(k, 4)), 4);
        for (int r = 0; r < p->MR; r++)
            LLVMBuildStore(B, cg_fma(k, LLVMBuildLoad2(B, e->vf, e->acc[r][j], ""), sc,
                                   LLVMBuildLoad2(B, e->vf, e->tot[r][j], "")), e->tot[r][j]);
    }
}

bool
cg_emit_wonly(Kb *k, Node *n, const CgNodeArgs *a)
{
    WoPlan p;
    LLVMValueRef gw = NULL, gs = NULL, gz = NULL, gb = NULL;
    if (!wo_plan(k, n, &p) || !wo_pack(k, n, &p, &gw, &gs, &gz, &gb))
        return false;
    if (p.M == 0 || p.N == 0)
        return true;
    LLVMBuilderRef B = k->b;
    WoEmit e = {.p = &p, .gs = gs, .gz = gz};
    e.vf = LLVMVectorType(k->f32, (unsigned)p.V);
    e.vi = LLVMVectorType(k->i32, (unsigned)p.V);
    e.vb = LLVMVectorType(k->i8, (unsigned)p.V);
    LLVMValueRef ptrs[2] = {a->in[0], a->out[0]};
    Par par;
    e.panel = cg_par_begin(k, &par, p.P, ptrs, 2);
    LLVMValueRef x = ptrs[0], y = ptrs[1];
    for (int r = 0; r < p.MR; r++)
        for (int j = 0; j < p.NV; j++) {
            e.acc[r][j] = cg_entry_alloca(k, e.vf);
            e.tot[r][j] = cg_entry_alloca(k, e.vf);
        }
    e.wpan = cg_gep(k, gw, cg_mul(k, e.panel, cg_i64(k, p.K * p.NRB)));
    LLVMValueRef n0 = cg_mul(k, e.panel, cg_i64(k, p.NR));
    CgLoop lm;
    LLVMValueRef mt = cg_loop_begin(k, &lm, cg_i64(k, (p.M + p.MR - 1) / p.MR));
    LLVMValueRef row[WO_MAXR];
    for (int r = 0; r < p.MR; r++) {
        row[r] = cg_smin(k, cg_add(k, cg_mul(k, mt, cg_i64(k, p.MR)), cg_i64(k, r)), cg_i64(k, p.M - 1));
        e.xrow[r] = cg_gep(k, x, cg_mul(k, row[r], cg_i64(k, p.K * 4)));
        for (int j = 0; j < p.NV; j++)
            LLVMBuildStore(B, LLVMConstNull(e.vf), e.tot[r][j]);
    }
    if (p.G == 1) {
        wo_block(k, &e, cg_i64(k, 0), cg_i64(k, 0), cg_i64(k, p.K));
    } else {
        CgLoop lb;
        LLVMValueRef b = cg_loop_begin(k, &lb, cg_i64(k, p.G));
        LLVMValueRef islast = LLVMBuildICmp(B, LLVMIntEQ, b, cg_i64(k, p.G - 1), "");
        wo_block(k, &e, b, cg_mul(k, b, cg_i64(k, p.bs)),
                 LLVMBuildSelect(B, islast, cg_i64(k, p.last), cg_i64(k, p.bs), ""));
        cg_loop_end(k, &lb);
    }
    /* results: total (+ bias) */
    LLVMValueRef fin[WO_MAXR][WO_MAXV];
    for (int j = 0; j < p.NV; j++) {
        LLVMValueRef bv = gb ? cg_load_at(k, e.vf, gb, cg_mul(k, cg_add(k, n0, cg_i64(k, j * p.V)), cg_i64(k, 4)), 4)
                             : NULL;
        for (int r = 0; r < p.MR; r++) {
            fin[r][j] = LLVMBuildLoad2(B, e.vf, e.tot[r][j], "");
            if (bv)
                fin[r][j] = LLVMBuildFAdd(B, fin[r][j], bv, "");
        }
    }
    int64_t tail = p.N - (p.P - 1) * p.NR; /* columns of the last panel */
    LLVMBasicBlockRef full = LLVMAppendBasicBlockInContext(k->c, k->fn, "wo.full");
    LLVMBasicBlockRef part = LLVMAppendBasicBlockInContext(k->c, k->fn, "wo.tail");
    LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(k->c, k->fn, "wo.join");
    if (tail == p.NR)
        LLVMBuildBr(B, full);
    else
        LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntEQ, e.panel, cg_i64(k, p.P - 1), ""), part, full);
    LLVMPositionBuilderAtEnd(B, full);
    for (int r = 0; r < p.MR; r++)
        for (int j = 0; j < p.NV; j++) {
            LLVMValueRef off = cg_add(k, cg_mul(k, row[r], cg_i64(k, p.N)), cg_add(k, n0, cg_i64(k, j * p.V)));
            irb_store(&k->ir, fin[r][j], cg_gep(k, y, cg_mul(k, off, cg_i64(k, 4))), 4);
        }
    LLVMBuildBr(B, join);
    LLVMPositionBuilderAtEnd(B, part);
    for (int r = 0; r < p.MR; r++)
        for (int c = 0; c < tail; c++) {
            LLVMValueRef v = LLVMBuildExtractElement(B, fin[r][c / p.V], cg_i32(k, c % p.V), "");
            LLVMValueRef off = cg_add(k, cg_mul(k, row[r], cg_i64(k, p.N)), cg_add(k, n0, cg_i64(k, c)));
            cg_store_raw(k, ET_F32, y, off, v);
        }
    LLVMBuildBr(B, join);
    LLVMPositionBuilderAtEnd(B, join);
    cg_loop_end(k, &lm);
    cg_par_end(k, &par, a);
    return true;
}
