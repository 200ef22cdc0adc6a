/* export.c: qdqc IR -> MLIR text (func + tosa, linalg/arith for quantize/dequantize).
 *
 * The graph's values keep their logical (NCHW) layout; ops whose tosa form is NHWC (conv,
 * pooling) are wrapped in tosa.transpose pairs, which MLIR's canonicalizer cancels. u8 values
 * travel as i8 shifted by -128 (tosa computes on signless i8), u16 as i16 shifted by -32768
 * and u4 as i4 shifted by -8: their zero points and clamp bounds shift with them, which leaves
 * every (x - zx) unchanged; at the function boundary tosa.rescale with
 * input_unsigned/output_unsigned converts from and to ui8/ui16 (u4 has no boundary form).
 * Every node is tried: one run reports each node without a mapping (nodes that only read the
 * results of such a node are skipped silently), and nothing is written.
 * The text is parsed and verified with the MLIR C API before it is returned, so a verifier
 * failure is reported as an internal error instead of producing invalid output.
 * Op lowerings are in export_ops.c, export_elem.c, export_float.c, export_fmath.c and
 * export_logic.c, shared helpers in export_util.c; docs/mlir.md lists the mapping. */
#include "export.h"

#include <mlir-c/Diagnostics.h>
#include <mlir-c/IR.h>
#include <mlir-c/RegisterEverything.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the function ---- */

static void
sym_name(StrBuf *b, const char *s)
{
    if (!s || !*s)
        s = "main";
    for (; *s; s++)
        sb_putc(b, (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                           (*s >= '0' && *s <= '9') || *s == '_' ? *s : '_');
}

/* The boundary type of a graph input/output: u8 is ui8 there, u16 ui16. */
static void
boundary_type(StrBuf *b, const Type *t)
{
    exp_ttype(b, t->rank, t->dims,
              t->elem == ET_U8 ? "ui8" : t->elem == ET_U16 ? "ui16" : exp_et(t->elem));
}

/* Unsigned boundary values are converted by tosa.rescale (input_unsigned/output_unsigned),
 * which takes 8- and 16-bit values only: a u4 graph input or output has no form. */
static bool
boundary_ok(Exp *x, const Type *t, const char *what, uint32_t i)
{
    if (!exp_et(t->elem))
        return exp_fail(x, NULL, "graph %s %u has element type %s", what, i, elem_name(t->elem));
    if (t->elem == ET_U4)
        return exp_fail(x, NULL, "graph %s %u has element type u4: unsigned values cross the "
                        "function boundary through tosa.rescale, which takes 8- and 16-bit "
                        "values only", what, i);
    return true;
}

static const QnFixed k_identity = {1 << 30, 30};

static bool
emit_func(Exp *x, StrBuf *out)
{
    Graph *g = x->g;
    StrBuf sig;
    sb_init(&sig);
    sb_puts(&sig, "func.func @");
    sym_name(&sig, g->name ? ir_str(g, g->name) : NULL);
    sb_putc(&sig, '(');
    for (uint32_t i = 0; i < g->inputs.len; i++) {
        ValueId v = g->inputs.data[i];
        const Type *t = &ir_value(g, v)->type;
        if (!boundary_ok(x, t, "input", i))
            break;
        uint32_t arg = ++x->next;
        sb_printf(&sig, "%s%%v%u: ", i ? ", " : "", arg);
        boundary_type(&sig, t);
        x->ssa[v.id] = arg;
        if (t->elem == ET_U8 || t->elem == ET_U16) {
            bool w = t->elem == ET_U16;
            uint32_t c = exp_line(x, "tensor.bitcast %%v%u : %s to %s", arg,
                                  exp_tt(x, 0, t->rank, t->dims, w ? "ui16" : "ui8"),
                                  EXP_TT(x, 1, t));
            x->ssa[v.id] = exp_rescale(x, c, t, exp_et(t->elem), exp_et(t->elem), 1,
                                       &k_identity, exp_shift(t->elem), 0, true, false);
        }
    }
    /* Every node is tried, so one run reports every node without a mapping: a node that
     * fails poisons its results, and nodes that read a poisoned value are skipped without a
     * diagnostic of their own (their cause is reported already). */
    bool failed = x->failed;
    bool *poison = xcalloc(g->values.len + 1, sizeof(bool));
    for (uint32_t i = 1; i < g->nodes.len && !failed; i++) {
        Node *n = ir_node(g, (NodeId){i});
        if (n->dead || n->op == OP_CONST)
            continue; /* constants are emitted where they are used */
        bool skip = false;
        for (uint32_t k = 0; k < n->nin && !skip; k++)
            skip = n->in[k].id && poison[n->in[k].id];
        if (!skip) {
            exp_node(x, n);
            skip = x->failed;
        }
        if (skip) {
            for (uint32_t k = 0; k < n->nout; k++)
                if (n->out[k].id)
                    poison[n->out[k].id] = true;
            x->nfailed_nodes++;
            x->failed = false;
        }
    }
    x->failed = failed || x->nfailed_nodes > 0;
    free(poison);
    sb_puts(&sig, ") -> (");
    StrBuf ret;
    sb_init(&ret);
    for (uint32_t i = 0; i < g->outputs.len && !x->failed; i++) {
        ValueId v = g->outputs.data[i];
        const Type *t = &ir_value(g, v)->type;
        if (!boundary_ok(x, t, "output", i))
            break;
        uint32_t id = exp_operand(x, v);
        if (!id)
            break;
        if (t->elem == ET_U8 || t->elem == ET_U16) {
            bool w = t->elem == ET_U16;
            id = exp_rescale(x, id, t, exp_et(t->elem), exp_et(t->elem), 1, &k_identity, 0,
                             exp_shift(t->elem), false, true);
            id = exp_line(x, "tensor.bitcast %%v%u : %s to %s", id, EXP_TT(x, 0, t),
                          exp_tt(x, 1, t->rank, t->dims, w ? "ui16" : "ui8"));
        }
        if (i)
            sb_puts(&sig, ", ");
        boundary_type(&sig, t);
        sb_printf(&ret, "%s%%v%u", i ? ", " : "", id);
    }
    sb_puts(&sig, ")");
    bool ok = !x->failed;
    if (ok) {
        sb_printf(out, "module {\n  %s {\n%s", sig.data, x->b.data ? x->b.data : "");
        sb_printf(out, "    return%s%s", g->outputs.len ? " " : "", ret.data ? ret.data : "");
        if (g->outputs.len) {
            sb_puts(out, " : ");
            for (uint32_t i = 0; i < g->outputs.len; i++) {
                if (i)
                    sb_puts(out, ", ");
                boundary_type(out, &ir_value(g, g->outputs.data[i])->type);
            }
        }
        sb_puts(out, "\n  }\n}\n");
    }
    sb_free(&sig);
    sb_free(&ret);
    return ok;
}

/* ---- verification through the MLIR C API ---- */

static void
str_cb(MlirStringRef s, void *user)
{
    sb_putn((StrBuf *)user, s.data, s.length);
}

static MlirLogicalResult
collect_diag(MlirDiagnostic d, void *user)
{
    StrBuf *b = user;
    if (mlirDiagnosticGetSeverity(d) != MlirDiagnosticError)
        return mlirLogicalResultSuccess();
    if (b->len)
        sb_puts(b, "; ");
    MlirLocation l = mlirDiagnosticGetLocation(d);
    if (mlirLocationIsAFileLineColRange(l))
        sb_printf(b, "line %d: ", mlirLocationFileLineColRangeGetStartLine(l));
    mlirDiagnosticPrint(d, str_cb, b);
    return mlirLogicalResultSuccess();
}

static bool
verify_text(Exp *x, const char *text, size_t len)
{
    MlirContext mc = mlirContextCreateWithThreading(false);
    MlirDialectRegistry reg = mlirDialectRegistryCreate();
    mlirRegisterAllDialects(reg);
    mlirContextAppendDialectRegistry(mc, reg);
    mlirDialectRegistryDestroy(reg);
    StrBuf errs;
    sb_init(&errs);
    mlirContextAttachDiagnosticHandler(mc, collect_diag, &errs, NULL);
    MlirModule mod = mlirModuleCreateParse(mc, (MlirStringRef){text, len});
    bool ok = !mlirModuleIsNull(mod) &&
              mlirOperationVerify(mlirModuleGetOperation(mod));
    if (!ok) {
        /* quote the line the diagnostic names, so a report of this bug shows the culprit */
        const char *ln = errs.data ? strstr(errs.data, "line ") : NULL, *p = text;
        long k = ln ? strtol(ln + 5, NULL, 10) : 0;
        if (k <= 0)
            p = NULL;
        for (long i = 1; p && i < k; i++) {
            const char *nl = memchr(p, '\n', len - (size_t)(p - text));
            p = nl ? nl + 1 : NULL;
        }
        const char *e = p ? memchr(p, '\n', len - (size_t)(p - text)) : NULL;
        while (p && (*p == ' ' || *p == '\t'))
            p++;
        int n = p ? (int)((e ? e : text + len) - p) : 0;
        exp_fail(x, NULL, "internal error: the exported module does not verify: %s%s%.*s%s",
                 errs.data ? errs.data : "(no diagnostic)", n > 0 ? " (at `" : "",
                 n > 160 ? 160 : n, p ? p : "", n > 0 ? "`)" : "");
    }
    if (!mlirModuleIsNull(mod))
        mlirModuleDestroy(mod);
    mlirContextDestroy(mc);
    sb_free(&errs);
    return ok;
}

char *
exp_mlir(Module *m)
{
    Exp x = {.g = &m->g};
    sb_init(&x.b);
    x.ssa = xcalloc(m->g.values.len + 1, sizeof *x.ssa);
    StrBuf out;
    sb_init(&out);
    char *text = NULL;
    if (ir_verify(&m->g) && emit_func(&x, &out) && verify_text(&x, out.data, out.len))
        text = sb_take(&out);
    sb_free(&out);
    sb_free(&x.b);
    free(x.ssa);
    return text;
}
