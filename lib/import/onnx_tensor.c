/* onnx_tensor.c: ONNX TensorProto -> qdqc Tensor.
 * Data comes from the typed fields (float_data, int32_data, int64_data, double_data,
 * uint64_data), from raw_data (little-endian, 4-bit types packed two per byte, low nibble
 * first) or from external data: a file named by `location`, relative to the model's folder,
 * read from `offset` for `length` bytes. External paths that are absolute, contain `..`, or
 * resolve (through symlinks) outside the model's folder are refused, as are reads past the
 * end of the file. Every size is checked against the declared shape before anything is
 * allocated, so a hostile shape cannot make a huge allocation. */
#define _XOPEN_SOURCE 700
#include "onnx_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum {
    DT_FLOAT = 1, DT_UINT8 = 2, DT_INT8 = 3, DT_UINT16 = 4, DT_INT16 = 5, DT_INT32 = 6,
    DT_INT64 = 7, DT_STRING = 8, DT_BOOL = 9, DT_FLOAT16 = 10, DT_DOUBLE = 11, DT_UINT32 = 12,
    DT_UINT64 = 13, DT_COMPLEX64 = 14, DT_COMPLEX128 = 15, DT_BFLOAT16 = 16,
    DT_FLOAT8E4M3FN = 17, DT_FLOAT8E4M3FNUZ = 18, DT_FLOAT8E5M2 = 19, DT_FLOAT8E5M2FNUZ = 20,
    DT_UINT4 = 21, DT_INT4 = 22,
};

ElemType
onnx_elem(int32_t dt)
{
    switch (dt) {
    case DT_FLOAT: return ET_F32;
    case DT_UINT8: return ET_U8;
    case DT_INT8: return ET_I8;
    case DT_UINT16: return ET_U16;
    case DT_INT16: return ET_I16;
    case DT_INT32: return ET_I32;
    case DT_INT64: return ET_I64;
    case DT_BOOL: return ET_BOOL;
    case DT_FLOAT16: return ET_F16;
    case DT_DOUBLE: return ET_F64;
    case DT_UINT32: return ET_U32;
    case DT_UINT4: return ET_U4;
    case DT_INT4: return ET_I4;
    default: return ET_NONE;
    }
}

const char *
onnx_dtype_name(int32_t dt)
{
    static const char *names[] = {
        "UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING",
        "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16",
        "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4", "INT4"};
    if (dt >= 0 && (size_t)dt < ARRAY_LEN(names))
        return names[dt];
    return "unknown";
}

static const char *
ext_entry(const Onnx__TensorProto *tp, const char *key)
{
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = tp->external_data[i];
        if (e && e->key && strcmp(e->key, key) == 0)
            return e->value ? e->value : "";
    }
    return NULL;
}

static bool
parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s)
        return false;
    uint64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9' || v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    *out = v;
    return true;
}

/* Read external data into a fresh arena buffer of `want` bytes. */
static void *
read_external(OnnxImp *I, const Onnx__TensorProto *tp, const char *what, const Loc *loc,
              size_t want)
{
    const char *location = ext_entry(tp, "location");
    if (!location || !*location) {
        diag_error(I->ctx, loc, "%s: external data has no 'location'", what);
        return NULL;
    }
    if (!I->dir) {
        diag_error(I->ctx, loc, "%s: external data '%s' cannot be resolved: the model was not "
                   "read from a file", what, location);
        return NULL;
    }
    if (location[0] == '/' || location[0] == '\\') {
        diag_error(I->ctx, loc, "%s: external data location '%s' is an absolute path (refused)",
                   what, location);
        return NULL;
    }
    /* refuse any ".." component */
    for (const char *p = location; *p;) {
        const char *e = p;
        while (*e && *e != '/' && *e != '\\')
            e++;
        if (e - p == 2 && p[0] == '.' && p[1] == '.') {
            diag_error(I->ctx, loc, "%s: external data location '%s' escapes the model folder "
                       "(refused)", what, location);
            return NULL;
        }
        p = *e ? e + 1 : e;
    }
    uint64_t offset = 0, length = 0;
    const char *so = ext_entry(tp, "offset"), *sl = ext_entry(tp, "length");
    if (so && !parse_u64(so, &offset)) {
        diag_error(I->ctx, loc, "%s: external data offset '%s' is not a number", what, so);
        return NULL;
    }
    if (sl && !parse_u64(sl, &length)) {
        diag_error(I->ctx, loc, "%s: external data length '%s' is not a number", what, sl);
        return NULL;
    }
    StrBuf b;
    sb_init(&b);
    sb_printf(&b, "%s/%s", I->dir, location);
    char *full = sb_take(&b);
    char *real = realpath(full, NULL);
    free(full);
    if (!real) {
        diag_error(I->ctx, loc, "%s: cannot open external data '%s': %s", what, location,
                   strerror(errno));
        return NULL;
    }
    size_t dl = strlen(I->dir);
    if (strcmp(real, I->dir) == 0) {
        diag_error(I->ctx, loc, "%s: external data '%s' is not a file", what, location);
        free(real);
        return NULL;
    }
    if (strncmp(real, I->dir, dl) != 0 || (real[dl] != '/' && !(dl == 1 && I->dir[0] == '/'))) {
        diag_error(I->ctx, loc, "%s: external data '%s' resolves outside the model folder "
                   "(refused)", what, location);
        free(real);
        return NULL;
    }
    FILE *f = fopen(real, "rb");
    free(real);
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        diag_error(I->ctx, loc, "%s: cannot read external data '%s'", what, location);
        if (f)
            fclose(f);
        return NULL;
    }
    uint64_t fsize = (uint64_t)st.st_size;
    if (!sl)
        length = offset <= fsize ? fsize - offset : 0;
    if (offset > fsize || length > fsize - offset) {
        diag_error(I->ctx, loc, "%s: external data '%s' reads bytes %llu..%llu past the end of "
                   "the file (%llu bytes)", what, location, (unsigned long long)offset,
                   (unsigned long long)(offset + length), (unsigned long long)fsize);
        fclose(f);
        return NULL;
    }
    if (length != want) {
        diag_error(I->ctx, loc, "%s: external data has %llu bytes, the shape needs %zu", what,
                   (unsigned long long)length, want);
        fclose(f);
        return NULL;
    }
    void *buf = arena_alloc(&I->m->arena, want ? want : 1);
    if (fseeko(f, (off_t)offset, SEEK_SET) != 0 || fread(buf, 1, want, f) != want) {
        diag_error(I->ctx, loc, "%s: error reading external data '%s'", what, location);
        fclose(f);
        return NULL;
    }
    fclose(f);
    return buf;
}

/* Unpack 4-bit values (two per byte, low nibble first) into one byte each. */
static void
unpack4(unsigned char *dst, const unsigned char *src, size_t n, bool is_signed)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v = (src[i / 2] >> (4 * (i & 1))) & 15;
        dst[i] = is_signed && v >= 8 ? (unsigned char)(v - 16) : (unsigned char)v;
    }
}

/* The range a typed-field value of element type et must lie in: the type's own range for the
 * integer types stored in int32_data or uint64_data (which are wider), a byte of two packed
 * nibbles for 4-bit types, the 16 bits of an f16. False when the field cannot overflow. */
static bool
typed_field_range(ElemType et, int64_t *lo, int64_t *hi)
{
    switch (et) {
    case ET_I8: case ET_U8: case ET_I16: case ET_U16: case ET_U32:
        elem_range(et, lo, hi);
        return true;
    case ET_I4: case ET_U4: *lo = 0; *hi = 255; return true;
    case ET_F16: *lo = 0; *hi = 65535; return true;
    default: return false;
    }
}

bool
onnx_tensor_bad_value(const Onnx__TensorProto *tp, OnnxBadValue *bad)
{
    int32_t dt = tp->has_data_type ? tp->data_type : 0;
    ElemType et = onnx_elem(dt);
    bool external = tp->has_data_location &&
                    tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    if (et == ET_NONE || external || tp->has_raw_data || !typed_field_range(et, &bad->lo, &bad->hi))
        return false;
    bad->et = et;
    if (et == ET_U32) {
        for (size_t i = 0; i < tp->n_uint64_data; i++)
            if (tp->uint64_data[i] > (uint64_t)bad->hi) {
                bad->field = "uint64_data";
                bad->index = i;
                /* shown as unsigned: keep it in range of int64 for the message */
                bad->value = tp->uint64_data[i] > INT64_MAX ? INT64_MAX : (int64_t)tp->uint64_data[i];
                return true;
            }
        return false;
    }
    for (size_t i = 0; i < tp->n_int32_data; i++)
        if (tp->int32_data[i] < bad->lo || tp->int32_data[i] > bad->hi) {
            bad->field = "int32_data";
            bad->index = i;
            bad->value = tp->int32_data[i];
            return true;
        }
    return false;
}

void
onnx_bad_value_text(const OnnxBadValue *bad, char *buf, size_t len)
{
    if (bad->et == ET_I4 || bad->et == ET_U4 || bad->et == ET_F16)
        snprintf(buf, len, "holds %lld in %s[%zu], outside [%lld, %lld] (each element %s)",
                 (long long)bad->value, bad->field, bad->index, (long long)bad->lo,
                 (long long)bad->hi,
                 bad->et == ET_F16 ? "holds the bits of one f16"
                 : bad->et == ET_I4 ? "packs two i4 values" : "packs two u4 values");
    else
        snprintf(buf, len, "holds %lld in %s[%zu], outside the %s range [%lld, %lld]",
                 (long long)bad->value, bad->field, bad->index, elem_name(bad->et),
                 (long long)bad->lo, (long long)bad->hi);
}

Tensor *
onnx_tensor(OnnxImp *I, const Onnx__TensorProto *tp, const char *what, const Loc *loc)
{
    int32_t dt = tp->has_data_type ? tp->data_type : 0;
    ElemType et = onnx_elem(dt);
    if (et == ET_NONE) {
        diag_error(I->ctx, loc, "%s: element type %s (%d) is not supported", what,
                   onnx_dtype_name(dt), (int)dt);
        return NULL;
    }
    if (tp->n_dims > IR_MAX_RANK) {
        diag_error(I->ctx, loc, "%s: rank %zu exceeds the maximum of %d", what, tp->n_dims,
                   IR_MAX_RANK);
        return NULL;
    }
    if (tp->segment) {
        diag_error(I->ctx, loc, "%s: segmented tensors are not supported", what);
        return NULL;
    }
    Type t = {0};
    t.elem = et;
    t.rank = (uint8_t)tp->n_dims;
    for (size_t i = 0; i < tp->n_dims; i++) {
        if (tp->dims[i] < 0) {
            diag_error(I->ctx, loc, "%s: dimension %zu is negative (%lld)", what, i,
                       (long long)tp->dims[i]);
            return NULL;
        }
        t.dims[i] = tp->dims[i];
    }
    size_t n, bytes;
    if (!type_numel(&t, &n) || !size_mul(n, elem_size(et), &bytes) ||
        bytes > ONNX_MAX_TENSOR_BYTES) {
        diag_error(I->ctx, loc, "%s: the shape's size overflows or exceeds the limit", what);
        return NULL;
    }
    bool is4 = et == ET_I4 || et == ET_U4;
    size_t packed = is4 ? (n + 1) / 2 : bytes; /* bytes in the file's encoding */
    bool external = tp->has_data_location &&
                    tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    Tensor *ts = NULL;
    const unsigned char *raw = NULL;
    if (external) {
        raw = read_external(I, tp, what, loc, packed);
        if (!raw)
            return NULL;
    } else if (tp->has_raw_data) {
        if (tp->n_float_data || tp->n_int32_data || tp->n_int64_data || tp->n_double_data ||
            tp->n_uint64_data || tp->n_string_data) {
            diag_error(I->ctx, loc, "%s: has both raw_data and typed data fields", what);
            return NULL;
        }
        if (tp->raw_data.len != packed) {
            diag_error(I->ctx, loc, "%s: raw_data has %zu bytes, %zu %s values need %zu", what,
                       tp->raw_data.len, n, elem_name(et), packed);
            return NULL;
        }
        raw = tp->raw_data.data;
    }
    ts = arena_alloc(&I->m->arena, sizeof *ts);
    ts->type = t;
    ts->nbytes = bytes;
    if (raw) {
        if (is4) {
            ts->data = arena_alloc(&I->m->arena, bytes ? bytes : 1);
            unpack4(ts->data, raw, n, et == ET_I4);
        } else if (external) {
            ts->data = (void *)raw;
        } else {
            ts->data = arena_dup(&I->m->arena, raw, bytes ? bytes : 1);
        }
        if (et == ET_BOOL)
            for (size_t i = 0; i < n; i++)
                ((unsigned char *)ts->data)[i] = ((unsigned char *)ts->data)[i] != 0;
        return ts;
    }
    /* typed fields: a value the element type cannot hold is an error, never wrapped */
    OnnxBadValue bad;
    if (onnx_tensor_bad_value(tp, &bad)) {
        char text[200];
        onnx_bad_value_text(&bad, text, sizeof text);
        diag_error(I->ctx, loc, "%s %s", what, text);
        return NULL;
    }
    size_t have;
    const char *field;
    switch (et) {
    case ET_F32: have = tp->n_float_data; field = "float_data"; break;
    case ET_F64: have = tp->n_double_data; field = "double_data"; break;
    case ET_I64: have = tp->n_int64_data; field = "int64_data"; break;
    case ET_U32: have = tp->n_uint64_data; field = "uint64_data"; break;
    default: have = tp->n_int32_data; field = "int32_data"; break;
    }
    size_t need = is4 ? (n + 1) / 2 : n;
    if (have != need) {
        if (is4)
            diag_error(I->ctx, loc, "%s: %s has %zu values, the shape's %zu %s values packed "
                       "two per entry need %zu", what, have ? field : "the tensor data", have,
                       n, elem_name(et), need);
        else
            diag_error(I->ctx, loc, "%s: %s has %zu values, the shape needs %zu", what,
                       have ? field : "the tensor data", have, need);
        return NULL;
    }
    ts->data = arena_alloc(&I->m->arena, bytes ? bytes : 1);
    if (is4) {
        unsigned char *tmp = xmalloc(need ? need : 1);
        for (size_t i = 0; i < need; i++)
            tmp[i] = (unsigned char)tp->int32_data[i];
        unpack4(ts->data, tmp, n, et == ET_I4);
        free(tmp);
        return ts;
    }
    for (size_t i = 0; i < n; i++) {
        switch (et) {
        case ET_F32: memcpy((char *)ts->data + 4 * i, &tp->float_data[i], 4); break;
        case ET_F64: memcpy((char *)ts->data + 8 * i, &tp->double_data[i], 8); break;
        case ET_I64: memcpy((char *)ts->data + 8 * i, &tp->int64_data[i], 8); break;
        case ET_U32: tensor_set_i(ts, i, (int64_t)(uint32_t)tp->uint64_data[i]); break;
        case ET_F16: {
            uint16_t h = (uint16_t)tp->int32_data[i];
            memcpy((char *)ts->data + 2 * i, &h, 2);
            break;
        }
        case ET_BOOL: ((unsigned char *)ts->data)[i] = tp->int32_data[i] != 0; break;
        default: tensor_set_i(ts, i, tp->int32_data[i]); break;
        }
    }
    return ts;
}
