/* dnnl_bench.c: oneDNN int8 matmul / convolution timing, the peer of bench/gemm_bench.c.
 *
 *   dnnl_bench matmul M N K            u8 [M,K] x s8 [K,N] -> s32 [M,N]
 *   dnnl_bench conv N C H W OC KH KW STRIDE PAD GROUPS
 *                                      u8 NCHW-logical (format chosen by oneDNN) x s8 -> u8
 *                                      with per-channel output scales (requantize)
 * Prints one line: "<what> best <ms> ms <GMAC/s> GMAC/s". Layouts are left to oneDNN
 * (format_tag_any) and reordered once outside the timed region, which is its best case and
 * the same as qdqc's compile-time weight packing. Timing method as gemm_bench: this thread's
 * CPU time (CLOCK_THREAD_CPUTIME_ID), best of repetitions of batches; run with
 * OMP_NUM_THREADS=1 (Debian's libdnnl uses OpenMP) so the work stays on this thread.
 *
 * Build (bench/run_bench.py does it): cc -O2 -std=c11 bench/dnnl/dnnl_bench.c -ldnnl
 * Written against the oneDNN 2.x C API (Debian bookworm/trixie ship 2.6/3.x: 3.x removed the
 * op descriptors; this file refuses to build there with a clear #error). */
#define _POSIX_C_SOURCE 200809L
#include <oneapi/dnnl/dnnl.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if DNNL_VERSION_MAJOR != 2
#error "dnnl_bench.c uses the oneDNN 2.x C API (op descriptors)"
#endif

#define CHECK(call)                                                                       \
    do {                                                                                  \
        dnnl_status_t st_ = (call);                                                       \
        if (st_ != dnnl_success) {                                                        \
            fprintf(stderr, "dnnl_bench: %s failed (%d) at line %d\n", #call, (int)st_,   \
                    __LINE__);                                                            \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

static double
now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void
fill(dnnl_memory_t m, size_t bytes, unsigned seed)
{
    void *p = NULL;
    CHECK(dnnl_memory_get_data_handle(m, &p));
    unsigned char *b = p;
    for (size_t i = 0; i < bytes; i++) {
        seed = seed * 1103515245u + 12345u;
        b[i] = (unsigned char)(seed >> 16);
    }
}

/* A memory object in the layout pd wants for `what`, filled from a plain-layout source. */
static dnnl_memory_t
make_mem(dnnl_engine_t eng, dnnl_stream_t s, const dnnl_memory_desc_t *want,
         const dnnl_memory_desc_t *plain, unsigned seed)
{
    dnnl_memory_t src, dst;
    CHECK(dnnl_memory_create(&src, plain, eng, DNNL_MEMORY_ALLOCATE));
    fill(src, dnnl_memory_desc_get_size(plain), seed);
    CHECK(dnnl_memory_create(&dst, want, eng, DNNL_MEMORY_ALLOCATE));
    dnnl_primitive_desc_t rpd;
    CHECK(dnnl_reorder_primitive_desc_create(&rpd, plain, eng, want, eng, NULL));
    dnnl_primitive_t r;
    CHECK(dnnl_primitive_create(&r, rpd));
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}};
    CHECK(dnnl_primitive_execute(r, s, 2, args));
    CHECK(dnnl_stream_wait(s));
    dnnl_primitive_destroy(r);
    dnnl_primitive_desc_destroy(rpd);
    dnnl_memory_destroy(src);
    return dst;
}

static double
time_prim(dnnl_primitive_t p, dnnl_stream_t s, int nargs, dnnl_exec_arg_t *args, double macs)
{
    for (int w = 0; w < 3; w++)
        CHECK(dnnl_primitive_execute(p, s, nargs, args));
    CHECK(dnnl_stream_wait(s));
    long reps = (long)(2e10 / macs) + 3, batch = (long)(2e8 / macs) + 1;
    if (reps > 40)
        reps = 40;
    double best = 1e30;
    for (long r = 0; r < reps; r++) {
        double t0 = now_sec();
        for (long q = 0; q < batch; q++)
            CHECK(dnnl_primitive_execute(p, s, nargs, args));
        CHECK(dnnl_stream_wait(s));
        double dt = (now_sec() - t0) / (double)batch;
        if (dt < best)
            best = dt;
    }
    return best;
}

int
main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "matmul") != 0 && strcmp(argv[1], "conv") != 0) ||
        (strcmp(argv[1], "matmul") == 0 && argc != 5) ||
        (strcmp(argv[1], "conv") == 0 && argc != 12)) {
        fprintf(stderr, "usage: dnnl_bench matmul M N K\n"
                        "       dnnl_bench conv N C H W OC KH KW STRIDE PAD GROUPS\n");
        return 2;
    }
    dnnl_engine_t eng;
    dnnl_stream_t s;
    CHECK(dnnl_engine_create(&eng, dnnl_cpu, 0));
    CHECK(dnnl_stream_create(&s, eng, dnnl_stream_default_flags));
    dnnl_primitive_desc_t pd;
    dnnl_primitive_attr_t attr;
    CHECK(dnnl_primitive_attr_create(&attr));
    double macs;
    char what[160];
    if (strcmp(argv[1], "matmul") == 0) {
        dnnl_dim_t M = atol(argv[2]), N = atol(argv[3]), K = atol(argv[4]);
        dnnl_dims_t sd = {M, K}, wd = {K, N}, dd = {M, N};
        dnnl_memory_desc_t smd, wmd, wany, dmd;
        CHECK(dnnl_memory_desc_init_by_tag(&smd, 2, sd, dnnl_u8, dnnl_ab));
        CHECK(dnnl_memory_desc_init_by_tag(&wmd, 2, wd, dnnl_s8, dnnl_ab));
        CHECK(dnnl_memory_desc_init_by_tag(&wany, 2, wd, dnnl_s8, dnnl_format_tag_any));
        CHECK(dnnl_memory_desc_init_by_tag(&dmd, 2, dd, dnnl_s32, dnnl_ab));
        dnnl_matmul_desc_t md;
        CHECK(dnnl_matmul_desc_init(&md, &smd, &wany, NULL, &dmd));
        CHECK(dnnl_primitive_desc_create(&pd, &md, attr, eng, NULL));
        macs = (double)M * (double)N * (double)K;
        snprintf(what, sizeof what, "matmul %ldx%ldx%ld u8s8s32", (long)M, (long)N, (long)K);
        const dnnl_memory_desc_t *wq = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
        dnnl_memory_t ms = make_mem(eng, s, &smd, &smd, 1), mw = make_mem(eng, s, wq, &wmd, 2);
        dnnl_memory_t mdst;
        CHECK(dnnl_memory_create(&mdst, &dmd, eng, DNNL_MEMORY_ALLOCATE));
        dnnl_primitive_t p;
        CHECK(dnnl_primitive_create(&p, pd));
        dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, ms}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_DST, mdst}};
        double best = time_prim(p, s, 3, args, macs);
        printf("%s best %.4f ms %.1f GMAC/s\n", what, best * 1e3, macs / best * 1e-9);
        dnnl_primitive_destroy(p);
        dnnl_memory_destroy(ms);
        dnnl_memory_destroy(mw);
        dnnl_memory_destroy(mdst);
    } else {
        long v[10];
        for (int i = 0; i < 10; i++)
            v[i] = atol(argv[2 + i]);
        dnnl_dim_t N = v[0], C = v[1], H = v[2], W = v[3], OC = v[4], KH = v[5], KW = v[6];
        dnnl_dim_t st = v[7], pad = v[8], G = v[9];
        dnnl_dim_t OH = (H + 2 * pad - KH) / st + 1, OW = (W + 2 * pad - KW) / st + 1;
        dnnl_dims_t sd = {N, C, H, W}, dd = {N, OC, OH, OW};
        dnnl_dims_t wd5 = {G, OC / G, C / G, KH, KW}, wd4 = {OC, C, KH, KW};
        int wnd = G > 1 ? 5 : 4;
        dnnl_memory_desc_t sany, splain, wany, wplain, dany;
        CHECK(dnnl_memory_desc_init_by_tag(&sany, 4, sd, dnnl_u8, dnnl_format_tag_any));
        CHECK(dnnl_memory_desc_init_by_tag(&splain, 4, sd, dnnl_u8, dnnl_nchw));
        CHECK(dnnl_memory_desc_init_by_tag(&wany, wnd, G > 1 ? wd5 : wd4, dnnl_s8,
                                           dnnl_format_tag_any));
        CHECK(dnnl_memory_desc_init_by_tag(&wplain, wnd, G > 1 ? wd5 : wd4, dnnl_s8,
                                           G > 1 ? dnnl_goihw : dnnl_oihw));
        CHECK(dnnl_memory_desc_init_by_tag(&dany, 4, dd, dnnl_u8, dnnl_format_tag_any));
        float *scales = malloc((size_t)OC * sizeof *scales);
        for (dnnl_dim_t i = 0; i < OC; i++)
            scales[i] = 1.0f / (float)(2000 + i % 7);
        CHECK(dnnl_primitive_attr_set_output_scales(attr, OC, 1 << 1, scales));
        dnnl_dims_t strides = {st, st}, pads = {pad, pad};
        dnnl_convolution_desc_t cd;
        CHECK(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                                 dnnl_convolution_direct, &sany, &wany, NULL,
                                                 &dany, strides, pads, pads));
        CHECK(dnnl_primitive_desc_create(&pd, &cd, attr, eng, NULL));
        macs = (double)N * (double)OC * (double)OH * (double)OW * (double)(C / G) *
               (double)KH * (double)KW;
        snprintf(what, sizeof what, "conv n%ld c%ld %ldx%ld oc%ld k%ldx%ld s%ld p%ld g%ld",
                 (long)N, (long)C, (long)H, (long)W, (long)OC, (long)KH, (long)KW, (long)st,
                 (long)pad, (long)G);
        const dnnl_memory_desc_t *sq = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
        const dnnl_memory_desc_t *wq = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
        const dnnl_memory_desc_t *dq = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
        dnnl_memory_t ms = make_mem(eng, s, sq, &splain, 1), mw = make_mem(eng, s, wq, &wplain, 2);
        dnnl_memory_t mdst;
        CHECK(dnnl_memory_create(&mdst, dq, eng, DNNL_MEMORY_ALLOCATE));
        dnnl_primitive_t p;
        CHECK(dnnl_primitive_create(&p, pd));
        dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, ms}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_DST, mdst}};
        double best = time_prim(p, s, 3, args, macs);
        const char *impl = NULL;
        CHECK(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl));
        printf("%s best %.4f ms %.1f GMAC/s impl %s\n", what, best * 1e3, macs / best * 1e-9,
               impl ? impl : "?");
        free(scales);
        dnnl_primitive_destroy(p);
        dnnl_memory_destroy(ms);
        dnnl_memory_destroy(mw);
        dnnl_memory_destroy(mdst);
    }
    dnnl_primitive_desc_destroy(pd);
    dnnl_primitive_attr_destroy(attr);
    dnnl_stream_destroy(s);
    dnnl_engine_destroy(eng);
    return 0;
}
