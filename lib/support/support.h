/* support.h: arena, string interning, growable buffers, diagnostics engine, contexts.
 * Internal to libqdqc. Nothing here touches global state. */
#ifndef QDQC_SUPPORT_H
#define QDQC_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "qdqc/qdqc.h"

#define QDQC_UNREACHABLE() qdqc_fatal(__FILE__, __LINE__, "unreachable")
#define QDQC_ASSERT(c) ((c) ? (void)0 : qdqc_fatal(__FILE__, __LINE__, "assertion failed: " #c))
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__GNUC__)
#define QDQC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define QDQC_NORETURN __attribute__((noreturn))
#else
#define QDQC_PRINTF(f, a)
#define QDQC_NORETURN
#endif

/* An internal error (our bug): print file:line and abort. */
QDQC_NORETURN void qdqc_fatal(const char *file, int line, const char *msg);

/* ---- out of memory (docs/api.md, "Out of memory") ----
 * xmalloc and friends never return NULL. When an allocation fails inside a public API call,
 * control returns to that call's entry point (an OomTrap: setjmp there, longjmp here), which
 * runs the cleanups registered with oom_defer, reports "out of memory" and returns
 * QDQC_ERR_NOMEM. Outside any trap (internal users: unit tests, fuzzers) a failure aborts
 * through qdqc_fatal as before. Code that checks a large allocation itself (plain malloc)
 * frees what it holds and calls oom_raise. No C++ frame (an MLIR/LLVM callback) may lie
 * between a trap and an allocation: entry points that call MLIR with callbacks into the
 * library push an abort-only trap (oom_trap_push_abort). The trap stack is per thread. */
/* The caller's part of a trap: set before setjmp and never changed after it (everything that
 * changes, the cleanups and the message, lives in per-thread storage, so nothing the longjmp
 * returns to is indeterminate, C11 7.13.2.1). Traps nest up to OOM_TRAP_DEPTH deep. */
#define OOM_TRAP_DEPTH 8
typedef struct OomTrap {
    jmp_buf jb;
    struct OomTrap *prev;
    unsigned depth;
} OomTrap;
/* `file` (may be NULL) is the location of the "out of memory" diagnostic. */
void oom_trap_push(OomTrap *t, const char *file);
void oom_trap_push_abort(OomTrap *t);
void oom_trap_pop(OomTrap *t);
const char *oom_trap_file(const OomTrap *t); /* the file given to oom_trap_push */
/* After setjmp returned nonzero: pops t, runs its cleanups (last registered first), reports
 * the failure in ctx (if it can: the report itself needs a little memory) and returns
 * QDQC_ERR_NOMEM. */
qdqc_status oom_trap_catch(OomTrap *t, qdqc_context *ctx); /* diag.c */
/* The part of oom_trap_catch that owns the trap frames (support.c): pops t, runs its cleanups,
 * copies what failed into what[whatlen] (OOM_WHAT_LEN holds it whole) and the trap's file. */
#define OOM_WHAT_LEN 192
void oom_trap_unwind(OomTrap *t, char *what, size_t whatlen, const char **file);
/* Register fn(arg) with the innermost trap, to run if it catches (arg must not point into a
 * stack frame below the trap's); oom_undefer removes it on the normal path. At most 6 per
 * trap. No-ops without a trap. */
void oom_defer(void (*fn)(void *), void *arg);
void oom_undefer(void *arg);
/* Report an allocation failure: longjmp to the innermost trap, or abort. */
QDQC_NORETURN void oom_raise(const char *fmt, ...) QDQC_PRINTF(1, 2);
/* Test hook: the n-th allocation from now on this thread fails (n >= 1; 0 turns it off);
 * counts every xmalloc/xcalloc/xrealloc and every checked site (qdqc_alloc_fails). */
void qdqc_test_fail_alloc_after(long n);
long qdqc_test_alloc_count(void); /* allocations counted since the last call of the above */
bool qdqc_alloc_fails(void);      /* true if the test hook says this allocation fails */

/* Trapped entry point: on an allocation failure below, return `failret` from the calling
 * function after oom_trap_catch (which reports in ctx, at `file`). */
#define OOM_TRAP_ENTER(t, ctx, file, failret)        \
    OomTrap t;                                       \
    oom_trap_push(&t, (file));                       \
    if (setjmp(t.jb)) {                              \
        (void)oom_trap_catch(&t, (ctx));             \
        return failret;                              \
    }
#define OOM_TRAP_LEAVE(t) oom_trap_pop(&t)

/* Allocation policy. xmalloc and friends never return NULL (above): the default. try_malloc,
 * try_calloc and try_realloc return NULL on failure, for the few callers that report it themselves (a
 * public constructor that returns NULL, a large buffer named in its own diagnostic, a size the
 * input chose); both count for the test hook like the x forms. Zero sizes allocate 1 byte. */
void *try_malloc(size_t n);
void *try_calloc(size_t n, size_t size);
void *try_realloc(void *p, size_t n); /* on NULL, p is still allocated */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

/* Writes the message to err[errlen] (when err is not NULL and errlen > 0, truncated to fit);
 * returns false, so an error path can `return errbuf_fail(err, errlen, ...)`. */
bool errbuf_fail(char *err, size_t errlen, const char *fmt, ...) QDQC_PRINTF(3, 4);

/* Overflow-checked size arithmetic: false on overflow. */
bool size_mul(size_t a, size_t b, size_t *out);
bool size_add(size_t a, size_t b, size_t *out);

/* ---- arena ---- */
typedef struct ArenaBlock ArenaBlock;
typedef struct Arena {
    ArenaBlock *head;
    size_t used_total;
} Arena;
void arena_init(Arena *a);
void arena_free(Arena *a);
void *arena_alloc(Arena *a, size_t n);       /* zeroed, 16-byte aligned */
void *arena_dup(Arena *a, const void *p, size_t n);
char *arena_strdup(Arena *a, const char *s);

/* ---- growable byte buffer / string builder ---- */
typedef struct StrBuf {
    char *data;
    size_t len, cap;
} StrBuf;
void sb_init(StrBuf *b);
void sb_free(StrBuf *b);
void sb_putc(StrBuf *b, char c);
void sb_puts(StrBuf *b, const char *s);
void sb_putn(StrBuf *b, const char *s, size_t n);
void sb_printf(StrBuf *b, const char *fmt, ...) QDQC_PRINTF(2, 3);
void sb_vprintf(StrBuf *b, const char *fmt, va_list ap);
char *sb_take(StrBuf *b); /* NUL-terminated, caller frees; buffer is reset */

/* Growable array of POD elements. */
#define VEC(T) struct { T *data; uint32_t len, cap; }
/* The vector is unchanged when the allocation fails (out-of-memory traps, above). */
#define vec_push(v, x)                                                                  \
    do {                                                                                \
        if ((v)->len == (v)->cap) {                                                     \
            uint32_t vec_ncap_ = (v)->cap ? (v)->cap * 2 : 8;                           \
            (v)->data = xrealloc((v)->data, (size_t)vec_ncap_ * sizeof(*(v)->data));    \
            (v)->cap = vec_ncap_;                                                       \
        }                                                                               \
        (v)->data[(v)->len++] = (x);                                                    \
    } while (0)
#define vec_free(v) (free((v)->data), (v)->data = NULL, (v)->len = (v)->cap = 0)

/* ---- string interning (per module) ---- */
typedef struct Interner {
    char **strs; /* id -> string; id 0 is "" */
    uint32_t nstrs, cap;
    uint32_t *table; /* open addressing: slot -> id+1, 0 = empty */
    uint32_t tcap;
} Interner;
void intern_init(Interner *in);
void intern_free(Interner *in);
uint32_t intern(Interner *in, const char *s);
uint32_t intern_n(Interner *in, const char *s, size_t n);
const char *intern_str(const Interner *in, uint32_t id);
uint32_t intern_lookup(const Interner *in, const char *s); /* 0 when absent */

/* ---- float printing that round-trips ---- */
/* Shortest decimal that parses back (strtof) to exactly f; always has '.', 'e', "nan" or
 * "inf" so it reads as a float. Writes at most 32 bytes. */
void fmt_float(char *buf, float f);
void fmt_double(char *buf, double d);

/* ---- diagnostics ---- */
/* A source location. Text IR: file:line:col. ONNX: file + node name + op type. */
typedef struct Loc {
    const char *file; /* interned in the module, or static; may be NULL */
    uint32_t line, col;
    const char *node; /* ONNX node name; NULL if none */
    const char *optype; /* ONNX op type; NULL if none */
} Loc;

typedef struct Diag {
    qdqc_severity sev;
    char *loc;
    char *msg;
} Diag;

typedef struct QdqcOptions {
    int requant_fixed; /* --requant=fixed */
    int remarks;       /* collect remarks */
    int verify_each;
    int print_after_all;
    int time_passes;
    char *print_after; /* comma list or NULL */
    int strict;        /* --strict: import warnings about invalid input are errors */
    int wonly_i8_acts; /* --weight-only=int8-acts: wmatmul quantizes its activations per row */
    char *keep_float;  /* --keep-float: comma list of ONNX node names left in float, or NULL */
} QdqcOptions;

typedef struct InputShape {
    char *name;
    int64_t dims[8];
    int rank;
} InputShape;

/* A graph input frozen to a compile-time constant (--const-input): ONNX imports turn the input
 * named `name` into a constant of this value. */
typedef struct ConstInput {
    char *name;
    char *origin;      /* "FILE.npy" (or "<memory>") for diagnostics */
    char elem[8];      /* element type name as in the IR ("f32", "i64", ...) */
    int rank;
    int64_t dims[8];
    void *data;        /* dense, C order, little-endian */
    size_t nbytes;
} ConstInput;

/* --dim NAME=N: the symbolic dimension NAME (an ONNX dim_param, a text-IR ?NAME) is N. */
typedef struct DimBind {
    char *name;
    int64_t value;
} DimBind;

/* --dim NAME=LO..HI: NAME stays a symbol, bound at run time to a value in [lo, hi]: the
 * compiled object takes the actual shapes (lib/codegen/dynbatch.c). */
typedef struct DimRange {
    char *name;
    int64_t lo, hi;
} DimRange;

struct qdqc_context {
    VEC(Diag) diags;
    size_t nerrors;
    qdqc_diag_handler handler;
    void *handler_user;
    char *rendered; /* cache for qdqc_context_get_diagnostics */
    QdqcOptions opt;
    VEC(InputShape) input_shapes;
    VEC(ConstInput) const_inputs;
    VEC(DimBind) dim_binds;
    VEC(DimRange) dim_ranges;
    /* output sink for --print-after etc. (the CLI sets it; the library writes only here) */
    void (*print_sink)(void *user, const char *text);
    void *print_user;
    /* qdqc_context_set_phase_handler: told the time of each compile phase */
    qdqc_phase_handler phase_fn;
    void *phase_user;
};

/* Monotonic wall clock in milliseconds (for phase and pass timing). */
double clock_ms(void);
/* The end of compile phase `phase` that began at clock_ms() == t0: tells the context's phase
 * handler, and with the option "time-passes" emits the remark "phase PHASE: X ms" (at `file`,
 * may be NULL). */
void ctx_phase_end(qdqc_context *ctx, const char *file, const char *phase, double t0);

void loc_format(StrBuf *b, const Loc *l);
void diag_emit(qdqc_context *ctx, qdqc_severity sev, const Loc *loc, const char *fmt, ...)
    QDQC_PRINTF(4, 5);
void diag_vemit(qdqc_context *ctx, qdqc_severity sev, const Loc *loc, const char *fmt,
                va_list ap);
#define diag_error(ctx, loc, ...) diag_emit((ctx), QDQC_SEV_ERROR, (loc), __VA_ARGS__)
#define diag_warning(ctx, loc, ...) diag_emit((ctx), QDQC_SEV_WARNING, (loc), __VA_ARGS__)
#define diag_remark(ctx, loc, ...) diag_emit((ctx), QDQC_SEV_REMARK, (loc), __VA_ARGS__)
const char *severity_name(qdqc_severity s);

/* File reading with a size cap; returns NULL and emits a diagnostic on failure. */
char *read_file_all(qdqc_context *ctx, const char *path, size_t max, size_t *len);

#endif
