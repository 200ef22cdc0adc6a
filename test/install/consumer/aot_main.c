/* aot_main.c: run a model compiled ahead of time by the qdqc tool, without libqdqc
 * (docs/embedding.md, test/install/run-install-test.sh).
 *
 *   qdqc MODEL.onnx -o model.o && qdqc MODEL.onnx --emit=header -o model.h
 *   cc -std=c11 aot_main.c model.o -lm -o aot_model && ./aot_model INPUT.npy
 *
 * Reads the single f32 input from a version-1 .npy file and prints output 0 like run_model.c
 * ("%.9g", one line). The ABI (model_run, MODEL_* macros) is in docs/abi.md. */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The data of a little-endian f32 .npy (format version 1) holding exactly n values. */
static float *
read_npy_f32(const char *path, size_t n)
{
    FILE *f = fopen(path, "rb");
    unsigned char h[10];
    float *data = NULL;
    if (!f || fread(h, 1, 10, f) != 10 || memcmp(h, "\x93NUMPY\x01", 7) != 0)
        goto out;
    size_t hlen = (size_t)h[8] | (size_t)h[9] << 8;
    char *dict = calloc(1, hlen + 1);
    if (!dict || fread(dict, 1, hlen, f) != hlen || !strstr(dict, "'<f4'") ||
        strstr(dict, "'fortran_order': True")) {
        free(dict);
        goto out;
    }
    free(dict);
    data = malloc(n * sizeof *data);
    if (data && fread(data, sizeof *data, n, f) != n) {
        free(data);
        data = NULL;
    }
out:
    if (f)
        fclose(f);
    return data;
}

int
main(int argc, char **argv)
{
    size_t nin = MODEL_INPUT0_NUMEL, nout = MODEL_OUTPUT0_NUMEL;
    if (argc != 2 || MODEL_NUM_INPUTS != 1 || strcmp(MODEL_INPUT0_ELEM_TYPE, "f32") != 0 ||
        strcmp(MODEL_OUTPUT0_ELEM_TYPE, "f32") != 0) {
        fprintf(stderr, "usage: aot_model INPUT.npy (a model with one f32 input and output)\n");
        return 2;
    }
    float *x = read_npy_f32(argv[1], nin);
    float *y = calloc(nout, sizeof *y);
    void *ws = aligned_alloc(64, MODEL_WORKSPACE_SIZE ? MODEL_WORKSPACE_SIZE : 64);
    if (!x || !y || !ws) {
        fprintf(stderr, "aot_model: cannot read %s as f32 .npy of %zu values\n", argv[1], nin);
        return 1;
    }
    const void *ins[1] = {x};
    void *outs[MODEL_NUM_OUTPUTS] = {y};
    if (model_run(ins, outs, ws) != 0) {
        fprintf(stderr, "aot_model: the model's run failed\n");
        return 1;
    }
    printf("%s:", MODEL_OUTPUT0_NAME);
    for (size_t k = 0; k < nout; k++)
        printf(" %.9g", y[k]);
    printf("\n");
    free(ws);
    free(y);
    free(x);
    return 0;
}
