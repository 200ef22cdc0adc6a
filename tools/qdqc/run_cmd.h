/* run_cmd.h: `qdqc run`: load a model, apply passes, run it on .npy (or random) inputs with
 * the chosen engine, print a summary of each output, compare outputs with expected arrays
 * and write one .npy per graph output. */
#ifndef QDQC_TOOL_RUN_CMD_H
#define QDQC_TOOL_RUN_CMD_H

#include <qdqc/qdqc.h>

#include <stdbool.h>
#include <stdint.h>

typedef struct RunOpts {
    const char *model;
    const char *engine;      /* "jit" or "ref"; NULL = the default engine (jit) */
    const char *output_dir;  /* NULL: write no files */
    const char *passes;      /* NULL = default pipeline; "" = none (graph as imported) */
    const char **inputs;     /* "NAME=FILE.npy" */
    int ninputs;
    const char **expects;    /* "NAME=FILE.npy" or, for a one-output model, "FILE.npy" */
    int nexpects;
    double tolerance;        /* --tolerance: largest accepted |difference| */
    bool tolerance_quantized; /* in quantized units (--tolerance Tq) */
    bool random_inputs;
    uint64_t seed;
    const qdqc_compile_options *copts; /* --engine=jit: target options (NULL = host) */
    int threads;                       /* --threads N (jit) */
} RunOpts;

/* Returns an exit code: 0 ok, 1 bad input (diagnostics printed), a failed write or an output
 * beyond the tolerance, 2 usage error. */
int qdqc_cli_run(qdqc_context *ctx, const RunOpts *o);

#endif
