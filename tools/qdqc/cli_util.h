/* cli_util.h: what the qdqc commands share: reading a model (standard input too), element
 * counts and the deterministic random inputs
 * of `--random-inputs` (qdqc run and qdqc compare see the same arrays for one seed, so one
 * command's input can be reproduced with the other). */
#ifndef QDQC_TOOLS_CLI_UTIL_H
#define QDQC_TOOLS_CLI_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <qdqc/qdqc.h>

/* The number of elements of a shape (a dimension below 0 counts as 0). */
size_t cli_numel(int rank, const int64_t *dims);

/* Input number `input` of a model for random seed `seed`: n elements of type et (a qdqc element
 * type name) into buf. Floats uniform in [-1, 1), 8/16-bit integers over their full range, 4-bit
 * ones over theirs (one per byte), wider integers in [0, 3], bool 0/1. False for a type it
 * cannot generate. */
bool cli_fill_random(void *buf, size_t n, const char *et, uint64_t seed, size_t input);

/* The whole file, or standard input for "-"; NULL with errno set. */
char *cli_slurp(const char *path, size_t *len);

/* Load a model: a path by its extension, or "-" for standard input (ONNX, text IR or MLIR, told
 * apart by its bytes; "<stdin>" names it in diagnostics). */
qdqc_status cli_load_module(qdqc_context *ctx, const char *path, qdqc_module **out);

#endif
