/* main.c: the qdqc command line. Flags, printing diagnostics, exit codes; no compiler logic
 * (everything goes through the public API in include/qdqc/).
 *
 * Exit codes: 0 success, 1 bad input (diagnostics printed), 2 usage error. Internal errors
 * abort with file:line. */
#define _POSIX_C_SOURCE 200809L
#include <qdqc/qdqc.h>

#include "bench_cmd.h"
#include "run_cmd.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_OK = 0, EXIT_INPUT = 1, EXIT_USAGE = 2 };

typedef struct Opts {
    const char *cmd; /* NULL (compile), "opt", "run", "bench" */
    const char *input;
    const char *output;
    const char *emit;
    const char *passes;
    bool split_input_file;
    bool report; /* --report: what each node became, to standard output */
    bool remarks;
    bool list_passes;
    qdqc_context *ctx;
    RunOpts run; /* qdqc run */
    BenchOpts bench; /* qdqc bench */
    qdqc_compile_options *copts; /* --target --mcpu --mattr --name --isa */
} Opts;

static const char usage_text[] =
    "usage: qdqc MODEL [options]          compile MODEL (.onnx, .qir, .mlir)\n"
    "       qdqc opt FILE [options]       run passes on text IR (test driver)\n"
    "       qdqc run MODEL --output-dir DIR [--engine=jit|ref] [--input NAME=FILE.npy ...]\n"
    "                [--random-inputs SEED] [--passes=...]\n"
    "                                     run MODEL, write one .npy per output\n"
    "       qdqc bench MODEL [--threads N] [--iters K] [--warmup W] [--par-profile]\n"
    "                                     JIT-compile MODEL and time it: median, min, p90\n"
    "                                     latency and GOPS (2 x int8 MACs / median)\n"
    "\n"
    "options:\n"
    "  -o FILE                 output file ('-' for standard output, the default)\n"
    "  --emit=KIND             what to write: obj (default when -o ends in .o), asm, llvm,\n"
    "                          header (C ABI, docs/abi.md), ir (text IR after the pipeline),\n"
    "                          dot (Graphviz: integer ops green, float islands orange),\n"
    "                          mlir (tosa/linalg after the pipeline, docs/mlir.md)\n"
    "  --report                what each node became or why it stayed float, with totals\n"
    "                          (to standard output; the IR is then written only with -o)\n"
    "  --name=PREFIX           symbol prefix of the generated code (default: model)\n"
    "  --target=TRIPLE         target triple (default: the host)\n"
    "  --mcpu=CPU              target CPU (default: generic, with the host's features)\n"
    "  --mattr=+f1,-f2         target features (e.g. +avx512vnni, +dotprod, +i8mm)\n"
    "  --isa=PATH              force a GEMM kernel path (generic, avx2, avxvnni, avx512vnni,\n"
    "                          neon, dotprod, i8mm)\n"
    "  --threads N             (run) threads of the jit engine\n"
    "  --passes=A,B,...        passes to run ('default' = the default pipeline);\n"
    "                          compile mode runs the default pipeline, opt mode none\n"
    "  --list-passes           list the passes and exit\n"
    "  --strict                import warnings about invalid input (an attribute the op or\n"
    "                          its opset does not define) are errors\n"
    "  --verify-each           run the verifier after every pass\n"
    "  --print-after=A,B       print the IR after the named passes (to stderr)\n"
    "  --print-after-all       print the IR after every pass (to stderr)\n"
    "  --time-passes           report the time each pass takes\n"
    "  --requant=float|fixed   requantization arithmetic (docs/numerics.md)\n"
    "  --input-shape NAME=DIMS fix a dynamic input shape, e.g. x=1x3x224x224 (repeatable)\n"
    "  --const-input NAME=FILE.npy\n"
    "                          freeze ONNX graph input NAME to the array's value: it is no\n"
    "                          longer an input but a compile-time constant (repeatable)\n"
    "  --split-input-file      (opt) treat '// -----' lines as separate inputs\n"
    "  --engine=jit|ref        (run) execution engine: jit (compiled in process, the default)\n"
    "                          or ref (reference interpreter)\n"
    "  --iters K, --warmup W   (bench) timed runs (default 20) after W untimed ones (3)\n"
    "  --par-profile           (bench) instead of timing: run every parallel region's units\n"
    "                          on one thread, time them (min over W + K runs) and predict the\n"
    "                          scaling at --threads N (default 2): serial share, imbalance\n"
    "  --input NAME=FILE.npy   (run) value of graph input NAME (repeatable)\n"
    "  --random-inputs SEED    (run) generate the inputs not given, deterministically\n"
    "  --output-dir DIR        (run) where the outputs are written (NAME.npy)\n"
    "                          run applies the default pipeline; --passes= (empty) runs the\n"
    "                          graph as imported (literal QDQ semantics)\n"
    "  -Rpass                  print optimization remarks\n"
    "  --help, --version\n";

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

static FILE *
open_output(const char *path)
{
    if (!path || strcmp(path, "-") == 0)
        return stdout;
    FILE *f = fopen(path, "wb");
    if (!f)
        fprintf(stderr, "qdqc: error: cannot write '%s'\n", path);
    return f;
}

static char *
slurp(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t k;
    while (buf && (k = fread(buf + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            }
            buf = nb;
        }
    }
    if (f != stdin)
        fclose(f);
    *len = n;
    return buf;
}

/* Process one text-IR buffer in opt mode; returns an exit code. */
static int
opt_one(Opts *o, const char *text, size_t len, const char *name, FILE *out)
{
    qdqc_module *m = NULL;
    if (qdqc_module_parse(o->ctx, text, len, name, &m) != QDQC_OK)
        return EXIT_INPUT;
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

static int
run_opt(Opts *o)
{
    size_t len;
    char *text = slurp(o->input, &len);
    if (!text) {
        fprintf(stderr, "%s: error: cannot read file\n", o->input);
        return EXIT_INPUT;
    }
    FILE *out = open_output(o->output);
    if (!out) {
        free(text);
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
    if (out != stdout)
        fclose(out);
    free(text);
    return rc;
}

static void
silent_diag(void *user, qdqc_severity sev, const char *loc, const char *msg)
{
    (void)user;
    (void)sev;
    (void)loc;
    (void)msg;
}

/* --report: the workspace the generated code needs for o's target (docs/abi.md), read from
 * the header the code generator writes; "n/a" when the graph cannot be compiled. */
static void
print_workspace(Opts *o, qdqc_module *m)
{
    char *h = NULL;
    size_t len = 0;
    qdqc_context_set_diag_handler(o->ctx, silent_diag, NULL);
    qdqc_status st = qdqc_module_compile_to_memory(m, o->copts, QDQC_EMIT_HEADER, &h, &len);
    qdqc_context_set_diag_handler(o->ctx, diag_printer, o);
    qdqc_context_clear_diagnostics(o->ctx);
    const char *p = st == QDQC_OK && h ? strstr(h, "_WORKSPACE_SIZE ") : NULL;
    while (p && !(p[16] >= '0' && p[16] <= '9')) /* the #define, not the comment */
        p = strstr(p + 16, "_WORKSPACE_SIZE ");
    if (p)
        printf("        workspace peak: %llu bytes (activations and scratch, planned by "
               "liveness)\n", strtoull(p + 16, NULL, 10));
    else
        printf("        workspace peak: n/a (the graph does not compile for this target)\n");
    qdqc_string_free(h);
}

static int
run_compile(Opts *o)
{
    const char *emit = o->emit;
    if (!emit) {
        size_t ol = o->output ? strlen(o->output) : 0;
        emit = ol > 2 && strcmp(o->output + ol - 2, ".o") == 0 ? "obj" : "ir";
    }
    int kind = !strcmp(emit, "obj") ? QDQC_EMIT_OBJ : !strcmp(emit, "asm") ? QDQC_EMIT_ASM
               : !strcmp(emit, "llvm") ? QDQC_EMIT_LLVM : !strcmp(emit, "header") ? QDQC_EMIT_HEADER
               : !strcmp(emit, "ir") ? -1 : !strcmp(emit, "dot") ? -3
               : !strcmp(emit, "mlir") ? -4 : -2;
    if (kind == -2)
        return usage_error("--emit=%s is not supported (obj, asm, llvm, header, ir, dot, mlir)",
                           emit);
    /* with --report alone, the report replaces the IR on standard output */
    bool want_output = !o->report || o->output || o->emit;
    qdqc_module *m = NULL;
    if (qdqc_module_load_file(o->ctx, o->input, &m) != QDQC_OK)
        return EXIT_INPUT;
    int rc = EXIT_OK;
    /* as in run and bench: an empty --passes= compiles the graph as imported */
    const char *passes = o->passes ? o->passes : "default";
    if (*passes && qdqc_module_run_passes(m, passes) != QDQC_OK)
        rc = EXIT_INPUT;
    if (rc == EXIT_OK && !want_output) {
        /* report only */
    } else if (rc == EXIT_OK && kind >= 0) {
        if (qdqc_module_compile_to_file(m, o->copts, o->output ? o->output : "-",
                                        (qdqc_emit_kind)kind) != QDQC_OK)
            rc = EXIT_INPUT;
    } else if (rc == EXIT_OK) {
        FILE *out = open_output(o->output);
        if (!out) {
            rc = EXIT_INPUT;
        } else {
            char *s = kind == -3 ? qdqc_module_print_dot(m)
                      : kind == -4 ? qdqc_module_print_mlir(m) : qdqc_module_print(m);
            if (s)
                fputs(s, out);
            else
                rc = EXIT_INPUT;
            qdqc_string_free(s);
            if (out != stdout)
                fclose(out);
        }
    }
    if (rc == EXIT_OK && o->report) {
        char *r = qdqc_module_report(m);
        fputs(r, stdout);
        qdqc_string_free(r);
        print_workspace(o, m);
    }
    qdqc_module_destroy(m);
    return rc;
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

int
main(int argc, char **argv)
{
    Opts o = {0};
    o.ctx = qdqc_context_create();
    qdqc_context_set_diag_handler(o.ctx, diag_printer, &o);
    qdqc_context_set_print_handler(o.ctx, print_to_stderr, NULL);
    o.copts = qdqc_compile_options_create();
    int rc = EXIT_OK;
    int argi = 1;
    if (argc > 1 && strcmp(argv[1], "opt") == 0) {
        o.cmd = "opt";
        argi = 2;
    } else if (argc > 1 && strcmp(argv[1], "bench") == 0) {
        o.cmd = "bench";
        argi = 2;
        o.bench.warmup = -1;
    } else if (argc > 1 && strcmp(argv[1], "run") == 0) {
        o.cmd = "run";
        argi = 2;
        o.run.inputs = calloc((size_t)argc, sizeof(char *));
    }
    for (int i = argi; i < argc; i++) {
        const char *a = argv[i];
        bool m;
        const char *v;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage_text, stdout);
            goto done;
        } else if (strcmp(a, "--version") == 0) {
            printf("qdqc %s\n", qdqc_version_string());
            goto done;
        } else if (strcmp(a, "--list-passes") == 0) {
            o.list_passes = true;
        } else if (strcmp(a, "-o") == 0) {
            if (i + 1 >= argc) {
                rc = usage_error("-o needs a file name");
                goto done;
            }
            o.output = argv[++i];
        } else if ((v = flag_value(argc, argv, &i, "--emit", &m)) || m) {
            if (!v) {
                rc = usage_error("--emit needs a value");
                goto done;
            }
            o.emit = v;
        } else if ((v = flag_value(argc, argv, &i, "--passes", &m)) || m) {
            if (!v) {
                rc = usage_error("--passes needs a value");
                goto done;
            }
            o.passes = v;
        } else if ((v = flag_value(argc, argv, &i, "--print-after", &m)) || m) {
            if (!v) {
                rc = usage_error("--print-after needs a pass name");
                goto done;
            }
            qdqc_context_set_option(o.ctx, "print-after", v);
        } else if (strcmp(a, "--print-after-all") == 0) {
            qdqc_context_set_option(o.ctx, "print-after-all", "1");
        } else if (strcmp(a, "--strict") == 0) {
            qdqc_context_set_option(o.ctx, "strict", "1");
        } else if (strcmp(a, "--verify-each") == 0) {
            qdqc_context_set_option(o.ctx, "verify-each", "1");
        } else if (strcmp(a, "--time-passes") == 0) {
            qdqc_context_set_option(o.ctx, "time-passes", "1");
            o.remarks = true;
        } else if (strcmp(a, "-Rpass") == 0) {
            qdqc_context_set_option(o.ctx, "remarks", "1");
            o.remarks = true;
        } else if ((v = flag_value(argc, argv, &i, "--requant", &m)) || m) {
            if (!v || (strcmp(v, "float") != 0 && strcmp(v, "fixed") != 0)) {
                rc = usage_error("--requant must be 'float' or 'fixed'");
                goto done;
            }
            qdqc_context_set_option(o.ctx, "requant", v);
        } else if ((v = flag_value(argc, argv, &i, "--input-shape", &m)) || m) {
            if (!v || qdqc_context_add_input_shape(o.ctx, v) != QDQC_OK) {
                rc = v ? EXIT_USAGE : usage_error("--input-shape needs NAME=DIMS");
                goto done;
            }
        } else if ((v = flag_value(argc, argv, &i, "--const-input", &m)) || m) {
            qdqc_status st = v ? qdqc_context_add_const_input(o.ctx, v) : QDQC_OK;
            if (!v || st != QDQC_OK) {
                rc = !v                     ? usage_error("--const-input needs NAME=FILE.npy")
                     : st == QDQC_ERR_IO ? EXIT_INPUT : EXIT_USAGE;
                goto done;
            }
        } else if (((v = flag_value(argc, argv, &i, "--name", &m)) || m) ||
                   ((v = flag_value(argc, argv, &i, "--target", &m)) || m) ||
                   ((v = flag_value(argc, argv, &i, "--mcpu", &m)) || m) ||
                   ((v = flag_value(argc, argv, &i, "--mattr", &m)) || m) ||
                   ((v = flag_value(argc, argv, &i, "--isa", &m)) || m)) {
            const char *nm = strncmp(a, "--name", 6) == 0     ? "name"
                             : strncmp(a, "--target", 8) == 0 ? "target"
                             : strncmp(a, "--mcpu", 6) == 0   ? "mcpu"
                             : strncmp(a, "--mattr", 7) == 0  ? "mattr" : "isa";
            if (!v || qdqc_compile_options_set(o.copts, nm, v) != QDQC_OK) {
                rc = usage_error("invalid --%s value", nm);
                goto done;
            }
        } else if ((v = flag_value(argc, argv, &i, "--threads", &m)) || m) {
            char *end;
            long t = v ? strtol(v, &end, 10) : 0;
            if (!v || !*v || *end || t < 1 || t > 1024) {
                rc = usage_error("--threads needs a positive integer");
                goto done;
            }
            o.run.threads = (int)t;
        } else if (o.cmd && !strcmp(o.cmd, "bench") &&
                   (((v = flag_value(argc, argv, &i, "--iters", &m)) || m) ||
                    ((v = flag_value(argc, argv, &i, "--warmup", &m)) || m))) {
            bool it = strncmp(a, "--iters", 7) == 0;
            char *end;
            long t = v ? strtol(v, &end, 10) : -1;
            if (!v || !*v || *end || t < (it ? 1 : 0) || t > 1000000) {
                rc = usage_error(it ? "--iters needs a positive integer"
                                    : "--warmup needs a non-negative integer");
                goto done;
            }
            if (it)
                o.bench.iters = (int)t;
            else
                o.bench.warmup = (int)t;
        } else if (o.cmd && !strcmp(o.cmd, "bench") && strcmp(a, "--par-profile") == 0) {
            o.bench.par_profile = true;
        } else if (strcmp(a, "--report") == 0) {
            o.report = true;
        } else if (strcmp(a, "--split-input-file") == 0) {
            o.split_input_file = true;
        } else if (o.run.inputs && (((v = flag_value(argc, argv, &i, "--engine", &m)) || m) ||
                                    ((v = flag_value(argc, argv, &i, "--input", &m)) || m) ||
                                    ((v = flag_value(argc, argv, &i, "--output-dir", &m)) || m) ||
                                    ((v = flag_value(argc, argv, &i, "--random-inputs", &m)) || m))) {
            if (!v) {
                rc = usage_error("%s needs a value", a);
                goto done;
            }
            if (strncmp(a, "--engine", 8) == 0) {
                o.run.engine = v;
            } else if (strncmp(a, "--input", 7) == 0) {
                o.run.inputs[o.run.ninputs++] = v;
            } else if (strncmp(a, "--output-dir", 12) == 0) {
                o.run.output_dir = v;
            } else {
                char *end;
                o.run.seed = strtoull(v, &end, 10);
                if (!*v || *end) {
                    rc = usage_error("--random-inputs needs a non-negative integer seed");
                    goto done;
                }
                o.run.random_inputs = true;
            }
        } else if (a[0] == '-' && a[1] != 0) {
            rc = usage_error("unknown option '%s'", a);
            goto done;
        } else if (!o.input) {
            o.input = a;
        } else {
            rc = usage_error("more than one input file ('%s' and '%s')", o.input, a);
            goto done;
        }
    }
    if (o.list_passes) {
        for (size_t i = 0; i < qdqc_pass_count(); i++)
            printf("  %-24s %s\n", qdqc_pass_name(i), qdqc_pass_description(i));
        goto done;
    }
    if (!o.input) {
        rc = usage_error("no input file");
        goto done;
    }
    if (o.split_input_file && !o.cmd) {
        rc = usage_error("--split-input-file is for 'qdqc opt'");
        goto done;
    }
    if (o.run.inputs) {
        o.run.model = o.input;
        o.run.passes = o.passes;
        o.run.copts = o.copts;
        rc = qdqc_cli_run(o.ctx, &o.run);
        goto done;
    }
    if (o.cmd && !strcmp(o.cmd, "bench")) {
        o.bench.model = o.input;
        o.bench.passes = o.passes;
        o.bench.copts = o.copts;
        o.bench.threads = o.run.threads;
        rc = qdqc_cli_bench(o.ctx, &o.bench);
        goto done;
    }
    rc = o.cmd ? run_opt(&o) : run_compile(&o);
done:
    free(o.run.inputs);
    qdqc_compile_options_destroy(o.copts);
    qdqc_context_destroy(o.ctx);
    return rc;
}
