/* cross_driver.c: generic driver for a model compiled by qdqc for another target or ISA
 * (test/e2e/cross.py: AArch64 under qemu-user, the x86-64 AVX-VNNI path).
 *
 *   driver NIN IN0.bin ... NOUT OUT0.bin BYTES0 ...
 *
 * Reads each input's raw bytes, runs model_run (symbol prefix "model") with a 64-byte aligned
 * workspace of model_workspace_size() bytes, and writes each output's raw bytes. It does not
 * include the model's header, so it is compiled once per target and linked with every model.
 * The workspace and the output buffers are filled with garbage (0x5a / 0xcd) before the run, so a
 * kernel that reads workspace it never wrote, or leaves output bytes unwritten, is caught.
 * QDQC_E2E_PERTURB=N (self-test of the harness): flip the low bit of byte N (mod its size) of
 * output 0 after the run. Exit 0 on success; 1 on a file or argument error; 3 when model_run
 * returns a nonzero status (docs/abi.md: a run-time scale that is not positive and finite). */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int model_run(const void *const *inputs, void *const *outputs, void *workspace);
size_t model_workspace_size(void);

static void *
read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0, k;
    char *buf = malloc(cap);
    while (buf && (k = fread(buf + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    fclose(f);
    return buf;
}

int
main(int argc, char **argv)
{
    int a = 1;
    if (argc < 3)
        return 1;
    int nin = atoi(argv[a++]);
    if (nin < 0 || nin > 64 || a + nin >= argc)
        return 1;
    const void *in[64];
    void *out[64];
    for (int i = 0; i < nin; i++)
        if (!(in[i] = read_all(argv[a++]))) {
            fprintf(stderr, "driver: cannot read %s\n", argv[a - 1]);
            return 1;
        }
    int nout = atoi(argv[a++]);
    if (nout < 1 || nout > 64 || a + 2 * nout != argc)
        return 1;
    size_t bytes[64];
    for (int i = 0; i < nout; i++) {
        bytes[i] = (size_t)strtoull(argv[a + 2 * i + 1], NULL, 10);
        if (!(out[i] = malloc(bytes[i] ? bytes[i] : 1)))
            return 1;
        memset(out[i], 0xcd, bytes[i]);
    }
    size_t wsz = (model_workspace_size() + 63) / 64 * 64 + 64;
    void *ws = aligned_alloc(64, wsz);
    if (!ws)
        return 1;
    memset(ws, 0x5a, wsz);
    int st = model_run(in, out, ws);
    if (st != 0) {
        fprintf(stderr, "driver: model_run returned %d\n", st);
        return 3;
    }
    const char *perturb = getenv("QDQC_E2E_PERTURB");
    if (perturb && *perturb && bytes[0])
        ((unsigned char *)out[0])[strtoull(perturb, NULL, 10) % bytes[0]] ^= 1;
    for (int i = 0; i < nout; i++) {
        FILE *f = fopen(argv[a + 2 * i], "wb");
        if (!f || fwrite(out[i], 1, bytes[i], f) != bytes[i]) {
            fprintf(stderr, "driver: cannot write %s\n", argv[a + 2 * i]);
            return 1;
        }
        fclose(f);
    }
    return 0;
}
