/* run_model.c: a C driver for a model compiled by qdqc (README example, docs/abi.md).
 *
 *   qdqc examples/mobilenetv2_qdq.onnx -o model.o -o model.h --name=mobilenet
 *   cc -I. examples/run_model.c model.o -lm -o run_model
 *   ./run_model examples/input.npy [REFERENCE.npy]
 *
 * Reads the f32 input from a .npy file (the header is parsed minimally: version 1/2,
 * little-endian f32, C order, shape equal to the model's), runs mobilenet_run with a malloc'd
 * workspace of mobilenet_workspace_size() bytes (64-byte aligned), prints the output and its
 * argmax. With REFERENCE.npy (e.g. from `qdqc run --engine=ref`), checks that every output
 * value is bit-identical and exits 1 if not. */
#define _POSIX_C_SOURCE 200809L
#include "model.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The f32 payload of a .npy file with exactly numel elements and the given shape; NULL with a
 * message otherwise. */
static float *
read_npy_f32(const char *path, const int64_t *dims, int rank, size_t numel)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "run_model: cannot open '%s'\n", path);
        return NULL;
    }
    unsigned char pre[12];
    float *data = NULL;
    char *hdr = NULL;
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0 || pre[6] < 1 || pre[6] > 3) {
        fprintf(stderr, "run_model: '%s' is not a .npy file\n", path);
        goto out;
    }
    size_t hlen = pre[8] | (size_t)pre[9] << 8;
    if (pre[6] >= 2) { /* 4-byte header length */
        if (fread(pre + 10, 1, 2, f) != 2) {
            fprintf(stderr, "run_model: '%s': truncated header\n", path);
            goto out;
        }
        hlen |= (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    }
    hdr = malloc(hlen + 1);
    if (!hdr || fread(hdr, 1, hlen, f) != hlen) {
        fprintf(stderr, "run_model: '%s': truncated header\n", path);
        goto out;
    }
    hdr[hlen] = 0;
    char want[256];
    int w = snprintf(want, sizeof want, "(");
    for (int d = 0; d < rank; d++)
        w += snprintf(want + w, sizeof want - (size_t)w, rank == 1 ? "%lld," : d ? ", %lld" : "%lld",
                      (long long)dims[d]);
    snprintf(want + w, sizeof want - (size_t)w, ")");
    if (!strstr(hdr, "'descr': '<f4'") || !strstr(hdr, "'fortran_order': False") ||
        !strstr(hdr, want)) {
        fprintf(stderr, "run_model: '%s' must hold little-endian f32 of shape %s in C order; "
                "its header is %s\n", path, want, hdr);
        goto out;
    }
    data = malloc(numel * sizeof(float));
    if (!data || fread(data, sizeof(float), numel, f) != numel) {
        fprintf(stderr, "run_model: '%s': expected %zu f32 values\n", path, numel);
        free(data);
        data = NULL;
    }
out:
    free(hdr);
    fclose(f);
    return data;
}

int
main(int argc, char **argv)
{
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: %s INPUT.npy [REFERENCE_OUTPUT.npy]\n", argv[0]);
        return 2;
    }
    if (MOBILENET_NUM_INPUTS != 1 || MOBILENET_NUM_OUTPUTS != 1 ||
        strcmp(MOBILENET_INPUT0_ELEM_TYPE, "f32") != 0 ||
        strcmp(MOBILENET_OUTPUT0_ELEM_TYPE, "f32") != 0) {
        fprintf(stderr, "run_model: this driver expects one f32 input and one f32 output\n");
        return 2;
    }
    const int64_t in_dims[] = MOBILENET_INPUT0_DIMS, out_dims[] = MOBILENET_OUTPUT0_DIMS;
    float *x = read_npy_f32(argv[1], in_dims, MOBILENET_INPUT0_RANK, MOBILENET_INPUT0_NUMEL);
    if (!x)
        return 1;
    float *y = malloc(MOBILENET_OUTPUT0_BYTES);
    size_t ws_size = mobilenet_workspace_size();
    /* aligned_alloc needs a size that is a multiple of the alignment */
    void *ws = aligned_alloc(MOBILENET_WORKSPACE_ALIGN,
                             (ws_size + MOBILENET_WORKSPACE_ALIGN - 1) / MOBILENET_WORKSPACE_ALIGN *
                                 MOBILENET_WORKSPACE_ALIGN + MOBILENET_WORKSPACE_ALIGN);
    if (!y || !ws) {
        fprintf(stderr, "run_model: out of memory\n");
        return 1;
    }
    const void *inputs[1] = {x};
    void *outputs[1] = {y};
    if (mobilenet_run(inputs, outputs, ws) != 0) { /* QDQC_ERR_RUNTIME: docs/abi.md */
        fprintf(stderr, "run_model: the model's run failed\n");
        return 1;
    }

    printf("%s [%lld", MOBILENET_OUTPUT0_NAME, (long long)out_dims[0]);
    for (int d = 1; d < MOBILENET_OUTPUT0_RANK; d++)
        printf(",%lld", (long long)out_dims[d]);
    printf("] (workspace %zu bytes):", ws_size);
    size_t best = 0;
    for (size_t i = 0; i < MOBILENET_OUTPUT0_NUMEL; i++) {
        if (i < 16)
            printf(" %.6g", (double)y[i]);
        if (y[i] > y[best])
            best = i;
    }
    printf("%s\nargmax %zu\n", MOBILENET_OUTPUT0_NUMEL > 16 ? " ..." : "", best);
    int rc = 0;
    if (argc == 3) {
        float *ref = read_npy_f32(argv[2], out_dims, MOBILENET_OUTPUT0_RANK,
                                  MOBILENET_OUTPUT0_NUMEL);
        if (!ref) {
            rc = 1;
        } else {
            size_t same = 0;
            for (size_t i = 0; i < MOBILENET_OUTPUT0_NUMEL; i++)
                same += memcmp(&y[i], &ref[i], sizeof(float)) == 0;
            printf("reference %s: %zu of %zu values bit-identical\n", argv[2], same,
                   (size_t)MOBILENET_OUTPUT0_NUMEL);
            rc = same == MOBILENET_OUTPUT0_NUMEL ? 0 : 1;
            free(ref);
        }
    }
    free(x);
    free(y);
    free(ws);
    return rc;
}
