/* aarch64_driver.c: generic driver for a model compiled by qdqc (test/e2e/aarch64.sh).
 *
 *   driver NIN IN0.bin ... NOUT OUT0.bin BYTES0 ...
 *
 * Reads each input's raw bytes, runs model_run (the header is model.h, prefix "model") with a
 * 64-byte aligned workspace of model_workspace_size() bytes, and writes each output's raw bytes.
 * Exit 0 on success; 1 on a file or argument error. */
#define _POSIX_C_SOURCE 200809L
#include "model.h"

#include <stdio.h>
#include <stdlib.h>

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
    if (nin != MODEL_NUM_INPUTS || a + nin >= argc)
        return 1;
    const void *in[64];
    void *out[64];
    for (int i = 0; i < nin; i++)
        if (!(in[i] = read_all(argv[a++]))) {
            fprintf(stderr, "driver: cannot read %s\n", argv[a - 1]);
            return 1;
        }
    int nout = atoi(argv[a++]);
    if (nout != MODEL_NUM_OUTPUTS || a + 2 * nout != argc || nout > 64 || nin > 64)
        return 1;
    size_t bytes[64];
    for (int i = 0; i < nout; i++) {
        bytes[i] = (size_t)strtoull(argv[a + 2 * i + 1], NULL, 10);
        out[i] = calloc(bytes[i] ? bytes[i] : 1, 1);
    }
    size_t wsz = model_workspace_size();
    void *ws = aligned_alloc(64, (wsz + 63) / 64 * 64 + 64);
    if (!ws)
        return 1;
    model_run(in, out, ws);
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
