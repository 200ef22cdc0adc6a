/* resize.c: the source index maps of `resize` (ONNX Resize, nearest and linear), shared by the
 * reference interpreter and the code generator so that both compute the same source positions
 * and interpolation weights, bit for bit. */
#include "ir.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *
ir_resize_spec(Graph *g, const Node *n, ResizeSpec *rs, char *buf, size_t len)
{
    const char *mode = ir_attr_string(g, n, "mode", "nearest");
    const char *ctm = ir_attr_string(g, n, "coordinate_transformation_mode", "half_pixel");
    const char *nms = ir_attr_string(g, n, "nearest_mode", "round_prefer_floor");
    if (!strcmp(ctm, "half_pixel")) rs->coord = RESIZE_HALF_PIXEL;
    else if (!strcmp(ctm, "asymmetric")) rs->coord = RESIZE_ASYMMETRIC;
    else if (!strcmp(ctm, "align_corners")) rs->coord = RESIZE_ALIGN_CORNERS;
    else if (!strcmp(ctm, "pytorch_half_pixel")) rs->coord = RESIZE_PYTORCH_HALF_PIXEL;
    else {
        snprintf(buf, len, "coordinate_transformation_mode '%s' is not supported", ctm);
        return buf;
    }
    if (!strcmp(nms, "round_prefer_floor")) rs->nearest = RESIZE_ROUND_PREFER_FLOOR;
    else if (!strcmp(nms, "round_prefer_ceil")) rs->nearest = RESIZE_ROUND_PREFER_CEIL;
    else if (!strcmp(nms, "floor")) rs->nearest = RESIZE_FLOOR;
    else if (!strcmp(nms, "ceil")) rs->nearest = RESIZE_CEIL;
    else {
        snprintf(buf, len, "nearest_mode '%s' is not supported", nms);
        return buf;
    }
    if (ir_attr_int(g, n, "antialias", 0) != 0 || ir_attr_int(g, n, "exclude_outside", 0) != 0)
        return "antialias and exclude_outside are not supported";
    rs->linear = strcmp(mode, "linear") == 0;
    if (!rs->linear && strcmp(mode, "nearest") != 0) {
        snprintf(buf, len, "resize mode '%s' is not supported", mode);
        return buf;
    }
    return NULL;
}

/* The input coordinate of output position xo along an axis of lin -> lout elements. */
static double
orig_coord(int cm, int64_t xo, int64_t lin, int64_t lout)
{
    double scale = (double)lout / (double)lin;
    switch (cm) {
    case RESIZE_HALF_PIXEL: return ((double)xo + 0.5) / scale - 0.5;
    case RESIZE_PYTORCH_HALF_PIXEL: return lout > 1 ? ((double)xo + 0.5) / scale - 0.5 : 0.0;
    case RESIZE_ALIGN_CORNERS:
        return lout == 1 ? 0.0 : (double)xo * (double)(lin - 1) / (double)(lout - 1);
    case RESIZE_ASYMMETRIC: return (double)xo / scale;
    }
    return 0;
}

int64_t
ir_resize_nearest_src(const ResizeSpec *rs, int64_t o, int64_t lin, int64_t lout)
{
    double x = orig_coord(rs->coord, o, lin, lout);
    double f = floor(x), r;
    switch (rs->nearest) {
    case RESIZE_ROUND_PREFER_FLOOR: r = x - f == 0.5 ? f : floor(x + 0.5); break;
    case RESIZE_ROUND_PREFER_CEIL: r = x - f == 0.5 ? f + 1 : floor(x + 0.5); break;
    case RESIZE_FLOOR: r = f; break;
    default: r = ceil(x); break;
    }
    return r < 0 ? 0 : r > (double)(lin - 1) ? lin - 1 : (int64_t)r;
}

void
ir_resize_linear_src(const ResizeSpec *rs, int64_t o, int64_t lin, int64_t lout, int64_t *i0,
                     int64_t *i1, double *t)
{
    double xo = orig_coord(rs->coord, o, lin, lout);
    xo = xo < 0 ? 0 : xo > (double)(lin - 1) ? (double)(lin - 1) : xo;
    *i0 = (int64_t)floor(xo);
    *i1 = *i0 + 1 < lin ? *i0 + 1 : lin - 1;
    *t = xo - (double)*i0;
}
