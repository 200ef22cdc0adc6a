/* report.h: what lib/api/report.c shares with the rest of lib/api. */
#ifndef QDQC_API_REPORT_H
#define QDQC_API_REPORT_H

#include "ir/ir.h"

#include <stdint.h>

/* Multiply-adds of a conv, conv-transpose, matmul or gemm node (integer or float), as the
 * report counts them; 0 for any other op. */
uint64_t report_node_macs(Graph *g, Node *n);

#endif
