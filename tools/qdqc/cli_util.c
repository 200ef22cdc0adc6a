/* cli_util.c: element counts and the random inputs every qdqc command generates the same way
 * (cli_util.h). */
#include "cli_util.h"

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
