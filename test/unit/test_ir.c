/* test_ir.c: unit tests of lib/support and lib/ir internals that lit cannot reach directly:
 * float printing round-trips for every bit pattern class, interning, overflow-checked sizes,
 * compaction order, f16 conversion, and print/parse round-trips of built graphs. */
#include "ir/ir.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int passed, failed;

#define CHECK(c)                                                              \
    do {                                                                      \
        if (c) {                                                              \
            passed++;                                                         \
        } else {                                                              \
            failed++;                                                         \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
        }                                                                     \
    } while (0)

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t
rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static void
test_fmt_float(void)
{
    /* random bit patterns, including denormals; every finite value must read back exactly */
    int bad = 0;
    for (int i = 0; i < 200000; i++) {
        uint32_t bits = rnd() ^ (rnd() << 16);
        float f;
        memcpy(&f, &bits, 4);
        char buf[48];
        fmt_float(buf, f);
        if (isnan(f)) {
            bad += strstr(buf, "nan") == NULL;
            continue;
        }
        float g = strtof(buf, NULL);
        if (memcmp(&f, &g, 4) != 0 || !strpbrk(buf, ".eni"))
            bad++;
    }
    CHECK(bad == 0);
    char buf[48];
    fmt_float(buf, 0.25f);
    CHECK(strcmp(buf, "0.25") == 0);
    fmt_float(buf, 1.0f);
    CHECK(strcmp(buf, "1.0") == 0);
    fmt_float(buf, -0.0f);
    CHECK(strcmp(buf, "-0.0") == 0);
    fmt_float(buf, INFINITY);
    CHECK(strcmp(buf, "inf") == 0);
    fmt_float(buf, 0.1f);
    CHECK(strcmp(buf, "0.1") == 0);
}

static void
test_intern(void)
{
    Interner in;
    intern_init(&in);
    uint32_t a = intern(&in, "alpha"), b = intern(&in, "beta");
    CHECK(a != b && a != 0);
    CHECK(intern(&in, "alpha") == a);
    CHECK(intern(&in, "") == 0);
    char name[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "v%d", i);
        intern(&in, name);
    }
    CHECK(intern_lookup(&in, "v4999") != 0);
    CHECK(strcmp(intern_str(&in, intern_lookup(&in, "v1234")), "v1234") == 0);
    CHECK(intern_lookup(&in, "nope") == 0);
    intern_free(&in);
}

static void
test_sizes(void)
{
    size_t out;
    CHECK(!size_mul(SIZE_MAX / 2 + 1, 2, &out));
    CHECK(size_mul(1u << 20, 1u << 10, &out) && out == (size_t)1 << 30);
    CHECK(!size_add(SIZE_MAX, 1, &out));
    Type t = type_make(ET_F32, 3, (int64_t[]){1LL << 30, 1LL << 30, 1LL << 30});
    CHECK(!type_numel(&t, &out));
    Type neg = type_make(ET_F32, 1, (int64_t[]){-1});
    CHECK(!type_numel(&neg, &out));
}

static void
test_tensor_access(void)
{
    qdqc_context *ctx = qdqc_context_create();
    Module *m = ir_module_create(ctx, "t");
    Type t16 = type_make(ET_F16, 1, (int64_t[]){4});
    Tensor *h = ir_tensor_new(m, &t16);
    float vals[4] = {1.0f, -2.5f, 65504.0f, 5.9604645e-08f};
    for (int i = 0; i < 4; i++)
        tensor_set_f(h, (size_t)i, vals[i]);
    for (int i = 0; i < 4; i++)
        CHECK(tensor_get_f(h, (size_t)i) == vals[i]);
    /* rounding to nearest even on the way into f16 */
    tensor_set_f(h, 0, 1.0 + 1.0 / 2048); /* halfway between 1 and 1+2^-10 */
    CHECK(tensor_get_f(h, 0) == 1.0);
    Type ti8 = type_make(ET_I8, 1, (int64_t[]){2});
    Tensor *q = ir_tensor_new(m, &ti8);
    tensor_set_i(q, 0, -128);
    tensor_set_i(q, 1, 127);
    CHECK(tensor_get_i(q, 0) == -128 && tensor_get_i(q, 1) == 127);
    Type huge = type_make(ET_F32, 2, (int64_t[]){1LL << 40, 1LL << 40});
    CHECK(ir_tensor_new(m, &huge) == NULL);
    ir_module_destroy(m);
    qdqc_context_destroy(ctx);
}

/* Nodes appended out of order are sorted stably by ir_compact; dead ones disappear. */
static void
test_compact(void)
{
    qdqc_context *ctx = qdqc_context_create();
    Module *m = ir_module_create(ctx, "t");
    Graph *g = &m->g;
    Type t = type_make(ET_F32, 1, (int64_t[]){4});
    ValueId x = ir_add_input(g, "x", &t);
    Loc l = {0};
    /* b = relu(a) is added before a = sigmoid(x) */
    NodeId nb = ir_add_node(g, OP_RELU, 1, NULL, 1, l);
    NodeId na = ir_add_node(g, OP_SIGMOID, 1, &x, 1, l);
    ValueId a = ir_add_result(g, na, 0, "a", &t);
    ir_node(g, nb)->in[0] = a;
    ValueId b = ir_add_result(g, nb, 0, "b", &t);
    NodeId nd = ir_add_node(g, OP_TANH, 1, &x, 1, l);
    ir_add_result(g, nd, 0, "unused", &t);
    vec_push(&g->outputs, b);
    CHECK(ir_compact(g));
    CHECK(g->nodes.len == 3);
    CHECK(g->nodes.data[1].op == OP_SIGMOID && g->nodes.data[2].op == OP_RELU);
    CHECK(ir_verify(g));
    char *s = ir_print(g);
    CHECK(strstr(s, "%a = sigmoid %x : f32[4]\n  %b = relu %a") != NULL);
    /* the printed text parses back to the same text */
    Module *m2 = ir_parse(ctx, s, strlen(s), "rt");
    CHECK(m2 != NULL);
    if (m2) {
        char *s2 = ir_print(&m2->g);
        CHECK(strcmp(s, s2) == 0);
        free(s2);
        ir_module_destroy(m2);
    }
    free(s);
    /* fresh names never collide */
    ValueId v = ir_add_value(g, "a", &t);
    CHECK(strcmp(ir_value_name(g, v), "a") != 0);
    ir_module_destroy(m);
    qdqc_context_destroy(ctx);
}

/* A cycle is reported, not looped on. */
static void
test_cycle(void)
{
    qdqc_context *ctx = qdqc_context_create();
    Module *m = ir_module_create(ctx, "t");
    Graph *g = &m->g;
    Type t = type_make(ET_F32, 1, (int64_t[]){4});
    Loc l = {0};
    NodeId n1 = ir_add_node(g, OP_RELU, 1, NULL, 1, l);
    NodeId n2 = ir_add_node(g, OP_RELU, 1, NULL, 1, l);
    ValueId a = ir_add_result(g, n1, 0, "a", &t);
    ValueId b = ir_add_result(g, n2, 0, "b", &t);
    ir_node(g, n1)->in[0] = b;
    ir_node(g, n2)->in[0] = a;
    vec_push(&g->outputs, b);
    CHECK(!ir_compact(g));
    CHECK(qdqc_context_get_error_count(ctx) == 1);
    CHECK(strstr(qdqc_context_get_diagnostics(ctx), "graph has a cycle") != NULL);
    ir_module_destroy(m);
    qdqc_context_destroy(ctx);
}

/* Diagnostics are collected when no handler is set, delivered when one is. */
static int handler_calls;
static void
count_handler(void *user, qdqc_severity sev, const char *loc, const char *msg)
{
    (void)user;
    (void)sev;
    (void)loc;
    (void)msg;
    handler_calls++;
}

static void
test_diagnostics(void)
{
    qdqc_context *ctx = qdqc_context_create();
    Loc l = {.file = "m.onnx", .node = "conv_3", .optype = "Conv"};
    diag_error(ctx, &l, "w_zero_point has %d values, expected %d", 3, 8);
    CHECK(strcmp(qdqc_context_get_diagnostics(ctx),
                 "m.onnx: node 'conv_3' (Conv): error: w_zero_point has 3 values, expected 8\n") == 0);
    qdqc_context_set_diag_handler(ctx, count_handler, NULL);
    diag_warning(ctx, NULL, "x");
    CHECK(handler_calls == 1);
    CHECK(qdqc_context_get_error_count(ctx) == 1);
    qdqc_context_destroy(ctx);
}

/* symbolic dimensions (lib/ir/dims.c): canonical forms, exact division, floor division,
 * overflow and the expression table's limit */
static const char *
dstr(Graph *g, int64_t v)
{
    static char buf[128];
    return ir_dim_str(g, v, buf, sizeof buf);
}

static void
test_symbolic_dims(void)
{
    qdqc_context *ctx = qdqc_context_create();
    Module *m = ir_module_create(ctx, "t");
    Graph *g = &m->g;
    int64_t b, s, x, y, z;
    CHECK(ir_dim_sym(g, "b", &b) && ir_dim_sym(g, "s", &s) && ir_dim_is_tag(b) && b != s);
    CHECK(ir_dim_sym(g, "b", &x) && x == b); /* interned */
    CHECK(ir_dim_mul(g, b, s, &x) && ir_dim_mul(g, s, b, &y) && x == y);
    CHECK(strcmp(dstr(g, x), "?(b*s)") == 0);
    CHECK(ir_dim_mul(g, x, 32, &y) && strcmp(dstr(g, y), "?(32*b*s)") == 0);
    CHECK(ir_dim_div_exact(g, y, x, &z) && z == 32);  /* Reshape's -1 */
    CHECK(ir_dim_div_exact(g, y, 8, &z) && ir_dim_mul(g, x, 4, &x) && z == x);
    CHECK(!ir_dim_div_exact(g, y, 64, &z));           /* 32 is not a multiple of 64 */
    CHECK(ir_dim_sym(g, "t", &z) && !ir_dim_div_exact(g, y, z, &x));
    CHECK(ir_dim_add(g, s, 1, &x) && ir_dim_add(g, 1, s, &y) && x == y);
    CHECK(strcmp(dstr(g, x), "?(s + 1)") == 0);
    CHECK(ir_dim_sub(g, x, 1, &y) && y == s);          /* like terms cancel */
    CHECK(ir_dim_sub(g, s, s, &y) && y == 0);
    CHECK(ir_dim_mul(g, x, 2, &y) && ir_dim_floordiv(g, y, 2, &z) && z == x); /* exact */
    CHECK(ir_dim_floordiv(g, x, 2, &y) && ir_dim_is_tag(y));
    CHECK(strcmp(dstr(g, y), "?((s + 1)/2)") == 0);
    CHECK(ir_dim_floordiv(g, 7, 2, &y) && y == 3);
    CHECK(ir_dim_floordiv(g, -7, 2, &y) && y == -4);   /* floor, not truncation */
    CHECK(!ir_dim_floordiv(g, s, 0, &y));
    CHECK(ir_dim_mul(g, x, x, &y) && strcmp(dstr(g, y), "?(s*s + 2*s + 1)") == 0);
    CHECK(!ir_dim_mul(g, b, INT64_MAX, &y) || ir_dim_is_tag(y));
    CHECK(ir_dim_mul(g, b, (int64_t)1 << 40, &x) && !ir_dim_mul(g, x, (int64_t)1 << 40, &y));
    CHECK(!ir_dim_valid(g, DIM_TAG0 - 100000)); /* a tag of no entry */
    const char *err = NULL;
    CHECK(ir_dim_parse(g, "(s+1)*(s+1)", 11, &x, &err) && strcmp(dstr(g, x), "?(s*s + 2*s + 1)") == 0);
    CHECK(!ir_dim_parse(g, "s+", 2, &x, &err) && err);
    /* the table is bounded: a flood of symbols fails cleanly */
    bool full = false;
    char name[32];
    for (int i = 0; i < 5000 && !full; i++) {
        snprintf(name, sizeof name, "n%d", i);
        full = !ir_dim_sym(g, name, &x);
    }
    CHECK(full);
    /* a context binding makes the symbol a constant */
    CHECK(qdqc_context_set_dim(ctx, "bound", 12) == QDQC_OK);
    CHECK(ir_dim_sym(g, "bound", &x) && x == 12);
    CHECK(qdqc_context_add_dim(ctx, "bound=13") == QDQC_OK && ir_dim_sym(g, "bound", &x) && x == 13);
    CHECK(qdqc_context_add_dim(ctx, "bound=") != QDQC_OK && qdqc_context_add_dim(ctx, "a b=1") != QDQC_OK);
    ir_module_destroy(m);
    qdqc_context_destroy(ctx);
}

int
main(void)
{
    test_fmt_float();
    test_intern();
    test_sizes();
    test_tensor_access();
    test_compact();
    test_cycle();
    test_diagnostics();
    test_symbolic_dims();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
