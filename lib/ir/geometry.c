/* geometry.c: operand geometry of window ops (conv, pooling), of slice and of matmul, one definition
 * shared by the type inference (infer.c), the reference interpreter (lib/ref), and the code
 * generator (lib/codegen). */
#include "ir.h"

#include <stdio.h>
#include <string.h>

const char *
ir_window(const Graph *g, const Node *n, const Type *x, const Type *y, const int64_t *kernel,
          IrWindow *w, char *buf, size_t len)
{
    int ns = x->rank - 2;
    if (ns < 1 || ns > 3) {
        snprintf(buf, len, "%d spatial dimensions are not supported (1 to 3)", ns);
        return buf;
    }
    const char *ap = ir_attr_string(g, n, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") != 0) {
        snprintf(buf, len, "auto_pad=%s is not supported (explicit pads)", ap);
        return buf;
    }
    int64_t st[IR_MAX_RANK], dl[IR_MAX_RANK], pd[2 * IR_MAX_RANK];
    int ks = ir_attr_ints(g, n, "strides", st, IR_MAX_RANK);
    int kd = ir_attr_ints(g, n, "dilations", dl, IR_MAX_RANK);
    int kp = ir_attr_ints(g, n, "pads", pd, 2 * IR_MAX_RANK);
    if ((ks >= 0 && ks != ns) || (kd >= 0 && kd != ns) || (kp >= 0 && kp != 2 * ns)) {
        snprintf(buf, len, "strides/dilations/pads do not match %d spatial dimensions", ns);
        return buf;
    }
    w->ns = ns;
    for (int i = 0; i < 3; i++) {
        bool sp = i < ns;
        w->in[i] = sp ? x->dims[2 + i] : 1;
        w->out[i] = sp ? y->dims[2 + i] : 1;
        w->k[i] = sp ? kernel[i] : 1;
        w->s[i] = sp && ks >= 0 ? st[i] : 1;
        w->d[i] = sp && kd >= 0 ? dl[i] : 1;
        w->pb[i] = sp && kp >= 0 ? pd[i] : 0;
        w->pe[i] = sp && kp >= 0 ? pd[ns + i] : 0;
    }
    return NULL;
}

void
ir_matmul_promote(const Type *a, const Type *b, Type *a2, Type *b2)
{
    *a2 = *a;
    *b2 = *b;
    if (a->rank == 1) {
        a2->rank = 2;
        a2->dims[0] = 1;
        a2->dims[1] = a->dims[0];
    }
    if (b->rank == 1) {
        b2->rank = 2;
        b2->dims[0] = b->dims[0];
        b2->dims[1] = 1;
    }
}

bool
ir_slice_starts(const Graph *g, const Node *n, const Type *x, int64_t *start, int64_t *step)
{
    for (int i = 0; i < IR_MAX_RANK; i++) {
        start[i] = 0;
        step[i] = 1;
    }
    int64_t st[IR_MAX_RANK], ax[IR_MAX_RANK], sp[IR_MAX_RANK];
    int k = ir_attr_ints(g, n, "starts", st, IR_MAX_RANK);
    if (k < 0 || k > x->rank)
        return false;
    if (ir_attr_ints(g, n, "axes", ax, IR_MAX_RANK) < 0)
        for (int i = 0; i < k; i++)
            ax[i] = i;
    if (ir_attr_ints(g, n, "steps", sp, IR_MAX_RANK) < 0)
        for (int i = 0; i < k; i++)
            sp[i] = 1;
    for (int i = 0; i < k; i++) {
        int64_t a = ax[i] < 0 ? ax[i] + x->rank : ax[i], d = x->dims[a], s = st[i];
        if (s < 0)
            s += d;
        if (sp[i] > 0)
            s = s < 0 ? 0 : s > d ? d : s;
        else
            s = s < 0 ? -1 : s > d - 1 ? d - 1 : s;
        start[a] = s;
        step[a] = sp[i];
    }
    return true;
}
