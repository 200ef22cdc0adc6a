/* onnx_einsum.c: ONNX Einsum of one or two operands as IR layout ops and one matmul, so that
 * QDQ folding sees a plain (possibly transposed) matmul and makes it a qmatmul. The attention
 * forms of transformer exports become:
 *   "bhid,bhjd->bhij"  transpose(B, [0,1,3,2]) -> matmul      (Q K^T)
 *   "bhij,bhjd->bhid"  matmul                                  (P V)
 *   "bij,bjk->bik"     matmul;   "bid,bjd->bij"  transpose(B) -> matmul
 * In general, after the steps that apply to one operand alone:
 *  - a label repeated in one operand takes the diagonal: its two axes moved last (transpose),
 *    merged (reshape d*d) and sliced with step d+1;
 *  - a label of one operand that is in neither the other operand nor the output is summed
 *    (reduce_sum);
 * the labels of two operands are batch (both operands and the output), contracted (both, not
 * the output) or kept (one operand and the output); A goes to [batch, keptA, contracted] and B
 * to [batch, contracted, keptB] (transpose, then reshape to [batch, M, K] / [batch, K, N]),
 * matmul, reshape to [batch, keptA, keptB] and transpose to the output's order. Transposes by
 * the identity and reshapes to the same shape are not emitted. "..." (ellipsis) stands for
 * the leading dimensions not named, the same number and sizes in both operands or absent from
 * one. The implicit form (no "->") outputs the labels used once, in alphabetical order after
 * the ellipsis (character order: upper case first, as numpy). Anything else (three or more operands, a label of the output in no operand, a
 * label with two different sizes, an output label twice) is an error naming the equation. */
#include "onnx_internal.h"

#include <stdio.h>
#include <string.h>

/* labels: 'a'-'z' -> 0-25, 'A'-'Z' -> 26-51, the ellipsis' dimensions 52.. (from the right) */
enum { EIN_ELL = 52, EIN_NLAB = 52 + IR_MAX_RANK };

typedef struct EinOp {
    ValueId v;
    Type t;
    int nl;
    int lab[IR_MAX_RANK];
} EinOp;

typedef struct Ein {
    OnnxImp *I;
    const char *eq;
    NodeId pend;      /* the last node built, not yet typed and named */
    EinOp *pend_op;   /* whose value it defines */
    int ntmp;
} Ein;

static bool
ein_error(Ein *E, const char *what)
{
    onnx_node_error(E->I, "Einsum equation '%s': %s", E->eq, what);
    return false;
}

/* Type and name the pending node (an intermediate value). */
static bool
ein_flush(Ein *E)
{
    if (!E->pend.id)
        return true;
    char suf[32];
    snprintf(suf, sizeof suf, "einsum%d", E->ntmp++);
    ValueId v = onnx_emit1(E->I, E->pend, onnx_tmp_name(E->I, suf), ET_NONE);
    E->pend = NNONE;
    if (!v.id)
        return false;
    E->pend_op->v = v;
    E->pend_op->t = ir_value(E->I->g, v)->type;
    return true;
}

/* A one-operand node on o (after flushing), pending; o's labels become lab[nl]. */
static bool
ein_step(Ein *E, EinOp *o, OpKind op, const char *attr, const int64_t *vals, int nv,
         const int *lab, int nl)
{
    if (!ein_flush(E))
        return false;
    NodeId n = onnx_mk(E->I, op, 1, &o->v, 1);
    if (attr)
        ir_set_attr_ints(E->I->g, n, attr, vals, (uint32_t)nv);
    E->pend = n;
    E->pend_op = o;
    int tmp[IR_MAX_RANK];
    memcpy(tmp, lab, (size_t)nl * sizeof(int));
    memcpy(o->lab, tmp, (size_t)nl * sizeof(int));
    o->nl = nl;
    return true;
}

/* Bring o's axes to the order of labels want[nw] (a permutation of o's labels). */
static bool
ein_order(Ein *E, EinOp *o, const int *want, int nw)
{
    int64_t perm[IR_MAX_RANK];
    bool ident = true, used[IR_MAX_RANK] = {0};
    for (int i = 0; i < nw; i++) {
        perm[i] = 0;
        for (int j = 0; j < o->nl; j++)
            if (o->lab[j] == want[i] && !used[j]) {
                perm[i] = j;
                used[j] = true;
                break;
            }
        ident &= perm[i] == i;
    }
    if (ident)
        return true;
    return ein_step(E, o, OP_TRANSPOSE, "perm", perm, nw, want, nw);
}

static bool
ein_reshape(Ein *E, EinOp *o, const int64_t *dims, int rank, const int *lab)
{
    bool same = rank == o->t.rank;
    for (int i = 0; same && i < rank; i++)
        same = dims[i] == o->t.dims[i];
    if (same) {
        memcpy(o->lab, lab, (size_t)rank * sizeof(int));
        return true;
    }
    return ein_step(E, o, OP_RESHAPE, "shape", dims, rank, lab, rank);
}

/* The dimension of label l in o (o->t must be current: flush first). */
static int64_t
ein_dim(const EinOp *o, int l)
{
    for (int i = 0; i < o->nl; i++)
        if (o->lab[i] == l)
            return o->t.dims[i];
    return 1;
}

/* Parse one term ("bhid", "...ij") against rank into labels; false on a bad term. */
static bool
ein_term(Ein *E, const char *s, size_t len, int rank, int *lab, int *nl, int *nell)
{
    int named = 0;
    bool ell = false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            if (ell || i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.')
                return ein_error(E, "'.' must come as one '...'");
            ell = true;
            i += 2;
        } else if ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')) {
            named++;
        } else {
            return ein_error(E, "labels must be letters");
        }
    }
    int ne = rank - named;
    if (ne < 0 || (!ell && ne != 0)) {
        char buf[96];
        snprintf(buf, sizeof buf, "a term names %d axes of an operand of rank %d", named, rank);
        return ein_error(E, buf);
    }
    *nell = ell ? ne : 0;
    *nl = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            for (int k = 0; k < ne; k++)
                lab[(*nl)++] = EIN_ELL + (ne - 1 - k);
            i += 2;
        } else {
            lab[(*nl)++] = s[i] >= 'a' ? s[i] - 'a' : 26 + s[i] - 'A';
        }
    }
    return true;
}

/* Diagonals of repeated labels, then sums of labels used nowhere else. */
static bool
ein_single(Ein *E, EinOp *o, const bool *elsewhere)
{
    for (int i = 0; i < o->nl; i++)
        for (int j = i + 1; j < o->nl; j++) {
            if (o->lab[i] != o->lab[j])
                continue;
            if (!ein_flush(E))
                return false;
            int64_t d = o->t.dims[i];
            if (o->t.dims[j] != d)
                return ein_error(E, "a repeated label has two sizes");
            int want[IR_MAX_RANK], nw = 0;
            for (int k = 0; k < o->nl; k++)
                if (k != i && k != j)
                    want[nw++] = o->lab[k];
            want[nw] = o->lab[i];
            want[nw + 1] = -1; /* the second copy */
            o->lab[j] = -1;
            if (!ein_order(E, o, want, nw + 2) || !ein_flush(E))
                return false;
            int64_t dims[IR_MAX_RANK];
            memcpy(dims, o->t.dims, sizeof dims);
            dims[nw] = d * d;
            if (!ein_reshape(E, o, dims, nw + 1, want) || !ein_flush(E))
                return false;
            int64_t sl[4] = {0, d * d, nw, d + 1};
            if (!ein_step(E, o, OP_SLICE, "starts", &sl[0], 1, want, nw + 1))
                return false;
            ir_set_attr_ints(E->I->g, E->pend, "ends", &sl[1], 1);
            ir_set_attr_ints(E->I->g, E->pend, "axes", &sl[2], 1);
            ir_set_attr_ints(E->I->g, E->pend, "steps", &sl[3], 1);
            return ein_single(E, o, elsewhere); /* labels moved: start again */
        }
    int64_t axes[IR_MAX_RANK];
    int na = 0, keep[IR_MAX_RANK], nk = 0;
    for (int i = 0; i < o->nl; i++) {
        if (elsewhere[o->lab[i]])
            keep[nk++] = o->lab[i];
        else
            axes[na++] = i;
    }
    if (!na)
        return true;
    if (!ein_step(E, o, OP_REDUCE_SUM, "axes", axes, na, keep, nk))
        return false;
    ir_set_attr_int(E->I->g, E->pend, "keepdims", 0);
    return true;
}

/* The two-operand contraction into r (labels out[no]). */
static bool
ein_pair(Ein *E, EinOp *a, EinOp *b, const int *out, int no, EinOp *r)
{
    bool in_a[EIN_NLAB] = {0}, in_b[EIN_NLAB] = {0}, in_o[EIN_NLAB] = {0};
    for (int i = 0; i < a->nl; i++)
        in_a[a->lab[i]] = true;
    for (int i = 0; i < b->nl; i++)
        in_b[b->lab[i]] = true;
    for (int i = 0; i < no; i++)
        in_o[out[i]] = true;
    if (!ein_flush(E))
        return false;
    int bt[IR_MAX_RANK], ka[IR_MAX_RANK], kb[IR_MAX_RANK], ct[IR_MAX_RANK];
    int nbt = 0, nka = 0, nkb = 0, nct = 0;
    int64_t M = 1, N = 1, K = 1, dims[IR_MAX_RANK];
    for (int i = 0; i < no; i++) /* batch and kept labels in the output's order */
        if (in_a[out[i]] && in_b[out[i]])
            bt[nbt++] = out[i];
        else if (in_a[out[i]])
            ka[nka++] = out[i];
        else
            kb[nkb++] = out[i];
    for (int i = 0; i < a->nl; i++)
        if (in_b[a->lab[i]] && !in_o[a->lab[i]])
            ct[nct++] = a->lab[i];
    for (int i = 0; i < a->nl; i++)
        if (in_b[a->lab[i]] && ein_dim(a, a->lab[i]) != ein_dim(b, a->lab[i]))
            return ein_error(E, "a label has different sizes in the two operands");
    int la[IR_MAX_RANK], lb[IR_MAX_RANK], n = 0;
    int64_t rd[IR_MAX_RANK], nr = 0; /* the result's dims: batch, keptA, keptB */
    for (int i = 0; i < nbt; i++) {
        la[n] = lb[n] = bt[i];
        rd[nr++] = dims[n++] = ein_dim(a, bt[i]);
    }
    for (int i = 0; i < nka; i++)
        rd[nr++] = ein_dim(a, ka[i]);
    for (int i = 0; i < nkb; i++)
        rd[nr++] = ein_dim(b, kb[i]);
    for (int i = 0; i < nka; i++)
        M *= ein_dim(a, la[n + i] = ka[i]);
    for (int i = 0; i < nct; i++) {
        K *= ein_dim(a, ct[i]);
        la[n + nka + i] = lb[n + i] = ct[i];
    }
    for (int i = 0; i < nkb; i++)
        N *= ein_dim(b, lb[n + nct + i] = kb[i]);
    int m2[2] = {-2, -3}, k2[2] = {-3, -4}; /* merged labels: M, K / K, N */
    int fa[IR_MAX_RANK], fb[IR_MAX_RANK];
    memcpy(fa, bt, (size_t)nbt * sizeof(int));
    memcpy(fb, bt, (size_t)nbt * sizeof(int));
    fa[nbt] = m2[0];
    fa[nbt + 1] = m2[1];
    fb[nbt] = k2[0];
    fb[nbt + 1] = k2[1];
    if (nbt + 2 > IR_MAX_RANK)
        return ein_error(E, "too many batch labels");
    dims[nbt] = M;
    dims[nbt + 1] = K;
    if (!ein_order(E, a, la, nbt + nka + nct) || !ein_flush(E) ||
        !ein_reshape(E, a, dims, nbt + 2, fa) || !ein_flush(E))
        return false;
    dims[nbt] = K;
    dims[nbt + 1] = N;
    if (!ein_order(E, b, lb, nbt + nct + nkb) || !ein_flush(E) ||
        !ein_reshape(E, b, dims, nbt + 2, fb) || !ein_flush(E))
        return false;
    ValueId ins[2] = {a->v, b->v};
    E->pend = onnx_mk(E->I, OP_MATMUL, 2, ins, 1);
    E->pend_op = r;
    r->nl = nbt + 2;
    memcpy(r->lab, bt, (size_t)nbt * sizeof(int));
    r->lab[nbt] = -5;
    r->lab[nbt + 1] = -6;
    dims[nbt] = M; /* the matmul's type, known without typing the pending node */
    dims[nbt + 1] = N;
    r->t = type_make(a->t.elem, nbt + 2, dims);
    int lr[IR_MAX_RANK];
    memcpy(lr, bt, (size_t)nbt * sizeof(int));
    memcpy(lr + nbt, ka, (size_t)nka * sizeof(int));
    memcpy(lr + nbt + nka, kb, (size_t)nkb * sizeof(int));
    return ein_reshape(E, r, rd, (int)nr, lr) && ein_order(E, r, out, no);
}

/* Split the equation into terms; false on a bad equation. */
static bool
ein_parse(Ein *E, char *eq, const char **term, size_t *tlen, int *nterm, const char **outs,
          size_t *olen)
{
    char *arrow = strstr(eq, "->");
    *outs = NULL;
    if (arrow) {
        *outs = arrow + 2;
        *olen = strlen(arrow + 2);
        *arrow = 0;
        if (strstr(*outs, "->"))
            return ein_error(E, "more than one '->'");
    }
    *nterm = 0;
    for (char *p = eq;;) {
        char *c = strchr(p, ',');
        if (*nterm >= 2)
            return ein_error(E, "qdqc imports Einsum of one or two operands");
        term[*nterm] = p;
        tlen[(*nterm)++] = c ? (size_t)(c - p) : strlen(p);
        if (!c)
            break;
        p = c + 1;
    }
    return true;
}

bool
onnx_op_einsum(OnnxImp *I)
{
    const char *eq0 = onnx_attr_s(I, "equation", NULL);
    Ein E = {.I = I, .eq = eq0 ? eq0 : ""};
    if (!eq0)
        return ein_error(&E, "attribute 'equation' is required");
    char eq[256];
    size_t k = 0;
    for (const char *p = eq0; *p && k + 1 < sizeof eq; p++)
        if (*p != ' ')
            eq[k++] = *p;
    eq[k] = 0;
    size_t nin = I->node->n_input;
    if (nin < 1 || nin > 2)
        return ein_error(&E, "qdqc imports Einsum of one or two operands");
    const char *term[2], *outs;
    size_t tlen[2], olen = 0;
    int nterm;
    if (!ein_parse(&E, eq, term, tlen, &nterm, &outs, &olen))
        return false;
    if ((size_t)nterm != nin)
        return ein_error(&E, "the number of terms differs from the number of inputs");
    EinOp op[2], r;
    int cnt[EIN_NLAB] = {0}, nell = 0;
    for (int i = 0; i < nterm; i++) {
        op[i].v = IN(I, (size_t)i);
        op[i].t = *TY(I, op[i].v);
        int ne;
        if (!ein_term(&E, term[i], tlen[i], op[i].t.rank, op[i].lab, &op[i].nl, &ne))
            return false;
        nell = ne > nell ? ne : nell;
        for (int j = 0; j < op[i].nl; j++)
            cnt[op[i].lab[j]]++;
        if (nin == 2 && op[i].t.elem != ET_F32 && op[i].t.elem != ET_F64)
            return ein_error(&E, "two-operand Einsum is imported for f32 and f64 operands only "
                                 "(the matmul it becomes)");
    }
    int out[IR_MAX_RANK + 1], no = 0;
    if (outs) {
        int ne;
        Type ot = type_make(ET_F32, 0, NULL);
        int named = 0;
        for (size_t i = 0; i < olen; i++)
            named += outs[i] != '.';
        ot.rank = (uint8_t)(named + (strstr(outs, "...") ? nell : 0));
        if (ot.rank > IR_MAX_RANK || !ein_term(&E, outs, olen, ot.rank, out, &no, &ne))
            return ot.rank > IR_MAX_RANK ? ein_error(&E, "output rank too large") : false;
    } else {
        for (int l = EIN_ELL + nell - 1; l >= EIN_ELL; l--)
            out[no++] = l;
        for (int c = 0; c < EIN_ELL; c++) { /* character order: 'A'-'Z', then 'a'-'z' */
            int l = c < 26 ? 26 + c : c - 26;
            if (cnt[l] == 1 && no < IR_MAX_RANK)
                out[no++] = l;
        }
    }
    bool seen[EIN_NLAB] = {0};
    for (int i = 0; i < no; i++) {
        if (seen[out[i]] || !cnt[out[i]])
            return ein_error(&E, seen[out[i]] ? "an output label is repeated"
                                              : "an output label is in no operand");
        seen[out[i]] = true;
    }
    for (int i = 0; i < nterm; i++) {
        bool elsewhere[EIN_NLAB];
        memcpy(elsewhere, seen, sizeof elsewhere);
        for (int j = 0; j < op[1 - i].nl && nterm == 2; j++)
            elsewhere[op[1 - i].lab[j]] = true;
        if (!ein_single(&E, &op[i], elsewhere))
            return false;
    }
    EinOp *res = nterm == 1 ? &op[0] : &r;
    if (nterm == 1 ? !ein_order(&E, res, out, no) : !ein_pair(&E, &op[0], &op[1], out, no, &r))
        return false;
    if (!E.pend.id || E.pend_op != res) { /* nothing left to compute: an identity */
        if (!ein_flush(&E))
            return false;
        E.pend = onnx_mk(I, OP_IDENTITY, 1, &res->v, 1);
    }
    return onnx_emit(I, E.pend, ET_NONE);
}
