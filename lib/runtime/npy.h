/* npy.h: NumPy .npy reading and writing (format versions 1.0, 2.0 and 3.0).
 *
 * Supported dtypes (little-endian, C order): '<f4' '<f2' '<f8' '|i1' '|u1' '<i2' '<u2' '<i4'
 * '<u4' '<i8' '|b1' (one-byte dtypes may also be written '<'). Element types are named as in
 * the IR ("f32", "i8", ...). fortran_order True, big-endian data, structured dtypes and object
 * arrays are refused. The parser is strict (the header must be the dict numpy writes: exactly
 * the keys descr, fortran_order and shape), bounded (NPY_MAX_HEADER header bytes, rank <=
 * NPY_MAX_RANK, NPY_MAX_DATA data bytes) and must never crash on any input (it is fuzzed).
 * No dependency on other qdqc code; no global state. */
#ifndef QDQC_NPY_H
#define QDQC_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NPY_MAX_RANK 8
#define NPY_MAX_HEADER ((size_t)1 << 16)
#define NPY_MAX_DATA ((size_t)1 << 32) /* 4 GiB */

typedef enum NpyType {
    NPY_NONE = 0,
    NPY_F32, NPY_F16, NPY_F64, NPY_I8, NPY_U8, NPY_I16, NPY_U16, NPY_I32, NPY_U32, NPY_I64,
    NPY_BOOL
} NpyType;

typedef struct NpyArray {
    NpyType type;
    int rank;
    int64_t dims[NPY_MAX_RANK];
    void *data;   /* malloc'd, little-endian, C order; free with npy_free */
    size_t nbytes;
} NpyArray;

const char *npy_type_name(NpyType t);       /* "f32", ...; "none" for NPY_NONE */
NpyType npy_type_from_name(const char *s);  /* NPY_NONE if unknown */
size_t npy_type_size(NpyType t);

/* Parse a complete .npy image. On failure returns false and writes a lowercase message
 * (no final period) to err. */
bool npy_parse(const void *buf, size_t len, NpyArray *out, char *err, size_t errlen);

/* Serialize to a malloc'd .npy image (version 1.0, or 2.0 when the header needs it). */
bool npy_serialize(NpyType t, int rank, const int64_t *dims, const void *data, void **out,
                   size_t *outlen, char *err, size_t errlen);

bool npy_read_file(const char *path, NpyArray *out, char *err, size_t errlen);
bool npy_write_file(const char *path, NpyType t, int rank, const int64_t *dims, const void *data,
                    char *err, size_t errlen);
void npy_free(NpyArray *a); /* NULL-safe */

#endif
