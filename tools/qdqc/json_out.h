/* json_out.h: the few JSON writers of `qdqc bench --json` (strings escaped per RFC 8259,
 * numbers that every JSON parser reads: a non-finite double is written as null). */
#ifndef QDQC_TOOL_JSON_OUT_H
#define QDQC_TOOL_JSON_OUT_H

#include <stdio.h>

void json_string(FILE *f, const char *s);
void json_number(FILE *f, double v);
/* "key": with the separator before it when not the first member */
void json_key(FILE *f, int *first, const char *key);

#endif
