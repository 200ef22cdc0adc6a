/* qdqc.h: the public C API of qdqc, an ahead-of-time compiler for quantized (QDQ) networks.
 *
 * Conventions (see docs/api.md):
 *  - Handles are opaque pointers. Ownership is in the verb: _create/_parse/_import hand the
 *    result to the caller (pair with _destroy), _get lends, _take moves.
 *  - A failing call returns a status other than QDQC_OK and leaves diagnostics in the context;
 *    the library never prints and never exits.
 *  - No global state: separate contexts may be used from separate threads. One context and the
 *    modules created from it must be used by one thread at a time. JIT sessions and thread
 *    pools have their own rules (qdqc_jit_run, qdqc_threadpool_parallel_for below).
 */
#ifndef QDQC_QDQC_H
#define QDQC_QDQC_H

#include <stddef.h>
#include <stdint.h>

#include "qdqc/runtime.h" /* parallel-for hook and thread pool (also in libqdqc_runtime) */

#ifdef __cplusplus
extern "C" {
#endif

#define QDQC_VERSION_MAJOR 0
#define QDQC_VERSION_MINOR 1
#define QDQC_VERSION_PATCH 0
#define QDQC_VERSION_HEX \
    ((QDQC_VERSION_MAJOR << 16) | (QDQC_VERSION_MINOR << 8) | QDQC_VERSION_PATCH)

#if defined(_WIN32)
#define QDQC_API
#else
#define QDQC_API __attribute__((visibility("default")))
#endif

/* Status codes. ABI: append, never renumber. The list lives in qdqc/status.def. */
typedef enum qdqc_status {
#define QDQC_STATUS(NAME, VALUE, TEXT) QDQC_##NAME = VALUE,
#include "qdqc/status.def"
#undef QDQC_STATUS
} qdqc_status;

typedef enum qdqc_severity {
    QDQC_SEV_NOTE = 0,
    QDQC_SEV_REMARK = 1,
    QDQC_SEV_WARNING = 2,
    QDQC_SEV_ERROR = 3,
} qdqc_severity;

typedef struct qdqc_context qdqc_context;
typedef struct qdqc_module qdqc_module;

/* Diagnostic callback. `location` is e.g. "net.qir:12:9" or "model.onnx: node 'c' (Conv)";
 * `message` has no location and no severity prefix. Both strings live only during the call. */
typedef void (*qdqc_diag_handler)(void *user, qdqc_severity sev, const char *location,
                                  const char *message);

/* ---- version ---- */
QDQC_API unsigned qdqc_version(void); /* == QDQC_VERSION_HEX of the library */
QDQC_API const char *qdqc_version_string(void);
QDQC_API const char *qdqc_status_name(qdqc_status s); /* "QDQC_ERR_PARSE"; never NULL */

/* ---- context ---- */
QDQC_API qdqc_context *qdqc_context_create(void);
QDQC_API void qdqc_context_destroy(qdqc_context *ctx); /* NULL is a no-op */
/* With a handler, diagnostics go to it and are not collected. NULL restores collection. */
QDQC_API void qdqc_context_set_diag_handler(qdqc_context *ctx, qdqc_diag_handler fn, void *user);
/* Collected diagnostics, one per line, "LOCATION: error: MESSAGE\n". Lent; valid until the next
 * call on ctx. Empty string when there are none. */
QDQC_API const char *qdqc_context_get_diagnostics(qdqc_context *ctx);
QDQC_API size_t qdqc_context_get_error_count(const qdqc_context *ctx);
QDQC_API void qdqc_context_clear_diagnostics(qdqc_context *ctx);
/* Where pass-manager dumps (--print-after, --print-after-all) go. Without a handler they are
 * not produced. */
typedef void (*qdqc_print_handler)(void *user, const char *text);
QDQC_API void qdqc_context_set_print_handler(qdqc_context *ctx, qdqc_print_handler fn,
                                             void *user);
/* Phase timing. With a handler, the library calls fn(user, phase, ms) as each phase of its
 * work ends, with the phase's wall-clock time in milliseconds. Phases: "import" (reading and
 * importing or parsing a model), "passes" (one qdqc_module_run_passes), "lower" (the graph to
 * an LLVM module), "llvm-opt" (LLVM's optimisation pipeline on it), "emit-obj" and "emit-asm"
 * (LLVM's machine-code pipeline, once per object or assembly output), "jit" (the JIT's
 * machine code). `phase` lives only during the call. NULL removes the handler. */
typedef void (*qdqc_phase_handler)(void *user, const char *phase, double ms);
QDQC_API void qdqc_context_set_phase_handler(qdqc_context *ctx, qdqc_phase_handler fn,
                                             void *user);
/* Options as "name=value" (e.g. "requant=fixed", "remarks=1", "verify-each=1"; "strict=1":
 * import warnings about invalid input, such as an attribute the op or its opset does not
 * define, are errors; "time-passes=1": a remark "pass NAME: X ms" per pass and "phase NAME:
 * X ms" per phase of qdqc_context_set_phase_handler, LLVM's included; "weight-only=int8-acts":
 * weight-only matmuls quantize their activations to int8 per row at run time, an
 * approximation (docs/numerics.md), "weight-only=float" the default; "keep-float=A,B": the
 * ONNX nodes named A and B stay float islands, their dequantizes and quantizes explicit, so
 * the passes turn none of them into integer ops (docs/accuracy.md); "" clears the list). */
QDQC_API qdqc_status qdqc_context_set_option(qdqc_context *ctx, const char *name,
                                             const char *value);

/* ---- modules ---- */
/* Parse qdqc textual IR. `filename` names the buffer in diagnostics (may be NULL). */
QDQC_API qdqc_status qdqc_module_parse(qdqc_context *ctx, const char *text, size_t len,
                                       const char *filename, qdqc_module **out);
/* Import an ONNX model from a file (external data is resolved beside it) or from bytes. */
QDQC_API qdqc_status qdqc_module_import_onnx_file(qdqc_context *ctx, const char *path,
                                                  qdqc_module **out);
QDQC_API qdqc_status qdqc_module_import_onnx_bytes(qdqc_context *ctx, const void *data,
                                                   size_t len, const char *filename,
                                                   qdqc_module **out);
/* Import an MLIR module (func + tosa + quant dialects, docs/mlir.md) from text in memory.
 * `filename` names the buffer in diagnostics (may be NULL). */
QDQC_API qdqc_status qdqc_module_import_mlir(qdqc_context *ctx, const char *text, size_t len,
                                             const char *filename, qdqc_module **out);
/* Load by file extension: .onnx, .mlir, otherwise text IR. */
QDQC_API qdqc_status qdqc_module_load_file(qdqc_context *ctx, const char *path,
                                           qdqc_module **out);
QDQC_API void qdqc_module_destroy(qdqc_module *m); /* NULL is a no-op */
/* Fix a dynamic input dimension set: spec "NAME=1x3x224x224". Applies to later imports. */
QDQC_API qdqc_status qdqc_context_add_input_shape(qdqc_context *ctx, const char *spec);
/* Bind the symbolic dimension `name` (an ONNX dim_param such as "batch_size", or a text-IR
 * "?name") to `value` (1 to 2^40) in every model the context reads afterwards: every input,
 * shape and expression that uses it becomes static. qdqc_context_add_dim takes "NAME=N" or
 * "NAME=LO..HI" (the CLI's --dim). A dimension left symbolic is typed and printed as such;
 * compiling or running the model needs it bound, or given a range with
 * qdqc_context_set_dim_range: the symbol then stays a run-time dimension of the compiled
 * object, which takes any value in [lo, hi] (docs/abi.md, "Run-time dimensions"; a batch-like
 * symbol only: every node must compute each index along it independently). */
QDQC_API qdqc_status qdqc_context_set_dim(qdqc_context *ctx, const char *name, int64_t value);
QDQC_API qdqc_status qdqc_context_set_dim_range(qdqc_context *ctx, const char *name, int64_t lo,
                                                int64_t hi);
QDQC_API qdqc_status qdqc_context_add_dim(qdqc_context *ctx, const char *spec);
/* Freeze a graph input to a compile-time constant for later ONNX imports: spec
 * "NAME=FILE.npy" (the file is read now). The input is removed from the graph's inputs and
 * its value becomes a constant, like an initializer, before shape inference and constant
 * folding, so parameters that a model takes as inputs (Reshape's shape, Slice's starts, Pad's
 * pads, Resize's sizes, ...) and the shape computations on them fold. At import, NAME must be
 * a graph input (not an initializer), the element type must be the input's declared one and
 * the shape its declared shape (a dynamic dimension takes the array's size). QDQC_ERR_IO if
 * the file cannot be read, QDQC_ERR_INVALID_ARG for a malformed spec or a NAME given twice.
 * Text IR and MLIR loads with const inputs set fail with QDQC_ERR_INVALID_ARG. */
QDQC_API qdqc_status qdqc_context_add_const_input(qdqc_context *ctx, const char *spec);
/* The same from memory: elem_type as qdqc_module_input_elem_type ("f32", "i64", ...), data
 * dense in C order with nbytes = element count x qdqc_elem_type_size (copied). */
QDQC_API qdqc_status qdqc_context_add_const_input_data(qdqc_context *ctx, const char *name,
                                                       const char *elem_type, int rank,
                                                       const int64_t *dims, const void *data,
                                                       size_t nbytes);

/* Textual IR of the module; free with qdqc_string_free. */
QDQC_API char *qdqc_module_print(const qdqc_module *m);
QDQC_API void qdqc_string_free(char *s);
/* The graph as MLIR (tosa, with linalg for quantize/dequantize; docs/mlir.md), verified with
 * MLIR before it is returned; normally called after the passes (integer graph). NULL with
 * diagnostics in the module's context if an op has no mapping. Free with qdqc_string_free. */
QDQC_API char *qdqc_module_print_mlir(const qdqc_module *m);
QDQC_API qdqc_status qdqc_module_verify(qdqc_module *m);
/* What each node became after the passes ("qconv 3x3 s1 int8xint8->int8, relu folded") or why
 * it stayed float ("float softmax: no integer rule"), then totals (integer and float ops, int8
 * MACs, float FLOPs). Free with qdqc_string_free; NULL if m is NULL. */
QDQC_API char *qdqc_module_report(const qdqc_module *m);
/* How many nodes of the module are, as in the report, of kind "integer" (integer ops),
 * "float" (float compute), "qdq" (quantize/dequantize) or "move" (data movement), or of kind
 * "weight-only" (float matmuls on 8-bit weights, `wmatmul`, also counted as "float"); 0 for an
 * unknown kind. */
QDQC_API size_t qdqc_module_op_count(const qdqc_module *m, const char *kind);
/* The scale of the per-tensor dequantize that produces float graph output i (the size of one
 * quantized unit in the output's units), or 0 when output i does not come from one. */
QDQC_API double qdqc_module_output_scale(const qdqc_module *m, size_t i);
/* The graph in Graphviz dot: integer ops green, float islands orange, quantize/dequantize
 * grey. Free with qdqc_string_free; NULL if m is NULL. */
QDQC_API char *qdqc_module_print_dot(const qdqc_module *m);

/* ---- passes ---- */
/* `pipeline` is a comma-separated list of pass names, or NULL / "default" for the default
 * pipeline. */
QDQC_API qdqc_status qdqc_module_run_passes(qdqc_module *m, const char *pipeline);
/* Number of registered passes, and their names/descriptions (lent, static). */
QDQC_API size_t qdqc_pass_count(void);
QDQC_API const char *qdqc_pass_name(size_t i);
QDQC_API const char *qdqc_pass_description(size_t i);

/* ---- graph interface and the reference interpreter (lib/api/run.c) ---- */
/* Graph inputs/outputs: name, rank, dims (lent, valid while the module is unchanged) and
 * element type as a string ("f32", "i8", "u8", "i32", "i64", "bool", ...). Out-of-range
 * indices give NULL / 0. */
QDQC_API size_t qdqc_module_input_count(const qdqc_module *m);
QDQC_API const char *qdqc_module_input_name(const qdqc_module *m, size_t i);
QDQC_API int qdqc_module_input_rank(const qdqc_module *m, size_t i);
QDQC_API const int64_t *qdqc_module_input_dims(const qdqc_module *m, size_t i);
/* A symbolic dimension (qdqc_context_set_dim) is a negative entry of the dims; the name of
 * the symbol at axis d (NULL when the dimension is static or a compound expression). */
QDQC_API const char *qdqc_module_input_dim_symbol(const qdqc_module *m, size_t i, int d);
QDQC_API const char *qdqc_module_output_dim_symbol(const qdqc_module *m, size_t i, int d);
QDQC_API const char *qdqc_module_input_elem_type(const qdqc_module *m, size_t i);
QDQC_API size_t qdqc_module_output_count(const qdqc_module *m);
QDQC_API const char *qdqc_module_output_name(const qdqc_module *m, size_t i);
QDQC_API int qdqc_module_output_rank(const qdqc_module *m, size_t i);
QDQC_API const int64_t *qdqc_module_output_dims(const qdqc_module *m, size_t i);
QDQC_API const char *qdqc_module_output_elem_type(const qdqc_module *m, size_t i);
/* Bytes per element of an element type name (i4/u4 and bool: 1); 0 if unknown. */
QDQC_API size_t qdqc_elem_type_size(const char *elem_type);
/* Run the module's graph in the reference interpreter (exact semantics of every op at the
 * current point of the pipeline; requantization mode from the context option "requant").
 * inputs[i] / outputs[i]: dense C-order buffers of each graph input/output in its element type
 * (qdqc_elem_type_size bytes per element). */
QDQC_API qdqc_status qdqc_module_run_reference(qdqc_module *m, const void *const *inputs,
                                               void *const *outputs);

/* ---- NumPy .npy files (v1/v2/v3 read, v1 written; little-endian, C order) ---- */
typedef struct qdqc_array {
    char elem_type[8]; /* "f32", "i8", ... as above */
    int rank;
    int64_t dims[8];
    void *data;        /* owned; free with qdqc_array_free */
    size_t nbytes;
} qdqc_array;
QDQC_API qdqc_status qdqc_npy_read(qdqc_context *ctx, const char *path, qdqc_array *out);
/* i4/u4 are written as i8/u8 (one element per byte). Written to a temporary file beside path
 * and renamed (as qdqc_module_compile_to_file): on failure, QDQC_ERR_IO and path untouched. */
QDQC_API qdqc_status qdqc_npy_write(qdqc_context *ctx, const char *path, const char *elem_type,
                                    int rank, const int64_t *dims, const void *data);
QDQC_API void qdqc_array_free(qdqc_array *a); /* NULL-safe */

/* ---- code generation: AOT object/asm/LLVM IR/header and JIT (lib/api/compile.c) ----
 * The module should have been through the passes (integer graph). ABI of the output:
 * docs/abi.md. Requantization mode comes from the context option "requant". */
typedef struct qdqc_compile_options qdqc_compile_options;
typedef enum qdqc_emit_kind {
    QDQC_EMIT_OBJ = 0,
    QDQC_EMIT_ASM = 1,
    QDQC_EMIT_LLVM = 2,
    QDQC_EMIT_HEADER = 3,
    QDQC_EMIT_BITCODE = 4, /* LLVM bitcode (.bc) */
} qdqc_emit_kind;
QDQC_API qdqc_compile_options *qdqc_compile_options_create(void);
QDQC_API void qdqc_compile_options_destroy(qdqc_compile_options *o); /* NULL is a no-op */
/* Names: "target" (triple, or a short name: "x86_64"/"x86-64"/"amd64" and "aarch64"/"arm64"
 * stand for x86_64-unknown-linux-gnu and aarch64-unknown-linux-gnu; default host), "mcpu"
 * (default generic; "native" = host),
 * "mattr" ("+avx512vnni,-avx2,..."; default: the host's features when target and mcpu are
 * unset), "name" (symbol prefix, default "model"), "isa" (force a kernel path: generic, avx2,
 * avxvnni, avx512vnni, neon, dotprod, i8mm), "profile" ("1": a step hook around every step,
 * qdqc_jit_set_profile_hook; "0" the default). QDQC_ERR_INVALID_ARG for an unknown name. */
QDQC_API qdqc_status qdqc_compile_options_set(qdqc_compile_options *o, const char *name,
                                              const char *value);
/* Check the target, CPU, features and symbol prefix of o now, as a compile would (o may be
 * NULL: the defaults); QDQC_ERR_INVALID_ARG with diagnostics in ctx if one is not usable. */
QDQC_API qdqc_status qdqc_compile_options_check(qdqc_context *ctx,
                                                const qdqc_compile_options *o);
/* opts may be NULL (defaults). The file is written to a temporary file beside path and
 * renamed, so on failure (QDQC_ERR_IO, the OS reason in the diagnostic) path is untouched;
 * "-" is standard output, and an existing non-regular file (a device) is written in place. */
QDQC_API qdqc_status qdqc_module_compile_to_file(qdqc_module *m, const qdqc_compile_options *opts,
                                                 const char *path, qdqc_emit_kind kind);
/* *out: malloc'd bytes (NUL-terminated), free with qdqc_string_free. */
QDQC_API qdqc_status qdqc_module_compile_to_memory(qdqc_module *m,
                                                   const qdqc_compile_options *opts,
                                                   qdqc_emit_kind kind, char **out,
                                                   size_t *len);
/* n kinds from one compile (the graph is lowered and optimised once): outs[i] and lens[i] as
 * qdqc_module_compile_to_memory's for kinds[i]. On failure every outs[i] is NULL. */
QDQC_API qdqc_status qdqc_module_compile_outputs(qdqc_module *m,
                                                 const qdqc_compile_options *opts, size_t n,
                                                 const qdqc_emit_kind *kinds, char **outs,
                                                 size_t *lens);

/* Parallel-for hook types qdqc_parallel_fn / qdqc_parallel_for_fn and the thread pool
 * (qdqc_threadpool_*): qdqc/runtime.h, included above; libqdqc exports the pool too. */

/* JIT session: compiles m in process (ORC LLJIT). The session does not reference m after
 * creation. Threads: separate sessions (also sessions made from one module) may run at the
 * same time on separate threads, with one shared hook and pool; a run touches the context only
 * to report a code-generator bug (a write past the workspace). One session runs one inference
 * at a time, in its own workspace: a qdqc_jit_run that starts while another run of the same
 * session is in progress (on another thread, or from its parallel-for hook) returns
 * QDQC_ERR_BUSY at once, without touching its outputs and without a diagnostic (the context
 * may be another thread's). qdqc_jit_set_parallel_for and qdqc_jit_destroy must not overlap a
 * run of the session. */
typedef struct qdqc_jit qdqc_jit;
QDQC_API qdqc_status qdqc_jit_create(qdqc_module *m, const qdqc_compile_options *opts,
                                     qdqc_jit **out);
QDQC_API void qdqc_jit_set_parallel_for(qdqc_jit *j, qdqc_parallel_for_fn pf, void *ctx);
/* inputs/outputs as qdqc_module_run_reference. */
QDQC_API qdqc_status qdqc_jit_run(qdqc_jit *j, const void *const *inputs, void *const *outputs);
/* A session of a module with a run-time dimension (qdqc_context_set_dim_range): run at the
 * inputs' shapes (input_shapes[i]: input i's dims; the dimension's axis any multiple its
 * range allows, the others as the module's), writing each output's dims to output_shapes[i]
 * (NULL, or an entry of NULL: not written). outputs == NULL only checks the shapes and writes
 * output_shapes, so a caller can size its buffers first. QDQC_ERR_INVALID_ARG for shapes that
 * do not conform (nothing runs) or a session without a run-time dimension (docs/abi.md,
 * "Run-time dimensions"). */
QDQC_API qdqc_status qdqc_jit_run_shapes(qdqc_jit *j, const int64_t *const *input_shapes,
                                         const void *const *inputs, int64_t *const *output_shapes,
                                         void *const *outputs);
QDQC_API size_t qdqc_jit_workspace_size(const qdqc_jit *j);
QDQC_API void qdqc_jit_destroy(qdqc_jit *j); /* NULL is a no-op */

/* Steps and per-step profiling. A compiled model runs its graph as a sequence of steps, one per
 * node that computes (a residual Add fused into the convolution before it shares that
 * convolution's step), numbered from 0 in run order. For step i: the name of its node (the
 * ONNX node name; "%v" after the node's first result v when the node has none; two names
 * joined by " + " for a fused Add), its qdqc op ("qconv", "qadd", ...; "qconv+qadd" when
 * fused) and its multiply-adds (conv, conv-transpose, matmul and gemm, integer or float; 0
 * for other ops). Out-of-range i gives NULL / 0. The strings live as long as the session. */
QDQC_API size_t qdqc_jit_step_count(const qdqc_jit *j);
QDQC_API const char *qdqc_jit_step_name(const qdqc_jit *j, size_t i);
QDQC_API const char *qdqc_jit_step_op(const qdqc_jit *j, size_t i);
QDQC_API uint64_t qdqc_jit_step_macs(const qdqc_jit *j, size_t i);
/* The step hook of a model compiled with the compile option "profile" = "1": a run calls
 * fn(ctx, step, 0) right before step `step` and fn(ctx, step, 1) right after it, on the thread
 * that runs the model (the hook sees the steps in order; a step's parallel work has finished
 * when its end is reported). AOT: the option adds PREFIX_run_profile to the object (docs/abi.md).
 * Without the option the emitted code is the same as before; qdqc_jit_set_profile_hook then
 * returns QDQC_ERR_INVALID_ARG. fn == NULL removes the hook. Must not overlap a run. */
typedef void (*qdqc_profile_fn)(void *ctx, int32_t step, int32_t end);
QDQC_API qdqc_status qdqc_jit_set_profile_hook(qdqc_jit *j, qdqc_profile_fn fn, void *ctx);

/* ---- accuracy comparison (lib/api/compare.c, docs/accuracy.md) ---- */
/* Error of x against a reference ref, n values: SQNR in dB, 10 log10(sum ref^2 / sum
 * (x - ref)^2) (+inf when x == ref, -inf when ref is all zero and x is not), cosine
 * similarity sum(ref x) / (|ref| |x|) (1 when both are all zero, 0 when one is), the largest
 * and the mean absolute difference, and both divided by `step` (the quantization step; 0
 * when step <= 0). Sums in double. */
typedef struct qdqc_error_stats {
    double sqnr_db, cosine;
    double max_abs, mean_abs;
    double max_steps, mean_steps;
} qdqc_error_stats;
QDQC_API qdqc_status qdqc_error_stats_compute(const float *ref, const float *x, size_t n,
                                              double step, qdqc_error_stats *out);
/* The per-tensor static quantizes of computed values (not of constants) of m, in graph order:
 * what the accuracy comparison matches, reports and checks. Strings are lent (valid while
 * m is unchanged); `node` is the ONNX node name ("" if none), `input` the float value
 * quantized, `output` the integers, `dq_output` the first dequantize of `output` with the
 * same parameters ("" if none). real = (q - zero_point) * scale, q in [qmin, qmax]. */
typedef struct qdqc_quant_info {
    const char *node, *input, *output, *dq_output;
    char storage[8]; /* "u8", "i8", "i16", ... */
    double scale;
    int32_t zero_point, qmin, qmax;
} qdqc_quant_info;
QDQC_API size_t qdqc_module_quant_count(const qdqc_module *m);
QDQC_API qdqc_status qdqc_module_quant_get(const qdqc_module *m, size_t i,
                                           qdqc_quant_info *out);
/* Element type ("f32", "i8", ...) of the value named `name`, NULL when m has no such value
 * (a value the passes fused away). Lent, static. */
QDQC_API const char *qdqc_module_value_elem_type(const qdqc_module *m, const char *name);
/* Make the value named `name` a graph output too (appended; no change if it is one already),
 * so that a run shows an intermediate tensor. Before the passes this may keep values alive
 * that the passes would fuse; after them (a JIT of the compiled graph), it observes the
 * compiled code without changing it. QDQC_ERR_INVALID_ARG if there is no such value. */
QDQC_API qdqc_status qdqc_module_add_output(qdqc_module *m, const char *name);

/* A comparison of a float model, its QDQ form as written and the QDQ form compiled
 * (docs/accuracy.md). qdqc_compare_create loads float_path and qdq_path (twice: once run as
 * written on the reference interpreter, once through the default pipeline, with the context's
 * options such as "keep-float" and "requant", then JIT-compiled with opts, which may be NULL),
 * lists the QDQ graph's activation quantizes (qdqc_module_quant_get) and matches each to a
 * float tensor by name: `map` (NULL or text, lines "FLOAT_NAME QDQ_NAME", '#' comments, QDQ_NAME
 * the quantize's node, input, output or dequantize output), then the quantize's input, then
 * the names without ONNX Runtime's suffixes _QuantizeLinear_Input, _QuantizeLinear_Output and
 * _DequantizeLinear_Output, then the dequantize's output. qdqc_compare_run runs the three on
 * one sample (inputs as for qdqc_module_run_reference of the QDQ model, whose inputs
 * qdqc_compare_get_qdq_module lends; the float model takes them by name, else by position);
 * the rows cover every sample run so far. */
typedef struct qdqc_compare qdqc_compare;
typedef struct qdqc_compare_row {
    qdqc_quant_info q;          /* the quantize (strings lent by the comparison) */
    const char *float_tensor;   /* its float tensor, NULL if none matched */
    int compiled;               /* its integers survive the passes (else: fused away) */
    int float_in_compiled;      /* its float input is still computed after the passes */
    int has_float_to_qdq;       /* a float tensor of the same size was found */
    int has_qdq_to_compiled;
    qdqc_error_stats float_to_qdq;    /* float tensor vs dequantized QDQ integers */
    qdqc_error_stats qdq_to_compiled; /* dequantized QDQ vs dequantized compiled integers */
    double observed_min, observed_max; /* of the quantize's input in the QDQ graph */
    uint64_t count, clipped_below, clipped_above; /* its values; those outside [qmin, qmax] */
} qdqc_compare_row;
QDQC_API qdqc_status qdqc_compare_create(qdqc_context *ctx, const char *float_path,
                                         const char *qdq_path, const qdqc_compile_options *opts,
                                         const char *map, qdqc_compare **out);
QDQC_API void qdqc_compare_destroy(qdqc_compare *c); /* NULL is a no-op */
QDQC_API const qdqc_module *qdqc_compare_get_qdq_module(const qdqc_compare *c);
QDQC_API qdqc_status qdqc_compare_run(qdqc_compare *c, const void *const *inputs);
QDQC_API size_t qdqc_compare_row_count(const qdqc_compare *c);
QDQC_API qdqc_status qdqc_compare_row_get(const qdqc_compare *c, size_t i,
                                          qdqc_compare_row *out);

#ifdef __cplusplus
}
#endif
#endif /* QDQC_QDQC_H */
