/* target.h: the machine qdqc compiles for (triple, CPU, features) and the ISA facts the kernel
 * emitters select on.
 *
 * Kernels are chosen from the feature string, never from the CPU name: LLVMGetHostCPUName()
 * misreports some hosts (a Sapphire Rapids class VM shows up as "rocketlake"), and selecting an
 * intrinsic the target lacks makes LLVM abort in instruction selection. The booleans below are
 * what the feature string enables, closed under the implications kernels rely on (avx512vnni
 * implies avx512f, dotprod implies neon, ...).
 */
#ifndef QDQC_CODEGEN_TARGET_H
#define QDQC_CODEGEN_TARGET_H

#include <stdbool.h>
#include <stddef.h>

/* Same spelling as llvm-c/TargetMachine.h, so this header needs no LLVM include path (a repeated
 * identical typedef is valid C11). */
typedef struct LLVMOpaqueTargetMachine *LLVMTargetMachineRef;

typedef struct CgTarget {
    char triple[128];    /* normalized, e.g. "x86_64-pc-linux-gnu", "aarch64-unknown-linux-gnu" */
    char cpu[64];        /* passed to the TargetMachine; "generic" unless asked for */
    char features[1024]; /* LLVM feature string, e.g. "+avx2,+avx512vnni,-amx-tile" */
    bool x86, aarch64;
    bool avx2, avx512f, avx512bw, avx512vl, avx512vnni, avxvnni;
    bool neon, dotprod, i8mm;
} CgTarget;

/* The machine this process runs on: default triple, host feature string (LLVMGetHostCPUFeatures),
 * host CPU name for scheduling. False (and a message in err) if the host is neither x86-64 nor
 * AArch64 or LLVM has no target for it. */
bool
cg_target_host(CgTarget *t, char *err, size_t errlen);

/* A target from --target= --mcpu= --mattr=. triple NULL/"" = host triple; mcpu NULL/"" =
 * "generic", "native" = the host CPU and its features; mattr NULL/"" = none, else a comma list
 * of +feat/-feat added after the CPU's own features. CPU names outside a small built-in table
 * (docs/targets.md) are refused, since the LLVM C API cannot tell us their features and LLVM
 * would only warn on stderr for an unknown one. Feature names outside the known list are refused
 * for the same reason. */
bool
cg_target_parse(CgTarget *t, const char *triple, const char *mcpu, const char *mattr, char *err,
                size_t errlen);

/* A TargetMachine for t: optimization level Aggressive, PIC relocations, default code model.
 * Caller owns *out (LLVMDisposeTargetMachine). */
bool
cg_target_machine_create(const CgTarget *t, LLVMTargetMachineRef *out, char *err, size_t errlen);

/* LLVMDisposeTargetMachine, for callers without the LLVM include path. NULL is a no-op. */
void
cg_target_machine_destroy(LLVMTargetMachineRef tm);

/* The name of the first feature boolean of CgTarget (target.c's flag table, in its order:
 * avx2 ... avxvnni, neon, dotprod, i8mm) that `want` has and `have` lacks, NULL if none: code
 * compiled for want may fault on have. */
const char *
cg_target_missing_flag(const CgTarget *want, const CgTarget *have);

/* Whether feature `name` (without +/-) is enabled: its last mention in t->features, else
 * whether a pinned CPU implies it (target.c cpu_implied: the AVX-512 VBMI family). */
bool
cg_target_has_feature(const CgTarget *t, const char *name);

#endif
