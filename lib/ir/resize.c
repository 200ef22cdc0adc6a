/* resize.c: the source index maps of `resize` (ONNX Resize, nearest and linear), shared by the
 * reference interpreter and the code generator so that both compute the same source positions
 * and interpolation weights, bit for bit. Coordinates follow the ONNX reference
 * implementation: the scale of the map is the "scales" attribute when the model gave scales
 * (ONNX uses them even when the output size is rounded down), else output / input size;
 * tf_crop_and_resize maps the output onto the "roi" region and marks samples outside the input
 * (they take "extrapolation_value"). */
#include "ir.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *
ir_resize_spec(Graph *g, const Node *n, ResizeSpec *rs, char *buf, size_t len)
{
    memset(rs, 0, sizeof *rs);
    const char *mode = ir_attr_string(g, n, "mode", "nearest");
    const char *ctm = ir_attr_string(g, n, "coordinate_transformation_mode", "half_pixel");
    const char *nms = ir_attr_string(g, n, "nearest_mode", "round_prefer_floor");
    if (!strcmp(ctm, "half_pixel")) rs->coord = RESIZE_HALF_PIXEL;
    else if (!strcmp(ctm, "asymmetric")) rs->coord = RESIZE_ASYMMETRIC;
    else if (!strcmp(ctm, "align_corners")) rs->coord = RESIZE_ALIGN_CORNERS;
    else if (!strcmp(ctm, "pytorch_half_pixel")) rs->coord = RESIZE_PYTORCH_HALF_PIXEL;
    else if (!strcmp(ctm, "tf_half_pixel_for_nn")) rs->coord = RESIZE_TF_HALF_PIXEL_FOR_NN;
    else if (!strcmp(ctm, "tf_crop_and_resize")) rs->coord = RESIZE_TF_CROP_AND_RESIZE;
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
    int r = ir_value(g, n->in[0])->type.rank;
    const Attr *sc = ir_attr(g, n, "scales");
    if (sc) {
        if (sc->kind != ATTR_FLOATS || sc->floats.n != (uint32_t)r)
            return "'scales' must have one float per dimension";
        for (int a = 0; a < r; a++) {
            if (!(sc->floats.v[a] > 0) || !isfinite(sc->floats.v[a]))
                return "'scales' must be positive and finite";
            rs->scale[a] = sc->floats.v[a];
        }
    }
    const Attr *roi = ir_attr(g, n, "roi");
    if (rs->coord == RESIZE_TF_CROP_AND_RESIZE) {
        if (!roi || roi->kind != ATTR_FLOATS || roi->floats.n != 2 * (uint32_t)r)
            return "tf_crop_and_resize needs 'roi' with two floats per dimension";
        for (int a = 0; a < r; a++) {
            rs->roi0[a] = roi->floats.v[a];
            rs->roi1[a] = roi->floats.v[r + a];
            if (!isfinite(rs->roi0[a]) || !isfinite(rs->roi1[a]))
                return "'roi' must be finite";
        }
        rs->extrapolation = ir_attr_float(g, n, "extrapolation_value", 10.0f);
    } else if (roi) {
        return "'roi' is only for tf_crop_and_resize";
    }
    return NULL;
}

/* The input coordinate of output position xo along axis a of lin -> lout elements. With given
 * scales, ONNX takes the output length as lin x scale (not rounded) in the formulas that use
 * it. */
static double
orig_coord(const ResizeSpec *rs, int a, int64_t xo, int64_t lin, int64_t lout)
{
    bool given = rs->scale[a] > 0;
    double scale = given ? rs->scale[a] : (double)lout / (double)lin;
    double lres = given ? (double)lin * rs->scale[a] : (double)lout;
    switch (rs->coord) {
    case RESIZE_HALF_PIXEL: return ((double)xo + 0.5) / scale - 0.5;
    case RESIZE_PYTORCH_HALF_PIXEL: return lres > 1 ? ((double)xo + 0.5) / scale - 0.5 : 0.0;
    case RESIZE_ALIGN_CORNERS:
        return lres == 1 ? 0.0 : (double)xo * (double)(lin - 1) / (lres - 1);
    case RESIZE_ASYMMETRIC: return (double)xo / scale;
    case RESIZE_TF_HALF_PIXEL_FOR_NN: return ((double)xo + 0.5) / scale;
    case RESIZE_TF_CROP_AND_RESIZE: {
        double s = rs->roi0[a], e = rs->roi1[a];
        if (lres <= 1)
            return 0.5 * (s + e) * (double)(lin - 1);
        return s * (double)(lin - 1) + (double)xo * (e - s) * (double)(lin - 1) / (lres - 1);
    }
    }
    return 0;
}

int64_t
ir_resize_nearest_src(const ResizeSpec *rs, int a, int64_t o, int64_t lin, int64_t lout)
{
    double x = orig_coord(rs, a, o, lin, lout);
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
ir_resize_linear_src(const ResizeSpec *rs, int a, int64_t o, int64_t lin, int64_t lout,
                     int64_t *i0, int64_t *i1, double *t)
{
    double xo = orig_coord(rs, a, o, lin, lout);
    xo = xo < 0 ? 0 : xo > (double)(lin - 1) ? (double)(lin - 1) : xo;
    *i0 = (int64_t)floor(xo);
    *i1 = *i0 + 1 < lin ? *i0 + 1 : lin - 1;
    *t = xo - (double)*i0;
}

bool
ir_resize_inside(const ResizeSpec *rs, int a, int64_t o, int64_t lin, int64_t lout)
{
    if (rs->coord != RESIZE_TF_CROP_AND_RESIZE)
        return true;
    double x = orig_coord(rs, a, o, lin, lout);
    return x >= 0 && x <= (double)(lin - 1);
}

bool
ir_resize_identity(const ResizeSpec *rs, int a, int64_t lin, int64_t lout)
{
    if (lin != lout)
        return false;
    for (int64_t o = 0; o < lout; o++) {
        if (!ir_resize_inside(rs, a, o, lin, lout))
            return false;
        if (rs->linear) {
            int64_t i0, i1;
            double t;
            ir_resize_linear_src(rs, a, o, lin, lout, &i0, &i1, &t);
            if (i0 != o || t != 0)
                return false;
        } else if (ir_resize_nearest_src(rs, a, o, lin, lout) != o) {
            return false;
        }
    }
    return true;
}
