/* merge.c: one body for the functions of a module that differ only in which constants they read.
 *
 * The code generator emits one function per step and per parallel region, with the step's
 * weights and tables as private constant globals. A network repeats its blocks (ShuffleNetV2's
 * units, MobileNetV2's inverted residuals), so many of these functions are the same code reading
 * other constants, and LLVM's pipeline, which takes most of the compile time, optimises and
 * selects each copy anew. cg_module_merge runs before that pipeline:
 *
 * 1. Print the module once (large constant initialisers swapped out for the printout) and cut
 *    it into the text of each internal function.
 * 2. Canonicalise each text: the function's own name dropped, every private constant global
 *    numbered by first use (@G0, @G1, ...), every metadata reference replaced by the node's
 *    text (self references as !S), so that two loops' distinct ids do not differ.
 * 3. Functions with equal canonical text are one group: the first one's body moves into a new
 *    function NAME.merged (noinline) with one more parameter, a table of the globals' addresses,
 *    from which its entry block loads them; each member of the group becomes one tail call of
 *    NAME.merged with its own table (a private [n x ptr] constant NAME.tbl).
 *
 * The comparison is the whole printed IR of the functions (instructions, types, constants,
 * attributes, calling convention, loop hints), so a group is the same code up to the globals'
 * addresses, and the merged body reads the member's own globals: results cannot change. Loads
 * from the tables replace addresses LLVM knew, so it can no longer fold a constant's contents
 * into the code of a merged body; emitters keep what must stay a compile-time constant in the
 * instructions. A global used in a way the rewrite does not handle (inside a constant other
 * than a GEP chain) keeps its group apart. Functions below MERGE_MIN_LINES lines stay as they
 * are (a call would cost more than it saves). */
#include "codegen/target/module.h"

#include "support/support.h"

#include <llvm-c/Core.h>

#include <stdlib.h>
#include <string.h>

enum { MERGE_MIN_LINES = 24, MERGE_MAX_GLOBALS = 64, MERGE_SWAP_BYTES = 256 };

typedef struct MergeFn {
    LLVMValueRef fn;
    uint32_t key;         /* interned canonical text; 0: not merged */
    uint32_t g0, ng;      /* its globals: Merge.globals[g0, g0 + ng), by first use */
    uint32_t ord;         /* position in the module */
} MergeFn;

typedef struct Merge {
    LLVMModuleRef mod;
    LLVMContextRef c;
    LLVMTypeRef ptr;
    const char *text;
    Interner gnames;               /* names of the private constant globals */
    const char **md;               /* metadata node N: its text after "!N = ", to the newline */
    size_t *mdlen;
    uint32_t nmd;
    VEC(MergeFn) fns;
    VEC(LLVMValueRef) globals;
    Interner keys;
} Merge;

static bool
is_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '$' || c == '-';
}

static bool
is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* The globals whose addresses a merged body takes as arguments: private constants. */
static void
collect_globals(Merge *m)
{
    for (LLVMValueRef g = LLVMGetFirstGlobal(m->mod); g; g = LLVMGetNextGlobal(g)) {
        size_t n = 0;
        const char *name = LLVMGetValueName2(g, &n);
        if (n && LLVMIsGlobalConstant(g) && LLVMGetLinkage(g) == LLVMPrivateLinkage)
            intern_n(&m->gnames, name, n);
    }
}

/* Metadata definitions "!N = ..." at the end of the module text. */
static void
collect_metadata(Merge *m)
{
    for (const char *p = m->text; (p = strstr(p, "\n!")) != NULL;) {
        p += 2;
        if (!is_digit(*p))
            continue;
        uint32_t n = (uint32_t)strtoul(p, (char **)&p, 10);
        if (strncmp(p, " = ", 3) != 0 || n > (1u << 24))
            continue;
        p += 3;
        const char *e = strchr(p, '\n');
        if (!e)
            e = p + strlen(p);
        if (n >= m->nmd) {
            uint32_t nn = n + 64;
            m->md = xrealloc(m->md, nn * sizeof *m->md);
            m->mdlen = xrealloc(m->mdlen, nn * sizeof *m->mdlen);
            for (uint32_t i = m->nmd; i < nn; i++)
                m->md[i] = NULL;
            m->nmd = nn;
        }
        m->md[n] = p;
        m->mdlen[n] = (size_t)(e - p);
    }
}

/* Metadata node n's text, its self references as !S; false when it refers to another distinct
 * node (whose id would then decide the comparison) or is unknown. */
static bool
put_metadata(Merge *m, StrBuf *b, uint32_t n)
{
    if (n >= m->nmd || !m->md[n])
        return false;
    const char *p = m->md[n], *e = p + m->mdlen[n];
    sb_puts(b, "!{");
    while (p < e) {
        if (*p == '!' && p + 1 < e && is_digit(p[1])) {
            char *q;
            uint32_t r = (uint32_t)strtoul(p + 1, &q, 10);
            if (r == n)
                sb_puts(b, "!S");
            else if (r >= m->nmd || !m->md[r] || strncmp(m->md[r], "distinct", 8) == 0)
                return false;
            else
                sb_putn(b, p, (size_t)(q - p)); /* uniqued: same id, same content */
            p = q;
        } else {
            sb_putc(b, *p++);
        }
    }
    sb_putc(b, '}');
    return true;
}

/* The canonical text of the function text [p, e) (its header's name already skipped) into b;
 * its private constant globals appended to m->globals. False: not mergeable. */
static bool
canonical(Merge *m, const char *p, const char *e, StrBuf *b, MergeFn *f)
{
    f->g0 = m->globals.len;
    f->ng = 0;
    while (p < e) {
        char c = *p;
        if (c == '"') { /* strings (asm, attributes) as they are */
            const char *q = memchr(p + 1, '"', (size_t)(e - p - 1));
            if (!q)
                return false;
            sb_putn(b, p, (size_t)(q + 1 - p));
            p = q + 1;
        } else if (c == '@') {
            if (p + 1 < e && p[1] == '"')
                return false;
            const char *q = p + 1;
            while (q < e && is_ident(*q))
                q++;
            char name[256];
            size_t n = (size_t)(q - p - 1);
            if (n == 0 || n >= sizeof name)
                return false;
            memcpy(name, p + 1, n);
            name[n] = 0;
            if (intern_lookup(&m->gnames, name)) {
                LLVMValueRef g = LLVMGetNamedGlobal(m->mod, name);
                uint32_t i = 0;
                while (i < f->ng && m->globals.data[f->g0 + i] != g)
                    i++;
                if (i == f->ng) {
                    if (f->ng == MERGE_MAX_GLOBALS)
                        return false;
                    vec_push(&m->globals, g);
                    f->ng++;
                }
                sb_printf(b, "@G%u", i);
            } else {
                sb_putn(b, p, (size_t)(q - p));
            }
            p = q;
        } else if (c == '!' && p + 1 < e && is_digit(p[1])) {
            char *q;
            uint32_t r = (uint32_t)strtoul(p + 1, &q, 10);
            if (!put_metadata(m, b, r))
                return false;
            p = q;
        } else {
            sb_putc(b, c);
            p++;
        }
    }
    return true;
}

/* Each internal function's canonical key (0 when it stays as it is). */
static void
canonicalise(Merge *m)
{
    StrBuf b;
    sb_init(&b);
    for (const char *p = m->text; (p = strstr(p, "\ndefine ")) != NULL;) {
        p++;
        const char *eol = strchr(p, '\n');
        const char *end = eol ? strstr(eol, "\n}\n") : NULL;
        const char *at = eol ? memchr(p, '@', (size_t)(eol - p)) : NULL;
        if (!end || !at)
            break;
        const char *nm = at + 1, *ne = nm;
        while (ne < eol && is_ident(*ne))
            ne++;
        MergeFn f = {0};
        char name[256];
        size_t n = (size_t)(ne - nm);
        int lines = 0;
        for (const char *q = eol; q && q < end && lines < MERGE_MIN_LINES; q = strchr(q + 1, '\n'))
            lines++;
        if (n && n < sizeof name && *ne == '(' && lines >= MERGE_MIN_LINES) {
            memcpy(name, nm, n);
            name[n] = 0;
            f.fn = LLVMGetNamedFunction(m->mod, name);
        }
        if (f.fn && LLVMGetLinkage(f.fn) == LLVMInternalLinkage) {
            uint32_t glen = m->globals.len;
            sb_putn(&b, p, (size_t)(at - p));
            if (canonical(m, ne, end, &b, &f))
                f.key = intern_n(&m->keys, b.data, b.len);
            else
                m->globals.len = glen;
            b.len = 0;
            f.ord = m->fns.len;
            vec_push(&m->fns, f);
        }
        p = end + 2;
    }
    sb_free(&b);
}

/* ---- the rewrite of one group ---- */

typedef struct Group {
    MergeFn *f0;
    LLVMValueRef *g;     /* f0's globals */
    LLVMValueRef loads[MERGE_MAX_GLOBALS];
} Group;

static int
group_index(const Group *gr, LLVMValueRef v)
{
    for (uint32_t i = 0; i < gr->f0->ng; i++)
        if (gr->g[i] == v)
            return (int)i;
    return -1;
}

/* Does constant v refer to one of the group's globals (through constant operands)? */
static bool
refers(const Group *gr, LLVMValueRef v, int depth)
{
    if (group_index(gr, v) >= 0)
        return true;
    if (!LLVMIsAConstant(v) || LLVMIsAGlobalValue(v) || depth > 8)
        return depth > 8;
    int n = LLVMGetNumOperands(v);
    for (int i = 0; i < n; i++)
        if (refers(gr, LLVMGetOperand(v, i), depth + 1))
            return true;
    return false;
}

/* An operand the rewrite can handle: no group global, the global itself, or a GEP constant
 * expression on one whose indices are free of them. */
static bool
operand_ok(const Group *gr, LLVMValueRef v, int depth)
{
    if (group_index(gr, v) >= 0 || !refers(gr, v, 0))
        return true;
    if (depth > 8 || !LLVMIsAConstantExpr(v) || LLVMGetConstOpcode(v) != LLVMGetElementPtr)
        return false;
    int n = LLVMGetNumOperands(v);
    for (int i = 1; i < n; i++)
        if (refers(gr, LLVMGetOperand(v, i), 0))
            return false;
    return operand_ok(gr, LLVMGetOperand(v, 0), depth + 1);
}

static bool
body_ok(const Group *gr, LLVMValueRef fn)
{
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
        for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
            int n = LLVMGetNumOperands(i);
            for (int k = 0; k < n; k++)
                if (!operand_ok(gr, LLVMGetOperand(i, k), 0))
                    return false;
        }
    return true;
}

/* v with the group's globals replaced by the loaded addresses (GEP chains become
 * instructions at the builder's position). */
static LLVMValueRef
rebuild(Group *gr, LLVMBuilderRef b, LLVMValueRef v)
{
    int gi = group_index(gr, v);
    if (gi >= 0)
        return gr->loads[gi];
    if (!refers(gr, v, 0))
        return v;
    LLVMValueRef base = rebuild(gr, b, LLVMGetOperand(v, 0));
    int n = LLVMGetNumOperands(v);
    LLVMValueRef idx[16];
    if (n - 1 > 16)
        return v; /* operand_ok limits the depth, not the index count: never reached for ours */
    for (int i = 1; i < n; i++)
        idx[i - 1] = LLVMGetOperand(v, i);
    return LLVMBuildGEPWithNoWrapFlags(b, LLVMGetGEPSourceElementType(v), base, idx,
                                       (unsigned)(n - 1), "", LLVMGEPGetNoWrapFlags(v));
}

static void
copy_attributes(LLVMValueRef from, LLVMValueRef to, unsigned nparams)
{
    for (long idx = -1; idx <= (long)nparams; idx++) {
        LLVMAttributeIndex ai = idx < 0 ? (LLVMAttributeIndex)LLVMAttributeFunctionIndex : (LLVMAttributeIndex)idx;
        unsigned n = LLVMGetAttributeCountAtIndex(from, ai);
        if (!n)
            continue;
        LLVMAttributeRef *a = xmalloc(n * sizeof *a);
        LLVMGetAttributesAtIndex(from, ai, a);
        for (unsigned i = 0; i < n; i++)
            LLVMAddAttributeAtIndex(to, ai, a[i]);
        free(a);
    }
}

/* The merged body: f0's blocks moved into NAME.merged(params..., ptr table). */
static LLVMValueRef
make_body(Merge *m, Group *gr)
{
    LLVMValueRef f0 = gr->f0->fn;
    LLVMTypeRef ft = LLVMGlobalGetValueType(f0);
    unsigned np = LLVMCountParamTypes(ft), ng = gr->f0->ng;
    LLVMTypeRef *pt = xmalloc((np + 1) * sizeof *pt);
    LLVMGetParamTypes(ft, pt);
    pt[np] = m->ptr;
    size_t nlen;
    const char *name = LLVMGetValueName2(f0, &nlen);
    char *bname = xmalloc(nlen + 8);
    memcpy(bname, name, nlen);
    memcpy(bname + nlen, ".merged", 8);
    LLVMValueRef body = LLVMAddFunction(m->mod, bname, LLVMFunctionType(LLVMGetReturnType(ft), pt, np + (ng ? 1 : 0), 0));
    free(bname);
    free(pt);
    LLVMSetLinkage(body, LLVMInternalLinkage);
    LLVMSetUnnamedAddress(body, LLVMGlobalUnnamedAddr);
    LLVMSetFunctionCallConv(body, LLVMGetFunctionCallConv(f0));
    copy_attributes(f0, body, np);
    LLVMAddAttributeAtIndex(body, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(m->c, LLVMGetEnumAttributeKindForName("noinline", 8), 0));
    LLVMBasicBlockRef tmp = LLVMAppendBasicBlockInContext(m->c, body, "tmp"), last = tmp;
    while (LLVMGetFirstBasicBlock(f0)) {
        LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f0);
        LLVMMoveBasicBlockAfter(bb, last);
        last = bb;
    }
    LLVMDeleteBasicBlock(tmp);
    for (unsigned i = 0; i < np; i++)
        LLVMReplaceAllUsesWith(LLVMGetParam(f0, i), LLVMGetParam(body, i));
    return body;
}

/* In the merged body: load the table's addresses at entry, use them for the globals. */
static void
rewrite_uses(Merge *m, Group *gr, LLVMValueRef body, LLVMBuilderRef b)
{
    unsigned ng = gr->f0->ng;
    if (!ng)
        return;
    LLVMValueRef table = LLVMGetParam(body, LLVMCountParams(body) - 1);
    LLVMBasicBlockRef entry = LLVMGetFirstBasicBlock(body);
    LLVMValueRef first = LLVMGetFirstInstruction(entry);
    for (unsigned j = 0; j < ng; j++) {
        LLVMPositionBuilderBefore(b, first);
        LLVMValueRef idx = LLVMConstInt(LLVMInt64TypeInContext(m->c), j, 0);
        LLVMValueRef ld = LLVMBuildLoad2(b, m->ptr, LLVMBuildGEP2(b, m->ptr, table, &idx, 1, ""), "");
        LLVMSetAlignment(ld, 8);
        gr->loads[j] = ld;
    }
    for (LLVMBasicBlockRef bb = entry; bb; bb = LLVMGetNextBasicBlock(bb))
        for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
            bool phi = LLVMIsAPHINode(i) != NULL;
            int n = LLVMGetNumOperands(i);
            for (int k = 0; k < n; k++) {
                LLVMValueRef v = LLVMGetOperand(i, k);
                if (!refers(gr, v, 0))
                    continue;
                LLVMPositionBuilderBefore(b, phi ? LLVMGetBasicBlockTerminator(LLVMGetIncomingBlock(i, (unsigned)k)) : i);
                LLVMSetOperand(i, (unsigned)k, rebuild(gr, b, v));
            }
        }
}

/* Member f's body: one (tail) call of the merged body with f's table. */
static void
emit_wrapper(Merge *m, const MergeFn *f, LLVMValueRef body, LLVMBuilderRef b)
{
    unsigned np = LLVMCountParams(f->fn);
    LLVMValueRef *args = xmalloc((np + 1) * sizeof *args);
    for (unsigned i = 0; i < np; i++)
        args[i] = LLVMGetParam(f->fn, i);
    if (f->ng) {
        LLVMValueRef init = LLVMConstArray2(m->ptr, &m->globals.data[f->g0], f->ng);
        size_t nlen;
        const char *name = LLVMGetValueName2(f->fn, &nlen);
        char *tname = xmalloc(nlen + 5);
        memcpy(tname, name, nlen);
        memcpy(tname + nlen, ".tbl", 5);
        LLVMValueRef tab = LLVMAddGlobal(m->mod, LLVMTypeOf(init), tname);
        free(tname);
        LLVMSetInitializer(tab, init);
        LLVMSetGlobalConstant(tab, 1);
        LLVMSetLinkage(tab, LLVMPrivateLinkage);
        LLVMSetUnnamedAddress(tab, LLVMGlobalUnnamedAddr);
        LLVMSetAlignment(tab, 8);
        args[np++] = tab;
    }
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(m->c, f->fn, "entry"));
    LLVMValueRef call = LLVMBuildCall2(b, LLVMGlobalGetValueType(body), body, args, np, "");
    free(args);
    LLVMSetInstructionCallConv(call, LLVMGetFunctionCallConv(body));
    LLVMSetTailCall(call, 1);
    if (LLVMGetTypeKind(LLVMGetReturnType(LLVMGlobalGetValueType(body))) == LLVMVoidTypeKind)
        LLVMBuildRetVoid(b);
    else
        LLVMBuildRet(b, call);
}

static int
by_key(const void *a, const void *b)
{
    const MergeFn *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/* Swap the initialisers of large globals for zeros while the module is printed (their bytes
 * never enter the comparison, only the globals' names), and back. */
static void
swap_initializers(LLVMModuleRef mod, LLVMValueRef *saved, bool restore)
{
    size_t i = 0;
    for (LLVMValueRef g = LLVMGetFirstGlobal(mod); g; g = LLVMGetNextGlobal(g)) {
        LLVMValueRef init = restore ? saved[i] : LLVMGetInitializer(g);
        if (!restore)
            saved[i] = init;
        i++;
        if (!init)
            continue;
        LLVMTypeRef t = LLVMTypeOf(init);
        if (restore)
            LLVMSetInitializer(g, init);
        else if (LLVMGetTypeKind(t) == LLVMArrayTypeKind && LLVMGetArrayLength2(t) > MERGE_SWAP_BYTES)
            LLVMSetInitializer(g, LLVMConstNull(t));
    }
}

static char *
print_module(LLVMModuleRef mod)
{
    size_t n = 0;
    for (LLVMValueRef g = LLVMGetFirstGlobal(mod); g; g = LLVMGetNextGlobal(g))
        n++;
    LLVMValueRef *saved = xmalloc((n ? n : 1) * sizeof *saved);
    swap_initializers(mod, saved, false);
    char *s = LLVMPrintModuleToString(mod);
    swap_initializers(mod, saved, true);
    free(saved);
    return s;
}

/* Merge the groups of m->fns (sorted by key). */
static unsigned
merge_groups(Merge *m)
{
    unsigned merged = 0;
    LLVMBuilderRef b = LLVMCreateBuilderInContext(m->c);
    for (uint32_t i = 0; i < m->fns.len;) {
        uint32_t j = i + 1;
        while (j < m->fns.len && m->fns.data[j].key == m->fns.data[i].key)
            j++;
        MergeFn *f0 = &m->fns.data[i];
        Group gr = {f0, &m->globals.data[f0->g0], {0}};
        if (f0->key && j - i >= 2 && body_ok(&gr, f0->fn)) {
            LLVMValueRef body = make_body(m, &gr);
            rewrite_uses(m, &gr, body, b);
            for (uint32_t k = i; k < j; k++) {
                if (k != i) { /* its own body is replaced by the call */
                    LLVMValueRef fn = m->fns.data[k].fn;
                    while (LLVMGetFirstBasicBlock(fn))
                        LLVMDeleteBasicBlock(LLVMGetFirstBasicBlock(fn));
                }
                emit_wrapper(m, &m->fns.data[k], body, b);
            }
            merged += j - i;
        }
        i = j;
    }
    LLVMDisposeBuilder(b);
    return merged;
}

unsigned
cg_module_merge(LLVMModuleRef mod)
{
    Merge m;
    memset(&m, 0, sizeof m);
    m.mod = mod;
    m.c = LLVMGetModuleContext(mod);
    m.ptr = LLVMPointerTypeInContext(m.c, 0);
    intern_init(&m.gnames);
    intern_init(&m.keys);
    collect_globals(&m);
    char *text = print_module(mod);
    m.text = text;
    collect_metadata(&m);
    canonicalise(&m);
    if (m.fns.len > 1) /* qsort's base must not be null, even for 0 elements */
        qsort(m.fns.data, m.fns.len, sizeof *m.fns.data, by_key);
    unsigned merged = merge_groups(&m);
    LLVMDisposeMessage(text);
    intern_free(&m.gnames);
    intern_free(&m.keys);
    free(m.md);
    free(m.mdlen);
    vec_free(&m.fns);
    vec_free(&m.globals);
    return merged;
}
