/* test_npy.c: unit tests for lib/runtime/npy: round trips of every dtype and rank 0..8,
 * byte-exact agreement with numpy's own header layout, v2/v3 headers, and rejection (with a
 * message, never a crash) of malformed, truncated, oversized and unsupported files, including
 * every truncation of a valid file and random byte flips.
 *
 * Usage: test_npy    (prints "N passed, M failed"; exit status 1 on failure) */
#define _POSIX_C_SOURCE 200809L
#include "runtime/npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Tally {
    long passed, failed;
} Tally;

#define CHECK(t, cond, ...)                                                         \
    do {                                                                            \
        if (cond) {                                                                 \
            (t)->passed++;                                                          \
        } else {                                                                    \
            (t)->failed++;                                                          \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);         \
            fprintf(stderr, __VA_ARGS__);                                           \
            fputc('\n', stderr);                                                    \
        }                                                                           \
    } while (0)

static void
round_trips(Tally *t)
{
    static const NpyType all[] = {NPY_F32, NPY_F16, NPY_F64, NPY_I8,  NPY_U8, NPY_I16,
                                  NPY_U16, NPY_I32, NPY_U32, NPY_I64, NPY_BOOL};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
        for (int rank = 0; rank <= NPY_MAX_RANK; rank++) {
            int64_t dims[NPY_MAX_RANK];
            size_t n = 1;
            for (int i = 0; i < rank; i++) {
                dims[i] = 1 + (i + (int)k) % 3;
                n *= (size_t)dims[i];
            }
            size_t es = npy_type_size(all[k]);
            unsigned char *data = malloc(n * es);
            for (size_t i = 0; i < n * es; i++)
                data[i] = (unsigned char)(i * 37 + k);
            if (all[k] == NPY_BOOL)
                for (size_t i = 0; i < n; i++)
                    data[i] &= 1;
            void *buf;
            size_t len;
            char err[256] = "";
            bool ok = npy_serialize(all[k], rank, dims, data, &buf, &len, err, sizeof err);
            CHECK(t, ok, "serialize %s rank %d: %s", npy_type_name(all[k]), rank, err);
            if (!ok) {
                free(data);
                continue;
            }
            CHECK(t, (len - n * es) % 64 == 0, "header not 64-aligned (%zu)", len - n * es);
            NpyArray a;
            ok = npy_parse(buf, len, &a, err, sizeof err);
            CHECK(t, ok, "parse %s rank %d: %s", npy_type_name(all[k]), rank, err);
            if (ok) {
                CHECK(t, a.type == all[k] && a.rank == rank && a.nbytes == n * es &&
                             memcmp(a.data, data, n * es) == 0 &&
                             memcmp(a.dims, dims, (size_t)rank * sizeof(int64_t)) == 0,
                      "round trip of %s rank %d differs", npy_type_name(all[k]), rank);
                npy_free(&a);
            }
            free(buf);
            free(data);
        }
    }
}

/* Exactly what numpy 1.24 writes for np.save(f, np.array([[1, 2, 3]], np.int16)). */
static void
numpy_layout(Tally *t)
{
    const char *hdr = "{'descr': '<i2', 'fortran_order': False, 'shape': (1, 3), }";
    int64_t dims[2] = {1, 3};
    int16_t v[3] = {1, 2, 3};
    void *buf;
    size_t len;
    char err[256];
    CHECK(t, npy_serialize(NPY_I16, 2, dims, v, &buf, &len, err, sizeof err), "%s", err);
    unsigned char *b = buf;
    CHECK(t, len == 128 + 6, "length %zu", len);
    CHECK(t, memcmp(b, "\x93NUMPY\x01\x00\x76\x00", 10) == 0, "preamble");
    CHECK(t, memcmp(b + 10, hdr, strlen(hdr)) == 0, "dict text");
    CHECK(t, b[127] == '\n' && b[126] == ' ', "padding");
    free(buf);
    /* 1-D shape keeps the tuple comma; scalar is () */
    int64_t d1 = 5;
    float f[5] = {0};
    CHECK(t, npy_serialize(NPY_F32, 1, &d1, f, &buf, &len, err, sizeof err), "%s", err);
    CHECK(t, strstr((char *)buf + 10, "'shape': (5,), }") != NULL, "1-d shape");
    free(buf);
    CHECK(t, npy_serialize(NPY_F32, 0, NULL, f, &buf, &len, err, sizeof err), "%s", err);
    CHECK(t, strstr((char *)buf + 10, "'shape': (), }") != NULL, "scalar shape");
    free(buf);
}

/* Build an image with a given version and header text (padded to 64) plus `data` bytes. */
static size_t
make(unsigned char *out, int major, const char *hdr, size_t datalen)
{
    size_t pre = major == 1 ? 10 : 12, hl = strlen(hdr);
    size_t total = (pre + hl + 1 + 63) / 64 * 64, hlen = total - pre;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = 0;
    out[8] = (unsigned char)(hlen & 0xff);
    out[9] = (unsigned char)(hlen >> 8);
    if (major != 1) {
        out[10] = (unsigned char)(hlen >> 16);
        out[11] = (unsigned char)(hlen >> 24);
    }
    memcpy(out + pre, hdr, hl);
    memset(out + pre + hl, ' ', hlen - hl - 1);
    out[total - 1] = '\n';
    for (size_t i = 0; i < datalen; i++)
        out[total + i] = (unsigned char)i;
    return total + datalen;
}

static void
accepts(Tally *t)
{
    unsigned char buf[4096];
    NpyArray a;
    char err[256];
    struct {
        int major;
        const char *hdr;
        size_t data;
        NpyType type;
        int rank;
    } ok[] = {
        {2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", 16, NPY_F32, 2},
        {3, "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", 3, NPY_U8, 1},
        {1, "{\"descr\": \"<i8\", \"fortran_order\": False, \"shape\": (1,)}", 8, NPY_I64, 1},
        {1, "{'shape': (2,), 'fortran_order': False, 'descr': '<i1'}", 2, NPY_I8, 1},
        {1, "{'descr': '|b1', 'fortran_order': False, 'shape': (), }", 1, NPY_BOOL, 0},
        {1, "{'descr': '<f2', 'fortran_order': False, 'shape': (0, 4), }", 0, NPY_F16, 2},
        {1, "{'descr':'<u2','fortran_order':False,'shape':(2L,),}", 4, NPY_U16, 1},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        size_t len = make(buf, ok[i].major, ok[i].hdr, ok[i].data);
        bool r = npy_parse(buf, len, &a, err, sizeof err);
        CHECK(t, r, "accept #%zu: %s", i, err);
        if (r) {
            CHECK(t, a.type == ok[i].type && a.rank == ok[i].rank && a.nbytes == ok[i].data,
                  "accept #%zu: wrong result", i);
            npy_free(&a);
        }
    }
}

static void
rejects(Tally *t)
{
    unsigned char buf[4096];
    NpyArray a;
    char err[256];
    struct {
        const char *hdr;
        size_t data;
        const char *msg; /* expected substring of the error */
    } bad[] = {
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 8, "fortran_order True"},
        {"{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8, "big-endian"},
        {"{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16, "not supported"},
        {"{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 16, "not supported"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2), }", 8, "tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 8, "non-negative"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 7, "data has 7 bytes"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 9, "data has 9 bytes"},
        {"{'descr': '<f4', 'fortran_order': False}", 0, "missing key 'shape'"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}", 4, "duplicate"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (), 'extra': 1}", 4, "unexpected key"},
        {"{'descr': '<f4', 'fortran_order': 0, 'shape': ()}", 4, "True or False"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': ()} x", 4, "after the dict"},
        {"['descr', '<f4']", 4, "expected '{'"},
        {"{'descr': '<f4, 'fortran_order': False, 'shape': ()}", 4, "expected ',' or '}'"},
        {"{'descr' '<f4', 'fortran_order': False, 'shape': ()}", 4, "expected ':'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1)}", 4, "rank"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", 0,
         "too large"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", 0,
         "too large"},
        {"{'descr': '<f4', 'fortran_order': Falsey, 'shape': ()}", 4, "True or False"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t len = make(buf, 1, bad[i].hdr, bad[i].data);
        err[0] = 0;
        bool r = npy_parse(buf, len, &a, err, sizeof err);
        CHECK(t, !r, "reject #%zu accepted", i);
        if (r)
            npy_free(&a);
        CHECK(t, strstr(err, bad[i].msg) != NULL, "reject #%zu: message '%s' lacks '%s'", i, err,
              bad[i].msg);
    }
    /* magic, version, header length */
    size_t len = make(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4);
    unsigned char c[4096];
    memcpy(c, buf, len);
    c[0] = 0x92;
    CHECK(t, !npy_parse(c, len, &a, err, sizeof err) && strstr(err, "magic"), "magic: %s", err);
    memcpy(c, buf, len);
    c[6] = 4;
    CHECK(t, !npy_parse(c, len, &a, err, sizeof err) && strstr(err, "version"), "ver: %s", err);
    memcpy(c, buf, len);
    c[7] = 1;
    CHECK(t, !npy_parse(c, len, &a, err, sizeof err) && strstr(err, "version"), "minor: %s", err);
    memcpy(c, buf, len);
    c[8] = 0xff;
    c[9] = 0xff;
    CHECK(t, !npy_parse(c, len, &a, err, sizeof err) && strstr(err, "truncated"), "hlen: %s", err);
    memcpy(c, buf, len);
    c[len - 4 - 1] = 'x'; /* the header's final newline */
    CHECK(t, !npy_parse(c, len, &a, err, sizeof err) && strstr(err, "newline"), "nl: %s", err);
    unsigned char big[16] = "\x93NUMPY\x02\x00\x00\x00\x10\x00";
    CHECK(t, !npy_parse(big, sizeof big, &a, err, sizeof err) && strstr(err, "exceeds"),
          "huge header: %s", err);
    CHECK(t, !npy_parse(NULL, 0, &a, err, sizeof err), "NULL accepted");
    /* every proper prefix of a valid file is rejected */
    bool all = true;
    for (size_t k = 0; k < len; k++)
        if (npy_parse(buf, k, &a, err, sizeof err)) {
            all = false;
            npy_free(&a);
        }
    CHECK(t, all, "a truncated file was accepted");
    /* random byte flips never crash (ASan/UBSan catch what a plain run would not) */
    unsigned s = 12345;
    for (int it = 0; it < 20000; it++) {
        memcpy(c, buf, len);
        for (int f = 0; f < 3; f++) {
            s = s * 1103515245u + 12345u;
            c[(s >> 8) % len] = (unsigned char)(s >> 20);
        }
        if (npy_parse(c, len, &a, err, sizeof err))
            npy_free(&a);
    }
    t->passed++;
}

static void
files(Tally *t)
{
    char path[] = "/tmp/qdqc_test_npy_XXXXXX";
    int fd = mkstemp(path);
    CHECK(t, fd >= 0, "mkstemp");
    if (fd < 0)
        return;
    fclose(fdopen(fd, "w"));
    int64_t dims[3] = {2, 1, 3};
    int32_t v[6] = {-1, 2, -3, 4, -5, 2147483647};
    char err[256];
    CHECK(t, npy_write_file(path, NPY_I32, 3, dims, v, err, sizeof err), "%s", err);
    NpyArray a;
    CHECK(t, npy_read_file(path, &a, err, sizeof err) && a.nbytes == sizeof v &&
                 memcmp(a.data, v, sizeof v) == 0 && a.rank == 3,
          "file round trip: %s", err);
    npy_free(&a);
    remove(path);
    CHECK(t, !npy_read_file(path, &a, err, sizeof err) && strstr(err, "cannot open"),
          "missing file: %s", err);
    CHECK(t, !npy_write_file("/nonexistent-dir/x.npy", NPY_I32, 3, dims, v, err, sizeof err),
          "write to a missing directory");
    CHECK(t, npy_type_from_name("i8") == NPY_I8 && npy_type_from_name("i4") == NPY_NONE &&
                 !strcmp(npy_type_name(NPY_BOOL), "bool"),
          "names");
}

int
main(void)
{
    Tally t = {0, 0};
    round_trips(&t);
    numpy_layout(&t);
    accepts(&t);
    rejects(&t);
    files(&t);
    printf("%ld passed, %ld failed\n", t.passed, t.failed);
    return t.failed ? 1 : 0;
}
