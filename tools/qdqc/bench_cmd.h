/* bench_cmd.h: `qdqc bench MODEL [--threads N] [--iters K] [--warmup W] [--profile |
 * --par-profile] [--json]`: JIT-compile MODEL (after the default pipeline, or --passes) and time
 * inferences on deterministic random inputs; --shape NAME=D0xD1... times a model compiled with
 * a run-time dimension (--dim N=LO..HI) at that shape, through qdqc_jit_run_shapes. --profile and --par-profile need the model compiled
 * with the compile option "profile" (the caller sets it in copts). */
#ifndef QDQC_TOOL_BENCH_CMD_H
#define QDQC_TOOL_BENCH_CMD_H

#include <qdqc/qdqc.h>

#include <stdbool.h>

enum { BENCH_MAX_SHAPES = 8 };

typedef struct BenchOpts {
    const char *model;
    const char *passes;                /* NULL = default pipeline */
    const qdqc_compile_options *copts; /* target options (NULL = host) */
    int threads;                       /* 0/1 = the calling thread only */
    int iters;                         /* timed runs (default 20) */
    int warmup;                        /* untimed runs first (default 3) */
    bool par_profile;                  /* --par-profile: par_profile.h instead of timing */
    bool profile;                      /* --profile: each step's time by node instead */
    bool json;                         /* --json: one JSON object instead of text */
    const char *shapes[BENCH_MAX_SHAPES]; /* --shape NAME=DIMS: run a model with a run-time
                                           * dimension at these input shapes */
    int nshapes;
} BenchOpts;

/* Prints "median <X> ms", min, p90, GOPS and the workspace (with par_profile: the report of
 * par_profile.h for `threads` threads, default 2, from warmup + iters runs; with profile: each
 * step's minimum time over the iters runs after warmup, its share of their sum and its GOPS,
 * slowest first, by ONNX node name); with json the same as one JSON object on one line.
 * Returns an exit code (0 ok, 1 bad input with diagnostics printed). */
int qdqc_cli_bench(qdqc_context *ctx, const BenchOpts *o);

#endif
