/* ir.h: the qdqc graph IR (internal).
 *
 * A module owns one graph, an arena (attributes, tensor bytes, quantization parameters) and a
 * string interner (value names, attribute names, file names). Nodes and values live in
 * growable arrays and refer to each other by 32-bit indices (NodeId, ValueId), so pointers to
 * a Node or Value are invalidated by ir_add_node/ir_add_value: re-fetch after adding.
 *
 * Graph invariants (checked by ir_verify):
 *  - every value has exactly one definition: a graph input or one node result;
 *  - nodes are in topological order (ir_compact restores it after a pass appended nodes);
 *  - result types agree with ir_infer_types; quantization parameters are valid.
 * Semantics of every op: docs/ir.md. Quantization parameters appear in two places:
 *  - on quantize/dequantize nodes (Node.q): the ONNX scale/zero point of that node;
 *  - on integer value types (Type.q): what the integers mean, read by integer ops.
 */
#ifndef QDQC_IR_H
#define QDQC_IR_H

#include <stdbool.h>
#include <stdint.h>

#include "support/support.h"

#define IR_MAX_RANK 8

typedef enum ElemType {
    ET_NONE = 0,
    ET_F32, ET_F16, ET_F64, ET_I8, ET_U8, ET_I16, ET_U16, ET_I32, ET_U32, ET_I64, ET_I4, ET_U4,
    ET_BOOL,
    ET_COUNT
} ElemType;

const char *elem_name(ElemType t);             /* "f32", "i8", ... */
ElemType elem_from_name(const char *s, size_t n);
size_t elem_size(ElemType t);                  /* bytes per element; i4/u4 -> 1 (unpacked) */
bool elem_is_float(ElemType t);
bool elem_is_int(ElemType t);                  /* includes bool */
bool elem_is_quant_storage(ElemType t);        /* i4 u4 i8 u8 i16 u16 (i32 for bias) */
void elem_range(ElemType t, int64_t *lo, int64_t *hi);

/* Quantization parameters: real = (q - zp[c]) * scale[c]. Immutable once built; arena-owned. */
typedef struct QParams {
    ElemType storage; /* i8, u8, i16, u16, i4, u4, i32 */
    int32_t axis;     /* -1: per-tensor (n == 1); else the channel axis (non-negative) */
    uint32_t n;       /* number of scales / zero points */
    float *scale;
    int32_t *zp;
    int32_t qmin, qmax; /* storage range; narrower for narrow-range ([-127,127]) */
} QParams;

/* A dimension is a constant >= 0 or a symbolic expression of the graph (dims.c): the tag
 * DIM_TAG0 - index of an entry of Graph.dimx. Tags also travel in i64 tensors holding shapes. */
#define DIM_TAG0 (-((int64_t)1 << 62))
#define DIM_TAG_SPAN ((int64_t)1 << 24)
static inline bool ir_dim_is_tag(int64_t v) { return v <= DIM_TAG0 && v > DIM_TAG0 - DIM_TAG_SPAN; }

typedef struct Type {
    ElemType elem;
    uint8_t rank;
    int64_t dims[IR_MAX_RANK]; /* constants, or symbolic (ir_dim_is_tag) */
    const QParams *q; /* NULL: plain numbers */
} Type;

typedef struct { uint32_t id; } ValueId; /* index into Graph.values; 0 = none */
typedef struct { uint32_t id; } NodeId;  /* index into Graph.nodes; 0 = none */
#define VNONE ((ValueId){0})
#define NNONE ((NodeId){0})

typedef struct Tensor {
    Type type;
    void *data;    /* arena-owned, little-endian, elem_size(type.elem) per element */
    size_t nbytes;
} Tensor;

typedef enum AttrKind { ATTR_INT, ATTR_FLOAT, ATTR_INTS, ATTR_FLOATS, ATTR_STRING, ATTR_TENSOR } AttrKind;

typedef struct Attr {
    uint32_t name; /* interned */
    AttrKind kind;
    union {
        int64_t i;
        float f;
        struct { int64_t *v; uint32_t n; } ints;
        struct { float *v; uint32_t n; } floats;
        uint32_t s; /* interned string */
        Tensor *t;
    };
} Attr;

typedef enum OpKind {
    OP_INVALID = 0,
#define OP(E, NAME, MININ, MAXIN, MINOUT, MAXOUT, FLAGS, INFER, ...) OP_##E,
#include "ops.def"
#undef OP
    OP_COUNT
} OpKind;

enum { OPF_ELEMWISE = 1, OPF_LAYOUT = 2, OPF_INT = 4, OPF_QDQ = 8, OPF_QRULE = 16, OPF_SYMDIM = 32,
       OPF_BATCH = 64, OPF_VIEW = 128, OPF_SYMN = 256 };

typedef struct OpInfo {
    const char *name;
    int min_in, max_in, min_out, max_out;
    unsigned flags;
    float (*f32)(float); /* ops.def's SCALAR column: the f32 formula of a one-operand op, or NULL */
} OpInfo;
const OpInfo *op_info(OpKind k);
OpKind op_from_name(const char *s, size_t n);

typedef struct Node {
    OpKind op;
    bool dead;
    uint32_t nin, nout, nattr;
    ValueId *in;   /* arena; an absent optional operand is VNONE */
    ValueId *out;
    Attr *attrs;
    QParams *q;    /* quantize/dequantize parameters (static form); NULL otherwise */
    Loc loc;
} Node;

typedef struct Value {
    uint32_t name; /* interned, unique in the graph */
    Type type;
    NodeId def;    /* NNONE for graph inputs */
    uint32_t def_index; /* result index in def, or input index */
    bool is_input;
} Value;

typedef struct Use {
    NodeId node;   /* NNONE: used as graph output number `index` */
    uint32_t index;
} Use;

typedef struct qdqc_module Module;

/* One entry of the table of symbolic dimensions (dims.c). */
enum { DIMX_SYM, DIMX_DIV, DIMX_POLY };
#define DIM_MAX_TERMS 4
#define DIM_MAX_ATOMS 4
typedef struct DimTerm {
    int64_t c;                   /* coefficient */
    uint8_t na;                  /* atoms (symbols or divisions) multiplied, sorted */
    uint32_t a[DIM_MAX_ATOMS];   /* entry indices */
} DimTerm;
typedef struct DimEntry {
    uint8_t kind;
    uint8_t nt;                  /* POLY: terms, canonical order */
    uint32_t name;               /* SYM: interned name */
    int64_t arg, div;            /* DIV: floor(arg / div), div > 1 */
    DimTerm t[DIM_MAX_TERMS];    /* POLY */
} DimEntry;

typedef struct Graph {
    Module *m;
    uint32_t name;
    VEC(Node) nodes;  /* nodes.data[0] is a placeholder so that NodeId 0 means none */
    VEC(Value) values;/* values.data[0] likewise */
    VEC(ValueId) inputs;
    VEC(ValueId) outputs;
    /* derived by ir_fill_uses (stale after edits until refilled) */
    uint32_t *use_start; /* per value: first index into uses; size values.len + 1 */
    Use *uses;
    bool uses_valid;
    uint32_t name_counter;
    /* names ever given to a value of this graph (indexed by interned id), so fresh names are
     * found in constant time; a name stays taken after its value is removed */
    uint8_t *name_taken;
    uint32_t name_taken_cap;
    VEC(DimEntry) dimx; /* symbolic dimensions (dims.c); empty for a static graph */
} Graph;

struct qdqc_module {
    qdqc_context *ctx;
    Arena arena;
    Interner strs;
    Graph g;
    const char *filename; /* interned */
    /* passes asked for while a symbol has a run-time range (--dim NAME=LO..HI): they run on
     * each specialisation of the module when it is compiled (lib/api/dynamic.c); malloc'd,
     * comma-separated, NULL if none */
    char *deferred_passes;
};

/* ---- module / graph construction ---- */
Module *ir_module_create(qdqc_context *ctx, const char *filename);
void ir_module_destroy(Module *m);
static inline Node *ir_node(Graph *g, NodeId n) { return &g->nodes.data[n.id]; }
static inline Value *ir_value(Graph *g, ValueId v) { return &g->values.data[v.id]; }
/* Results of a layout op (OPF_LAYOUT) that carry its operands' values: all of them, except
 * maxpool's result 1 (the i64 indices of the maxima), which is never quantized. */
static inline uint32_t ir_layout_nout(const Node *n) { return n->op == OP_MAXPOOL ? 1 : n->nout; }
static inline const char *ir_str(const Graph *g, uint32_t id) { return intern_str(&g->m->strs, id); }
const char *ir_value_name(const Graph *g, ValueId v);

/* A new value with `name` (NULL or taken: a fresh unique name derived from it). */
ValueId ir_add_value(Graph *g, const char *name, const Type *t);
ValueId ir_add_input(Graph *g, const char *name, const Type *t);
/* A new node; its results must be set with ir_set_result (or created with ir_add_result). */
NodeId ir_add_node(Graph *g, OpKind op, uint32_t nin, const ValueId *in, uint32_t nout, Loc loc);
void ir_set_result(Graph *g, NodeId n, uint32_t i, ValueId v);
ValueId ir_add_result(Graph *g, NodeId n, uint32_t i, const char *name, const Type *t);
/* Look up a value by name; VNONE if absent. */
ValueId ir_lookup_value(Graph *g, const char *name);

/* Attributes (stored in the module arena). Setting an existing name replaces it. */
void ir_set_attr_int(Graph *g, NodeId n, const char *name, int64_t v);
void ir_set_attr_float(Graph *g, NodeId n, const char *name, float v);
void ir_set_attr_ints(Graph *g, NodeId n, const char *name, const int64_t *v, uint32_t k);
void ir_set_attr_floats(Graph *g, NodeId n, const char *name, const float *v, uint32_t k);
void ir_set_attr_string(Graph *g, NodeId n, const char *name, const char *s);
void ir_set_attr_tensor(Graph *g, NodeId n, const char *name, Tensor *t);
void ir_set_attr(Graph *g, NodeId n, const Attr *a); /* copies; a->name must be interned in g */
const Attr *ir_attr(const Graph *g, const Node *n, const char *name); /* NULL if absent */
int64_t ir_attr_int(const Graph *g, const Node *n, const char *name, int64_t dflt);
float ir_attr_float(const Graph *g, const Node *n, const char *name, float dflt);
/* Ints attribute into out[max]; returns count, or -1 if absent. */
int ir_attr_ints(const Graph *g, const Node *n, const char *name, int64_t *out, int max);
const char *ir_attr_string(const Graph *g, const Node *n, const char *name, const char *dflt);
/* The result range of an integer op: q's [qmin, qmax] narrowed by n's 'clamp' attribute
 * [lo, hi] (a folded Relu/Clip) when it has exactly two values. */
void ir_clamp_range(const Graph *g, const Node *n, const QParams *q, int32_t *lo, int32_t *hi);

/* Quantization parameters (arena-owned). */
QParams *ir_qparams_new(Module *m, ElemType storage, int32_t axis, uint32_t n);
QParams *ir_qparams_per_tensor(Module *m, ElemType storage, float scale, int32_t zp);
bool qparams_equal(const QParams *a, const QParams *b); /* NULL-safe */
bool qparams_is_full_range(const QParams *q);

/* Tensors (arena-owned). */
Tensor *ir_tensor_new(Module *m, const Type *t); /* zeroed data; NULL if the size overflows */
bool type_numel(const Type *t, size_t *out);     /* false on overflow */
size_t type_numel_unchecked(const Type *t);
bool type_equal(const Type *a, const Type *b);   /* elem, shape and quant */
bool type_shape_equal(const Type *a, const Type *b);
/* Row-major element strides of t's shape (t->rank entries). */
void type_strides(const Type *t, int64_t *st);
/* Strides of t broadcast against o by numpy rules (o->rank entries, 0 on broadcast axes). */
void type_bcast_strides(const Type *t, const Type *o, int64_t *st);
/* Advance a row-major multi-index over o's shape; false once it wraps past the last index. */
bool type_next_index(const Type *o, int64_t *idx);
Type type_make(ElemType e, int rank, const int64_t *dims);
/* Where each element of a quantize/dequantize with operand (run-time or constant) scale and
 * zero point finds its parameters: per tensor (a 1-element scale), per axis (a 1-D scale, one
 * entry per index of `axis`) or blocked (ONNX 21 `block_size` B > 0: the scale has x's rank and
 * shape except dims[axis] = ceil(dims[axis] / B)). With x's flat index i = (o*dim + c)*inner + r,
 * the parameter index is o*ostride + (c / block)*cstride + r*rstride (per tensor: all strides
 * 0; per axis: block 1, cstride 1). */
typedef struct QdqLayout {
    int axis;                    /* -1: per tensor */
    int64_t outer, dim, inner;   /* x around `axis` (1, 1, numel when per tensor) */
    int64_t block;               /* 1 unless blocked */
    int64_t ostride, cstride, rstride;
    size_t nparams;              /* scale (and zero point) elements */
} QdqLayout;
/* Checks scale type s (and zero point z, may be NULL) against x for `axis` (negative counts
 * from the end) and `block` (0: not blocked); false with the reason in err. */
bool ir_qdq_layout(const Type *x, const Type *s, const Type *z, int64_t axis, int64_t block,
                   QdqLayout *l, char *err, size_t len);
static inline int64_t
ir_qdq_param_index(const QdqLayout *l, int64_t i)
{
    int64_t r = i % l->inner, oc = i / l->inner;
    return (oc / l->dim) * l->ostride + ((oc % l->dim) / l->block) * l->cstride + r * l->rstride;
}
/* Element i of a tensor as double / int64, whatever its element type. */
double tensor_get_f(const Tensor *t, size_t i);
int64_t tensor_get_i(const Tensor *t, size_t i);
void tensor_set_f(Tensor *t, size_t i, double v);
void tensor_set_i(Tensor *t, size_t i, int64_t v);
/* The constant tensor that defines v, or NULL if v is not a const result. */
const Tensor *ir_const_of(Graph *g, ValueId v);
/* Append a const node producing t; returns its value. */
ValueId ir_add_const(Graph *g, const char *name, Tensor *t, Loc loc);
/* Constant folding (fold.c): if n's operands are all constants (or n is `shape` of a static
 * shape), replace n by const nodes defining the same result values and mark n dead. Folds
 * shape, constant_of_shape, layout ops, cast and integer add/sub/mul/div. */
bool ir_try_fold(Graph *g, NodeId n);
/* Where a transpose, reshape, flatten, squeeze, unsqueeze or identity n with operand type x
 * (per-axis quantized: x->q) and result type y puts x's channel axis: the result axis, or -1
 * when the channel does not stay one whole dimension with the same elements (a reshape that
 * splits or merges it). */
int ir_moved_axis(Graph *g, const Node *n, const Type *x, const Type *y);

/* Uses: rebuilt by ir_fill_uses, stale after any edit. */
void ir_fill_uses(Graph *g);
uint32_t ir_num_uses(Graph *g, ValueId v);
const Use *ir_uses(Graph *g, ValueId v); /* ir_num_uses(g, v) entries */
/* Replace every use of `from` (operands and graph outputs) by `to`. Invalidates uses. */
void ir_replace_all_uses(Graph *g, ValueId from, ValueId to);
/* (a graph output keeps its name: `to` takes it over when `to` is internal) */
/* The node defining v, or NULL for graph inputs. */
Node *ir_def(Graph *g, ValueId v);
/* Whether v is one of the graph's outputs. */
bool ir_is_graph_output(const Graph *g, ValueId v);

/* Remove dead nodes and unused values, renumber, and sort nodes topologically (stable).
 * Returns false (with a diagnostic) if the graph has a cycle. */
bool ir_compact(Graph *g);
/* Stable topological order of nodes 0..n-1 (topo.c): Kahn's algorithm taking the lowest ready
 * index first, so an order that is already valid is kept. succ[succ_start[i] ..
 * succ_start[i+1]) are node i's successors, once per edge; indeg[i] counts its incoming edges
 * and is consumed. member (NULL: every node) leaves the nodes it marks false out. Writes the
 * order and returns its length: short when there is a cycle, whose nodes keep indeg != 0. */
uint32_t ir_topo_order(uint32_t n, const bool *member, uint32_t *indeg, const uint32_t *succ_start,
                       const uint32_t *succ, uint32_t *order);

/* ---- analyses ---- */
/* Result types of n from its operands and attributes; false with a diagnostic at n's
 * location on invalid input. */
bool ir_infer_types(Graph *g, Node *n, Type *out);
bool ir_verify(Graph *g);
/* Broadcast shapes (numpy rules); false if incompatible. */
bool shape_broadcast(const Type *a, const Type *b, Type *out);

/* ---- window and matmul geometry (geometry.c), shared by lib/ref and lib/codegen ---- */
/* A window op (conv, conv_transpose, pooling) over ns = 1 to 3 spatial axes: extents of the
 * input and output, kernel, strides, dilations, begin/end pads; axes past ns are 1 (pads 0). */
typedef struct IrWindow {
    int ns;
    int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
} IrWindow;
/* The window of n (input x, result y, kernel extents kernel[ns]): NULL, or why it has no
 * such form (in buf): not 1 to 3 spatial axes, auto_pad, attribute counts off. */
const char *ir_window(const Graph *g, const Node *n, const Type *x, const Type *y,
                      const int64_t *kernel, IrWindow *w, char *buf, size_t len);
/* MatMul's rank-1 promotion (numpy): a vector a becomes [1, K], a vector b [K, 1]; operands
 * of rank >= 2 are copied unchanged. */
void ir_matmul_promote(const Type *a, const Type *b, Type *a2, Type *b2);
/* Slice's first element and step on every axis of its operand x (rank r): for the axes n
 * slices, the start (negative counts from the end) clamped as ONNX says, to [0, d] for a
 * positive step and [-1, d - 1] for a negative one, and the step; 0 and 1 on the others (and
 * up to IR_MAX_RANK). False if 'starts' is missing or longer than r. */
bool ir_slice_starts(const Graph *g, const Node *n, const Type *x, int64_t *start, int64_t *step);

/* ---- resize index maps (resize.c), shared by lib/ref and lib/codegen ---- */
enum {
    RESIZE_HALF_PIXEL, RESIZE_ASYMMETRIC, RESIZE_ALIGN_CORNERS, RESIZE_PYTORCH_HALF_PIXEL,
    RESIZE_TF_HALF_PIXEL_FOR_NN, RESIZE_TF_CROP_AND_RESIZE
};
enum { RESIZE_ROUND_PREFER_FLOOR, RESIZE_ROUND_PREFER_CEIL, RESIZE_FLOOR, RESIZE_CEIL };
typedef struct ResizeSpec {
    int coord;   /* RESIZE_HALF_PIXEL ... */
    int nearest; /* RESIZE_ROUND_PREFER_FLOOR ... */
    bool linear; /* else nearest */
    /* per axis: the scale of the coordinate map ("scales" attribute; 0: output / input
     * size) and, for tf_crop_and_resize, the region of interest ("roi", normalized) */
    double scale[IR_MAX_RANK], roi0[IR_MAX_RANK], roi1[IR_MAX_RANK];
    float extrapolation; /* tf_crop_and_resize: the value of samples outside the input */
} ResizeSpec;
/* Read n's resize attributes: NULL if supported, else why not (in buf or static). */
const char *ir_resize_spec(Graph *g, const Node *n, ResizeSpec *rs, char *buf, size_t len);
/* Nearest: the source index of output position o along axis a of lin -> lout elements
 * (clamped to the input). */
int64_t ir_resize_nearest_src(const ResizeSpec *rs, int a, int64_t o, int64_t lin, int64_t lout);
/* Linear: the two source indices and the weight t of the second (clamped to the input). */
void ir_resize_linear_src(const ResizeSpec *rs, int a, int64_t o, int64_t lin, int64_t lout,
                          int64_t *i0, int64_t *i1, double *t);
/* Whether output position o along axis a samples inside the input; false only for
 * tf_crop_and_resize, whose samples outside are rs->extrapolation. */
bool ir_resize_inside(const ResizeSpec *rs, int a, int64_t o, int64_t lin, int64_t lout);
/* Whether axis a (lin -> lout) maps every position onto itself, inside the input. */
bool ir_resize_identity(const ResizeSpec *rs, int a, int64_t lin, int64_t lout);

/* ---- symbolic dimensions (dims.c) ---- */
/* The symbol `name` (the context's --dim binding's constant when it has one); false when the
 * table of expressions is full. */
bool ir_dim_sym(Graph *g, const char *name, int64_t *out);
bool ir_dim_sym_name(const Graph *g, int64_t v, const char **name); /* v is a plain symbol */
bool ir_dim_valid(const Graph *g, int64_t v); /* a constant or a tag of an existing entry */
/* Arithmetic on dimension values (constants or tags); false on overflow, on an expression too
 * complex for the canonical form, or (div_exact) when b does not divide a exactly. */
bool ir_dim_add(Graph *g, int64_t a, int64_t b, int64_t *out);
bool ir_dim_sub(Graph *g, int64_t a, int64_t b, int64_t *out);
bool ir_dim_mul(Graph *g, int64_t a, int64_t b, int64_t *out);
bool ir_dim_div_exact(Graph *g, int64_t a, int64_t b, int64_t *out);
bool ir_dim_floordiv(Graph *g, int64_t a, int64_t c, int64_t *out); /* c > 0 constant */
/* Text: "128", "?batch", "?(12*batch*seq)"; ir_dim_str into buf (truncated). */
void ir_dim_print(StrBuf *b, const Graph *g, int64_t v);
void ir_dim_format_expr(StrBuf *b, const Graph *g, int64_t v);
const char *ir_dim_str(const Graph *g, int64_t v, char *buf, size_t len);
/* Parse the expression of a dimension (the text after '?': a name or a parenthesised sum of
 * products of names and integers, '/' by a positive integer). */
bool ir_dim_parse(Graph *g, const char *s, size_t len, int64_t *out, const char **err);
bool ir_dim_name_char(char c, bool first);
bool ir_type_is_static(const Type *t);
bool ir_type_numel_dim(Graph *g, const Type *t, int64_t *out); /* the element count, symbolic */
int ir_type_first_sym(const Type *t); /* the first symbolic axis, or -1 */
int ir_type_first_sym_from(const Type *t, int from); /* the same from axis `from` on */
bool ir_tensor_has_sym(const Tensor *t); /* an i64 tensor holding a symbolic value */
/* An error naming the first value (graph inputs first) with a symbolic dimension: `what`
 * ("the passes", "compiling") needs static shapes. */
bool ir_require_static(Graph *g, const char *what);

/* ---- run-time batch dimensions (batchsep.c) ---- */
/* Where the run-time symbol sits in a graph input or output: axis -1 when it does not. */
typedef struct IrBatchIO {
    int axis;
    int64_t coef; /* the axis is coef * symbol */
} IrBatchIO;
/* Whether the symbol `sym` may be a run-time batch dimension of the graph, given the module
 * specialised (and passed) at sym = 1, 2, 3; fills in[]/out[] per graph input/output, or
 * reports an error naming the node that mixes values along it. */
bool ir_batch_check(Module *const ms[3], const char *sym, IrBatchIO *in, IrBatchIO *out);
/* A copy of m with the symbol bound to value (through the text form: every type, shape
 * constant and attribute re-inferred); NULL with diagnostics on error. Its node locations
 * point into m's strings: m must outlive it. */
Module *ir_module_specialise(Module *m, const char *sym, int64_t value);
/* The first symbol of g that has a run-time range in its context (--dim NAME=LO..HI), its
 * bounds, and how many symbols of g have one; NULL if none. */
const char *ir_runtime_symbol(Graph *g, int64_t *lo, int64_t *hi, uint32_t *count);

/* ---- text form ---- */
char *ir_print(Graph *g);          /* caller frees */
void ir_print_type(StrBuf *b, const Graph *g, const Type *t);
/* Parse one module from text; NULL with diagnostics on error. */
Module *ir_parse(qdqc_context *ctx, const char *text, size_t len, const char *filename);

/* Diagnostics at a node. */
void node_error(Graph *g, const Node *n, const char *fmt, ...) QDQC_PRINTF(3, 4);
void node_remark(Graph *g, const Node *n, const char *fmt, ...) QDQC_PRINTF(3, 4);
void node_warning(Graph *g, const Node *n, const char *fmt, ...) QDQC_PRINTF(3, 4);

#endif
