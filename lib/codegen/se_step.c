/* se_step.c: the function of a squeeze-excitation step (plan.h CgSe, found by plan/se.c).
 *
 * Parameters: the values the group reads from outside (cg_se_inputs: x, the weights it reads
 * at run time), the results of its last node, scratch, pf, pf_ctx. Each member is emitted by
 * its own emitter (lower.c's table) in run order into this one function, its small result at
 * its offset in the scratch; the float scale is the float chain dequantize(x) -> mul -> quantize
 * with the factor read per plane from the scratch (lower/float_chain.c). */
#include "codegen/se_step.h"

#include "codegen/lower/lower.h"
#include "codegen/target/module.h"

#include <llvm-c/Core.h>

#include <stdio.h>
#include <string.h>

typedef struct SeFn {
    Kb *k;
    const CgSe *e;
    LLVMValueRef fn, scratch;
    ValueId v[CG_SE_MAX * 4];
    uint32_t nv;
} SeFn;

/* the pointer of value x inside the step: a member's result in the scratch, or a parameter */
static LLVMValueRef
se_ptr(SeFn *f, ValueId x)
{
    Kb *k = f->k;
    if (!x.id)
        return NULL;
    NodeId d = ir_value(k->g, x)->def;
    for (uint32_t j = 0; d.id && j + 1 < f->e->n; j++)
        if (f->e->node[j] == d.id)
            return cg_gep(k, f->scratch, cg_i64(k, f->e->val_off[j]));
    for (uint32_t j = 0; j < f->nv; j++)
        if (f->v[j].id == x.id)
            return LLVMGetParam(f->fn, j);
    return LLVMConstPointerNull(k->ptr);
}

/* member i of the group; the last writes the step's results */
static bool
se_member(SeFn *f, uint32_t i, Node *on)
{
    Kb *k = f->k;
    Graph *g = k->g;
    const CgSe *e = f->e;
    Node *m = ir_node(g, (NodeId){e->node[i]});
    bool last = i + 1 == e->n;
    CgNodeArgs a;
    memset(&a, 0, sizeof a);
    a.pf = LLVMGetParam(f->fn, f->nv + on->nout + 1);
    a.pf_ctx = LLVMGetParam(f->fn, f->nv + on->nout + 2);
    for (uint32_t r = 0; r < on->nout && last; r++)
        a.out[r] = LLVMGetParam(f->fn, f->nv + r);
    if (last && e->q) { /* dequantize(x) -> mul(s, .) -> quantize, s per plane */
        Node *dq = ir_node(g, (NodeId){e->dq});
        a.in[0] = se_ptr(f, dq->in[0]);
        a.chain[0] = m;
        a.chain[1] = on;
        a.nchain = 2;
        a.chan = se_ptr(f, m->in[0].id == dq->out[0].id ? m->in[1] : m->in[0]);
        return cg_emit_float_chain(k, dq, &a);
    }
    for (uint32_t j = 0; j < m->nin; j++)
        a.in[j] = se_ptr(f, m->in[j]);
    if (!last)
        a.out[0] = cg_gep(k, f->scratch, cg_i64(k, e->val_off[i]));
    a.scratch = e->scr_off[i] >= 0 ? cg_gep(k, f->scratch, cg_i64(k, e->scr_off[i]))
                                   : LLVMConstPointerNull(k->ptr);
    return cg_emit_node(k, m, &a);
}

LLVMValueRef
cg_emit_se_step(Kb *k, const CgPlan *p, uint32_t s, bool *ok)
{
    Graph *g = k->g;
    SeFn f = {k, &p->se[p->se_of[p->steps[s]] - 1], NULL, NULL, {{0}}, 0};
    bool stat[CG_SE_MAX * 4];
    f.nv = cg_se_inputs(k, f.e, f.v, stat);
    Node *on = cg_plan_step_out(p, g, s);
    unsigned np = f.nv + on->nout + 3;
    if (np > 64) {
        *ok = cg_fail(k, on, "a squeeze-excitation step with %u operands", np);
        return NULL;
    }
    char name[96];
    snprintf(name, sizeof name, "%s.n%u.se", k->prefix, s);
    f.fn = cg_step_fn(k, name, np, false);
    f.scratch = LLVMGetParam(f.fn, f.nv + on->nout);
    *ok = true;
    for (uint32_t i = 0; *ok && i < f.e->n; i++)
        *ok = se_member(&f, i, on);
    if (*ok)
        LLVMBuildRetVoid(k->b);
    return f.fn;
}
