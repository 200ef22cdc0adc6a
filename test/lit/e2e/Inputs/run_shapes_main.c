/* run_shapes_main.c: runs a compiled model with a run-time dimension (model.h, model.o) at
 * size n through model_run_shapes.
 *     run_shapes N IN0.bin ... OUT0.bin ...   raw little-endian buffers; prints the status and
 *                                            each output's shape
 *     run_shapes N --shape-check               the status of bad calls (wrong static dim,
 *                                            not a multiple, out of bounds, disagreeing inputs) */
#include "model.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Io {
    int rank, axis;
    int64_t dims[8], coef, bytes;
} Io;

#define IO_IN(i) {MODEL_INPUT##i##_RANK, MODEL_INPUT##i##_DIM_AXIS, MODEL_INPUT##i##_DIMS, \
                  MODEL_INPUT##i##_DIM_COEF, MODEL_INPUT##i##_BYTES}
#define IO_OUT(i) {MODEL_OUTPUT##i##_RANK, MODEL_OUTPUT##i##_DIM_AXIS, MODEL_OUTPUT##i##_DIMS, \
                   MODEL_OUTPUT##i##_DIM_COEF, MODEL_OUTPUT##i##_BYTES}
static const Io ins[] = {
    IO_IN(0),
#if MODEL_NUM_INPUTS > 1
    IO_IN(1),
#endif
#if MODEL_NUM_INPUTS > 2
    IO_IN(2),
#endif
};
static const Io outs[] = {
    IO_OUT(0),
#if MODEL_NUM_OUTPUTS > 1
    IO_OUT(1),
#endif
};

static int64_t
scaled(const Io *io, int64_t n)
{
    return io->axis >= 0 ? io->bytes * n : io->bytes;
}

static void *
read_file(const char *path, int64_t bytes)
{
    FILE *f = fopen(path, "rb");
    void *p = malloc((size_t)bytes);
    if (!f || !p || fread(p, 1, (size_t)bytes, f) != (size_t)bytes) {
        fprintf(stderr, "cannot read %lld bytes from %s\n", (long long)bytes, path);
        exit(2);
    }
    fclose(f);
    return p;
}

static int
shape_checks(int64_t n, int64_t shp[][8], const int64_t *sp[], const void *in[], void *out[],
             void *ws)
{
    for (int bad = 0; bad < 4; bad++) {
        for (int i = 0; i < MODEL_NUM_INPUTS; i++)
            for (int a = 0; a < ins[i].rank; a++)
                shp[i][a] = a == ins[i].axis ? ins[i].coef * n : ins[i].dims[a];
        const Io *io = &ins[0];
        int a = io->axis;
        if (bad == 0) /* a static dimension differs */
            shp[0][a == 0 && io->rank > 1 ? 1 : 0] += 1;
        if (bad == 1 && io->coef > 1) /* not a multiple */
            shp[0][a] += 1;
        if (bad == 1 && io->coef == 1)
            shp[0][a] = 0;
        if (bad == 2) /* above the bound */
            shp[0][a] = io->coef * (MODEL_DIM_MAX + 1);
        if (bad == 3 && MODEL_NUM_INPUTS > 1 && ins[1].axis >= 0) /* inputs disagree */
            shp[1][ins[1].axis] = ins[1].coef * (n == 1 ? 2 : n - 1);
        else if (bad == 3)
            shp[0][a] = -io->coef;
        printf("bad %d: %d\n", bad, model_run_shapes(sp, in, NULL, out, ws, NULL, NULL));
    }
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int64_t n = atoll(argv[1]);
    int64_t shp[MODEL_NUM_INPUTS][8], oshp[MODEL_NUM_OUTPUTS][8];
    const int64_t *sp[MODEL_NUM_INPUTS];
    int64_t *osp[MODEL_NUM_OUTPUTS];
    const void *in[MODEL_NUM_INPUTS];
    void *out[MODEL_NUM_OUTPUTS];
    bool check = argc > 2 && !strcmp(argv[2], "--shape-check");
    if (!check && argc != 2 + MODEL_NUM_INPUTS + MODEL_NUM_OUTPUTS)
        return 2;
    for (int i = 0; i < MODEL_NUM_INPUTS; i++) {
        for (int a = 0; a < ins[i].rank; a++)
            shp[i][a] = a == ins[i].axis ? ins[i].coef * n : ins[i].dims[a];
        sp[i] = shp[i];
        in[i] = check ? calloc(1, (size_t)scaled(&ins[i], MODEL_DIM_MAX + 1))
                      : read_file(argv[2 + i], scaled(&ins[i], n));
    }
    for (int i = 0; i < MODEL_NUM_OUTPUTS; i++) {
        osp[i] = oshp[i];
        out[i] = calloc(1, (size_t)scaled(&outs[i], check ? MODEL_DIM_MAX + 1 : n));
    }
    void *ws = aligned_alloc(64, (MODEL_WORKSPACE_SIZE + 127) / 64 * 64);
    if (check)
        return shape_checks(n, shp, sp, in, out, ws);
    int st = model_run_shapes(sp, in, osp, out, ws, NULL, NULL);
    printf("status %d\n", st);
    for (int i = 0; i < MODEL_NUM_OUTPUTS; i++) {
        printf("output %d:", i);
        for (int a = 0; a < outs[i].rank; a++)
            printf(" %lld", (long long)oshp[i][a]);
        printf("\n");
        FILE *f = fopen(argv[2 + MODEL_NUM_INPUTS + i], "wb");
        if (!f || fwrite(out[i], 1, (size_t)scaled(&outs[i], n), f) != (size_t)scaled(&outs[i], n))
            return 2;
        fclose(f);
    }
    return st;
}
