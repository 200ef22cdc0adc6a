/* run_model.c: compile and run a model with the installed libqdqc (docs/embedding.md,
 * test/install/run-install-test.sh).
 *
 *   run_model MODEL INPUT.npy [OBJECT.o HEADER.h]
 *
 * Loads MODEL (.onnx, .mlir or text IR), runs the default pipeline, JIT-compiles it and runs it
 * on INPUT.npy (the model's single input), runs the reference interpreter on the same input,
 * and prints the first output's values ("%.9g", one line) and whether the two engines agree
 * bit for bit. With OBJECT.o and HEADER.h it also writes the compiled code for the host
 * (docs/abi.md). Exit 0 on success; a failure prints the library's diagnostics and exits 1. */
#include <qdqc/qdqc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
fail(qdqc_context *ctx, const char *what, qdqc_status st)
{
    fprintf(stderr, "run_model: %s: %s\n%s", what, qdqc_status_name(st),
            qdqc_context_get_diagnostics(ctx));
    return 1;
}

static size_t
numel(const qdqc_module *m, size_t i)
{
    size_t n = 1;
    for (int d = 0; d < qdqc_module_output_rank(m, i); d++)
        n *= (size_t)qdqc_module_output_dims(m, i)[d];
    return n;
}

static int
run(qdqc_context *ctx, qdqc_module *m, const qdqc_array *in, int argc, char **argv)
{
    if (qdqc_module_input_count(m) != 1 || strcmp(in->elem_type,
                                                  qdqc_module_input_elem_type(m, 0)) != 0) {
        fprintf(stderr, "run_model: the model needs one %s input, the .npy holds %s\n",
                qdqc_module_input_elem_type(m, 0), in->elem_type);
        return 1;
    }
    size_t nout = qdqc_module_output_count(m);
    void **jit_out = calloc(nout, sizeof *jit_out), **ref_out = calloc(nout, sizeof *ref_out);
    int rc = 1;
    for (size_t i = 0; jit_out && ref_out && i < nout; i++) {
        size_t bytes = numel(m, i) * qdqc_elem_type_size(qdqc_module_output_elem_type(m, i));
        jit_out[i] = calloc(1, bytes ? bytes : 1);
        ref_out[i] = calloc(1, bytes ? bytes : 1);
        if (!jit_out[i] || !ref_out[i])
            goto done;
    }
    const void *ins[1] = {in->data};
    qdqc_jit *j = NULL;
    qdqc_status st = qdqc_jit_create(m, NULL, &j);
    if (st != QDQC_OK) {
        rc = fail(ctx, "qdqc_jit_create", st);
        goto done;
    }
    st = qdqc_jit_run(j, ins, jit_out);
    qdqc_jit_destroy(j);
    if (st != QDQC_OK) {
        rc = fail(ctx, "qdqc_jit_run", st);
        goto done;
    }
    st = qdqc_module_run_reference(m, ins, ref_out);
    if (st != QDQC_OK) {
        rc = fail(ctx, "qdqc_module_run_reference", st);
        goto done;
    }
    int same = 1;
    for (size_t i = 0; i < nout; i++)
        same &= memcmp(jit_out[i], ref_out[i], numel(m, i) *
                       qdqc_elem_type_size(qdqc_module_output_elem_type(m, i))) == 0;
    printf("%s:", qdqc_module_output_name(m, 0));
    if (strcmp(qdqc_module_output_elem_type(m, 0), "f32") == 0)
        for (size_t k = 0; k < numel(m, 0); k++)
            printf(" %.9g", ((const float *)jit_out[0])[k]);
    printf("\njit == reference: %s\n", same ? "yes" : "NO");
    rc = same ? 0 : 1;
    if (rc == 0 && argc >= 5) {
        if ((st = qdqc_module_compile_to_file(m, NULL, argv[3], QDQC_EMIT_OBJ)) != QDQC_OK ||
            (st = qdqc_module_compile_to_file(m, NULL, argv[4], QDQC_EMIT_HEADER)) != QDQC_OK)
            rc = fail(ctx, "qdqc_module_compile_to_file", st);
        else
            printf("wrote %s and %s\n", argv[3], argv[4]);
    }
done:
    for (size_t i = 0; i < nout; i++) {
        if (jit_out)
            free(jit_out[i]);
        if (ref_out)
            free(ref_out[i]);
    }
    free(jit_out);
    free(ref_out);
    return rc;
}

int
main(int argc, char **argv)
{
    if (argc != 3 && argc != 5) {
        fprintf(stderr, "usage: run_model MODEL INPUT.npy [OBJECT.o HEADER.h]\n");
        return 2;
    }
    qdqc_context *ctx = qdqc_context_create();
    if (!ctx)
        return 1;
    qdqc_module *m = NULL;
    qdqc_array in = {0};
    qdqc_status st;
    int rc;
    if ((st = qdqc_module_load_file(ctx, argv[1], &m)) != QDQC_OK)
        rc = fail(ctx, "load", st);
    else if ((st = qdqc_module_run_passes(m, NULL)) != QDQC_OK)
        rc = fail(ctx, "passes", st);
    else if ((st = qdqc_npy_read(ctx, argv[2], &in)) != QDQC_OK)
        rc = fail(ctx, "input", st);
    else
        rc = run(ctx, m, &in, argc, argv);
    qdqc_array_free(&in);
    qdqc_module_destroy(m);
    qdqc_context_destroy(ctx);
    return rc;
}
