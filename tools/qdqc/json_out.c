/* json_out.c: see json_out.h. */
#include "json_out.h"

#include <math.h>

void
json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f); /* UTF-8 passes through */
    }
    fputc('"', f);
}

void
json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fputs("null", f);
}

void
json_key(FILE *f, int *first, const char *key)
{
    if (!*first)
        fputs(", ", f);
    *first = 0;
    json_string(f, key);
    fputs(": ", f);
}
