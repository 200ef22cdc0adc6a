/* fuzz.h: internal interface of qdqc-fuzz (the differential fuzzer, docs/testing.md). */
#ifndef QDQC_FUZZ_H
#define QDQC_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Rng {
    uint64_t s;
} Rng;

uint64_t fz_next(Rng *r);
int fz_int(Rng *r, int lo, int hi); /* inclusive */
double fz_unif(Rng *r);             /* [0, 1) */

typedef struct Sb {
    char *p;
    size_t len, cap;
} Sb;

void sb_printf(Sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_free(Sb *b);

/* files.c: an output directory created with its parents (false and a message on stderr
   otherwise); a whole file written or nothing (false, the reason on stderr, no file left). */
bool fz_mkdirs(const char *dir);
bool fz_write_file(const char *path, const void *data, size_t len);

/* What to generate. Shrinking changes skip, only_slot and the caps. */
typedef struct GenSpec {
    uint64_t seed;
    int nslots;        /* op slots (<= 64) */
    uint64_t skip;     /* bit s: slot s switched off */
    int maxn, maxc, maxhw;
    bool all_outputs;  /* every quantized result is a graph output */
    int only_slot;     /* >= 0: only that slot's result (and its inputs) are outputs */
    int only_kind;     /* >= 0: force the op kind of every slot (debugging) */
    bool qdq_pairs;    /* --qdq-pairs: also generate Q->DQ pairs whose DQ parameters differ
                          (gen.c, op_qdq_pair); off, the graphs are those of earlier versions */
    bool qdq_types;    /* --qdq-types: also Q->DQ side trips through i4/u4/i16/u16, per tensor,
                          per axis and blocked (gen.c, op_qdq_types) */
    bool transformer;  /* --transformer: also attention (QDQ MatMul of two activations through
                          Reshape/Transpose, Softmax between Q/DQ) and float islands (LayerNorm,
                          GELU chains, element-wise chains between DQ and Q): op_attention,
                          op_island */
    bool select_ops;   /* --select-ops: also where / comparisons / expand / tile / reduce_* /
                          argmax / run-time gather / cast (gen.c, op_select) */
    bool dynq;         /* --dynq: also ONNX Runtime's dynamic quantization of a MatMul
                          (gen.c, op_dynq) */
    bool a16;          /* --a16: half of the quantized activations are u16/i16 (A16W8: 16-bit
                          qconv/qmatmul/element-wise ops, 8<->16 boundaries; gen.c choose_qp) */
    bool wonly;        /* --wonly: also weight-only ops, float activations times i8/u8/i4/u4 or
                          narrow-range weights (gen.c, op_wonly) */
    int sym_pct;       /* percent of the graphs whose first input has symbolic dimensions
                          (?b, ?s), kept where every op on their paths types them (gen.c,
                          sym_choose): 50 by default, --symbolic 100, --no-symbolic 0 */
} GenSpec;

enum { OUT_Q, OUT_DQ, OUT_F32 };

typedef struct GenOut {
    int kind;      /* OUT_Q: quantized integers; OUT_DQ: dequantized (scale); OUT_F32: float */
    float scale;
    int depth;     /* rounding ops on the longest path from a graph input */
    int slot;
    int deps[4];   /* output index of each input of the producing op; -1 graph input or none,
                      -2 an intermediate that is not an output */
} GenOut;

#define FZ_MAXOUT 96

typedef struct GenGraph {
    Sb text;
    GenOut out[FZ_MAXOUT + 1];
    int nout;
    int nslots_used;
    int float_out_value, float_out_rank;
    int64_t float_out_dims[4];
    /* graph inputs that are run-time scales: filled uniformly in [lo, hi] ("// fz-scale") */
    int nscale_in;
    struct { int input; float lo, hi; } scale_in[8];
    /* a symbolic graph: sym_text is the same graph with nsym of the first input's dimensions
       written as symbols (and "// fz-dim NAME SIZE" lines), sym_size[j] the size text has for
       symbol j; nsym 0 and sym_text empty otherwise */
    Sb sym_text;
    int nsym;
    const char *sym_name[2];
    int64_t sym_size[2];
} GenGraph;

/* Generate the graph of sp into gg (text IR, with one "// fz-out" line per output, and its
 * symbolic form when it has one); false if it has no output. fz_graph_free frees the texts. */
bool fz_generate(const GenSpec *sp, GenGraph *gg);
void fz_graph_free(GenGraph *gg);

/* qdqc-fuzz --mutate (mutate.c): the whole command line; the exit status. */
int fz_mutate_main(int argc, char **argv);

#endif
