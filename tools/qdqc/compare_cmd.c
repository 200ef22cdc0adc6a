/* compare_cmd.c: `qdqc compare FLOAT.onnx QDQ.onnx [--input NAME=FILE.npy ...]
 * [--random-inputs N] [--samples DIR] [--json] [--plot FILE.svg] [--qparams] [--keep-float A,B]
 * [--map FILE] [--top K]`.
 * Only the public API: the comparison is qdqc_compare_* (lib/api/compare.c); here are the
 * options, the inputs, the tables, the JSON and the SVG.
 *
 * Three engines see the same inputs: the float model (reference interpreter, no passes), the
 * QDQ graph as written (reference, no passes: literal quantize/dequantize) and the compiled
 * code (the default pipeline, JIT, the compile options of the command line). Every
 * per-tensor activation quantize of the QDQ graph is one row, in graph order:
 *  - its float tensor is found by name (--map first, then the quantize's input, then the
 *    names with ONNX Runtime's suffixes _QuantizeLinear_Input/_Output and
 *    _DequantizeLinear_Output removed, then the dequantize's output);
 *  - float -> QDQ compares that float tensor with dequantize(the QDQ graph's integers);
 *  - QDQ -> compiled compares the QDQ graph's integers with the compiled code's, read as a
 *    graph output added after the passes (the code is not changed by it); a quantize the
 *    passes fused away has no integers left to read and is said so;
 *  - "float": the quantize's float input is still computed in the compiled graph (a float
 *    island feeds it), so that layer runs in float.
 * With several samples (--random-inputs N) the metrics cover all of them at once. */
#define _POSIX_C_SOURCE 200809L
#include "compare_cmd.h"

#include "cli_util.h"

#include "json_out.h"
#include "support/file_write.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { RC_OK = 0, RC_INPUT = 1, RC_USAGE = 2 };

static const char compare_usage[] =
    "usage: qdqc compare FLOAT.onnx QDQ.onnx [options]\n"
    "  --input NAME=FILE.npy   value of graph input NAME (repeatable; one-input models also\n"
    "                          take FILE.npy)\n"
    "  --random-inputs N       N samples of inputs uniform in [-1, 1) (seeds 1..N; the\n"
    "                          default: 1 sample); inputs given by --input stay fixed\n"
    "  --samples DIR           one sample per subdirectory of DIR (NAME.npy per input), or\n"
    "                          for a one-input model one per DIR/*.npy, in name order\n"
    "  --map FILE              lines 'FLOAT_NAME QDQ_NAME': the float tensor of a quantize\n"
    "                          named by its node, input, output or dequantize output\n"
    "  --keep-float A,B        compile with the ONNX nodes A and B left in float\n"
    "  --qparams               also: each quantize's range against the observed one\n"
    "  --json                  one JSON object instead of the tables\n"
    "  --plot FILE.svg         SQNR per layer along the network (SVG)\n"
    "  --top K                 layers in the summary (default 5)\n"
    "  --requant=float|fixed, --isa, --mattr, --mcpu: as for a compile\n";

static int
usage(const char *fmt, const char *a)
{
    fprintf(stderr, "qdqc: error: ");
    fprintf(stderr, fmt, a);
    fprintf(stderr, "\n(see qdqc compare --help)\n");
    return RC_USAGE;
}

static int
fail(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "qdqc: error: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    return RC_INPUT;
}

/* ---- rows: qdqc_compare_row (lib/api/compare.c) ---- */

typedef qdqc_compare_row Row;

/* a whole file as a NUL-terminated string (the --map file) */
static char *
read_text(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? 2 * cap : 8192;
            char *p = realloc(buf, cap);
            if (!p) {
                free(buf);
                fclose(fp);
                return NULL;
            }
            buf = p;
        }
        size_t k = fread(buf + len, 1, 4096, fp);
        len += k;
        if (k < 4096)
            break;
    }
    bool bad = ferror(fp) != 0;
    fclose(fp);
    if (bad) {
        free(buf);
        return NULL;
    }
    buf[len] = 0;
    return buf;
}

/* ---- output ---- */

static void
fmt_db(char *buf, size_t len, double v)
{
    if (isinf(v))
        snprintf(buf, len, "%s", v > 0 ? "inf" : "-inf");
    else
        snprintf(buf, len, "%.2f", v);
}

static const char *
short_name(const Row *r)
{
    return r->float_tensor ? r->float_tensor : r->q.input;
}

static void
print_table(Row *rows, size_t n)
{
    printf("%-3s %-10s | %-62s | %-24s |\n", "", "", "float -> QDQ (the quantizer's error)",
           "QDQ -> compiled (qdqc's)");
    printf("%-3s %-10s | %8s %8s %10s %7s %10s %7s | %8s %7s %7s | %s\n", "#", "scale",
           "SQNR dB", "cosine", "max abs", "steps", "mean abs", "steps", "SQNR dB", "max st",
           "mean st", "tensor (note)");
    for (size_t i = 0; i < n; i++) {
        Row *r = &rows[i];
        char s1[16] = "-", s2[16] = "-";
        printf("%-3zu %-10.6g | ", i, r->q.scale);
        if (r->has_float_to_qdq) {
            fmt_db(s1, sizeof s1, r->float_to_qdq.sqnr_db);
            printf("%8s %8.5f %10.4g %7.2f %10.4g %7.3f | ", s1, r->float_to_qdq.cosine, r->float_to_qdq.max_abs,
                   r->float_to_qdq.max_steps, r->float_to_qdq.mean_abs, r->float_to_qdq.mean_steps);
        } else {
            printf("%8s %8s %10s %7s %10s %7s | ", "-", "-", "-", "-", "-", "-");
        }
        if (r->has_qdq_to_compiled) {
            fmt_db(s2, sizeof s2, r->qdq_to_compiled.sqnr_db);
            printf("%8s %7.0f %7.3f | ", s2, r->qdq_to_compiled.max_steps, r->qdq_to_compiled.mean_steps);
        } else {
            printf("%8s %7s %7s | ", "-", "-", "-");
        }
        printf("%s", short_name(r));
        const char *sep = " (";
        if (!r->float_tensor) {
            printf("%sno float tensor", sep);
            sep = ", ";
        } else if (!r->has_float_to_qdq) {
            printf("%sshapes differ", sep);
            sep = ", ";
        }
        if (!r->compiled) {
            printf("%sfused away", sep);
            sep = ", ";
        }
        if (r->float_in_compiled) {
            printf("%sfloat", sep);
            sep = ", ";
        }
        printf("%s\n", sep[0] == ',' ? ")" : "");
    }
}

static int
cmp_fq(const void *a, const void *b)
{
    const Row *x = *(Row *const *)a, *y = *(Row *const *)b;
    double u = x->has_float_to_qdq ? x->float_to_qdq.sqnr_db : INFINITY, v = y->has_float_to_qdq ? y->float_to_qdq.sqnr_db : INFINITY;
    return u < v ? -1 : u > v ? 1 : 0;
}

static void
print_qparams(Row *rows, size_t n)
{
    printf("\nquantization parameters (observed: the quantize's input in the QDQ graph)\n");
    printf("%-3s %-4s %-10s %5s | %-23s | %-23s | %-15s %7s | %s\n", "#", "type", "scale", "zp",
           "covered range", "observed range", "clipped low/high", "unused", "tensor");
    for (size_t i = 0; i < n; i++) {
        Row *r = &rows[i];
        double lo = (r->q.qmin - r->q.zero_point) * r->q.scale;
        double hi = (r->q.qmax - r->q.zero_point) * r->q.scale;
        double den = r->count ? (double)r->count / 100.0 : 1;
        double qlo = fmax(r->q.qmin, fmin(r->q.qmax, nearbyint(r->observed_min / r->q.scale) + r->q.zero_point));
        double qhi = fmax(r->q.qmin, fmin(r->q.qmax, nearbyint(r->observed_max / r->q.scale) + r->q.zero_point));
        double unused = 100.0 * (1.0 - (qhi - qlo + 1) / (double)(r->q.qmax - r->q.qmin + 1));
        printf("%-3zu %-4s %-10.6g %5d | [%9.4g, %9.4g] | [%9.4g, %9.4g] | %6.2f%% %6.2f%% "
               "%6.2f%% | %s\n",
               i, r->q.storage, r->q.scale, r->q.zero_point, lo, hi, r->observed_min, r->observed_max,
               (double)r->clipped_below / den, (double)r->clipped_above / den, unused, short_name(r));
    }
}

static void
json_stats(FILE *f, int *first, const char *key, const qdqc_error_stats *s, bool has)
{
    json_key(f, first, key);
    if (!has) {
        fputs("null", f);
        return;
    }
    int fs = 1;
    fputc('{', f);
    json_key(f, &fs, "sqnr_db");
    json_number(f, s->sqnr_db);
    json_key(f, &fs, "cosine");
    json_number(f, s->cosine);
    json_key(f, &fs, "max_abs");
    json_number(f, s->max_abs);
    json_key(f, &fs, "mean_abs");
    json_number(f, s->mean_abs);
    json_key(f, &fs, "max_steps");
    json_number(f, s->max_steps);
    json_key(f, &fs, "mean_steps");
    json_number(f, s->mean_steps);
    fputc('}', f);
}

static void
print_json(Row *rows, size_t n, Row **order, size_t top, const char *fm, const char *qm,
           int samples)
{
    FILE *f = stdout;
    int first = 1;
    fputc('{', f);
    json_key(f, &first, "float_model");
    json_string(f, fm);
    json_key(f, &first, "qdq_model");
    json_string(f, qm);
    json_key(f, &first, "samples");
    json_number(f, samples);
    json_key(f, &first, "tensors");
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        Row *r = &rows[i];
        int fs = 1;
        fputs(i ? ",{" : "{", f);
        json_key(f, &fs, "index");
        json_number(f, (double)i);
        json_key(f, &fs, "quantize_node");
        json_string(f, r->q.node);
        json_key(f, &fs, "qdq_input");
        json_string(f, r->q.input);
        json_key(f, &fs, "qdq_output");
        json_string(f, r->q.output);
        json_key(f, &fs, "float_tensor");
        if (r->float_tensor)
            json_string(f, r->float_tensor);
        else
            fputs("null", f);
        json_key(f, &fs, "storage");
        json_string(f, r->q.storage);
        json_key(f, &fs, "scale");
        json_number(f, r->q.scale);
        json_key(f, &fs, "zero_point");
        json_number(f, r->q.zero_point);
        json_key(f, &fs, "compiled");
        fputs(r->compiled ? "true" : "false", f);
        json_key(f, &fs, "float_in_compiled");
        fputs(r->float_in_compiled ? "true" : "false", f);
        json_stats(f, &fs, "float_to_qdq", &r->float_to_qdq, r->has_float_to_qdq);
        json_stats(f, &fs, "qdq_to_compiled", &r->qdq_to_compiled, r->has_qdq_to_compiled);
        double lo = (r->q.qmin - r->q.zero_point) * r->q.scale;
        double hi = (r->q.qmax - r->q.zero_point) * r->q.scale;
        json_key(f, &fs, "covered");
        fputc('[', f);
        json_number(f, lo);
        fputc(',', f);
        json_number(f, hi);
        fputc(']', f);
        json_key(f, &fs, "observed");
        fputc('[', f);
        json_number(f, r->observed_min);
        fputc(',', f);
        json_number(f, r->observed_max);
        fputc(']', f);
        double den = r->count ? (double)r->count : 1;
        json_key(f, &fs, "clipped_share");
        json_number(f, (double)(r->clipped_below + r->clipped_above) / den);
        json_key(f, &fs, "clipped_below");
        json_number(f, (double)r->clipped_below / den);
        json_key(f, &fs, "clipped_above");
        json_number(f, (double)r->clipped_above / den);
        fputc('}', f);
    }
    fputc(']', f);
    json_key(f, &first, "worst");
    fputc('[', f);
    for (size_t i = 0; i < top; i++) {
        if (i)
            fputc(',', f);
        json_number(f, (double)(order[i] - rows));
    }
    fputs("]}\n", f);
}

/* ---- SVG plot ---- */

static void
svg_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else
            fputc(*s, f);
    }
}

/* SQNR per layer: float -> QDQ (blue circles) and QDQ -> compiled (orange squares); exact
 * agreement (infinite SQNR) drawn as a hollow mark on the top line; a layer that runs in
 * float after the passes has a grey band. One mark per layer and series (class "mark"). */
static bool
write_svg(const char *path, Row *rows, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return false;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        const qdqc_error_stats *s[2] = {rows[i].has_float_to_qdq ? &rows[i].float_to_qdq : NULL,
                                        rows[i].has_qdq_to_compiled ? &rows[i].qdq_to_compiled : NULL};
        for (int k = 0; k < 2; k++)
            if (s[k] && isfinite(s[k]->sqnr_db)) {
                lo = fmin(lo, s[k]->sqnr_db);
                hi = fmax(hi, s[k]->sqnr_db);
            }
    }
    if (!isfinite(lo)) {
        lo = 0;
        hi = 50;
    }
    lo = floor(lo / 10) * 10;
    hi = ceil(hi / 10) * 10 + 10; /* the top line: exact */
    if (hi - lo < 20)
        hi = lo + 20;
    const double W = 900, H = 480, L = 70, R = 190, T = 40, B = 150;
    double pw = W - L - R, ph = H - T - B;
    double dx = n ? pw / (double)n : pw;
#define XOF(i) (L + dx * ((double)(i) + 0.5))
#define YOF(v) (T + ph * (1.0 - ((v) - lo) / (hi - lo)))
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"11\">\n",
            W, H, W, H);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", W, H);
    fprintf(f, "<text x=\"%.1f\" y=\"22\" font-size=\"14\" text-anchor=\"middle\">SQNR per "
               "layer: where the accuracy goes</text>\n", L + pw / 2);
    for (size_t i = 0; i < n; i++)
        if (rows[i].float_in_compiled)
            fprintf(f, "<rect class=\"float-layer\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                       "height=\"%.1f\" fill=\"#dddddd\"/>\n",
                    L + dx * (double)i, T, dx, ph);
    /* grid and y ticks */
    double step = (hi - lo) > 100 ? 20 : 10;
    for (double v = lo; v <= hi + 1e-9; v += step) {
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eeeeee\"/>\n",
                L, YOF(v), L + pw, YOF(v));
        if (v >= hi - 1e-9)
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">exact</text>\n", L - 6,
                    YOF(v) + 4);
        else
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.0f</text>\n", L - 6,
                    YOF(v) + 4, v);
    }
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", L,
            T + ph, L + pw, T + ph);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", L, T,
            L, T + ph);
    fprintf(f, "<text x=\"18\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 18 "
               "%.1f)\">SQNR (dB), higher is better</text>\n",
            T + ph / 2, T + ph / 2);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">layer (quantized tensor, "
               "graph order)</text>\n", L + pw / 2, H - 8);
    /* x labels */
    for (size_t i = 0; i < n; i++) {
        /* the distinctive end of a long ONNX name */
        char name[40];
        const char *nm = short_name(&rows[i]);
        size_t ln = strlen(nm);
        if (ln > 22)
            snprintf(name, sizeof name, "\xe2\x80\xa6%s", nm + ln - 21);
        else
            snprintf(name, sizeof name, "%s", nm);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"9\" "
                   "transform=\"rotate(-60 %.1f %.1f)\">", XOF(i) + 3, T + ph + 12, XOF(i) + 3,
                T + ph + 12);
        svg_text(f, name);
        fputs("</text>\n", f);
    }
    /* series: lines then marks */
    static const char *const color[2] = {"#1f77b4", "#ff7f0e"};
    static const char *const cls[2] = {"float-qdq", "qdq-compiled"};
    for (int k = 0; k < 2; k++) {
        /* the line breaks where a layer has no value (no float tensor, fused away) */
        fprintf(f, "<path class=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" d=\"",
                cls[k], color[k]);
        bool pen = false;
        for (size_t i = 0; i < n; i++) {
            const qdqc_error_stats *s = k ? (rows[i].has_qdq_to_compiled ? &rows[i].qdq_to_compiled : NULL)
                                          : (rows[i].has_float_to_qdq ? &rows[i].float_to_qdq : NULL);
            if (s)
                fprintf(f, "%s%.1f,%.1f ", pen ? "L" : "M", XOF(i),
                        YOF(isfinite(s->sqnr_db) ? fmax(lo, s->sqnr_db) : s->sqnr_db > 0 ? hi : lo));
            pen = s != NULL;
        }
        fputs("\"/>\n", f);
        for (size_t i = 0; i < n; i++) {
            const qdqc_error_stats *s = k ? (rows[i].has_qdq_to_compiled ? &rows[i].qdq_to_compiled : NULL)
                                          : (rows[i].has_float_to_qdq ? &rows[i].float_to_qdq : NULL);
            if (!s)
                continue;
            double v = s->sqnr_db;
            bool exact = isinf(v) && v > 0;
            double y = YOF(exact ? hi : isfinite(v) ? fmax(lo, v) : lo);
            const char *fill = exact ? "white" : color[k];
            if (k == 0)
                fprintf(f, "<circle class=\"mark %s\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" "
                           "fill=\"%s\" stroke=\"%s\">", cls[k], XOF(i), y, fill, color[k]);
            else
                fprintf(f, "<rect class=\"mark %s\" x=\"%.1f\" y=\"%.1f\" width=\"7\" "
                           "height=\"7\" fill=\"%s\" stroke=\"%s\">", cls[k], XOF(i) - 3.5,
                        y - 3.5, fill, color[k]);
            fputs("<title>", f);
            svg_text(f, short_name(&rows[i]));
            char db[16];
            fmt_db(db, sizeof db, v);
            fprintf(f, ": %s dB</title></%s>\n", db, k == 0 ? "circle" : "rect");
        }
    }
    /* legend */
    double lx = L + pw + 16, ly = T + 10;
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>\n", lx, ly, color[0]);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">float \xe2\x86\x92 QDQ (quantizer)</text>\n", lx + 10,
            ly + 4);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\" fill=\"%s\"/>\n", lx - 3.5,
            ly + 20 - 3.5, color[1]);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">QDQ \xe2\x86\x92 compiled (qdqc)</text>\n", lx + 10,
            ly + 24);
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"white\" stroke=\"black\"/>\n", lx,
            ly + 40);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">exact (no error)</text>\n", lx + 10, ly + 44);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"#dddddd\"/>\n",
            lx - 5, ly + 55);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">runs in float</text>\n", lx + 10, ly + 64);
    fputs("</svg>\n", f);
#undef XOF
#undef YOF
    if (fclose(f) != 0) {
        free(buf);
        return false;
    }
    char err[512];
    bool ok = write_file_atomic(path, buf, len, err, sizeof err);
    if (!ok)
        fprintf(stderr, "qdqc: error: %s\n", err);
    free(buf);
    return ok;
}

/* ---- the command ---- */

typedef struct CmpOpts {
    const char *fmodel, *qmodel;
    const char **inputs;
    int ninputs;
    int samples;
    bool json, qparams;
    const char *plot, *keep_float, *map, *samples_dir;
    int top;
} CmpOpts;

static const char *
arg_value(int argc, char **argv, int *i, const char *name, bool *matched)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    *matched = false;
    if (strncmp(a, name, n) != 0)
        return NULL;
    if (a[n] == '=') {
        *matched = true;
        return a + n + 1;
    }
    if (a[n] == 0) {
        *matched = true;
        return *i + 1 < argc ? argv[++*i] : NULL;
    }
    return NULL;
}

static int
parse_args(qdqc_context *ctx, qdqc_compile_options *copts, int argc, char **argv, CmpOpts *o)
{
    o->samples = 0;
    o->top = 5;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        bool m;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(compare_usage, stdout);
            return -1;
        } else if ((v = arg_value(argc, argv, &i, "--input", &m)) || m) {
            if (!v)
                return usage("--input needs NAME=FILE.npy", "");
            o->inputs[o->ninputs++] = v;
        } else if ((v = arg_value(argc, argv, &i, "--random-inputs", &m)) || m) {
            char *e;
            long k = v ? strtol(v, &e, 10) : 0;
            if (!v || *e || k < 1 || k > 100000)
                return usage("--random-inputs needs a positive number of samples", "");
            o->samples = (int)k;
        } else if ((v = arg_value(argc, argv, &i, "--samples", &m)) || m) {
            if (!v || !*v)
                return usage("--samples needs a directory", "");
            o->samples_dir = v;
        } else if ((v = arg_value(argc, argv, &i, "--top", &m)) || m) {
            char *e;
            long k = v ? strtol(v, &e, 10) : 0;
            if (!v || *e || k < 0)
                return usage("--top needs a non-negative integer", "");
            o->top = (int)k;
        } else if (!strcmp(a, "--json")) {
            o->json = true;
        } else if (!strcmp(a, "--qparams")) {
            o->qparams = true;
        } else if ((v = arg_value(argc, argv, &i, "--plot", &m)) || m) {
            if (!v || !*v)
                return usage("--plot needs a file name", "");
            o->plot = v;
        } else if ((v = arg_value(argc, argv, &i, "--keep-float", &m)) || m) {
            if (!v || !*v)
                return usage("--keep-float needs node names (A,B,...)", "");
            o->keep_float = v;
        } else if ((v = arg_value(argc, argv, &i, "--map", &m)) || m) {
            if (!v)
                return usage("--map needs a file name", "");
            o->map = v;
        } else if ((v = arg_value(argc, argv, &i, "--requant", &m)) || m) {
            if (!v || (strcmp(v, "float") && strcmp(v, "fixed")))
                return usage("--requant must be 'float' or 'fixed'", "");
            qdqc_context_set_option(ctx, "requant", v);
        } else if (((v = arg_value(argc, argv, &i, "--isa", &m)) || m) ||
                   ((v = arg_value(argc, argv, &i, "--mattr", &m)) || m) ||
                   ((v = arg_value(argc, argv, &i, "--mcpu", &m)) || m)) {
            const char *nm = !strncmp(a, "--isa", 5) ? "isa" : !strncmp(a, "--mattr", 7) ? "mattr"
                                                                                        : "mcpu";
            if (!v || qdqc_compile_options_set(copts, nm, v) != QDQC_OK)
                return usage("bad value of '%s'", a);
        } else if (a[0] == '-' && a[1]) {
            return usage("unknown option '%s' of 'qdqc compare'", a);
        } else if (!o->fmodel) {
            o->fmodel = a;
        } else if (!o->qmodel) {
            o->qmodel = a;
        } else {
            return usage("more than two models ('%s')", a);
        }
    }
    if (!o->fmodel || !o->qmodel)
        return usage("compare needs FLOAT.onnx and QDQ.onnx%s", "");
    return RC_OK;
}

/* The .npy file of input `name` in sample `sp` (--samples): sp itself when it is a file, else
 * sp/NAME.npy, or for a one-input model the directory's only .npy file. NULL if none. */
static char *
sample_file(const char *sp, const char *name, size_t nin)
{
    struct stat st;
    if (stat(sp, &st) != 0)
        return NULL;
    if (!S_ISDIR(st.st_mode))
        return strdup(sp);
    size_t len = strlen(sp) + strlen(name) + 6;
    char *p = malloc(len);
    if (!p)
        return NULL;
    snprintf(p, len, "%s/%s.npy", sp, name);
    if (stat(p, &st) == 0 || nin != 1)
        return p;
    free(p);
    DIR *d = opendir(sp);
    char *found = NULL;
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t k = strlen(e->d_name);
        if (k > 4 && !strcmp(e->d_name + k - 4, ".npy") && n++ == 0) {
            found = malloc(strlen(sp) + k + 2);
            if (found)
                sprintf(found, "%s/%s", sp, e->d_name);
        }
    }
    if (d)
        closedir(d);
    if (n != 1) {
        free(found);
        return NULL;
    }
    return found;
}

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The samples of --samples DIR, sorted by name: its subdirectories, else (a one-input model)
 * its .npy files, else DIR itself. NULL and *n = 0 on error (printed). */
static char **
list_samples(const char *dir, size_t nin, size_t *n)
{
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "qdqc: error: --samples %s: %s\n", dir, strerror(errno));
        return NULL;
    }
    size_t cap = 16, nd = 0, nf = 0;
    char **dirs = malloc(cap * sizeof(char *)), **files = malloc(cap * sizeof(char *));
    bool ok = dirs && files;
    for (struct dirent *e; ok && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        size_t k = strlen(e->d_name);
        char *p = malloc(strlen(dir) + k + 2);
        if (!p) {
            ok = false;
            break;
        }
        sprintf(p, "%s/%s", dir, e->d_name);
        struct stat st;
        bool isdir = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
        bool isnpy = !isdir && k > 4 && !strcmp(e->d_name + k - 4, ".npy");
        if ((isdir && nd == cap) || (isnpy && nf == cap)) {
            cap *= 2;
            char **a = realloc(dirs, cap * sizeof(char *)), **b = a ? realloc(files, cap * sizeof(char *)) : NULL;
            if (a)
                dirs = a;
            if (b)
                files = b;
            ok = a && b;
        }
        if (ok && isdir)
            dirs[nd++] = p;
        else if (ok && isnpy)
            files[nf++] = p;
        else
            free(p);
    }
    closedir(d);
    char **out = NULL;
    if (ok && nd) {
        out = dirs;
        *n = nd;
        for (size_t i = 0; i < nf; i++)
            free(files[i]);
        free(files);
    } else if (ok && nin == 1 && nf) {
        out = files;
        *n = nf;
        free(dirs);
    } else {
        for (size_t i = 0; i < nd; i++)
            free(dirs[i]);
        for (size_t i = 0; i < nf; i++)
            free(files[i]);
        free(files);
        out = ok ? dirs : NULL;
        if (out) {
            out[0] = strdup(dir);
            *n = out[0] ? 1 : 0;
        } else {
            free(dirs);
        }
    }
    if (out)
        qsort(out, *n, sizeof *out, cmp_str);
    else
        fprintf(stderr, "qdqc: error: out of memory\n");
    return out;
}

/* One sample of the QDQ model's inputs: --input arrays by name, else the sample's file (`sp`,
 * from --samples; NULL if none), else random floats of `seed`. bufs[i] has room for input i. */
static int
set_inputs(qdqc_context *ctx, const qdqc_module *m, void **bufs, const CmpOpts *o,
           const char *sp, uint64_t seed)
{
    size_t nin = qdqc_module_input_count(m);
    for (int k = 0; k < o->ninputs; k++) {
        const char *eq = strchr(o->inputs[k], '=');
        bool known = !eq && nin == 1;
        for (size_t i = 0; eq && i < nin && !known; i++) {
            const char *name = qdqc_module_input_name(m, i);
            known = (size_t)(eq - o->inputs[k]) == strlen(name) &&
                    !strncmp(o->inputs[k], name, strlen(name));
        }
        if (!known)
            return fail("--input %s: %s", o->inputs[k],
                        eq ? "the QDQ model has no input of that name"
                           : "give NAME=FILE.npy for a model with several inputs");
    }
    for (size_t i = 0; i < nin; i++) {
        const char *name = qdqc_module_input_name(m, i);
        const char *et = qdqc_module_input_elem_type(m, i);
        size_t n = cli_numel(qdqc_module_input_rank(m, i), qdqc_module_input_dims(m, i));
        const char *file = NULL;
        for (int k = 0; k < o->ninputs; k++) {
            const char *eq = strchr(o->inputs[k], '=');
            if (eq && (size_t)(eq - o->inputs[k]) == strlen(name) &&
                !strncmp(o->inputs[k], name, strlen(name)))
                file = eq + 1;
            else if (!eq && nin == 1)
                file = o->inputs[k];
        }
        char *sf = !file && sp ? sample_file(sp, name, nin) : NULL;
        if (!file && sp && !sf)
            return fail("--samples: %s has no file for input '%s'", sp, name);
        if (sf)
            file = sf;
        if (file) {
            qdqc_array a;
            if (qdqc_npy_read(ctx, file, &a) != QDQC_OK) {
                free(sf);
                return RC_INPUT;
            }
            if (strcmp(a.elem_type, et) || cli_numel(a.rank, a.dims) != n) {
                qdqc_array_free(&a);
                int rc = fail("input '%s': %s does not match the model's input (type, size)",
                              name, file);
                free(sf);
                return rc;
            }
            memcpy(bufs[i], a.data, a.nbytes);
            qdqc_array_free(&a);
            free(sf);
        } else if (!strcmp(et, "f32")) {
            cli_fill_random(bufs[i], n, "f32", seed, i);
        } else {
            return fail("input '%s' (%s) needs --input %s=FILE.npy", name, et);
        }
    }
    return RC_OK;
}

int
qdqc_cli_compare(qdqc_context *ctx, qdqc_compile_options *copts, int argc, char **argv)
{
    CmpOpts o = {0};
    o.inputs = calloc((size_t)argc + 1, sizeof(char *));
    if (!o.inputs)
        return fail("out of memory%s%s", "", "");
    int rc = parse_args(ctx, copts, argc, argv, &o);
    if (rc) {
        free(o.inputs);
        return rc < 0 ? RC_OK : rc;
    }
    qdqc_compare *cmp = NULL;
    char *map = NULL;
    void **in = NULL;
    size_t nin = 0, nq = 0;
    Row *rows = NULL, **order = NULL;
    int samples = o.samples ? o.samples : 1;
    char **sdirs = NULL;
    size_t nsdirs = 0;
    rc = RC_INPUT;
    if (o.map && !(map = read_text(o.map))) {
        fail("cannot read map file '%s'%s", o.map, "");
        goto done;
    }
    if (o.keep_float && qdqc_context_set_option(ctx, "keep-float", o.keep_float) != QDQC_OK)
        goto done;
    if (qdqc_compare_create(ctx, o.fmodel, o.qmodel, copts, map, &cmp) != QDQC_OK)
        goto done;
    const qdqc_module *qm = qdqc_compare_get_qdq_module(cmp);
    nin = qdqc_module_input_count(qm);
    in = calloc(nin + 1, sizeof(void *));
    if (!in)
        goto done;
    for (size_t i = 0; i < nin; i++) {
        in[i] = calloc(cli_numel(qdqc_module_input_rank(qm, i), qdqc_module_input_dims(qm, i)) + 1,
                       qdqc_elem_type_size(qdqc_module_input_elem_type(qm, i)));
        if (!in[i])
            goto done;
    }
    if (o.samples_dir) {
        if (!(sdirs = list_samples(o.samples_dir, nin, &nsdirs)))
            goto done;
        samples = (int)nsdirs;
    }
    for (int s = 0; s < samples; s++) {
        if ((rc = set_inputs(ctx, qm, in, &o, sdirs ? sdirs[s] : NULL, (uint64_t)s + 1)) !=
            RC_OK)
            goto done;
        rc = RC_INPUT;
        if (qdqc_compare_run(cmp, (const void *const *)in) != QDQC_OK)
            goto done;
    }
    nq = qdqc_compare_row_count(cmp);
    rows = calloc(nq + 1, sizeof(Row));
    order = calloc(nq + 1, sizeof(Row *));
    if (!rows || !order)
        goto done;
    for (size_t i = 0; i < nq; i++) {
        qdqc_compare_row_get(cmp, i, &rows[i]);
        order[i] = &rows[i];
    }
    qsort(order, nq, sizeof *order, cmp_fq);
    size_t top = (size_t)o.top < nq ? (size_t)o.top : nq;
    while (top && !order[top - 1]->has_float_to_qdq)
        top--;
    if (o.json) {
        print_json(rows, nq, order, top, o.fmodel, o.qmodel, samples);
    } else {
        size_t nf = 0, nfused = 0, nbad = 0;
        for (size_t i = 0; i < nq; i++) {
            nf += rows[i].float_tensor != NULL;
            nfused += !rows[i].compiled;
            nbad += rows[i].has_qdq_to_compiled && rows[i].qdq_to_compiled.max_steps > 1;
        }
        printf("float %s, QDQ %s (as written), compiled (default pipeline%s%s); %d sample%s\n",
               o.fmodel, o.qmodel, o.keep_float ? ", float: " : "",
               o.keep_float ? o.keep_float : "", samples, samples == 1 ? "" : "s");
        printf("%zu quantized tensors, %zu matched to the float model, %zu fused away by the "
               "passes\n\n", nq, nf, nfused);
        print_table(rows, nq);
        if (o.qparams)
            print_qparams(rows, nq);
        printf("\nworst float -> QDQ (lowest SQNR first):\n");
        for (size_t i = 0; i < top; i++) {
            char db[16];
            fmt_db(db, sizeof db, order[i]->float_to_qdq.sqnr_db);
            const Row *r = order[i];
            double den = r->count ? (double)r->count / 100.0 : 1;
            printf("  %-3zu %8s dB  max %8.2f steps  clipped %6.2f%% low %6.2f%% high  %s\n",
                   (size_t)(r - rows), db, r->float_to_qdq.max_steps, (double)r->clipped_below / den,
                   (double)r->clipped_above / den, short_name(r));
        }
        /* where the error grows: the largest fall of SQNR from one compared tensor to the
         * next in graph order (on a chain, a layer's own contribution) */
        size_t at = nq, prev = nq, from = nq;
        double drop = 0;
        for (size_t i = 0; i < nq; i++) {
            if (!rows[i].has_float_to_qdq)
                continue;
            double a = prev < nq ? rows[prev].float_to_qdq.sqnr_db : NAN, b = rows[i].float_to_qdq.sqnr_db;
            if (isfinite(b) && isfinite(a)) { /* from an exact tensor every fall is infinite */
                double d = a - b;
                if (d > drop) {
                    drop = d;
                    at = i;
                    from = prev;
                }
            }
            prev = i;
        }
        if (at < nq) {
            char a[16], b[16];
            fmt_db(a, sizeof a, rows[from].float_to_qdq.sqnr_db);
            fmt_db(b, sizeof b, rows[at].float_to_qdq.sqnr_db);
            printf("largest fall along the graph: %s -> %s dB at %zu %s (after %zu %s)\n", a, b,
                   at, short_name(&rows[at]), from, short_name(&rows[from]));
        }
        if (nbad)
            printf("QDQ -> compiled: %zu tensor%s beyond 1 step\n", nbad, nbad == 1 ? "" : "s");
        else
            printf("QDQ -> compiled: every compared tensor within 1 step\n");
    }
    if (o.plot && !write_svg(o.plot, rows, nq))
        goto done;
    rc = RC_OK;
done:
    free(order);
    free(rows);
    for (size_t i = 0; in && i < nin; i++)
        free(in[i]);
    free(in);
    free(map);
    for (size_t i = 0; i < nsdirs; i++)
        free(sdirs[i]);
    free(sdirs);
    qdqc_compare_destroy(cmp);
    free(o.inputs);
    return rc;
}
