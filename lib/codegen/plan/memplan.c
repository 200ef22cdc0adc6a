/* memplan.c: workspace planning by liveness.
 *
 * Each buffer lives over the steps [first, last]. Buffers are placed in order of decreasing
 * size (ties: earlier first) at the lowest 64-byte aligned offset that does not overlap any
 * already placed buffer whose live range intersects its own (greedy "first fit by size", as in
 * TFLite's arena planner). The result is deterministic. O(n^2) in the number of buffers, which
 * is the number of activations of the graph. */
#include "codegen/plan/plan.h"

#include <stdlib.h>

#define ALIGN 64

static int64_t
align_up(int64_t v)
{
    return (v + ALIGN - 1) / ALIGN * ALIGN;
}

typedef struct Ord {
    size_t i;
    int64_t size;
    int32_t first;
} Ord;

static int
cmp_ord(const void *pa, const void *pb)
{
    const Ord *a = pa, *b = pb;
    if (a->size != b->size)
        return a->size > b->size ? -1 : 1;
    if (a->first != b->first)
        return a->first < b->first ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

typedef struct Placed {
    int64_t off, end;
    int32_t first, last;
} Placed;

static int
cmp_placed(const void *pa, const void *pb)
{
    const Placed *a = pa, *b = pb;
    return a->off < b->off ? -1 : a->off > b->off;
}

int64_t
cg_memplan(CgMemReq *reqs, size_t n)
{
    Ord *ord = xmalloc((n ? n : 1) * sizeof *ord);
    Placed *pl = xmalloc((n ? n : 1) * sizeof *pl);
    Placed *tmp = xmalloc((n ? n : 1) * sizeof *tmp);
    size_t nord = 0, npl = 0;
    for (size_t i = 0; i < n; i++) {
        reqs[i].offset = 0;
        if (reqs[i].size > 0)
            ord[nord++] = (Ord){i, reqs[i].size, reqs[i].first};
    }
    qsort(ord, nord, sizeof *ord, cmp_ord);
    int64_t peak = 0;
    for (size_t j = 0; j < nord; j++) {
        CgMemReq *r = &reqs[ord[j].i];
        int64_t size = align_up(r->size);
        /* conflicting buffers sorted by offset */
        size_t nt = 0;
        for (size_t q = 0; q < npl; q++)
            if (pl[q].first <= r->last && r->first <= pl[q].last)
                tmp[nt++] = pl[q];
        qsort(tmp, nt, sizeof *tmp, cmp_placed);
        int64_t off = 0;
        for (size_t q = 0; q < nt; q++) {
            if (tmp[q].off >= off + size)
                break;
            if (tmp[q].end > off)
                off = align_up(tmp[q].end);
        }
        r->offset = off;
        pl[npl++] = (Placed){off, off + size, r->first, r->last};
        if (off + size > peak)
            peak = off + size;
    }
    free(ord);
    free(pl);
    free(tmp);
    return peak;
}
