/* cli_util.c: reading a model (standard input too), element counts and the random inputs every
 * qdqc command generates the same way (cli_util.h). */
#include "cli_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t
cli_numel(int rank, const int64_t *dims)
{
    size_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= (size_t)(dims[i] > 0 ? dims[i] : 0);
    return n;
}

static uint64_t
splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

bool
cli_fill_random(void *buf, size_t n, const char *et, uint64_t seed, size_t input)
{
    uint64_t s = seed * 1000003u + input;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = splitmix(&s);
        if (!strcmp(et, "f32")) {
            float v = (float)((double)(r >> 40) / (double)(1 << 24) * 2.0 - 1.0);
            memcpy((char *)buf + 4 * i, &v, 4);
        } else if (!strcmp(et, "f64")) {
            double v = (double)(r >> 11) / 9007199254740992.0 * 2.0 - 1.0;
            memcpy((char *)buf + 8 * i, &v, 8);
        } else if (!strcmp(et, "i8") || !strcmp(et, "u8")) {
            ((uint8_t *)buf)[i] = (uint8_t)r;
        } else if (!strcmp(et, "i4") || !strcmp(et, "u4")) {
            ((uint8_t *)buf)[i] = !strcmp(et, "u4") ? (uint8_t)(r & 15) : (uint8_t)((int)(r & 15) - 8);
        } else if (!strcmp(et, "i16") || !strcmp(et, "u16")) {
            uint16_t v = (uint16_t)r;
            memcpy((char *)buf + 2 * i, &v, 2);
        } else if (!strcmp(et, "i32") || !strcmp(et, "u32")) {
            uint32_t v = (uint32_t)(r & 3);
            memcpy((char *)buf + 4 * i, &v, 4);
        } else if (!strcmp(et, "i64")) {
            uint64_t v = r & 3;
            memcpy((char *)buf + 8 * i, &v, 8);
        } else if (!strcmp(et, "bool")) {
            ((uint8_t *)buf)[i] = (uint8_t)(r & 1);
        } else {
            return false;
        }
    }
    return true;
}

/* The whole file (or standard input for "-"); NULL with errno set. */
char *
cli_slurp(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t k;
    while (buf && (k = fread(buf + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    int e = !buf ? ENOMEM : ferror(f) ? (errno ? errno : EIO) : 0;
    if (f != stdin)
        fclose(f);
    if (e) {
        free(buf);
        errno = e;
        return NULL;
    }
    *len = n;
    return buf;
}

static bool
contains(const char *buf, size_t len, const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(buf + i, s, n) == 0)
            return true;
    return false;
}

/* "-": standard input, in the format its bytes say (ONNX is a binary protobuf; text IR and MLIR
 * are text, MLIR recognised by a func.func or module); other paths by extension
 * (qdqc_module_load_file) */
qdqc_status
cli_load_module(qdqc_context *ctx, const char *path, qdqc_module **out)
{
    if (strcmp(path, "-") != 0)
        return qdqc_module_load_file(ctx, path, out);
    size_t len = 0;
    char *buf = cli_slurp("-", &len);
    if (!buf) {
        fprintf(stderr, "qdqc: error: cannot read standard input: %s\n", strerror(errno));
        return QDQC_ERR_IO;
    }
    bool text = true;
    for (size_t i = 0; i < len && text; i++) {
        unsigned char c = (unsigned char)buf[i];
        text = c >= 0x20 || c == '\n' || c == '\r' || c == '\t';
    }
    qdqc_status st;
    if (!text)
        st = qdqc_module_import_onnx_bytes(ctx, buf, len, "<stdin>", out);
    else if (contains(buf, len, "func.func") || (len >= 6 && !memcmp(buf, "module", 6)))
        st = qdqc_module_import_mlir(ctx, buf, len, "<stdin>", out);
    else
        st = qdqc_module_parse(ctx, buf, len, "<stdin>", out);
    free(buf);
    return st;
}
