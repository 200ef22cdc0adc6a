/* test_merge.c: cg_module_merge (lib/codegen/target/merge.c), functions that differ only in the
 * private constants they read get one body.
 *
 * A module in LLVM IR text holds pairs of internal functions: equal up to their globals (used
 * directly, through GEP constant expressions, in a PHI, with loop metadata: merged), equal with
 * no globals (merged, no table), equal but short (kept), differing in one constant or in their
 * loop hints (kept), and equal but reading a global inside a ptrtoint constant (kept: the rewrite
 * handles GEP chains only). The test checks which functions became calls of a `.merged` body,
 * that the module verifies, and that every function returns the same value as in the unmerged
 * module, both JIT-compiled after LLVM's O2 pipeline.
 *
 * Output ends with "N passed, M failed"; exit status non-zero on any failure.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/IRReader.h>

#include "codegen/target/module.h"
#include "codegen/target/target.h"

static int passed, failed;

static void
check(bool ok, const char *what)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        printf("FAIL: %s\n", what);
    }
}

/* A loop over 8 elements of table @A (direct GEPs), two loads through constant GEPs of @B (one
 * of them a PHI operand), arithmetic with %n; LOOPMD is the loop's hint, K a constant. */
#define BODY(NAME, A, B, K, LOOPMD)                                                             \
    "define internal i32 @" NAME "(i32 %n) noinline {\n"                                        \
    "entry:\n"                                                                                   \
    "  %c0 = icmp sgt i32 %n, 0\n"                                                              \
    "  br i1 %c0, label %loop, label %done\n"                                                   \
    "loop:\n"                                                                                    \
    "  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]\n"                                             \
    "  %acc = phi i32 [ 0, %entry ], [ %acc2, %loop ]\n"                                         \
    "  %p = getelementptr inbounds i32, ptr " A ", i64 %i\n"                                     \
    "  %v = load i32, ptr %p, align 4\n"                                                        \
    "  %m = mul i32 %v, %n\n"                                                                    \
    "  %x = xor i32 %m, " K "\n"                                                                 \
    "  %acc1 = add i32 %acc, %x\n"                                                               \
    "  %sh = shl i32 %acc1, 1\n"                                                                 \
    "  %acc2 = sub i32 %sh, %acc\n"                                                              \
    "  %i1 = add i64 %i, 1\n"                                                                    \
    "  %c = icmp slt i64 %i1, 8\n"                                                              \
    "  br i1 %c, label %loop, label %done, !llvm.loop " LOOPMD "\n"                              \
    "done:\n"                                                                                    \
    "  %q = phi ptr [ getelementptr inbounds (i8, ptr " B ", i64 4), %loop ],"                   \
    " [ getelementptr inbounds (i8, ptr " B ", i64 8), %entry ]\n"                               \
    "  %r = phi i32 [ %acc2, %loop ], [ 7, %entry ]\n"                                           \
    "  %w = load i32, ptr %q, align 4\n"                                                        \
    "  %w2 = load i32, ptr getelementptr inbounds (i8, ptr " B ", i64 12), align 4\n"            \
    "  %w3 = load i32, ptr " B ", align 4\n"                                                    \
    "  %s1 = add i32 %r, %w\n"                                                                   \
    "  %s2 = mul i32 %s1, %w2\n"                                                                 \
    "  %s3 = add i32 %s2, %w3\n"                                                                 \
    "  %s4 = xor i32 %s3, %n\n"                                                                  \
    "  ret i32 %s4\n"                                                                            \
    "}\n"

/* The same without globals (the table becomes arguments of nothing). */
#define PURE(NAME)                                                                              \
    "define internal i32 @" NAME "(i32 %n) noinline {\n"                                        \
    "entry:\n"                                                                                   \
    "  br label %loop\n"                                                                         \
    "loop:\n"                                                                                    \
    "  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]\n"                                             \
    "  %acc = phi i32 [ 1, %entry ], [ %acc3, %loop ]\n"                                         \
    "  %a = mul i32 %acc, 31\n"                                                                  \
    "  %b = add i32 %a, %i\n"                                                                    \
    "  %c = xor i32 %b, %n\n"                                                                    \
    "  %d = lshr i32 %c, 3\n"                                                                    \
    "  %e = add i32 %c, %d\n"                                                                    \
    "  %f = mul i32 %e, 7\n"                                                                     \
    "  %g = sub i32 %f, %acc\n"                                                                  \
    "  %h = and i32 %g, 1048575\n"                                                               \
    "  %j = or i32 %h, 5\n"                                                                      \
    "  %k = add i32 %j, %b\n"                                                                    \
    "  %l = mul i32 %k, 3\n"                                                                     \
    "  %acc1 = add i32 %l, %e\n"                                                                 \
    "  %acc2 = xor i32 %acc1, %g\n"                                                              \
    "  %acc3 = add i32 %acc2, 1\n"                                                               \
    "  %i1 = add i32 %i, 1\n"                                                                    \
    "  %cc = icmp slt i32 %i1, %n\n"                                                             \
    "  br i1 %cc, label %loop, label %done\n"                                                    \
    "done:\n"                                                                                    \
    "  ret i32 %acc3\n"                                                                          \
    "}\n"

/* Short functions (below MERGE_MIN_LINES): equal, but kept. */
#define SHORT(NAME, A)                                                                          \
    "define internal i32 @" NAME "(i32 %n) noinline {\n"                                        \
    "  %v = load i32, ptr " A ", align 4\n"                                                     \
    "  %r = add i32 %v, %n\n"                                                                    \
    "  ret i32 %r\n"                                                                             \
    "}\n"

/* Equal up to its global, which it reads as an integer through ptrtoint: kept. */
#define P2I(NAME, A)                                                                            \
    "define internal i64 @" NAME "(i64 %n) noinline {\n"                                        \
    "entry:\n"                                                                                   \
    "  br label %loop\n"                                                                         \
    "loop:\n"                                                                                    \
    "  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]\n"                                             \
    "  %acc = phi i64 [ 0, %entry ], [ %acc2, %loop ]\n"                                         \
    "  %a = add i64 %acc, ptrtoint (ptr " A " to i64)\n"                                         \
    "  %b = sub i64 %a, ptrtoint (ptr " A " to i64)\n"                                           \
    "  %c = add i64 %b, %i\n"                                                                    \
    "  %d = mul i64 %c, 3\n"                                                                     \
    "  %e = xor i64 %d, %n\n"                                                                    \
    "  %f = add i64 %e, 11\n"                                                                    \
    "  %g = lshr i64 %f, 1\n"                                                                    \
    "  %h = add i64 %g, %c\n"                                                                    \
    "  %j = and i64 %h, 65535\n"                                                                 \
    "  %k = add i64 %j, %i\n"                                                                    \
    "  %l = mul i64 %k, 5\n"                                                                     \
    "  %acc1 = add i64 %l, %acc\n"                                                               \
    "  %acc2 = and i64 %acc1, 4294967295\n"                                                      \
    "  %i1 = add i64 %i, 1\n"                                                                    \
    "  %cc = icmp slt i64 %i1, 9\n"                                                              \
    "  br i1 %cc, label %loop, label %done\n"                                                    \
    "done:\n"                                                                                    \
    "  %r = load i8, ptr " A ", align 1\n"                                                      \
    "  %rz = zext i8 %r to i64\n"                                                                \
    "  %out = add i64 %acc2, %rz\n"                                                              \
    "  ret i64 %out\n"                                                                           \
    "}\n"

#define CALLER(NAME, T)                                                                         \
    "define " T " @call_" NAME "(" T " %n) {\n"                                                 \
    "  %r = call " T " @" NAME "(" T " %n)\n"                                                   \
    "  ret " T " %r\n"                                                                           \
    "}\n"

#define TAB(NAME, A, B, C, D, E, F, G, H)                                                       \
    "@" NAME " = private unnamed_addr constant [8 x i32] [i32 " #A ", i32 " #B ", i32 " #C     \
    ", i32 " #D ", i32 " #E ", i32 " #F ", i32 " #G ", i32 " #H "], align 4\n"

static const char *module_text =
    TAB("a1", 1, 2, 3, 4, 5, 6, 7, 8) TAB("b1", 10, 20, 30, 40, 0, 0, 0, 0)
    TAB("a2", -5, 17, 3, 99, 1000, -1, 2, 0) TAB("b2", 3, -7, 11, 2, 0, 0, 0, 0)
    TAB("a3", 9, 9, 9, 9, 9, 9, 9, 9) TAB("b3", 1, 1, 1, 1, 0, 0, 0, 0)
    TAB("a4", 4, 3, 2, 1, 0, -1, -2, -3) TAB("b4", 5, 6, 7, 8, 0, 0, 0, 0)
    TAB("a5", 8, 8, 8, 8, 1, 1, 1, 1) TAB("b5", 2, 2, 2, 2, 0, 0, 0, 0)
    TAB("s1", 100, 0, 0, 0, 0, 0, 0, 0) TAB("s2", 200, 0, 0, 0, 0, 0, 0, 0)
    TAB("p1", 33, 0, 0, 0, 0, 0, 0, 0) TAB("p2", 44, 0, 0, 0, 0, 0, 0, 0)
    /* merged: f1, f2, f3 (three members, distinct loop ids of equal content) */
    BODY("f1", "@a1", "@b1", "12345", "!0") BODY("f2", "@a2", "@b2", "12345", "!2")
    BODY("f3", "@a3", "@b3", "12345", "!3")
    /* kept: another constant; another loop hint */
    BODY("g1", "@a4", "@b4", "54321", "!4") BODY("h1", "@a5", "@b5", "12345", "!5")
    PURE("u1") PURE("u2")
    SHORT("t1", "@s1") SHORT("t2", "@s2")
    P2I("v1", "@p1") P2I("v2", "@p2")
    CALLER("f1", "i32") CALLER("f2", "i32") CALLER("f3", "i32") CALLER("g1", "i32")
    CALLER("h1", "i32") CALLER("u1", "i32") CALLER("u2", "i32") CALLER("t1", "i32")
    CALLER("t2", "i32") CALLER("v1", "i64") CALLER("v2", "i64")
    "!0 = distinct !{!0, !1}\n"
    "!1 = !{!\"llvm.loop.vectorize.enable\", i1 false}\n"
    "!2 = distinct !{!2, !1}\n"
    "!3 = distinct !{!3, !1}\n"
    "!4 = distinct !{!4, !1}\n"
    "!5 = distinct !{!5, !6}\n"
    "!6 = !{!\"llvm.loop.unroll.disable\"}\n";

static const char *fns32[] = {"f1", "f2", "f3", "g1", "h1", "u1", "u2", "t1", "t2"};
static const char *fns64[] = {"v1", "v2"};

static LLVMModuleRef
parse(LLVMContextRef c)
{
    LLVMMemoryBufferRef buf =
        LLVMCreateMemoryBufferWithMemoryRangeCopy(module_text, strlen(module_text), "merge_test");
    LLVMModuleRef m = NULL;
    char *msg = NULL;
    if (LLVMParseIRInContext(c, buf, &m, &msg)) {
        printf("FAIL: parse: %s\n", msg ? msg : "?");
        LLVMDisposeMessage(msg);
        return NULL;
    }
    return m;
}

/* Whether function name's body is one call of a function whose name ends in ".merged". */
static bool
calls_merged(LLVMModuleRef m, const char *name)
{
    LLVMValueRef f = LLVMGetNamedFunction(m, name);
    if (!f || LLVMCountBasicBlocks(f) != 1)
        return false;
    for (LLVMValueRef i = LLVMGetFirstInstruction(LLVMGetEntryBasicBlock(f)); i;
         i = LLVMGetNextInstruction(i)) {
        if (!LLVMIsACallInst(i))
            continue;
        size_t n;
        const char *callee = LLVMGetValueName2(LLVMGetCalledValue(i), &n);
        return n > 7 && strcmp(callee + n - 7, ".merged") == 0;
    }
    return false;
}

typedef struct Results {
    int32_t r32[sizeof fns32 / sizeof *fns32][4];
    int64_t r64[sizeof fns64 / sizeof *fns64][4];
} Results;

/* O2 the module, JIT it, call every call_* at a few arguments. */
static bool
run(const CgTarget *t, LLVMContextRef c, LLVMModuleRef m, Results *r)
{
    char err[512];
    LLVMTargetMachineRef tm;
    if (!cg_target_machine_create(t, &tm, err, sizeof err) ||
        !cg_module_optimize(m, tm, "default<O2>", err, sizeof err)) {
        printf("FAIL: optimise: %s\n", err);
        return false;
    }
    cg_target_machine_destroy(tm);
    CgJit *j = cg_jit_create(t, err, sizeof err);
    if (!j || !cg_jit_add(j, c, m, err, sizeof err)) {
        printf("FAIL: jit: %s\n", err);
        return false;
    }
    static const int args[4] = {0, 1, 3, 1000};
    bool ok = true;
    for (size_t f = 0; f < sizeof fns32 / sizeof *fns32; f++) {
        char name[64];
        snprintf(name, sizeof name, "call_%s", fns32[f]);
        int32_t (*fn)(int32_t) = (int32_t (*)(int32_t))cg_jit_lookup(j, name, err, sizeof err);
        ok = ok && fn;
        for (int a = 0; fn && a < 4; a++)
            r->r32[f][a] = fn(args[a]);
    }
    for (size_t f = 0; f < sizeof fns64 / sizeof *fns64; f++) {
        char name[64];
        snprintf(name, sizeof name, "call_%s", fns64[f]);
        int64_t (*fn)(int64_t) = (int64_t (*)(int64_t))cg_jit_lookup(j, name, err, sizeof err);
        ok = ok && fn;
        for (int a = 0; fn && a < 4; a++)
            r->r64[f][a] = fn(args[a]);
    }
    cg_jit_destroy(j);
    return ok;
}

int
main(void)
{
    char err[512];
    CgTarget t;
    if (!cg_target_host(&t, err, sizeof err)) {
        printf("SKIP: no host target: %s\n0 passed, 0 failed\n", err);
        return 0;
    }
    LLVMContextRef c0 = LLVMContextCreate(), c1 = LLVMContextCreate();
    LLVMModuleRef m0 = parse(c0), m1 = parse(c1);
    if (!m0 || !m1)
        return 1;

    unsigned merged = cg_module_merge(m1);
    check(merged == 5, "5 functions call a merged body (f1 f2 f3, u1 u2)");
    char *msg = NULL;
    check(!LLVMVerifyModule(m1, LLVMReturnStatusAction, &msg), "the merged module verifies");
    if (msg && *msg)
        printf("  %s\n", msg);
    LLVMDisposeMessage(msg);
    static const char *yes[] = {"f1", "f2", "f3", "u1", "u2"};
    static const char *no[] = {"g1", "h1", "t1", "t2", "v1", "v2"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
        char what[96];
        snprintf(what, sizeof what, "%s calls a .merged body", yes[i]);
        check(calls_merged(m1, yes[i]), what);
    }
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
        char what[96];
        snprintf(what, sizeof what, "%s keeps its own body", no[i]);
        check(!calls_merged(m1, no[i]), what);
    }
    LLVMValueRef fb = LLVMGetNamedFunction(m1, "f1.merged");
    LLVMValueRef ub = LLVMGetNamedFunction(m1, "u1.merged");
    check(fb && LLVMCountParams(fb) == 2, "f1.merged takes the table as a second parameter");
    check(ub && LLVMCountParams(ub) == 1, "u1.merged (no globals) takes no table");
    check(LLVMGetNamedGlobal(m1, "f2.tbl") != NULL, "f2's table of globals");
    /* a second merge finds nothing new (the wrappers are short, the bodies unique) */
    check(cg_module_merge(m1) == 0, "merging again changes nothing");

    Results r0, r1;
    memset(&r0, 0, sizeof r0);
    memset(&r1, 0, sizeof r1);
    bool ran = run(&t, c0, m0, &r0) && run(&t, c1, m1, &r1);
    check(ran, "both modules JIT-compile and run");
    for (size_t f = 0; ran && f < sizeof fns32 / sizeof *fns32; f++) {
        char what[96];
        snprintf(what, sizeof what, "%s returns what it returned before the merge", fns32[f]);
        check(memcmp(r0.r32[f], r1.r32[f], sizeof r0.r32[f]) == 0, what);
    }
    for (size_t f = 0; ran && f < sizeof fns64 / sizeof *fns64; f++) {
        char what[96];
        snprintf(what, sizeof what, "%s returns what it returned before the merge", fns64[f]);
        check(memcmp(r0.r64[f], r1.r64[f], sizeof r0.r64[f]) == 0, what);
    }
    /* the members read their own tables: f1, f2, f3 differ at n = 3 */
    check(ran && r1.r32[0][2] != r1.r32[1][2] && r1.r32[1][2] != r1.r32[2][2],
          "f1, f2, f3 give different results (their own constants)");
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
