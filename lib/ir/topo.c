/* topo.c: the stable topological order shared by the IR (ir_compact) and the ONNX reader
 * (which orders the file's nodes before building them): Kahn's algorithm with a min-heap of
 * ready node indices, so among the nodes that are ready the lowest index goes first and an
 * order that is already valid is kept unchanged. */
#include "ir.h"

#include <stdlib.h>

static void
heap_push(uint32_t *heap, uint32_t *hn, uint32_t x)
{
    uint32_t i = (*hn)++;
    heap[i] = x;
    while (i && heap[(i - 1) / 2] > heap[i]) {
        uint32_t t = heap[i];
        heap[i] = heap[(i - 1) / 2];
        heap[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static uint32_t
heap_pop(uint32_t *heap, uint32_t *hn)
{
    uint32_t top = heap[0];
    heap[0] = heap[--*hn];
    for (uint32_t i = 0;;) {
        uint32_t l = 2 * i + 1, r = l + 1, s = i;
        if (l < *hn && heap[l] < heap[s])
            s = l;
        if (r < *hn && heap[r] < heap[s])
            s = r;
        if (s == i)
            break;
        uint32_t t = heap[i];
        heap[i] = heap[s];
        heap[s] = t;
        i = s;
    }
    return top;
}

uint32_t
ir_topo_order(uint32_t n, const bool *member, uint32_t *indeg, const uint32_t *succ_start,
              const uint32_t *succ, uint32_t *order)
{
    uint32_t *heap = xmalloc((n ? n : 1) * sizeof(uint32_t));
    uint32_t hn = 0, no = 0;
    for (uint32_t i = 0; i < n; i++)
        if ((!member || member[i]) && indeg[i] == 0)
            heap_push(heap, &hn, i);
    while (hn) {
        uint32_t top = heap_pop(heap, &hn);
        order[no++] = top;
        for (uint32_t c = succ_start[top]; c < succ_start[top + 1]; c++)
            if (--indeg[succ[c]] == 0)
                heap_push(heap, &hn, succ[c]);
    }
    free(heap);
    return no;
}
