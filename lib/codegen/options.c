/* options.c: the target of a compile from its options (--target, --mcpu, --mattr, --isa) and the
 * kernel path (--isa) checked against it: the baseline CPU each path implies, the rule by which
 * the host fills in what the options leave open, and the messages for unknown or unsupported
 * paths (docs/targets.md). */
#include "codegen/codegen.h"

#include <stdio.h>
#include <string.h>

/* The CPU and features an --isa implies when no --mcpu is given: the oldest CPU level that has
 * the path's instructions, so the output does not depend on the host and runs on every machine
 * that has them (docs/targets.md, "Which machine"). */
static const struct {
    CgGemmIsa isa;
    bool x86;
    const char *cpu, *mattr, *needs;
} isa_baseline[] = {
    {CG_GEMM_GENERIC, true, "x86-64", "", "nothing"},
    {CG_GEMM_X86_AVX2, true, "x86-64-v3", "", "avx2"},
    {CG_GEMM_X86_AVXVNNI, true, "x86-64-v3", "+avxvnni", "avxvnni, or avx512vnni and avx512vl"},
    {CG_GEMM_X86_AVX512VNNI, true, "x86-64-v4", "+avx512vnni", "avx512vnni and avx512bw"},
    {CG_GEMM_GENERIC, false, "generic", "", "nothing"},
    {CG_GEMM_A64_NEON, false, "generic", "", "neon"},
    {CG_GEMM_A64_DOTPROD, false, "generic", "+dotprod", "dotprod"},
    {CG_GEMM_A64_I8MM, false, "generic", "+dotprod,+i8mm", "i8mm"},
};

/* "generic, avx2, ..." : the kernel paths of one architecture, for messages. */
static void
isa_list(bool x86, char *buf, size_t len)
{
    buf[0] = 0;
    for (size_t i = 0; i < sizeof isa_baseline / sizeof isa_baseline[0]; i++)
        if (isa_baseline[i].x86 == x86) {
            size_t used = strlen(buf);
            snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
                     cg_gemm_isa_name(isa_baseline[i].isa));
        }
}

/* The table row of kernel path `name` on x86-64 (x86) or AArch64, or -1. */
static int
isa_row(bool x86, const char *name)
{
    for (size_t i = 0; i < sizeof isa_baseline / sizeof isa_baseline[0]; i++)
        if (isa_baseline[i].x86 == x86 && strcmp(cg_gemm_isa_name(isa_baseline[i].isa), name) == 0)
            return (int)i;
    return -1;
}

bool
cg_isa_lookup(const CgTarget *t, const char *name, CgGemmIsa *out, char *err, size_t errlen)
{
    int r = isa_row(t->x86, name);
    if (r < 0) {
        char valid[128];
        isa_list(t->x86, valid, sizeof valid);
        snprintf(err, errlen, "unknown kernel path '%.31s' for %s (valid: %s)", name,
                 t->x86 ? "x86-64" : "aarch64", valid);
        return false;
    }
    if (!cg_gemm_isa_supported(t, isa_baseline[r].isa)) {
        char have[128] = "";
        for (size_t j = 0; j < sizeof isa_baseline / sizeof isa_baseline[0]; j++) {
            CgGemmIsa v = isa_baseline[j].isa;
            size_t used = strlen(have);
            if (isa_baseline[j].x86 == t->x86 && cg_gemm_isa_supported(t, v) &&
                !strstr(have, cg_gemm_isa_name(v)))
                snprintf(have + used, sizeof have - used, "%s%s", used ? ", " : "",
                         cg_gemm_isa_name(v));
        }
        snprintf(err, errlen, "kernel path '%s' needs %s, which the target (cpu %s%s%s) lacks; "
                 "its paths: %s", name, isa_baseline[r].needs, t->cpu,
                 t->features[0] ? ", features " : "",
                 strlen(t->features) < 80 ? t->features : "...", have);
        return false;
    }
    *out = isa_baseline[r].isa;
    return true;
}

/* The target is a function of the options alone wherever they say anything about the CPU:
 *   nothing given            the host: its triple, CPU name (tuning) and feature string
 *   only --mattr             the host's CPU and features, then --mattr
 *   --mcpu                   that CPU's features, then --mattr (host: the triple, if no --target)
 *   --isa without --mcpu     the path's baseline CPU (isa_baseline), then --mattr
 *   --target without either  "generic" for that triple, then --mattr
 * so any test that pins --mcpu or --isa emits the same IR on every host. */
bool
cg_options_target(const CgOptions *o, CgTarget *t, char *err, size_t errlen)
{
    if (!o->triple[0] && !o->cpu[0] && !o->mattr[0] && !o->isa[0])
        return cg_target_host(t, err, errlen);
    if (!o->triple[0] && !o->cpu[0] && !o->isa[0])
        return cg_target_parse(t, NULL, "native", o->mattr, err, errlen);
    if (o->cpu[0] || !o->isa[0])
        return cg_target_parse(t, o->triple, o->cpu, o->mattr, err, errlen);
    /* --isa without --mcpu: the architecture first, then the path's baseline */
    if (!cg_target_parse(t, o->triple, "generic", "", err, errlen))
        return false;
    int r = isa_row(t->x86, o->isa);
    if (r >= 0) {
        char mattr[sizeof o->mattr + 32];
        snprintf(mattr, sizeof mattr, "%s%s%s", isa_baseline[r].mattr,
                 isa_baseline[r].mattr[0] && o->mattr[0] ? "," : "", o->mattr);
        return cg_target_parse(t, o->triple, isa_baseline[r].cpu, mattr, err, errlen);
    }
    CgGemmIsa unused;
    return cg_isa_lookup(t, o->isa, &unused, err, errlen); /* the unknown-path message */
}
