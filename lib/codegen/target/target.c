/* target.c: host detection and --target/--mcpu/--mattr parsing into a CgTarget, and the
 * TargetMachine built from it.
 *
 * Only the X86 and AArch64 backends are initialised (idempotent LLVM calls, no state of ours).
 * The ISA booleans come from the feature string plus a small CPU table, because the LLVM C API
 * has no query for "which features does CPU X have" and the kernel emitters must never select an
 * intrinsic the target lacks (LLVM aborts in instruction selection). See docs/targets.md.
 */
#include "codegen/target/target.h"

#include "support/support.h"

#include <llvm-c/Core.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
init_backends_once(void)
{
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64Target();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeAArch64AsmPrinter();
    /* LLVM's loop strength reduction is off: the GEMM microkernels address A and B explicitly
     * (a pointer per row, constant offsets), LSR took 20% of ResNet-18's compile time (0.45 of
     * 2.1 s) and its removal changed no measured run time on x86; in llvm-mca the AArch64
     * inner loops go from 91 to 97% of peak (dotprod, neoverse-n1) and 100 to 95% (i8mm)
     * (bench/mca_kernels.py, docs/performance.md). A process-wide LLVM option (no per-module
     * switch exists), set once here.
     * Debugging aid: QDQC_LLVM_OPTIONS="-time-passes ..." passes more of LLVM's command-line
     * options (e.g. the per-pass compile-time report; "-disable-lsr=false" restores LSR). */
    const char *opts = getenv("QDQC_LLVM_OPTIONS");
    static char buf[1024];
    static const char *argv[34];
    int argc = 0;
    argv[argc++] = "qdqc";
    if (!opts || !strstr(opts, "disable-lsr"))
        argv[argc++] = "-disable-lsr";
    snprintf(buf, sizeof buf, "%s", opts ? opts : "");
    for (char *t = strtok(buf, " "); t && argc < 33; t = strtok(NULL, " "))
        argv[argc++] = t;
    LLVMParseCommandLineOptions(argc, argv, NULL);
    if (opts && *opts)
        atexit(LLVMShutdown); /* reports such as -time-passes print when LLVM shuts down */
}

/* LLVM's target registry is process-wide and registering is not thread-safe (two threads
 * registering a target at once can link it into the registry's list twice), so separate
 * contexts compiling on separate threads register once, here. */
static void
init_backends(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_backends_once);
}

/* ---- ISA flags and their implications ---- */

enum {
    F_AVX2,
    F_AVX512F,
    F_AVX512BW,
    F_AVX512VL,
    F_AVX512VNNI,
    F_AVXVNNI,
    F_NEON,
    F_DOTPROD,
    F_I8MM,
    F_COUNT
};

static const struct {
    const char *name;
    int parent; /* implied by this feature; -1 = none */
    bool x86;
    size_t field; /* its boolean in CgTarget */
} flag_info[F_COUNT] = {
    [F_AVX2] = {"avx2", -1, true, offsetof(CgTarget, avx2)},
    [F_AVX512F] = {"avx512f", F_AVX2, true, offsetof(CgTarget, avx512f)},
    [F_AVX512BW] = {"avx512bw", F_AVX512F, true, offsetof(CgTarget, avx512bw)},
    [F_AVX512VL] = {"avx512vl", F_AVX512F, true, offsetof(CgTarget, avx512vl)},
    [F_AVX512VNNI] = {"avx512vnni", F_AVX512F, true, offsetof(CgTarget, avx512vnni)},
    [F_AVXVNNI] = {"avxvnni", F_AVX2, true, offsetof(CgTarget, avxvnni)},
    [F_NEON] = {"neon", -1, false, offsetof(CgTarget, neon)},
    [F_DOTPROD] = {"dotprod", F_NEON, false, offsetof(CgTarget, dotprod)},
    [F_I8MM] = {"i8mm", F_NEON, false, offsetof(CgTarget, i8mm)},
};

/* Flag i of t (its CgTarget boolean). */
static bool
flag_get(const CgTarget *t, int i)
{
    return *(const bool *)((const char *)t + flag_info[i].field);
}

static void
flag_enable(bool *f, int i)
{
    for (; i >= 0; i = flag_info[i].parent)
        f[i] = true;
}

static void
flag_disable(bool *f, int i)
{
    f[i] = false;
    for (int j = 0; j < F_COUNT; j++) /* every feature that implies i, directly or not */
        for (int p = flag_info[j].parent; p >= 0; p = flag_info[p].parent)
            if (p == i)
                f[j] = false;
}

static int
flag_find(const char *name, size_t len)
{
    for (int i = 0; i < F_COUNT; i++)
        if (strlen(flag_info[i].name) == len && memcmp(flag_info[i].name, name, len) == 0)
            return i;
    return -1;
}

/* AArch64 architecture versions that make dotprod (v8.4) or i8mm (v8.6) mandatory. */
static void
aarch64_arch_implies(bool *f, const char *name, size_t len)
{
    int major = 0, minor = 0;
    char buf[16];
    if (len >= sizeof buf)
        return;
    memcpy(buf, name, len);
    buf[len] = 0;
    if (sscanf(buf, "v%d.%da", &major, &minor) != 2)
        return;
    if (major == 9 || (major == 8 && minor >= 4))
        flag_enable(f, F_DOTPROD);
    if ((major == 9 && minor >= 1) || (major == 8 && minor >= 6))
        flag_enable(f, F_I8MM);
}

/* ---- CPU table ---- */

typedef struct CpuInfo {
    const char *name;
    bool x86;
    const char *feats; /* comma list of flag names */
} CpuInfo;

static const CpuInfo cpu_table[] = {
    {"generic", true, ""},
    {"x86-64", true, ""},
    {"x86-64-v2", true, ""},
    {"x86-64-v3", true, "avx2"},
    {"x86-64-v4", true, "avx512f,avx512bw,avx512vl"},
    {"haswell", true, "avx2"},
    {"broadwell", true, "avx2"},
    {"skylake", true, "avx2"},
    {"znver1", true, "avx2"},
    {"znver2", true, "avx2"},
    {"znver3", true, "avx2"},
    {"skylake-avx512", true, "avx512f,avx512bw,avx512vl"},
    {"cascadelake", true, "avx512f,avx512bw,avx512vl,avx512vnni"},
    {"cooperlake", true, "avx512f,avx512bw,avx512vl,avx512vnni"},
    {"icelake-client", true, "avx512f,avx512bw,avx512vl,avx512vnni"},
    {"icelake-server", true, "avx512f,avx512bw,avx512vl,avx512vnni"},
    {"tigerlake", true, "avx512f,avx512bw,avx512vl,avx512vnni"},
    {"rocketlake", true, "avx512f,avx512bw,avx512vl,avx512vnni"},
    {"znver4", true, "avx512f,avx512bw,avx512vl,avx512vnni"},
    {"znver5", true, "avx512f,avx512bw,avx512vl,avx512vnni,avxvnni"},
    {"sapphirerapids", true, "avx512f,avx512bw,avx512vl,avx512vnni,avxvnni"},
    {"emeraldrapids", true, "avx512f,avx512bw,avx512vl,avx512vnni,avxvnni"},
    {"graniterapids", true, "avx512f,avx512bw,avx512vl,avx512vnni,avxvnni"},
    {"alderlake", true, "avx2,avxvnni"},
    {"raptorlake", true, "avx2,avxvnni"},
    {"meteorlake", true, "avx2,avxvnni"},
    {"arrowlake", true, "avx2,avxvnni"},
    {"sierraforest", true, "avx2,avxvnni"},
    {"generic", false, "neon"},
    {"cortex-a53", false, "neon"},
    {"cortex-a72", false, "neon"},
    {"cortex-a55", false, "dotprod"},
    {"cortex-a75", false, "dotprod"},
    {"cortex-a76", false, "dotprod"},
    {"cortex-a77", false, "dotprod"},
    {"cortex-a78", false, "dotprod"},
    {"cortex-x1", false, "dotprod"},
    {"neoverse-n1", false, "dotprod"},
    {"apple-m1", false, "dotprod"},
    {"neoverse-v1", false, "dotprod,i8mm"},
    {"neoverse-n2", false, "dotprod,i8mm"},
    {"neoverse-v2", false, "dotprod,i8mm"},
    {"cortex-a510", false, "dotprod,i8mm"},
    {"cortex-a710", false, "dotprod,i8mm"},
    {"cortex-x2", false, "dotprod,i8mm"},
};

/* Features accepted in --mattr besides the ISA flags above: ones LLVM knows for each arch. */
static const char *const extra_x86_feats[] = {
    "sse2", "sse3", "ssse3", "sse4.1", "sse4.2", "avx", "fma", "f16c", "bmi", "bmi2",
    "lzcnt", "popcnt", "movbe", "avx512dq", "avx512cd", "avx512bf16", "avx512fp16",
    "avx512vbmi", "avx512vbmi2", "avx512bitalg", "avx512vpopcntdq", "amx-tile", "amx-int8",
    "amx-bf16", "prefer-256-bit", "avxvnniint8", NULL};
static const char *const extra_a64_feats[] = {
    "fp-armv8", "fullfp16", "bf16", "sve", "sve2", "crc", "lse", "rcpc", "crypto", "aes", "sha2",
    "v8.1a", "v8.2a", "v8.3a", "v8.4a", "v8.5a", "v8.6a", "v8.7a", "v8.8a", "v9a", "v9.1a",
    "v9.2a", NULL};

static bool
in_list(const char *const *list, const char *name, size_t len)
{
    for (; *list; list++)
        if (strlen(*list) == len && memcmp(*list, name, len) == 0)
            return true;
    return false;
}

/* Apply a comma list of +feat/-feat to f. host_feats (may be NULL) widens the accepted names.
 * Returns false with a message on a malformed or unknown entry. */
static bool
apply_feature_list(bool *f, bool x86, const char *list, const char *host_feats, bool check,
                   char *err, size_t errlen)
{
    const char *p = list;
    while (p && *p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len > 0) {
            char sign = p[0];
            if ((sign != '+' && sign != '-') || len < 2) {
                errbuf_fail(err, errlen, "feature '%.*s' must start with '+' or '-'", (int)len, p);
                return false;
            }
            const char *name = p + 1;
            size_t nlen = len - 1;
            int fi = flag_find(name, nlen);
            if (fi >= 0 && flag_info[fi].x86 == x86) {
                if (sign == '+')
                    flag_enable(f, fi);
                else
                    flag_disable(f, fi);
            } else if (check) {
                bool known = in_list(x86 ? extra_x86_feats : extra_a64_feats, name, nlen);
                if (!known && host_feats) {
                    /* accept anything the host's own feature string names */
                    for (const char *h = host_feats; *h;) {
                        const char *he = strchr(h, ',');
                        size_t hl = he ? (size_t)(he - h) : strlen(h);
                        if (hl == nlen + 1 && memcmp(h + 1, name, nlen) == 0)
                            known = true;
                        h = he ? he + 1 : h + hl;
                    }
                }
                if (!known) {
                    errbuf_fail(err, errlen, "unknown feature '%.*s' for %s", (int)nlen, name,
                            x86 ? "x86-64" : "aarch64");
                    return false;
                }
            }
            if (!x86 && sign == '+')
                aarch64_arch_implies(f, name, nlen);
        }
        p = e ? e + 1 : NULL;
    }
    return true;
}

static void
store_flags(CgTarget *t, const bool *f)
{
    for (int i = 0; i < F_COUNT; i++)
        *(bool *)((char *)t + flag_info[i].field) = f[i];
}

const char *
cg_target_missing_flag(const CgTarget *want, const CgTarget *have)
{
    for (int i = 0; i < F_COUNT; i++)
        if (flag_get(want, i) && !flag_get(have, i))
            return flag_info[i].name;
    return NULL;
}

/* Fill triple + arch booleans; checks LLVM has a target for it. */
static bool
set_triple(CgTarget *t, const char *triple, char *err, size_t errlen)
{
    /* bare architecture names mean Linux (fixed, not the host's OS, so that a short name means
     * the same on every host) */
    static const char *const shorthand[][2] = {
        {"x86_64", "x86_64-unknown-linux-gnu"},  {"x86-64", "x86_64-unknown-linux-gnu"},
        {"amd64", "x86_64-unknown-linux-gnu"},   {"aarch64", "aarch64-unknown-linux-gnu"},
        {"arm64", "aarch64-unknown-linux-gnu"},
    };
    for (size_t i = 0; i < sizeof shorthand / sizeof shorthand[0]; i++)
        if (strcmp(triple, shorthand[i][0]) == 0)
            triple = shorthand[i][1];
    char *norm = LLVMNormalizeTargetTriple(triple);
    if (strlen(norm) >= sizeof t->triple) {
        errbuf_fail(err, errlen, "target triple too long: '%s'", triple);
        LLVMDisposeMessage(norm);
        return false;
    }
    strcpy(t->triple, norm);
    LLVMDisposeMessage(norm);
    t->x86 = strncmp(t->triple, "x86_64-", 7) == 0;
    t->aarch64 = strncmp(t->triple, "aarch64-", 8) == 0 || strncmp(t->triple, "arm64-", 6) == 0;
    if (!t->x86 && !t->aarch64) {
        errbuf_fail(err, errlen, "unsupported target '%s': qdqc targets x86_64 and aarch64 (a triple "
                "such as x86_64-linux-gnu, or just x86_64, aarch64, arm64)", triple);
        return false;
    }
    LLVMTargetRef tgt;
    char *msg = NULL;
    if (LLVMGetTargetFromTriple(t->triple, &tgt, &msg)) {
        errbuf_fail(err, errlen, "no LLVM target for '%s': %s", t->triple, msg ? msg : "?");
        LLVMDisposeMessage(msg);
        return false;
    }
    return true;
}

bool
cg_target_host(CgTarget *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    init_backends();
    char *triple = LLVMGetDefaultTargetTriple();
    bool ok = set_triple(t, triple, err, errlen);
    LLVMDisposeMessage(triple);
    if (!ok)
        return false;
    char *feats = LLVMGetHostCPUFeatures();
    char *cpu = LLVMGetHostCPUName();
    if (strlen(feats) >= sizeof t->features || strlen(cpu) >= sizeof t->cpu) {
        errbuf_fail(err, errlen, "host feature string or CPU name too long");
        LLVMDisposeMessage(feats);
        LLVMDisposeMessage(cpu);
        return false;
    }
    /* QDQC_HOST_CPU=NAME replaces the host CPU name (tuning only; the features stay the host's):
     * for hosts LLVM names wrongly, and for tests that show the output of every pinned compile
     * is independent of it (CI runs the codegen tests under two such names). */
    const char *fake = getenv("QDQC_HOST_CPU");
    if (fake && *fake) {
        bool known = false;
        for (size_t i = 0; i < sizeof cpu_table / sizeof cpu_table[0]; i++)
            known |= cpu_table[i].x86 == t->x86 && strcmp(cpu_table[i].name, fake) == 0;
        if (!known) {
            errbuf_fail(err, errlen, "QDQC_HOST_CPU='%.63s' is not a CPU qdqc knows for %s "
                    "(docs/targets.md)", fake, t->x86 ? "x86-64" : "aarch64");
            LLVMDisposeMessage(feats);
            LLVMDisposeMessage(cpu);
            return false;
        }
        LLVMDisposeMessage(cpu);
        cpu = LLVMCreateMessage(fake);
    }
    strcpy(t->features, feats);
    /* The CPU name only tunes scheduling; every ISA decision reads the feature string, which
     * lists each feature explicitly as + or - and so overrides whatever the name implies. */
    strcpy(t->cpu, cpu[0] ? cpu : "generic");
    LLVMDisposeMessage(cpu);
    bool f[F_COUNT] = {0};
    if (t->aarch64)
        flag_enable(f, F_NEON);
    ok = apply_feature_list(f, t->x86, feats, NULL, false, err, errlen);
    LLVMDisposeMessage(feats);
    store_flags(t, f);
    return ok;
}

bool
cg_target_parse(CgTarget *t, const char *triple, const char *mcpu, const char *mattr, char *err,
                size_t errlen)
{
    init_backends();
    CgTarget host;
    char herr[256];
    bool have_host = cg_target_host(&host, herr, sizeof herr);
    memset(t, 0, sizeof *t);
    if (triple && *triple) {
        if (!set_triple(t, triple, err, errlen))
            return false;
    } else {
        if (!have_host) {
            errbuf_fail(err, errlen, "%s", herr);
            return false;
        }
        strcpy(t->triple, host.triple);
        t->x86 = host.x86;
        t->aarch64 = host.aarch64;
    }
    bool same_arch = have_host && host.x86 == t->x86 && host.aarch64 == t->aarch64;
    bool f[F_COUNT] = {0};
    if (t->aarch64)
        flag_enable(f, F_NEON);
    const char *cpu = (mcpu && *mcpu) ? mcpu : "generic";
    if (strcmp(cpu, "native") == 0) {
        if (!same_arch) {
            errbuf_fail(err, errlen, "-mcpu=native needs a target of the host's architecture");
            return false;
        }
        strcpy(t->cpu, host.cpu);
        strcpy(t->features, host.features);
        for (int i = 0; i < F_COUNT; i++)
            f[i] = flag_get(&host, i);
    } else {
        const CpuInfo *ci = NULL;
        for (size_t i = 0; i < sizeof cpu_table / sizeof cpu_table[0]; i++)
            if (cpu_table[i].x86 == t->x86 && strcmp(cpu_table[i].name, cpu) == 0)
                ci = &cpu_table[i];
        if (!ci) {
            errbuf_fail(err, errlen, "unknown cpu '%s' for %s (see docs/targets.md for the list)",
                    cpu, t->x86 ? "x86-64" : "aarch64");
            return false;
        }
        strcpy(t->cpu, ci->name);
        char list[256] = "";
        for (const char *p = ci->feats; *p;) { /* "a,b" -> "+a,+b" */
            const char *e = strchr(p, ',');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            size_t used = strlen(list);
            snprintf(list + used, sizeof list - used, "%s+%.*s", used ? "," : "", (int)len, p);
            p = e ? e + 1 : p + len;
        }
        if (!apply_feature_list(f, t->x86, list, NULL, false, err, errlen))
            return false;
    }
    if (mattr && *mattr) {
        if (!apply_feature_list(f, t->x86, mattr, same_arch ? host.features : NULL, true, err,
                                errlen))
            return false;
        size_t used = strlen(t->features);
        if (used + 1 + strlen(mattr) >= sizeof t->features) {
            errbuf_fail(err, errlen, "feature string too long");
            return false;
        }
        snprintf(t->features + used, sizeof t->features - used, "%s%s", used ? "," : "", mattr);
    }
    store_flags(t, f);
    return true;
}

bool
cg_target_machine_create(const CgTarget *t, LLVMTargetMachineRef *out, char *err, size_t errlen)
{
    init_backends();
    LLVMTargetRef tgt;
    char *msg = NULL;
    if (LLVMGetTargetFromTriple(t->triple, &tgt, &msg)) {
        errbuf_fail(err, errlen, "no LLVM target for '%s': %s", t->triple, msg ? msg : "?");
        LLVMDisposeMessage(msg);
        return false;
    }
    LLVMTargetMachineRef tm =
        LLVMCreateTargetMachine(tgt, t->triple, t->cpu[0] ? t->cpu : "generic", t->features,
                                LLVMCodeGenLevelAggressive, LLVMRelocPIC, LLVMCodeModelDefault);
    if (!tm) {
        errbuf_fail(err, errlen, "cannot create a target machine for '%s'", t->triple);
        return false;
    }
    *out = tm;
    return true;
}

void
cg_target_machine_destroy(LLVMTargetMachineRef tm)
{
    if (tm)
        LLVMDisposeTargetMachine(tm);
}

/* Features a pinned --mcpu implies beyond the ISA flags of cpu_table (which t->features lists):
 * LLVM enables them from target-cpu, so a kernel may use them; a host's own feature string
 * lists them already. */
static const struct {
    const char *cpu, *feats;
} cpu_implied[] = {
    {"icelake-client", "avx512vbmi,avx512vbmi2,avx512bitalg,avx512vpopcntdq"},
    {"icelake-server", "avx512vbmi,avx512vbmi2,avx512bitalg,avx512vpopcntdq"},
    {"tigerlake", "avx512vbmi,avx512vbmi2,avx512bitalg,avx512vpopcntdq"},
    {"rocketlake", "avx512vbmi,avx512vbmi2,avx512bitalg,avx512vpopcntdq"},
    {"sapphirerapids", "avx512vbmi,avx512vbmi2,avx512bitalg,avx512vpopcntdq"},
    {"emeraldrapids", "avx512vbmi,avx512vbmi2,avx512bitalg,avx512vpopcntdq"},
    {"graniterapids", "avx512vbmi,avx512vbmi2,avx512bitalg,avx512vpopcntdq"},
    {"znver4", "avx512vbmi,avx512vbmi2,avx512bitalg,avx512vpopcntdq"},
    {"znver5", "avx512vbmi,avx512vbmi2,avx512bitalg,avx512vpopcntdq"},
};

/* the last +name / -name in list: 1 on, 0 off, -1 not mentioned */
static int
list_mentions(const char *list, const char *name, bool signed_list)
{
    size_t nlen = strlen(name);
    int on = -1;
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (signed_list && len == nlen + 1 && memcmp(p + 1, name, nlen) == 0)
            on = p[0] == '+';
        else if (!signed_list && len == nlen && memcmp(p, name, nlen) == 0)
            on = 1;
        p = e ? e + 1 : p + len;
    }
    return on;
}

bool
cg_target_has_feature(const CgTarget *t, const char *name)
{
    int on = list_mentions(t->features, name, true);
    if (on >= 0)
        return on == 1;
    for (size_t i = 0; i < sizeof cpu_implied / sizeof cpu_implied[0]; i++)
        if (strcmp(t->cpu, cpu_implied[i].cpu) == 0)
            return list_mentions(cpu_implied[i].feats, name, false) == 1;
    return false;
}
