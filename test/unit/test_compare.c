/* test_compare.c: unit tests for lib/api/compare.c: the error metrics of the accuracy
 * comparison on small arrays with exact expected values (SQNR, cosine, max/mean absolute
 * error in units and in steps, the zero and empty cases), the listing of activation
 * quantizes, and intermediate values added as graph outputs and read by the reference
 * interpreter, and the comparison object (qdqc_compare_*) on two text IR files with exact
 * expected errors.
 *
 * Usage: test_compare    (prints "N passed, M failed"; exit status 1 on failure) */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include <qdqc/qdqc.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long passed, failed;

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (cond) {                                                             \
            passed++;                                                           \
        } else {                                                                \
            failed++;                                                           \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);     \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
        }                                                                       \
    } while (0)

static bool
near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(1.0, fabs(b));
}

static void
metrics(void)
{
    qdqc_error_stats s;
    const float a[4] = {1, 2, 3, 4};
    CHECK(qdqc_error_stats_compute(a, a, 4, 0.5, &s) == QDQC_OK, "status");
    CHECK(isinf(s.sqnr_db) && s.sqnr_db > 0, "equal: sqnr %g", s.sqnr_db);
    CHECK(near(s.cosine, 1.0) && s.max_abs == 0 && s.mean_abs == 0 && s.max_steps == 0,
          "equal: cos %g max %g", s.cosine, s.max_abs);

    /* 3,4 against 3,3: signal 25, noise 1 -> 10 log10 25; cosine 21 / (5 sqrt 18) */
    const float r1[2] = {3, 4}, x1[2] = {3, 3};
    qdqc_error_stats_compute(r1, x1, 2, 0.25, &s);
    CHECK(near(s.sqnr_db, 10 * log10(25.0)), "sqnr %.12g", s.sqnr_db);
    CHECK(near(s.sqnr_db, 13.979400086720377), "sqnr %.12g", s.sqnr_db);
    CHECK(near(s.cosine, 21.0 / (5.0 * sqrt(18.0))), "cos %.12g", s.cosine);
    CHECK(s.max_abs == 1 && s.mean_abs == 0.5, "max %g mean %g", s.max_abs, s.mean_abs);
    CHECK(s.max_steps == 4 && s.mean_steps == 2, "steps %g %g", s.max_steps, s.mean_steps);

    /* orthogonal: signal 1, noise 2 -> -3.0103 dB, cosine 0 */
    const float r2[2] = {1, 0}, x2[2] = {0, 1};
    qdqc_error_stats_compute(r2, x2, 2, 1.0, &s);
    CHECK(near(s.sqnr_db, 10 * log10(0.5)), "sqnr %.12g", s.sqnr_db);
    CHECK(s.cosine == 0 && s.max_abs == 1 && s.mean_abs == 1, "cos %g", s.cosine);

    /* opposite sign: cosine -1, noise 4x the signal */
    const float r3[3] = {1, -2, 2}, x3[3] = {-1, 2, -2};
    qdqc_error_stats_compute(r3, x3, 3, 0, &s);
    CHECK(near(s.cosine, -1.0) && near(s.sqnr_db, 10 * log10(0.25)), "cos %g sqnr %g",
          s.cosine, s.sqnr_db);
    CHECK(s.max_abs == 4 && s.max_steps == 0 && s.mean_steps == 0, "step 0: steps %g",
          s.max_steps);

    /* zero reference */
    const float z[2] = {0, 0}, o[2] = {0, 1};
    qdqc_error_stats_compute(z, z, 2, 1, &s);
    CHECK(isinf(s.sqnr_db) && s.sqnr_db > 0 && s.cosine == 1, "zeros: %g %g", s.sqnr_db,
          s.cosine);
    qdqc_error_stats_compute(z, o, 2, 1, &s);
    CHECK(isinf(s.sqnr_db) && s.sqnr_db < 0 && s.cosine == 0, "zero ref: %g %g", s.sqnr_db,
          s.cosine);

    /* empty, bad arguments */
    CHECK(qdqc_error_stats_compute(NULL, NULL, 0, 1, &s) == QDQC_OK && isinf(s.sqnr_db) &&
              s.mean_abs == 0, "empty");
    CHECK(qdqc_error_stats_compute(a, a, 4, 1, NULL) == QDQC_ERR_INVALID_ARG, "NULL out");
    CHECK(qdqc_error_stats_compute(NULL, a, 4, 1, &s) == QDQC_ERR_INVALID_ARG, "NULL ref");
}

static const char net[] =
    "graph @g(%x: f32[4]) -> f32[4] {\n"
    "  %q = quantize %x, scale=0.5, zp=1 : i8[4]\n"
    "  %d = dequantize %q, scale=0.5, zp=1 : f32[4]\n"
    "  %r = relu %d : f32[4]\n"
    "  %q2 = quantize %r, scale=0.25, zp=0 : u8[4]\n"
    "  %y = dequantize %q2, scale=0.25, zp=0 : f32[4]\n"
    "  return %y\n"
    "}\n";

static void
quants_and_outputs(void)
{
    qdqc_context *ctx = qdqc_context_create();
    qdqc_module *m = NULL;
    CHECK(qdqc_module_parse(ctx, net, strlen(net), "net.qir", &m) == QDQC_OK, "%s",
          qdqc_context_get_diagnostics(ctx));
    if (!m) {
        qdqc_context_destroy(ctx);
        return;
    }
    CHECK(qdqc_module_quant_count(m) == 2, "%zu quantizes", qdqc_module_quant_count(m));
    qdqc_quant_info qi;
    CHECK(qdqc_module_quant_get(m, 0, &qi) == QDQC_OK, "get 0");
    CHECK(!strcmp(qi.input, "x") && !strcmp(qi.output, "q") && !strcmp(qi.dq_output, "d") &&
              !strcmp(qi.storage, "i8") && qi.scale == 0.5 && qi.zero_point == 1 &&
              qi.qmin == -128 && qi.qmax == 127,
          "0: %s %s %s %s %g %d", qi.input, qi.output, qi.dq_output, qi.storage, qi.scale,
          qi.zero_point);
    CHECK(qdqc_module_quant_get(m, 1, &qi) == QDQC_OK && !strcmp(qi.input, "r") &&
              !strcmp(qi.storage, "u8") && qi.qmax == 255, "1: %s", qi.input);
    CHECK(qdqc_module_quant_get(m, 2, &qi) == QDQC_ERR_INVALID_ARG, "out of range");

    CHECK(!strcmp(qdqc_module_value_elem_type(m, "q2"), "u8"), "q2 type");
    CHECK(qdqc_module_value_elem_type(m, "nope") == NULL, "absent value");
    CHECK(qdqc_module_add_output(m, "nope") == QDQC_ERR_INVALID_ARG, "absent output");
    qdqc_context_clear_diagnostics(ctx);
    CHECK(qdqc_module_add_output(m, "q") == QDQC_OK, "add q");
    CHECK(qdqc_module_add_output(m, "r") == QDQC_OK, "add r");
    CHECK(qdqc_module_add_output(m, "r") == QDQC_OK, "add r again");
    CHECK(qdqc_module_output_count(m) == 3, "%zu outputs", qdqc_module_output_count(m));
    /* x = -1, 0.25, 0.75, 3: q = round_half_even(x / 0.5) + 1 = -1, 1, 3, 7 */
    float x[4] = {-1, 0.25f, 0.75f, 3}, y[4], r[4];
    int8_t q[4];
    const void *in[1] = {x};
    void *out[3] = {y, q, r};
    CHECK(qdqc_module_run_reference(m, in, out) == QDQC_OK, "%s",
          qdqc_context_get_diagnostics(ctx));
    CHECK(q[0] == -1 && q[1] == 1 && q[2] == 3 && q[3] == 7, "q %d %d %d %d", q[0], q[1], q[2],
          q[3]);
    CHECK(r[0] == 0 && r[1] == 0 && r[2] == 1 && r[3] == 3, "r %g %g %g %g", r[0], r[1], r[2],
          r[3]);
    qdqc_module_destroy(m);
    qdqc_context_destroy(ctx);
}

static bool
write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    bool ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

/* qdqc_compare_* on two text IR files: x quantized at 0.5 (i8), relu, h quantized at 0.25 (u8).
 * x = -1, 0.25, 0.75, 3: the quantize rounds 0.25 and 0.75 half to even (0 and 1): 0.25 off on
 * two values, half a step; h = relu of that, 0.25 off on the same two values, one step. */
static void
comparison(void)
{
    char dir[] = "/tmp/qdqc_test_compare_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(false, "mkdtemp");
        return;
    }
    char fp[64], qp[64];
    snprintf(fp, sizeof fp, "%s/f.qir", dir);
    snprintf(qp, sizeof qp, "%s/q.qir", dir);
    CHECK(write_text(fp, "graph @f(%x: f32[4]) -> f32[4] {\n"
                         "  %h = relu %x : f32[4]\n"
                         "  return %h\n"
                         "}\n") &&
              write_text(qp, "graph @q(%x: f32[4]) -> f32[4] {\n"
                             "  %xq = quantize %x, scale=0.5, zp=0 : i8[4]\n"
                             "  %xd = dequantize %xq, scale=0.5, zp=0 : f32[4]\n"
                             "  %h = relu %xd : f32[4]\n"
                             "  %hq = quantize %h, scale=0.25, zp=0 : u8[4]\n"
                             "  %y = dequantize %hq, scale=0.25, zp=0 : f32[4]\n"
                             "  return %y\n"
                             "}\n"),
          "write");
    qdqc_context *ctx = qdqc_context_create();
    qdqc_compare *c = NULL;
    CHECK(qdqc_compare_create(ctx, fp, qp, NULL, NULL, &c) == QDQC_OK, "%s",
          qdqc_context_get_diagnostics(ctx));
    if (c) {
        const qdqc_module *qm = qdqc_compare_get_qdq_module(c);
        CHECK(qdqc_module_input_count(qm) == 1, "inputs");
        float x[4] = {-1, 0.25f, 0.75f, 3};
        const void *in[1] = {x};
        CHECK(qdqc_compare_run(c, in) == QDQC_OK, "%s", qdqc_context_get_diagnostics(ctx));
        CHECK(qdqc_compare_row_count(c) == 2, "%zu rows", qdqc_compare_row_count(c));
        qdqc_compare_row r0, r1;
        CHECK(qdqc_compare_row_get(c, 0, &r0) == QDQC_OK && qdqc_compare_row_get(c, 1, &r1) ==
                  QDQC_OK, "get");
        CHECK(qdqc_compare_row_get(c, 2, &r1) == QDQC_ERR_INVALID_ARG, "row out of range");
        qdqc_compare_row_get(c, 1, &r1);
        CHECK(r0.float_tensor && !strcmp(r0.float_tensor, "x") && r1.float_tensor &&
                  !strcmp(r1.float_tensor, "h"), "matched");
        CHECK(r0.has_float_to_qdq && r0.float_to_qdq.max_abs == 0.25 &&
                  r0.float_to_qdq.max_steps == 0.5 && r0.float_to_qdq.mean_abs == 0.125,
              "x: %g %g", r0.float_to_qdq.max_abs, r0.float_to_qdq.max_steps);
        /* signal 0.0625 + 0.5625 + 9 = 9.625, noise 2 x 0.0625 */
        CHECK(near(r1.float_to_qdq.sqnr_db, 10 * log10(9.625 / 0.125)) &&
                  r1.float_to_qdq.max_steps == 1, "h: %.12g", r1.float_to_qdq.sqnr_db);
        CHECK(r1.has_qdq_to_compiled && r1.qdq_to_compiled.max_steps == 0 &&
                  isinf(r1.qdq_to_compiled.sqnr_db), "compiled: %g",
              r1.qdq_to_compiled.max_steps);
        CHECK(r0.count == 4 && r0.observed_min == -1 && r0.observed_max == 3 &&
                  r0.clipped_below == 0 && r0.clipped_above == 0, "x range");
        CHECK(r1.observed_min == 0 && r1.observed_max == 3 && r1.q.qmax == 255, "h range");
        /* a second sample accumulates */
        CHECK(qdqc_compare_run(c, in) == QDQC_OK && qdqc_compare_row_get(c, 0, &r0) == QDQC_OK &&
                  r0.count == 8, "two samples: %llu", (unsigned long long)r0.count);
    }
    qdqc_compare_destroy(c);
    qdqc_compare *bad = NULL;
    CHECK(qdqc_compare_create(ctx, fp, "/nonexistent.onnx", NULL, NULL, &bad) == QDQC_ERR_IO &&
              !bad, "missing file");
    qdqc_context_destroy(ctx);
    unlink(fp);
    unlink(qp);
    rmdir(dir);
}

int
main(void)
{
    metrics();
    quants_and_outputs();
    comparison();
    printf("%ld passed, %ld failed\n", passed, failed);
    return failed ? 1 : 0;
}
