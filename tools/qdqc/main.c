/* main.c: the qdqc command line. Flags, printing diagnostics, exit codes; no compiler logic
 * (everything goes through the public API in include/qdqc/).
 *
 * Exit codes: 0 success; 1 bad input (diagnostics printed), a failed write (the OS reason
 * printed) or, for `run --expect`, an output beyond the tolerance; 2 usage error (unknown
 * command or option, bad option value). Internal errors abort with file:line.
 * Every file is written whole or not at all (support/file_write.h). */
#define _POSIX_C_SOURCE 200809L
#include <qdqc/qdqc.h>

#include "bench_cmd.h"
#include "cli_util.h"
#include "compare_cmd.h"
#include "run_cmd.h"
#include "support/file_write.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_OK = 0, EXIT_INPUT = 1, EXIT_USAGE = 2 };
enum { MAX_OUTPUTS = 8 };

typedef struct Opts {
    const char *cmd; /* NULL (compile), "opt", "run", "bench" */
    const char *input;
    const char *outputs[MAX_OUTPUTS]; /* -o, repeatable */
    int noutputs;
    const char *emit;
    bool target_opts; /* one of --target --mcpu --mattr --isa --name was given */
    const char *passes;
    bool split_input_file;
    bool report; /* --report: what each node became, to standard output */
    bool remarks;
    bool verbose; /* -v: each phase and its time, to standard error */
    bool list_passes;
    qdqc_context *ctx;
    RunOpts run; /* qdqc run */
    BenchOpts bench; /* qdqc bench */
    qdqc_compile_options *copts; /* --target --mcpu --mattr --name --isa */
    bool dim_range; /* a --dim NAME=LO..HI: the passes run at compile time, on each size */
} Opts;

static const char usage_text[] =
    "usage: qdqc MODEL [options]          compile MODEL (.onnx, .qir, .mlir; - for stdin)\n"
    "       qdqc opt FILE [options]       run passes on text IR (test driver)\n"
    "       qdqc run MODEL [--engine=jit|ref] [--input [NAME=]FILE.npy ...] [--random-inputs SEED]\n"
    "                [--output-dir DIR] [--expect [NAME=]FILE.npy ...] [--tolerance T[q]]\n"
    "                                     run MODEL, print a summary of each output, compare\n"
    "                                     with expected arrays, write one .npy per output\n"
    "       qdqc compare FLOAT.onnx QDQ.onnx [options]\n"
    "                                     per-layer error of the QDQ graph against the float\n"
    "                                     model and of the compiled code against the QDQ graph\n"
    "                                     (qdqc compare --help; docs/accuracy.md)\n"
    "       qdqc bench MODEL [--threads N] [--iters K] [--warmup W] [--shape NAME=DIMS]\n"
    "                [--profile | --par-profile] [--json]\n"
    "                                     JIT-compile MODEL and time it: median, min, p90\n"
    "                                     latency and GOPS (2 x int8 MACs / median)\n"
    "\n"
    "options:\n"
    "  -o FILE                 output file ('-' for standard output, the default); the kind\n"
    "                          follows the suffix: .o/.obj object, .h C header (docs/abi.md),\n"
    "                          .s assembly, .ll LLVM IR, .bc LLVM bitcode, .mlir MLIR, .qir\n"
    "                          text IR, .dot Graphviz. Repeatable: -o m.o -o m.h writes both\n"
    "                          from one compile. Each file is written whole or not at all\n"
    "  --emit=KIND[,KIND...]   what to write, whatever the suffix: obj, asm, llvm, bc, header,\n"
    "                          ir (text IR after the pipeline; the default for standard\n"
    "                          output), dot (integer ops green, float islands orange), mlir\n"
    "                          (tosa/linalg, docs/mlir.md). Several kinds: one -o per kind, or\n"
    "                          one -o FILE whose stem names them all (--emit=obj,header\n"
    "                          -o m.o writes m.o and m.h from one compile)\n"
    "  --report                what each node became or why it stayed float, with totals\n"
    "                          (to standard output; the IR is then written only with -o)\n"
    "  --name=PREFIX           symbol prefix of the generated code (default: model)\n"
    "  --target=TRIPLE         target triple (default: the host); short names: x86_64 (or\n"
    "                          x86-64, amd64) and aarch64 (or arm64) for *-unknown-linux-gnu\n"
    "  --mcpu=CPU              target CPU (default: generic, with the host's features)\n"
    "  --mattr=+f1,-f2         target features (e.g. +avx512vnni, +dotprod, +i8mm)\n"
    "  --isa=PATH              force a GEMM kernel path (generic, avx2, avxvnni, avx512vnni,\n"
    "                          neon, dotprod, i8mm)\n"
    "  --profile               (compile) also emit PREFIX_run_profile, which calls a hook\n"
    "                          before and after every step (docs/abi.md)\n"
    "  --threads N             (run, bench) threads of the jit engine\n"
    "  --passes=A,B,...        passes to run ('default' = the default pipeline);\n"
    "                          compile mode runs the default pipeline, opt mode none\n"
    "  --list-passes           list the passes and exit\n"
    "  --strict                import warnings about invalid input (an attribute the op or\n"
    "                          its opset does not define) are errors\n"
    "  --verify-each           run the verifier after every pass\n"
    "  --print-after=A,B       print the IR after the named passes (to stderr)\n"
    "  --print-after-all       print the IR after every pass (to stderr)\n"
    "  --time-passes           report the time each pass and each phase takes, LLVM's\n"
    "                          included (remarks 'pass NAME: X ms', 'phase NAME: X ms'),\n"
    "                          and at exit LLVM's own per-pass report (its -time-passes)\n"
    "  -v, --verbose           print each phase as it ends, with its time: import,\n"
    "                          passes, lower (graph to LLVM IR), merge (functions\n"
    "                          that differ only in their constants share a body),\n"
    "                          llvm-opt (LLVM's optimisation pipeline), emit-obj/emit-asm\n"
    "                          (machine code),\n"
    "                          jit, write; then the total\n"
    "  --requant=float|fixed   requantization arithmetic (docs/numerics.md)\n"
    "  --weight-only=float|int8-acts\n"
    "                          weight-only matmuls (wmatmul) on f32 activations (float, the\n"
    "                          default) or on activations quantized to int8 per row at run\n"
    "                          time, through the int8 dot-product GEMM: faster, an\n"
    "                          approximation (docs/numerics.md, \"int8 activations\")\n"
    "  --keep-float A,B        leave the ONNX nodes A and B float islands (their quantize\n"
    "                          and dequantize explicit): no integer op is made of them\n"
    "  --input-shape NAME=DIMS fix a dynamic input shape, e.g. x=1x3x224x224 (repeatable)\n"
    "  --dim NAME=N            bind the symbolic dimension NAME (an ONNX dim_param, a text-IR\n"
    "                          ?NAME) to N in every input and shape (repeatable)\n"
    "  --dim NAME=LO..HI       keep NAME a run-time dimension: the object's\n"
    "                          PREFIX_run_shapes takes any NAME in [LO, HI] (a batch-like\n"
    "                          dimension; docs/abi.md, \"Run-time dimensions\")\n"
    "  --const-input NAME=FILE.npy\n"
    "                          freeze ONNX graph input NAME to the array's value: it is no\n"
    "                          longer an input but a compile-time constant (repeatable)\n"
    "  --split-input-file      (opt) treat '// -----' lines as separate inputs\n"
    "  --engine=jit|ref        (run) execution engine: jit (compiled in process, the default)\n"
    "                          or ref (reference interpreter)\n"
    "  --iters K, --warmup W   (bench) timed runs (default 20) after W untimed ones (3)\n"
    "  --shape NAME=D0xD1x...  (bench) time a model compiled with a run-time dimension\n"
    "                          (--dim N=LO..HI) at this input shape (repeatable)\n"
    "  --profile               (bench) instead of timing: each node's time (min over the K\n"
    "                          runs), its share of the total and its GOPS, slowest first,\n"
    "                          by ONNX node name\n"
    "  --par-profile           (bench) instead of timing: run every parallel region's units\n"
    "                          on one thread, time them (min over W + K runs) and predict the\n"
    "                          scaling at --threads N (default 2): serial share, imbalance;\n"
    "                          regions named by node\n"
    "  --json                  (bench) the results as one JSON object\n"
    "  --input NAME=FILE.npy   (run) value of graph input NAME (repeatable); a model with\n"
    "                          one input also takes --input FILE.npy\n"
    "  --random-inputs SEED    (run) generate the inputs not given, deterministically\n"
    "  --output-dir DIR        (run) write each output to DIR/NAME.npy: NAME is the output's\n"
    "                          name with characters outside [A-Za-z0-9_.-], a leading '.'\n"
    "                          and a '.' after a '.' replaced by '_', made unique with _2,\n"
    "                          _3, ... (the mapping is printed)\n"
    "                          run applies the default pipeline; --passes= (empty) runs the\n"
    "                          graph as imported (literal QDQ semantics)\n"
    "  --expect NAME=FILE.npy  (run) compare output NAME with the array (same shape): max\n"
    "                          abs difference, also in quantized units for an output that a\n"
    "                          dequantize produces; a model with one output takes FILE.npy\n"
    "  --tolerance T[q]        (run) largest accepted difference (default 0): T in the\n"
    "                          output's units, or Tq in quantized units (whole steps\n"
    "                          counted exactly: N steps pass at Nq)\n"
    "  -Rpass                  print optimization remarks\n"
    "  --help, --version\n"
    "\n"
    "exit codes: 0 success; 1 bad input, a failed write, or (run --expect) an output beyond\n"
    "the tolerance; 2 usage error: unknown command or option, bad option value\n";

static void
diag_printer(void *user, qdqc_severity sev, const char *loc, const char *msg)
{
    Opts *o = user;
    if (sev == QDQC_SEV_REMARK && !o->remarks)
        return;
    static const char *names[] = {"note", "remark", "warning", "error"};
    if (loc && *loc)
        fprintf(stderr, "%s: %s: %s\n", loc, names[sev], msg);
    else
        fprintf(stderr, "qdqc: %s: %s\n", names[sev], msg);
}

static double
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* -v: one line per phase as it ends (the library's phases, then the driver's "write") */
static void
phase_printer(void *user, const char *phase, double ms)
{
    (void)user;
    fprintf(stderr, "qdqc: %s: %.3f ms\n", phase, ms);
}

/* --time-passes: LLVM's own per-pass report too (its option -time-passes, through the
 * variable QDQC_LLVM_OPTIONS that the library reads once, when it first sets LLVM up; the
 * report covers the optimisation pipeline and the machine-code passes and prints when the
 * process exits). */
static void
llvm_time_passes(void)
{
    const char *cur = getenv("QDQC_LLVM_OPTIONS");
    if (cur && strstr(cur, "-time-passes"))
        return;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s%s-time-passes", cur ? cur : "", cur && *cur ? " " : "");
    setenv("QDQC_LLVM_OPTIONS", buf, 1);
}

static void
print_to_stderr(void *user, const char *text)
{
    (void)user;
    fputs(text, stderr);
}

static int
usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "qdqc: error: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see qdqc --help)\n");
    va_end(ap);
    return EXIT_USAGE;
}

/* Write a whole output file (see support/file_write.h); prints the error. */
static bool
write_output(const char *path, const char *data, size_t len)
{
    char err[1200];
    if (write_file_atomic(path, data, len, err, sizeof err))
        return true;
    fprintf(stderr, "qdqc: error: %s\n", err);
    return false;
}

/* Run the passes on m (destroyed) and print it; returns an exit code. */
static int
opt_module(Opts *o, qdqc_module *m, FILE *out)
{
    int rc = EXIT_OK;
    if (o->passes && *o->passes && qdqc_module_run_passes(m, o->passes) != QDQC_OK)
        rc = EXIT_INPUT;
    if (rc == EXIT_OK) {
        char *s = qdqc_module_print(m);
        fputs(s, out);
        qdqc_string_free(s);
    }
    qdqc_module_destroy(m);
    return rc;
}

/* Process one text-IR buffer in opt mode; returns an exit code. */
static int
opt_one(Opts *o, const char *text, size_t len, const char *name, FILE *out)
{
    qdqc_module *m = NULL;
    if (qdqc_module_parse(o->ctx, text, len, name, &m) != QDQC_OK)
        return EXIT_INPUT;
    return opt_module(o, m, out);
}

static int
run_opt(Opts *o)
{
    if (o->dim_range)
        return usage_error("opt: --dim NAME=LO..HI defers the passes to compile time (they run "
                           "on the model at each size); give --dim NAME=<size> to see the IR");
    size_t len;
    size_t il = strlen(o->input);
    if (!o->split_input_file && il > 5 && strcmp(o->input + il - 5, ".onnx") == 0) {
        /* an ONNX model: imported, then as text IR */
        qdqc_module *m = NULL;
        if (qdqc_module_load_file(o->ctx, o->input, &m) != QDQC_OK)
            return EXIT_INPUT;
        return opt_module(o, m, stdout);
    }
    char *text = cli_slurp(o->input, &len);
    if (!text) {
        fprintf(stderr, "%s: error: cannot read file: %s\n", o->input, strerror(errno));
        return EXIT_INPUT;
    }
    if (o->noutputs > 1) {
        free(text);
        return usage_error("'qdqc opt' writes one output (-o given %d times)", o->noutputs);
    }
    char *obuf = NULL;
    size_t olen = 0;
    FILE *out = open_memstream(&obuf, &olen);
    if (!out) {
        free(text);
        fprintf(stderr, "qdqc: error: out of memory\n");
        return EXIT_INPUT;
    }
    int rc = EXIT_OK;
    if (!o->split_input_file) {
        rc = opt_one(o, text, len, o->input, out);
    } else {
        /* Split at lines "// -----"; each chunk keeps its line numbers by being prefixed
         * with the newlines that precede it. */
        size_t start = 0, line = 1, chunk_line = 1;
        bool first = true;
        for (size_t i = 0; i <= len; i++) {
            bool at_line_start = i == 0 || text[i - 1] == '\n';
            bool sep = at_line_start && len - i >= 8 && strncmp(text + i, "// -----", 8) == 0;
            if (sep || i == len) {
                size_t clen = i - start;
                char *buf = malloc(chunk_line - 1 + clen + 1);
                memset(buf, '\n', chunk_line - 1);
                memcpy(buf + chunk_line - 1, text + start, clen);
                if (!first)
                    fputs("// -----\n", out);
                first = false;
                int r = opt_one(o, buf, chunk_line - 1 + clen, o->input, out);
                if (r != EXIT_OK)
                    rc = r;
                free(buf);
                qdqc_context_clear_diagnostics(o->ctx);
                if (i == len)
                    break;
                /* skip the separator line */
                while (i < len && text[i] != '\n')
                    i++;
                start = i + 1;
                line++;
                chunk_line = line + 0;
                continue;
            }
            if (i < len && text[i] == '\n') {
                line++;
            }
        }
    }
    bool closed = fclose(out) == 0;
    free(text);
    if (!closed) {
        fprintf(stderr, "qdqc: error: out of memory\n");
        rc = EXIT_INPUT;
    }
    /* on standard output, what the inputs that passed gave (--split-input-file tests check
     * it next to the others' errors); a file only when all passed */
    const char *path = o->noutputs ? o->outputs[0] : "-";
    if (closed && (rc == EXIT_OK || !strcmp(path, "-")) && !write_output(path, obuf, olen))
        rc = EXIT_INPUT;
    free(obuf);
    return rc;
}

/* Output kinds: --emit name, the -o suffixes that select it, and the code generator's kind
 * (-1: written from the module itself). */
enum { K_OBJ, K_ASM, K_LLVM, K_BC, K_HEADER, K_IR, K_DOT, K_MLIR, K_COUNT };
static const struct {
    const char *name, *suffix, *suffix2, *what;
    int emit;
} out_kinds[K_COUNT] = {
    [K_OBJ] = {"obj", ".o", ".obj", "object", QDQC_EMIT_OBJ},
    [K_ASM] = {"asm", ".s", NULL, "assembly", QDQC_EMIT_ASM},
    [K_LLVM] = {"llvm", ".ll", NULL, "LLVM IR", QDQC_EMIT_LLVM},
    [K_BC] = {"bc", ".bc", NULL, "LLVM bitcode", QDQC_EMIT_BITCODE},
    [K_HEADER] = {"header", ".h", NULL, "C header", QDQC_EMIT_HEADER},
    [K_IR] = {"ir", ".qir", NULL, "text IR", -1},
    [K_DOT] = {"dot", ".dot", NULL, "Graphviz", -1},
    [K_MLIR] = {"mlir", ".mlir", NULL, "MLIR", -1},
};

static bool
ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = suffix ? strlen(suffix) : 0;
    return k && n > k && strcmp(s + n - k, suffix) == 0 && s[n - k - 1] != '/';
}

/* The kind a file name's suffix selects, or -1. */
static int
kind_of_path(const char *path)
{
    for (int k = 0; k < K_COUNT; k++)
        if (ends_with(path, out_kinds[k].suffix) || ends_with(path, out_kinds[k].suffix2))
            return k;
    return -1;
}

static int
suffix_error(const char *path)
{
    char list[512];
    int w = 0;
    for (int k = 0; k < K_COUNT; k++)
        w += snprintf(list + w, sizeof list - (size_t)w, "%s%s%s%s (%s)", k ? ", " : "",
                      out_kinds[k].suffix, out_kinds[k].suffix2 ? "/" : "",
                      out_kinds[k].suffix2 ? out_kinds[k].suffix2 : "", out_kinds[k].what);
    return usage_error("cannot tell what to write to '%s' from its suffix: use --emit=KIND or "
                       "one of %s", path, list);
}

/* What to write where: paths[i] gets kinds[i] (K_*). Returns an exit code. */
static int
plan_outputs(const Opts *o, char **paths, int *kinds, int *n)
{
    int nemit = 0, emit[K_COUNT];
    if (o->emit) {
        const char *p = o->emit;
        for (;;) {
            const char *e = strchr(p, ',');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            int k = 0;
            while (k < K_COUNT && !(strlen(out_kinds[k].name) == len &&
                                    strncmp(out_kinds[k].name, p, len) == 0))
                k++;
            if (k == K_COUNT)
                return usage_error("--emit=%.*s is not supported (obj, asm, llvm, bc, header, "
                                   "ir, dot, mlir)", (int)len, p);
            for (int j = 0; j < nemit; j++)
                if (emit[j] == k)
                    return usage_error("--emit names '%s' twice", out_kinds[k].name);
            emit[nemit++] = k;
            if (!e)
                break;
            p = e + 1;
        }
    }
    *n = 0;
    if (nemit == 0 && o->noutputs == 0) {
        paths[0] = strdup("-");
        kinds[(*n)++] = K_IR;
    } else if (nemit == 0) {
        for (int i = 0; i < o->noutputs; i++) {
            /* standard output, or a device such as /dev/null: text IR, as with no -o */
            struct stat st;
            bool stream = strcmp(o->outputs[i], "-") == 0 ||
                          (stat(o->outputs[i], &st) == 0 && (S_ISCHR(st.st_mode) ||
                                                            S_ISFIFO(st.st_mode)));
            int k = kind_of_path(o->outputs[i]);
            if (k < 0 && stream)
                k = K_IR;
            if (k < 0)
                return suffix_error(o->outputs[i]);
            paths[*n] = strdup(o->outputs[i]);
            kinds[(*n)++] = k;
        }
    } else if (nemit == o->noutputs || (nemit == 1 && o->noutputs == 0)) {
        for (int i = 0; i < nemit; i++) {
            paths[*n] = strdup(o->noutputs ? o->outputs[i] : "-");
            kinds[(*n)++] = emit[i];
        }
    } else if (o->noutputs == 1 && strcmp(o->outputs[0], "-") != 0) {
        /* one -o FILE for several kinds: FILE's stem with each kind's suffix */
        const char *f = o->outputs[0];
        int fk = kind_of_path(f);
        size_t stem = strlen(f);
        if (fk >= 0)
            stem -= strlen(ends_with(f, out_kinds[fk].suffix) ? out_kinds[fk].suffix
                                                               : out_kinds[fk].suffix2);
        for (int i = 0; i < nemit; i++) {
            const char *suf = out_kinds[emit[i]].suffix;
            char *q = malloc(stem + strlen(suf) + 1);
            if (q) {
                memcpy(q, f, stem);
                strcpy(q + stem, suf);
            }
            paths[*n] = q;
            kinds[(*n)++] = emit[i];
        }
    } else if (nemit == 1) {
        return usage_error("--emit=%s names one kind for %d -o files", o->emit, o->noutputs);
    } else {
        return usage_error("--emit=%s names %d kinds: give one -o per kind, or one -o FILE "
                           "whose stem names them all", o->emit, nemit);
    }
    for (int i = 0; i < *n; i++) {
        if (!paths[i]) {
            fprintf(stderr, "qdqc: error: out of memory\n");
            return EXIT_INPUT;
        }
        for (int j = 0; j < i; j++)
            if (!strcmp(paths[i], paths[j]))
                return usage_error(strcmp(paths[i], "-") ? "'%s' is named by two outputs"
                                   : "only one output can go to standard output ('%s')",
                                   paths[i]);
    }
    return EXIT_OK;
}

/* After the default pipeline: a model that kept no integer op compiles to float code; say
 * why. Not for text IR, where float-only graphs are deliberate (tests). */
static void
warn_if_no_integer_op(const Opts *o, qdqc_module *m)
{
    if (qdqc_module_op_count(m, "integer") != 0 || qdqc_module_op_count(m, "float") == 0 ||
        qdqc_module_op_count(m, "weight-only") != 0) /* weight-only quantization: deliberate */
        return;
    size_t nqdq = qdqc_module_op_count(m, "qdq");
    if (nqdq == 0)
        fprintf(stderr, "%s: warning: no integer op: the model has no QuantizeLinear/"
                        "DequantizeLinear nodes, so it compiles to float code (a float model, "
                        "not its QDQ export?)\n", o->input);
    else
        fprintf(stderr, "%s: warning: no integer op: none of the model's %zu quantize/"
                        "dequantize nodes folded into an integer op, so it compiles to float "
                        "code (--report says why each node stayed float)\n", o->input, nqdq);
}

/* --report's workspace line, from the generated header (docs/abi.md); "n/a" without one. */
static void
print_workspace(const char *h)
{
    const char *p = h ? strstr(h, "_WORKSPACE_SIZE ") : NULL;
    while (p && !(p[16] >= '0' && p[16] <= '9')) /* the #define, not the comment */
        p = strstr(p + 16, "_WORKSPACE_SIZE ");
    if (p)
        printf("        workspace peak: %llu bytes (activations and scratch, planned by "
               "liveness)\n", strtoull(p + 16, NULL, 10));
    else
        printf("        workspace peak: n/a (the graph does not compile for this target)\n");
}

static void
silent_diag(void *user, qdqc_severity sev, const char *loc, const char *msg)
{
    (void)user;
    (void)sev;
    (void)loc;
    (void)msg;
}

static int
run_compile(Opts *o)
{
    char *paths[MAX_OUTPUTS] = {0};
    int kinds[MAX_OUTPUTS], nout = 0;
    char *data[MAX_OUTPUTS + 1] = {0};
    size_t lens[MAX_OUTPUTS + 1] = {0};
    qdqc_module *m = NULL;
    int rc = plan_outputs(o, paths, kinds, &nout);
    /* with --report alone, the report replaces the IR on standard output */
    if (o->report && !o->noutputs && !o->emit)
        nout = 0;
    if (rc != EXIT_OK)
        goto done;
    for (int i = 0; o->dim_range && i <= nout; i++)
        if (i == nout ? o->report : out_kinds[kinds[i]].emit < 0) {
            rc = usage_error("--dim NAME=LO..HI compiles the model at each size inside the "
                             "compile: the IR, dot, MLIR and --report outputs need "
                             "--dim NAME=<size>");
            goto done;
        }
    if (cli_load_module(o->ctx, o->input, &m) != QDQC_OK) {
        rc = EXIT_INPUT;
        goto done;
    }
    /* as in run and bench: an empty --passes= compiles the graph as imported */
    const char *passes = o->passes ? o->passes : "default";
    if (*passes && qdqc_module_run_passes(m, passes) != QDQC_OK) {
        rc = EXIT_INPUT;
        goto done;
    }
    if (!strcmp(passes, "default") && !ends_with(o->input, ".qir") && strcmp(o->input, "-") != 0 &&
        !o->dim_range)
        warn_if_no_integer_op(o, m);
    /* the code generator's kinds from one compile; --report adds the header (its workspace) */
    qdqc_emit_kind ck[MAX_OUTPUTS + 1];
    int slot[MAX_OUTPUTS + 1], header = -1;
    size_t ncg = 0;
    for (int i = 0; i < nout; i++)
        if (out_kinds[kinds[i]].emit >= 0) {
            if (kinds[i] == K_HEADER)
                header = i;
            slot[ncg] = i;
            ck[ncg++] = (qdqc_emit_kind)out_kinds[kinds[i]].emit;
        }
    bool report_header = o->report && header < 0;
    if (report_header) {
        header = MAX_OUTPUTS;
        slot[ncg] = MAX_OUTPUTS;
        ck[ncg++] = QDQC_EMIT_HEADER;
    }
    if (ncg) {
        char *outs[MAX_OUTPUTS + 1];
        size_t olens[MAX_OUTPUTS + 1];
        bool quiet = report_header && ncg == 1; /* a graph that does not compile: "n/a" */
        if (quiet)
            qdqc_context_set_diag_handler(o->ctx, silent_diag, NULL);
        qdqc_status st = qdqc_module_compile_outputs(m, o->copts, ncg, ck, outs, olens);
        if (quiet) {
            qdqc_context_set_diag_handler(o->ctx, diag_printer, o);
            qdqc_context_clear_diagnostics(o->ctx);
        } else if (st != QDQC_OK) {
            rc = EXIT_INPUT;
            goto done;
        }
        for (size_t i = 0; st == QDQC_OK && i < ncg; i++) {
            data[slot[i]] = outs[i];
            lens[slot[i]] = olens[i];
        }
    }
    for (int i = 0; i < nout; i++) {
        if (out_kinds[kinds[i]].emit >= 0)
            continue;
        data[i] = kinds[i] == K_DOT    ? qdqc_module_print_dot(m)
                  : kinds[i] == K_MLIR ? qdqc_module_print_mlir(m)
                                       : qdqc_module_print(m);
        if (!data[i]) {
            rc = EXIT_INPUT;
            goto done;
        }
        lens[i] = strlen(data[i]);
    }
    /* all produced: now write, each file whole or not at all */
    double tw = now_ms();
    for (int i = 0; i < nout; i++)
        if (!write_output(paths[i], data[i], lens[i]))
            rc = EXIT_INPUT;
    if (o->verbose && nout)
        phase_printer(NULL, "write", now_ms() - tw);
    if (rc == EXIT_OK && o->report) {
        char *r = qdqc_module_report(m);
        fputs(r, stdout);
        qdqc_string_free(r);
        print_workspace(header >= 0 ? data[header] : NULL);
    }
done:
    for (int i = 0; i <= MAX_OUTPUTS; i++)
        qdqc_string_free(data[i]);
    for (int i = 0; i < MAX_OUTPUTS; i++)
        free(paths[i]);
    qdqc_module_destroy(m);
    return rc;
}

/* argv[1] looks like a command (a word, no path or suffix) that is not one and names no
 * file. */
static bool
is_unknown_command(const char *a)
{
    if (!a[0] || a[0] == '-' || strchr(a, '.') || strchr(a, '/') || !strcmp(a, "opt") ||
        !strcmp(a, "run") || !strcmp(a, "bench"))
        return false;
    return access(a, F_OK) != 0;
}

static size_t
edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[32];
    if (la >= 31 || lb >= 31)
        return 99;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

static int
unknown_command(const char *a)
{
    static const char *const commands[] = {"opt", "run", "bench", "compare"};
    const char *near = NULL;
    for (size_t i = 0; i < 4; i++)
        if (edit_distance(a, commands[i]) <= 2 && !near)
            near = commands[i];
    char hint[64] = "";
    if (near)
        snprintf(hint, sizeof hint, "; did you mean '%s'?", near);
    return usage_error("unknown command '%s'%s (commands: opt, run, bench, compare; to compile, name a "
                       "model file: .onnx, .qir, .mlir)", a, hint);
}

/* --passes: every name is a pass (or "default"), a usage error before any work otherwise */
static int
check_pipeline(const char *passes)
{
    const char *p = passes;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        bool known = len == 7 && strncmp(p, "default", 7) == 0;
        for (size_t i = 0; !known && i < qdqc_pass_count(); i++)
            known = strlen(qdqc_pass_name(i)) == len && strncmp(qdqc_pass_name(i), p, len) == 0;
        if (!known && len)
            return usage_error("unknown pass '%.*s' (see --list-passes)", (int)len, p);
        if (!e)
            break;
        p = e + 1;
    }
    return EXIT_OK;
}

/* "--name=value" or "--name value": returns the value or NULL. Advances *i when it takes the
 * next argument. */
static const char *
flag_value(int argc, char **argv, int *i, const char *name, bool *matched)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    *matched = false;
    if (strncmp(a, name, n) != 0)
        return NULL;
    if (a[n] == '=') {
        *matched = true;
        return a + n + 1;
    }
    if (a[n] == 0) {
        *matched = true;
        if (*i + 1 < argc)
            return argv[++*i];
        return NULL;
    }
    return NULL;
}

/* The option parsers below return ARG_NOMATCH when argv[*i] is not theirs, ARG_TAKEN when they
 * took it (and its value), or an exit code (>= 0) to finish with: EXIT_OK after --help or
 * --version, EXIT_USAGE for a bad value (the message printed). */
enum { ARG_NOMATCH = -1, ARG_TAKEN = -2 };

/* a flag with a required value: NULL with a usage error when it is missing */
#define NEED_VALUE(v, msg)                                                                     \
    do {                                                                                       \
        if (!(v))                                                                              \
            return usage_error(msg);                                                           \
    } while (0)

/* flags of the driver itself: what to print, emit, which passes, how much to say */
static int
parse_driver_flag(Opts *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    bool m;
    const char *v;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
        fputs(usage_text, stdout);
        return EXIT_OK;
    } else if (strcmp(a, "--version") == 0) {
        printf("qdqc %s\n", qdqc_version_string());
        return EXIT_OK;
    } else if (strcmp(a, "--list-passes") == 0) {
        o->list_passes = true;
    } else if (strcmp(a, "-o") == 0) {
        if (*i + 1 >= argc)
            return usage_error("-o needs a file name");
        if (o->noutputs == MAX_OUTPUTS)
            return usage_error("more than %d -o files", MAX_OUTPUTS);
        o->outputs[o->noutputs++] = argv[++*i];
    } else if ((v = flag_value(argc, argv, i, "--emit", &m)) || m) {
        NEED_VALUE(v, "--emit needs a value");
        o->emit = v;
    } else if ((v = flag_value(argc, argv, i, "--passes", &m)) || m) {
        NEED_VALUE(v, "--passes needs a value");
        o->passes = v;
    } else if ((v = flag_value(argc, argv, i, "--print-after", &m)) || m) {
        NEED_VALUE(v, "--print-after needs a pass name");
        qdqc_context_set_option(o->ctx, "print-after", v);
    } else if (strcmp(a, "--print-after-all") == 0) {
        qdqc_context_set_option(o->ctx, "print-after-all", "1");
    } else if (strcmp(a, "--strict") == 0) {
        qdqc_context_set_option(o->ctx, "strict", "1");
    } else if (strcmp(a, "--verify-each") == 0) {
        qdqc_context_set_option(o->ctx, "verify-each", "1");
    } else if (strcmp(a, "--time-passes") == 0) {
        qdqc_context_set_option(o->ctx, "time-passes", "1");
        o->remarks = true;
        llvm_time_passes();
    } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
        o->verbose = true;
        qdqc_context_set_phase_handler(o->ctx, phase_printer, NULL);
    } else if (strcmp(a, "-Rpass") == 0) {
        qdqc_context_set_option(o->ctx, "remarks", "1");
        o->remarks = true;
    } else if (!o->cmd && strcmp(a, "--profile") == 0) {
        qdqc_compile_options_set(o->copts, "profile", "1"); /* PREFIX_run_profile */
    } else if (strcmp(a, "--report") == 0) {
        o->report = true;
    } else if (strcmp(a, "--split-input-file") == 0) {
        o->split_input_file = true;
    } else {
        return ARG_NOMATCH;
    }
    return ARG_TAKEN;
}

/* flags that change what is compiled: numerics, shapes, constants, the target */
static int
parse_compile_flag(Opts *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    bool m;
    const char *v;
    if ((v = flag_value(argc, argv, i, "--requant", &m)) || m) {
        if (!v || (strcmp(v, "float") != 0 && strcmp(v, "fixed") != 0))
            return usage_error("--requant must be 'float' or 'fixed'");
        qdqc_context_set_option(o->ctx, "requant", v);
    } else if ((v = flag_value(argc, argv, i, "--weight-only", &m)) || m) {
        if (!v || (strcmp(v, "float") != 0 && strcmp(v, "int8-acts") != 0))
            return usage_error("--weight-only must be 'float' or 'int8-acts'");
        qdqc_context_set_option(o->ctx, "weight-only", v);
    } else if ((v = flag_value(argc, argv, i, "--keep-float", &m)) || m) {
        if (!v || !*v)
            return usage_error("--keep-float needs node names (A,B,...)");
        qdqc_context_set_option(o->ctx, "keep-float", v);
    } else if ((v = flag_value(argc, argv, i, "--input-shape", &m)) || m) {
        if (!v || qdqc_context_add_input_shape(o->ctx, v) != QDQC_OK)
            return v ? EXIT_USAGE : usage_error("--input-shape needs NAME=DIMS");
    } else if ((v = flag_value(argc, argv, i, "--dim", &m)) || m) {
        if (!v || qdqc_context_add_dim(o->ctx, v) != QDQC_OK)
            return v ? EXIT_USAGE : usage_error("--dim needs NAME=N");
        o->dim_range |= strstr(v, "..") != NULL;
    } else if ((v = flag_value(argc, argv, i, "--const-input", &m)) || m) {
        qdqc_status st = v ? qdqc_context_add_const_input(o->ctx, v) : QDQC_OK;
        if (!v)
            return usage_error("--const-input needs NAME=FILE.npy");
        if (st != QDQC_OK)
            return st == QDQC_ERR_IO ? EXIT_INPUT : EXIT_USAGE;
    } else if (((v = flag_value(argc, argv, i, "--name", &m)) || m) ||
               ((v = flag_value(argc, argv, i, "--target", &m)) || m) ||
               ((v = flag_value(argc, argv, i, "--mcpu", &m)) || m) ||
               ((v = flag_value(argc, argv, i, "--mattr", &m)) || m) ||
               ((v = flag_value(argc, argv, i, "--isa", &m)) || m)) {
        const char *nm = strncmp(a, "--name", 6) == 0     ? "name"
                         : strncmp(a, "--target", 8) == 0 ? "target"
                         : strncmp(a, "--mcpu", 6) == 0   ? "mcpu"
                         : strncmp(a, "--mattr", 7) == 0  ? "mattr" : "isa";
        if (!v || qdqc_compile_options_set(o->copts, nm, v) != QDQC_OK)
            return usage_error("invalid --%s value", nm);
        o->target_opts = true;
    } else {
        return ARG_NOMATCH;
    }
    return ARG_TAKEN;
}

/* the value of one of `qdqc run`'s own flags (a: the flag as written) */
static int
parse_run_value(Opts *o, const char *a, const char *v)
{
    char *end;
    if (strncmp(a, "--engine", 8) == 0) {
        o->run.engine = v;
    } else if (strncmp(a, "--input", 7) == 0) {
        o->run.inputs[o->run.ninputs++] = v;
    } else if (strncmp(a, "--output-dir", 12) == 0) {
        o->run.output_dir = v;
    } else if (strncmp(a, "--expect", 8) == 0) {
        o->run.expects[o->run.nexpects++] = v;
    } else if (strncmp(a, "--tolerance", 11) == 0) {
        double t = strtod(v, &end);
        o->run.tolerance_quantized = *end == 'q';
        if (end == v || *(end + o->run.tolerance_quantized) || !(t >= 0) || t > 1e30)
            return usage_error("--tolerance needs a non-negative number (T, or Tq for "
                               "quantized units), got '%s'", v);
        o->run.tolerance = t;
    } else {
        o->run.seed = strtoull(v, &end, 10);
        if (!*v || *end)
            return usage_error("--random-inputs needs a non-negative integer seed");
        o->run.random_inputs = true;
    }
    return ARG_TAKEN;
}

/* flags of `qdqc run` and `qdqc bench` */
static int
parse_run_flag(Opts *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    bool m;
    const char *v;
    bool bench = o->cmd && !strcmp(o->cmd, "bench");
    if ((v = flag_value(argc, argv, i, "--threads", &m)) || m) {
        char *end;
        long t = v ? strtol(v, &end, 10) : 0;
        if (!v || !*v || *end || t < 1 || t > 1024)
            return usage_error("--threads needs a positive integer");
        o->run.threads = (int)t;
    } else if (bench && (((v = flag_value(argc, argv, i, "--iters", &m)) || m) ||
                         ((v = flag_value(argc, argv, i, "--warmup", &m)) || m))) {
        bool it = strncmp(a, "--iters", 7) == 0;
        char *end;
        long t = v ? strtol(v, &end, 10) : -1;
        if (!v || !*v || *end || t < (it ? 1 : 0) || t > 1000000)
            return usage_error(it ? "--iters needs a positive integer"
                                  : "--warmup needs a non-negative integer");
        if (it)
            o->bench.iters = (int)t;
        else
            o->bench.warmup = (int)t;
    } else if (bench && strcmp(a, "--par-profile") == 0) {
        o->bench.par_profile = true;
    } else if (bench && strcmp(a, "--profile") == 0) {
        o->bench.profile = true;
    } else if (bench && strcmp(a, "--json") == 0) {
        o->bench.json = true;
    } else if (bench && ((v = flag_value(argc, argv, i, "--shape", &m)) || m)) {
        if (!v || !strchr(v, '=') || o->bench.nshapes == BENCH_MAX_SHAPES)
            return usage_error("--shape needs NAME=D0xD1x... (at most 8)");
        o->bench.shapes[o->bench.nshapes++] = v;
    } else if (o->run.inputs && (((v = flag_value(argc, argv, i, "--engine", &m)) || m) ||
                                 ((v = flag_value(argc, argv, i, "--input", &m)) || m) ||
                                 ((v = flag_value(argc, argv, i, "--output-dir", &m)) || m) ||
                                 ((v = flag_value(argc, argv, i, "--expect", &m)) || m) ||
                                 ((v = flag_value(argc, argv, i, "--tolerance", &m)) || m) ||
                                 ((v = flag_value(argc, argv, i, "--random-inputs", &m)) || m))) {
        if (!v)
            return usage_error("%s needs a value", a);
        return parse_run_value(o, a, v);
    } else {
        return ARG_NOMATCH;
    }
    return ARG_TAKEN;
}

/* argv[1] as a command (opt, bench, run); sets o->cmd and returns the first option's index, or
 * -(exit code + 1) when the command cannot start */
static int
select_command(Opts *o, int argc, char **argv)
{
    if (argc <= 1)
        return 1;
    if (strcmp(argv[1], "opt") == 0) {
        o->cmd = "opt";
    } else if (strcmp(argv[1], "bench") == 0) {
        o->cmd = "bench";
        o->bench.warmup = -1;
    } else if (strcmp(argv[1], "run") == 0) {
        o->cmd = "run";
        o->run.inputs = calloc((size_t)argc, sizeof(char *));
        o->run.expects = calloc((size_t)argc, sizeof(char *));
        if (!o->run.inputs || !o->run.expects) {
            fprintf(stderr, "qdqc: error: out of memory\n");
            return -(EXIT_INPUT + 1);
        }
    } else {
        return 1;
    }
    return 2;
}

/* every option of argv from argi on: ARG_TAKEN when all were taken, else the exit code */
static int
parse_options(Opts *o, int argc, char **argv, int argi)
{
    for (int i = argi; i < argc; i++) {
        const char *a = argv[i];
        int r = parse_driver_flag(o, argc, argv, &i);
        if (r == ARG_NOMATCH)
            r = parse_compile_flag(o, argc, argv, &i);
        if (r == ARG_NOMATCH)
            r = parse_run_flag(o, argc, argv, &i);
        if (r != ARG_NOMATCH) {
            if (r != ARG_TAKEN)
                return r;
        } else if (a[0] == '-' && a[1] != 0) {
            return usage_error("unknown option '%s'", a);
        } else if (!o->input) {
            o->input = a;
        } else {
            return usage_error("more than one input file ('%s' and '%s')", o->input, a);
        }
    }
    return ARG_TAKEN;
}

/* what the options say together, before any work: usage errors, or ARG_TAKEN */
static int
check_options(Opts *o)
{
    if (!o->input)
        return usage_error("no input file");
    if (o->split_input_file && !o->cmd)
        return usage_error("--split-input-file is for 'qdqc opt'");
    int rc;
    if (o->passes && (rc = check_pipeline(o->passes)) != EXIT_OK)
        return rc;
    if (o->cmd && (!strcmp(o->cmd, "run") || !strcmp(o->cmd, "bench")) &&
        (o->noutputs || o->emit || o->report))
        return usage_error("%s is not an option of 'qdqc %s'%s",
                           o->noutputs ? "-o" : o->emit ? "--emit" : "--report", o->cmd,
                           !strcmp(o->cmd, "run") && o->noutputs ? " (see --output-dir)" : "");
    /* a bad target, CPU, feature or prefix is a usage error, found before any work */
    if (o->target_opts && (!o->cmd || strcmp(o->cmd, "opt") != 0) &&
        qdqc_compile_options_check(o->ctx, o->copts) != QDQC_OK) {
        fprintf(stderr, "(see qdqc --help)\n");
        return EXIT_USAGE;
    }
    if (o->cmd && !strcmp(o->cmd, "bench") && o->bench.profile && o->bench.par_profile)
        return usage_error("--profile and --par-profile are separate runs: give one");
    if (o->cmd && !strcmp(o->cmd, "bench") && o->bench.nshapes &&
        (o->bench.profile || o->bench.par_profile))
        return usage_error("--shape times whole runs: not with --profile or --par-profile");
    return ARG_TAKEN;
}

/* the command, once the options are checked */
static int
dispatch(Opts *o)
{
    if (o->run.inputs) {
        o->run.model = o->input;
        o->run.passes = o->passes;
        o->run.copts = o->copts;
        return qdqc_cli_run(o->ctx, &o->run);
    }
    if (o->cmd && !strcmp(o->cmd, "bench")) {
        /* both name what they measure by node: the step hook of the profile compile */
        if ((o->bench.profile || o->bench.par_profile) &&
            qdqc_compile_options_set(o->copts, "profile", "1") != QDQC_OK)
            return usage_error("cannot set the compile option 'profile'");
        o->bench.model = o->input;
        o->bench.passes = o->passes;
        o->bench.copts = o->copts;
        o->bench.threads = o->run.threads;
        return qdqc_cli_bench(o->ctx, &o->bench);
    }
    return o->cmd ? run_opt(o) : run_compile(o);
}

/* the commands that take no options of the driver's: help, compare, a misspelt command;
 * ARG_NOMATCH for the others */
static int
early_command(Opts *o, int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "help") == 0 && access(argv[1], F_OK) != 0) {
        fputs(usage_text, stdout);
        return EXIT_OK;
    }
    if (argc > 1 && strcmp(argv[1], "compare") == 0)
        return qdqc_cli_compare(o->ctx, o->copts, argc - 2, argv + 2);
    if (argc > 1 && is_unknown_command(argv[1]))
        return unknown_command(argv[1]);
    return ARG_NOMATCH;
}

static int
run_main(Opts *o, int argc, char **argv)
{
    int rc = early_command(o, argc, argv);
    if (rc != ARG_NOMATCH)
        return rc;
    int argi = select_command(o, argc, argv);
    if (argi < 0)
        return -argi - 1;
    if ((rc = parse_options(o, argc, argv, argi)) != ARG_TAKEN)
        return rc;
    if (o->list_passes) {
        for (size_t i = 0; i < qdqc_pass_count(); i++)
            printf("  %-24s %s\n", qdqc_pass_name(i), qdqc_pass_description(i));
        return EXIT_OK;
    }
    if ((rc = check_options(o)) != ARG_TAKEN)
        return rc;
    return dispatch(o);
}

int
main(int argc, char **argv)
{
    Opts o = {0};
    double t_main = now_ms();
    /* into a file or pipe, standard output goes out in one piece at the end, so that a failed
     * write is seen by the final fflush with its reason (errno) */
    static char stdout_buf[1 << 20];
    if (!isatty(STDOUT_FILENO))
        setvbuf(stdout, stdout_buf, _IOFBF, sizeof stdout_buf);
    o.ctx = qdqc_context_create();
    qdqc_context_set_diag_handler(o.ctx, diag_printer, &o);
    qdqc_context_set_print_handler(o.ctx, print_to_stderr, NULL);
    o.copts = qdqc_compile_options_create();
    int rc = run_main(&o, argc, argv);
    /* what went to standard output (IR, report, summaries) must have been written too (an
     * error already reported, e.g. by write_output("-"), stands) */
    errno = 0;
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc == EXIT_OK) {
        fprintf(stderr, "qdqc: error: cannot write to standard output: %s\n",
                strerror(errno ? errno : EIO));
        rc = EXIT_INPUT;
    }
    if (o.verbose)
        fprintf(stderr, "qdqc: total: %.3f ms\n", now_ms() - t_main);
    free(o.run.inputs);
    free(o.run.expects);
    qdqc_compile_options_destroy(o.copts);
    qdqc_context_destroy(o.ctx);
    return rc;
}
