/* test_isa_desc.c: the kernel-path records (lib/codegen/target/isa.c, CgIsaDesc).
 *
 * For each architecture's records: every CgGemmIsa of the architecture has exactly one record,
 * names are unique, the baseline CPU and features of a record (what --isa without --mcpu
 * compiles for) support the path and make it the best path (generic aside: its baseline has
 * NEON on AArch64), vector_bits and i32_lanes agree, every intrinsic a record names is one
 * LLVM knows, with the arity its field promises (mac16_adds_acc: acc, a, b). Then the
 * questions emitters ask, on pinned targets: lanes that follow the target, the forms that need
 * avx512vl or dotprod, the paths of the other architecture, and cg_target_missing_flag (the
 * JIT's check that the host has every feature boolean of the target). Last, the GEMM tile
 * bound taken from the record (check_tile_bounds).
 *
 * Output ends with "N passed, M failed"; exit status non-zero on any failure.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>

#include "codegen/gemm/gemm.h"
#include "codegen/gemm/sgemm.h"
#include "codegen/target/isa.h"
#include "codegen/target/target.h"

static int passed, failed;

static void
check(bool ok, const char *what, const char *name)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        printf("FAIL: %s (%s)\n", what, name);
    }
}

static bool
target(CgTarget *t, const char *triple, const char *cpu, const char *mattr)
{
    char err[256];
    if (!cg_target_parse(t, triple, cpu, mattr, err, sizeof err)) {
        printf("FAIL: target %s %s %s: %s\n", triple, cpu, mattr, err);
        failed++;
        return false;
    }
    return true;
}

/* Each form of ops: an intrinsic LLVM has; non-overloaded ones with `params` parameters. */
static void
check_forms(const CgIsaOp *ops, unsigned max_lanes, int params, const char *name)
{
    for (int i = 0; i < CG_ISA_FORMS && ops[i].lanes; i++) {
        unsigned id = LLVMLookupIntrinsicID(ops[i].intr, strlen(ops[i].intr));
        check(id != 0, "intrinsic known to LLVM", ops[i].intr);
        check(ops[i].lanes <= max_lanes, "form no wider than the path", ops[i].intr);
        if (id && params && !LLVMIntrinsicIsOverloaded(id)) {
            LLVMContextRef c = LLVMContextCreate();
            LLVMTypeRef ft = LLVMIntrinsicGetType(c, id, NULL, 0);
            check((int)LLVMCountParamTypes(ft) == params, "intrinsic arity", name);
            LLVMContextDispose(c);
        }
    }
}

static void
check_arch(bool x86)
{
    const char *triple = x86 ? "x86_64-unknown-linux-gnu" : "aarch64-unknown-linux-gnu";
    size_t n;
    const CgIsaDesc *const *d = cg_isa_descs(x86, &n);
    check(n >= 2, "records", triple);
    for (size_t i = 0; i < n; i++) {
        const CgIsaDesc *r = d[i];
        check(r->x86 == x86, "architecture", r->name);
        for (size_t j = 0; j < i; j++) {
            check(d[j]->isa != r->isa, "one record per path", r->name);
            check(strcmp(d[j]->name, r->name) != 0, "unique name", r->name);
        }
        check(cg_isa_desc_named(x86, r->name) == r, "found by name", r->name);
        CgTarget t;
        if (target(&t, triple, r->base_cpu, r->base_mattr)) {
            check(cg_isa_desc(&t, r->isa) == r, "found by path", r->name);
            check(r->supported(&t), "baseline supports the path", r->name);
            check(cg_gemm_isa_supported(&t, r->isa), "cg_gemm_isa_supported", r->name);
            if (r->isa != CG_GEMM_GENERIC)
                check(cg_gemm_isa_best(&t) == r->isa, "baseline's best path", r->name);
        }
        check(r->i32_lanes >= 4 && (r->i32_lanes & (r->i32_lanes - 1)) == 0, "lanes", r->name);
        check(!r->vector_bits || r->vector_bits == 32 * r->i32_lanes, "vector_bits", r->name);
        check(r->vregs == 16 || r->vregs == 32, "vregs", r->name);
        check(r->gemm_max_acc >= 1, "gemm_max_acc", r->name);
        unsigned widest = r->lanes_follow_target ? 8 : r->i32_lanes;
        check_forms(r->dot8_us, widest, 3, r->name);
        check_forms(r->dot8_ss, widest, 3, r->name);
        check_forms(r->mac16, widest, r->mac16_adds_acc ? 3 : 2, r->name);
        check(!r->mac16_tune || r->mac16[0].lanes, "tuning without a mac16", r->name);
        check(!r->lut16_f32 || r->i32_lanes == 16, "lut16_f32 on 16 lanes", r->name);
        check(!r->dot8_us[0].lanes || r->a8_xor_offset == 128, "vpdpbusd flips signed A",
              r->name);
    }
    for (int isa = 0; isa < CG_GEMM_ISA_COUNT; isa++) {
        int count = 0;
        for (size_t i = 0; i < n; i++)
            count += d[i]->isa == (CgGemmIsa)isa;
        bool ours = isa == CG_GEMM_GENERIC ||
                    (x86 ? isa <= CG_GEMM_X86_AVX512VNNI : isa >= CG_GEMM_A64_NEON);
        check(count == (ours ? 1 : 0), "paths of the architecture", cg_gemm_isa_name(isa));
    }
}

/* The questions on pinned targets. */
static void
check_questions(void)
{
    CgTarget v3, v4, novl, x64, a76, i8only;
    if (!target(&v3, "x86_64", "x86-64-v3", "") ||
        !target(&v4, "x86_64", "x86-64-v4", "+avx512vnni") ||
        !target(&novl, "x86_64", "x86-64", "+avx512vnni,+avx512bw") ||
        !target(&x64, "x86_64", "x86-64", "") || !target(&a76, "aarch64", "cortex-a76", "") ||
        !target(&i8only, "aarch64", "generic", "+i8mm"))
        return;
    check(cg_isa_i32_lanes(&v3, CG_GEMM_GENERIC) == 8, "generic follows AVX2", "x86-64-v3");
    check(cg_isa_i32_lanes(&x64, CG_GEMM_GENERIC) == 4, "generic on SSE2", "x86-64");
    check(cg_isa_i32_lanes(&v4, CG_GEMM_X86_AVX512VNNI) == 16, "zmm lanes", "x86-64-v4");
    check(cg_isa_i32_lanes(&a76, CG_GEMM_A64_DOTPROD) == 4, "NEON lanes", "cortex-a76");
    const char *d16 = cg_isa_dot8(&v4, CG_GEMM_X86_AVX512VNNI, 16);
    check(d16 && strcmp(d16, "llvm.x86.avx512.vpdpbusd.512") == 0, "vpdpbusd zmm", "v4");
    check(cg_isa_dot8(&v4, CG_GEMM_X86_AVX512VNNI, 8) != NULL, "ymm form with avx512vl", "v4");
    check(cg_isa_dot8(&novl, CG_GEMM_X86_AVX512VNNI, 8) == NULL, "no ymm form without vl",
          "no avx512vl");
    check(cg_isa_mac16(&novl, CG_GEMM_X86_AVX512VNNI, 8) == NULL, "no ymm vpdpwssd", "no vl");
    check(cg_isa_dot8(&v4, CG_GEMM_X86_AVX512VNNI, 4) == NULL, "no 4-lane form", "v4");
    const char *m8 = cg_isa_mac16(&v3, CG_GEMM_X86_AVX2, 8);
    check(m8 && strcmp(m8, "llvm.x86.avx2.pmadd.wd") == 0, "vpmaddwd", "x86-64-v3");
    check(cg_isa_mac16(&v3, CG_GEMM_GENERIC, 8) == NULL, "generic: plain IR", "x86-64-v3");
    check(cg_isa_sdot8(&a76, CG_GEMM_A64_DOTPROD, 4) != NULL, "sdot", "cortex-a76");
    check(cg_isa_sdot8(&a76, CG_GEMM_A64_NEON, 4) == NULL, "no sdot on neon", "cortex-a76");
    check(cg_isa_sdot8(&i8only, CG_GEMM_A64_I8MM, 4) == NULL, "i8mm without dotprod", "+i8mm");
    check(cg_gemm_isa_best(&x64) == CG_GEMM_GENERIC, "SSE2 runs generic", "x86-64");
    check(!cg_gemm_isa_supported(&a76, CG_GEMM_X86_AVX2), "other architecture", "cortex-a76");
    check(strcmp(cg_gemm_isa_name(CG_GEMM_A64_I8MM), "i8mm") == 0, "name", "i8mm");
    check(strcmp(cg_gemm_isa_name(CG_GEMM_ISA_COUNT), "?") == 0, "name outside the enum", "?");
    /* the JIT's host check */
    const char *miss = cg_target_missing_flag(&v4, &v3);
    check(miss && strcmp(miss, "avx512f") == 0, "v4 code on a v3 host", miss ? miss : "NULL");
    check(cg_target_missing_flag(&v3, &v4) == NULL, "v3 code on a v4 host", "x86-64-v4");
    CgTarget a64;
    if (target(&a64, "aarch64", "generic", "")) {
        miss = cg_target_missing_flag(&a76, &a64);
        check(miss && strcmp(miss, "dotprod") == 0, "a76 code on plain NEON", "generic");
    }
}

/* The GEMMs' register tiles are bounded by the record (gemm_max_acc), not by a fixed array:
 * a tile of exactly the bound emits a valid function (its accumulator slots sized by the
 * tile), one more is refused with the record's bound in the message; the same for the f32
 * GEMM (a 32 x 1 tile: 32 rows of row pointers). */
static void
check_tile_bounds(void)
{
    CgTarget t;
    if (!target(&t, "x86_64", "x86-64-v3", ""))
        return;
    const CgIsaDesc *d = cg_isa_desc(&t, CG_GEMM_X86_AVX2);
    int bound = (int)d->gemm_max_acc;
    static int8_t b[16 * 8];
    for (int i = 0; i < 16 * 8; i++)
        b[i] = (int8_t)(i * 7 - 50);
    CgGemmSpec s = {.m = 20, .n = 16, .k = 8, .lda = 8, .ldc = 16, .a_signed = true, .b = b,
                    .epilogue = CG_GEMM_EPI_I32, .out = CG_GEMM_I32};
    s.tile.nv = 2;
    s.tile.mr = bound / 2; /* 16 x 2 */
    LLVMContextRef c = LLVMContextCreate();
    LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("tiles", c);
    char err[256] = "", name[32] = "";
    LLVMValueRef fn = cg_gemm_emit(mod, &t, CG_GEMM_X86_AVX2, &s, "g_full", err, sizeof err);
    check(fn != NULL, "GEMM tile of gemm_max_acc accumulators", err);
    s.tile.nv = 3;
    s.tile.mr = bound / 3 + 1;
    fn = cg_gemm_emit(mod, &t, CG_GEMM_X86_AVX2, &s, "g_over", err, sizeof err);
    snprintf(name, sizeof name, "more than %d accumulators", bound);
    check(!fn && strstr(err, name), "GEMM tile over the bound refused", err);
    static float fb[8 * 16];
    CgSgemmSpec f = {.m = 40, .n = 16, .k = 8, .lda = 8, .sak = 1, .ldc = 16, .b = fb,
                     .sbk = 16, .sbn = 1, .alpha = 1.0f};
    f.tile.mr = bound, f.tile.nv = 1;
    fn = cg_sgemm_emit(mod, &t, CG_GEMM_X86_AVX2, &f, "s_full", err, sizeof err);
    check(fn != NULL, "f32 GEMM tile of gemm_max_acc rows", err);
    f.tile.mr = bound / 2 + 1, f.tile.nv = 2;
    fn = cg_sgemm_emit(mod, &t, CG_GEMM_X86_AVX2, &f, "s_over", err, sizeof err);
    snprintf(name, sizeof name, "%d accumulators", bound);
    check(!fn && strstr(err, name), "f32 GEMM tile over the bound refused", err);
    char *msg = NULL;
    check(!LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg), "module verifies",
          msg ? msg : "");
    LLVMDisposeMessage(msg);
    LLVMDisposeModule(mod);
    LLVMContextDispose(c);
}

int
main(void)
{
    check_arch(true);
    check_arch(false);
    check_questions();
    check_tile_bounds();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
