/* gen.c: the random QDQ graph generator of qdqc-fuzz.
 *
 * A graph is a sequence of op slots. Each slot has its own random stream (seeded from the graph
 * seed and the slot index), picks an op kind and its inputs from the pool of quantized tensors
 * made so far (graph inputs and the quantize results of earlier slots), and writes the literal
 * QDQ form of that op in text IR: dequantize the inputs, the float op (with its weights as
 * int8 constants behind a dequantize, ORT style, or as f32 constants behind quantize ->
 * dequantize, PyTorch/TensorRT style), optional fused activation, quantize. Slots can be switched
 * off and the dimensions capped without changing the other slots' choices much: that is what
 * the shrinker does (fuzz.c).
 *
 * Every graph is valid by construction (shapes computed here, attributes inside ONNX's rules);
 * a graph the parser or verifier refuses is a generator bug and reported as such.
 *
 * Symbolic dimensions (sym_choose): some of the first input's dimensions can be written as
 * symbols. Each pool entry records what its dimensions are in terms of them (SymDim); the op
 * kinds whose IR ops type symbols carry them, any other use keeps the graph static. The graph
 * is generated twice, with sizes and then with the symbols printed, from the same random
 * stream, so the two texts are one graph (fuzz.c checks that binding makes them equal). */
#include "fuzz.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- random numbers (splitmix64) ---- */

uint64_t
fz_next(Rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int
fz_int(Rng *r, int lo, int hi) /* inclusive */
{
    if (hi <= lo)
        return lo;
    return lo + (int)(fz_next(r) % (uint64_t)(hi - lo + 1));
}

double
fz_unif(Rng *r)
{
    return (double)(fz_next(r) >> 11) / 9007199254740992.0;
}

static bool
chance(Rng *r, double p)
{
    return fz_unif(r) < p;
}

/* ---- string builder ---- */

void
sb_printf(Sb *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        size_t room = b->cap - b->len;
        va_start(ap, fmt);
        int n = b->cap ? vsnprintf(b->p + b->len, room, fmt, ap) : -1;
        va_end(ap);
        if (n >= 0 && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t need = b->len + (n > 0 ? (size_t)n : 0) + 1;
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < need)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            fprintf(stderr, "qdqc-fuzz: out of memory\n");
            exit(3);
        }
        b->p = p;
        b->cap = cap;
    }
}

void
sb_free(Sb *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ---- the generator ---- */

/* What a dimension is in the symbolic form: c times the product of the symbols in mask m
 * (bit j: symbol j, ?b or ?s), plus k; m == 0: its size. The size (QT.d) is its value bound. */
typedef struct SymDim {
    int32_t m, k;
} SymDim;

typedef struct QT {
    int id;          /* value %vID */
    int rank;
    int64_t d[4];
    bool u8;
    bool w16;        /* 16-bit storage (u16 / i16; --a16) */
    float s;
    int zp, qmin, qmax;
    int depth;       /* rounding ops on the longest path from an input */
    int out;         /* index in the graph outputs, -1 if not an output */
    int slot;        /* producing slot, -1 for graph inputs */
    int deps[4];     /* pool indices of the inputs of the producing slot (-1: none) */
    SymDim sym[4];   /* the dimensions in the symbolic form */
} QT;

#define MAXPOOL 96
#define MAXIN 16

typedef struct Gen {
    const GenSpec *sp;
    Rng r;
    Sb sig, body;
    QT pool[MAXPOOL];
    int npool;
    bool consumed[MAXPOOL];
    int nval;
    int nin;
    GenGraph *gg;
    int cur_deps[4];
    int ncur_deps;
    /* Symbolic dimensions: the first graph input's dims listed in sym0 are symbols, bound
     * to the sizes drawn for them (symsize). The op kinds whose IR ops type symbols (OPF_SYMDIM
     * in lib/ir/ops.def) carry them to their results (ysym: the current op's result); any other
     * use of a symbolic value sets sym_fail and the graph stays static. Tracking draws no
     * random numbers, so the graph is the same whether or not it prints the symbols. */
    int nsym;
    int64_t symsize[2];
    SymDim sym0[4];
    bool print_sym; /* write symbols (the second pass) instead of sizes */
    bool sym_aware; /* the current slot's op kind carries symbols */
    bool sym_fail;
    SymDim ysym[4];
} Gen;

static const char *const sym_name[2] = {"b", "s"};

static int
newval(Gen *g)
{
    return ++g->nval;
}

static void
dims_str(char *buf, size_t n, int rank, const int64_t *d)
{
    size_t k = 0;
    k += (size_t)snprintf(buf + k, n - k, "[");
    for (int i = 0; i < rank; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ",%lld" : "%lld", (long long)d[i]);
    snprintf(buf + k, n - k, "]");
}

static bool
any_sym(const SymDim *sym, int rank)
{
    for (int k = 0; sym && k < rank; k++)
        if (sym[k].m)
            return true;
    return false;
}

static bool
same_dim(SymDim a, SymDim b)
{
    return a.m == b.m && (!a.m || a.k == b.k);
}

/* One dimension as the text IR writes it: its size, or (printing symbols) the symbol or the
 * expression c*b*s + k it is. */
static void
dim_str(const Gen *g, char *buf, size_t n, int64_t d, SymDim sd)
{
    int m = sd.m;
    if (!g->print_sym || !m) {
        snprintf(buf, n, "%lld", (long long)d);
        return;
    }
    int64_t prod = 1;
    int nf = 0;
    for (int j = 0; j < 2; j++)
        if ((m >> j) & 1) {
            prod *= g->symsize[j];
            nf++;
        }
    long long c = (long long)((d - sd.k) / prod);
    if (c == 1 && nf == 1 && !sd.k) {
        snprintf(buf, n, "?%s", sym_name[(m & 1) ? 0 : 1]);
        return;
    }
    size_t k = (size_t)snprintf(buf, n, "?(");
    const char *sep = "";
    if (c != 1) {
        k += (size_t)snprintf(buf + k, n - k, "%lld", c);
        sep = "*";
    }
    for (int j = 0; j < 2 && k < n; j++)
        if ((m >> j) & 1) {
            k += (size_t)snprintf(buf + k, n - k, "%s%s", sep, sym_name[j]);
            sep = "*";
        }
    if (sd.k && k < n)
        k += (size_t)snprintf(buf + k, n - k, " %c %d", sd.k < 0 ? '-' : '+', abs(sd.k));
    if (k < n)
        snprintf(buf + k, n - k, ")");
}

/* A shape with its symbols (sym NULL: static); `sep` between dimensions: "," in a type,
 * ", " in an attribute. */
static void
sdims_str(const Gen *g, char *buf, size_t n, int rank, const int64_t *d, const SymDim *sym,
          const char *sep)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < rank && k < n; i++) {
        char one[40];
        dim_str(g, one, sizeof one, d[i], sym ? sym[i] : (SymDim){0, 0});
        k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? sep : "", one);
    }
    if (k < n)
        snprintf(buf + k, n - k, "]");
}

/* A dimension that is the product of dims [k0, k1) of t: the union of their symbols, or a
 * failure (sym_fail) when a symbol would appear twice or a sum would be multiplied. */
static SymDim
sym_prod(Gen *g, const QT *t, int k0, int k1)
{
    if (k1 - k0 == 1)
        return t->sym[k0];
    SymDim r = {0, 0};
    for (int k = k0; k < k1; k++) {
        if ((r.m & t->sym[k].m) || (t->sym[k].m && t->sym[k].k))
            g->sym_fail = true;
        r.m |= t->sym[k].m;
    }
    return r;
}

/* Storage range and name of (u8, w16): u8, i8, u16, i16. */
static int
st_lo(bool u8, bool w16)
{
    return u8 ? 0 : w16 ? -32768 : -128;
}

static int
st_hi(bool u8, bool w16)
{
    return u8 ? (w16 ? 65535 : 255) : (w16 ? 32767 : 127);
}

static const char *
st_name(bool u8, bool w16)
{
    return w16 ? (u8 ? "u16" : "i16") : (u8 ? "u8" : "i8");
}

static void
qp_str(char *buf, size_t n, bool u8, bool w16, float s, int zp, int qmin, int qmax)
{
    int lo = st_lo(u8, w16), hi = st_hi(u8, w16);
    if (qmin != lo || qmax != hi)
        snprintf(buf, n, "{scale=%.9g, zp=%d, range=[%d, %d]}", (double)s, zp, qmin, qmax);
    else
        snprintf(buf, n, "{scale=%.9g, zp=%d}", (double)s, zp);
}

static void
qtype_str(const Gen *g, char *buf, size_t n, const QT *t)
{
    char d[96], q[128];
    sdims_str(g, d, sizeof d, t->rank, t->d, t->sym, ",");
    qp_str(q, sizeof q, t->u8, t->w16, t->s, t->zp, t->qmin, t->qmax);
    snprintf(buf, n, "%s%s%s", st_name(t->u8, t->w16), d, q);
}

static int64_t
numel(int rank, const int64_t *d)
{
    int64_t k = 1;
    for (int i = 0; i < rank; i++)
        k *= d[i];
    return k;
}

/* A random scale: log-uniform in [2^lo, 2^hi), sometimes a power of two (ties are common
 * then), otherwise rounded to 12 significant bits like real exporters' scales. */
static float
rand_scale(Rng *r, double lo, double hi)
{
    double e = lo + (hi - lo) * fz_unif(r);
    double s = exp2(e);
    if (chance(r, 0.2))
        return (float)exp2(floor(e));
    int ex;
    double fr = frexp(s, &ex);
    fr = round(fr * 4096.0) / 4096.0;
    return (float)ldexp(fr, ex);
}

/* Quantization parameters covering roughly [lo, hi] (real values). relu_q: zero point at the
 * bottom of the range (ORT's folded Relu). */
static void
choose_qp(Gen *g, double lo, double hi, bool u8, bool relu_q, QT *t)
{
    Rng *r = &g->r;
    t->u8 = u8;
    /* --a16: half of the quantized values are 16-bit (drawn only then: the graphs of a seed
     * without the flag stay those of earlier versions) */
    t->w16 = g->sp->a16 && chance(r, 0.5);
    t->qmin = st_lo(u8, t->w16);
    t->qmax = st_hi(u8, t->w16);
    if (chance(r, 0.05)) { /* narrow range */
        t->qmin += 1;
    }
    if (!(hi > lo))
        hi = lo + 1.0;
    if (relu_q)
        lo = 0;
    if (lo > 0)
        lo = 0;
    if (hi < 0)
        hi = 0;
    double span = (hi - lo) * (0.6 + 0.9 * fz_unif(r));
    if (span < 1e-6)
        span = 1e-6;
    double s = span / (double)(t->qmax - t->qmin);
    int ex;
    double fr = frexp(s, &ex);
    if (chance(r, 0.2))
        fr = 0.5; /* power of two */
    else
        fr = round(fr * 4096.0) / 4096.0;
    t->s = (float)ldexp(fr, ex);
    if (relu_q) {
        t->zp = t->qmin;
    } else if (!u8 && chance(r, 0.4)) {
        t->zp = 0; /* symmetric */
    } else {
        double z = (double)t->qmin - lo / (double)t->s;
        int zi = (int)lround(z) + fz_int(r, -3, 3);
        t->zp = zi < t->qmin ? t->qmin : zi > t->qmax ? t->qmax : zi;
    }
}

static double
qt_lo(const QT *t)
{
    return (double)(t->qmin - t->zp) * t->s;
}

static double
qt_hi(const QT *t)
{
    return (double)(t->qmax - t->zp) * t->s;
}

static double
qt_mag(const QT *t)
{
    double a = fabs(qt_lo(t)), b = fabs(qt_hi(t));
    return a > b ? a : b;
}

static int
cap(int v, int c)
{
    return v > c ? c : v < 1 ? 1 : v;
}

/* ---- emission ---- */

static void
dep(Gen *g, int pool_index)
{
    if (g->ncur_deps < 4)
        g->cur_deps[g->ncur_deps++] = pool_index;
    g->consumed[pool_index] = true;
}

/* dequantize pool entry i; returns the f32 value id */
static int
emit_dq(Gen *g, int i)
{
    const QT *t = &g->pool[i];
    char d[96], q[128];
    sdims_str(g, d, sizeof d, t->rank, t->d, t->sym, ",");
    if (!g->sym_aware && any_sym(t->sym, t->rank))
        g->sym_fail = true; /* an op kind that does not type symbols */
    int v = newval(g);
    sb_printf(&g->body, "  %%v%d = dequantize %%v%d, scale=%.9g, zp=%d", v, t->id, (double)t->s,
              t->zp);
    int lo = st_lo(t->u8, t->w16), hi = st_hi(t->u8, t->w16);
    if (t->qmin != lo || t->qmax != hi)
        sb_printf(&g->body, ", range=[%d, %d]", t->qmin, t->qmax);
    (void)q;
    sb_printf(&g->body, " : f32%s\n", d);
    dep(g, i);
    return v;
}

/* A new graph input; float (quantized by a quantize node) or integer, with the symbolic
 * dimensions sym (NULL: none). Returns the pool index. */
static int new_input_qp(Gen *g, int rank, const int64_t *d, bool u8, const QT *qp,
                        const SymDim *sym);

static int
new_input(Gen *g, int rank, const int64_t *d, bool u8)
{
    return new_input_qp(g, rank, d, u8, NULL, NULL);
}

static int
new_input_qp(Gen *g, int rank, const int64_t *d, bool u8, const QT *qp, const SymDim *sym)
{
    if (g->npool >= MAXPOOL - 1 || g->nin >= MAXIN)
        return -1;
    Rng *r = &g->r;
    QT t;
    memset(&t, 0, sizeof t);
    t.rank = rank;
    memcpy(t.d, d, sizeof t.d);
    t.slot = -1;
    t.out = -1;
    for (int k = 0; k < 4; k++)
        t.deps[k] = -1;
    if (sym)
        memcpy(t.sym, sym, sizeof t.sym);
    char ds[96], ty[256];
    sdims_str(g, ds, sizeof ds, rank, d, t.sym, ",");
    int in = g->nin++;
    if (chance(r, 0.35)) {
        /* float input [-4, 4) (fuzz.c fills it), quantize node */
        choose_qp(g, -4.0, 4.0, u8, false, &t);
        if (qp) {
            t.u8 = qp->u8;
            t.w16 = qp->w16;
            t.s = qp->s;
            t.zp = qp->zp;
            t.qmin = qp->qmin;
            t.qmax = qp->qmax;
        }
        sb_printf(&g->sig, "%s%%in%d: f32%s", in ? ", " : "", in, ds);
        t.id = newval(g);
        qtype_str(g, ty, sizeof ty, &t);
        char q[128];
        qp_str(q, sizeof q, t.u8, t.w16, t.s, t.zp, t.qmin, t.qmax);
        /* the node's parameters as items: strip the braces */
        q[strlen(q) - 1] = 0;
        sb_printf(&g->body, "  %%v%d = quantize %%in%d, %s : %s\n", t.id, in, q + 1, ty);
    } else {
        choose_qp(g, -1.0 - 3 * fz_unif(r), 0.5 + 3 * fz_unif(r), u8, false, &t);
        t.qmin = st_lo(u8, t.w16); /* the whole storage range: inputs are random over it */
        t.qmax = st_hi(u8, t.w16);
        if (qp) {
            t.u8 = qp->u8;
            t.w16 = qp->w16;
            t.s = qp->s;
            t.zp = qp->zp;
            t.qmin = st_lo(qp->u8, qp->w16);
            t.qmax = st_hi(qp->u8, qp->w16);
        }
        t.id = newval(g);
        qtype_str(g, ty, sizeof ty, &t);
        sb_printf(&g->sig, "%s%%v%d: %s", in ? ", " : "", t.id, ty);
    }
    g->pool[g->npool] = t;
    return g->npool++;
}

/* quantize f32 value fv into a new pool entry with the parameters in *proto */
static int
emit_q(Gen *g, int fv, int rank, const int64_t *d, const QT *proto, int depth_add)
{
    if (g->npool >= MAXPOOL)
        return -1;
    QT t = *proto;
    t.rank = rank;
    memcpy(t.d, d, sizeof t.d);
    memcpy(t.sym, g->ysym, sizeof t.sym); /* the op set them (zero for the static op kinds) */
    t.id = newval(g);
    t.slot = g->gg->nslots_used;
    t.out = -1;
    int depth = 0;
    for (int k = 0; k < 4; k++) {
        t.deps[k] = k < g->ncur_deps ? g->cur_deps[k] : -1;
        if (t.deps[k] >= 0 && g->pool[t.deps[k]].depth > depth)
            depth = g->pool[t.deps[k]].depth;
    }
    t.depth = depth + depth_add;
    char ty[256], q[128];
    qtype_str(g, ty, sizeof ty, &t);
    qp_str(q, sizeof q, t.u8, t.w16, t.s, t.zp, t.qmin, t.qmax);
    q[strlen(q) - 1] = 0;
    sb_printf(&g->body, "  %%v%d = quantize %%v%d, %s : %s\n", t.id, fv, q + 1, ty);
    g->pool[g->npool] = t;
    return g->npool++;
}

/* Pick a pool entry of rank `rank` (0: any), preferring recent ones; -1 if none. */
static int
pick(Gen *g, int rank)
{
    int cand[MAXPOOL], n = 0;
    for (int i = g->npool - 1; i >= 0; i--)
        if (!rank || g->pool[i].rank == rank)
            cand[n++] = i;
    if (!n)
        return -1;
    /* geometric preference for the most recent */
    int k = 0;
    while (k + 1 < n && chance(&g->r, 0.35))
        k++;
    return cand[k];
}

static int
pick4(Gen *g)
{
    int i = pick(g, 4);
    if (i >= 0)
        return i;
    const GenSpec *sp = g->sp;
    int64_t d[4] = {cap(fz_int(&g->r, 1, 2), sp->maxn), cap(fz_int(&g->r, 1, 16), sp->maxc),
                    cap(fz_int(&g->r, 1, 10), sp->maxhw), cap(fz_int(&g->r, 1, 10), sp->maxhw)};
    return new_input(g, 4, d, chance(&g->r, 0.6));
}

static bool
out_u8(Gen *g, const QT *in)
{
    return chance(&g->r, 0.75) ? in->u8 : !in->u8;
}

/* f32 tensor literal as hex bytes */
static void
emit_f32_const(Gen *g, int v, int rank, const int64_t *d, const float *vals)
{
    char ds[96];
    dims_str(ds, sizeof ds, rank, d);
    sb_printf(&g->body, "  %%v%d = const dense<f32%s, 0x", v, ds);
    int64_t n = numel(rank, d);
    for (int64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &vals[i], 4);
        for (int b = 0; b < 4; b++)
            sb_printf(&g->body, "%02X", (unsigned)((u >> (8 * b)) & 0xFF));
    }
    sb_printf(&g->body, ">\n");
}

/* Quantized weights: axis (-1: per tensor) over `nch` channels; returns the f32 value id of
 * the dequantized weights and fills sw[] (scale of each channel, nch entries). */
static int
emit_weights(Gen *g, int rank, const int64_t *d, int axis, int nch, float *sw)
{
    Rng *r = &g->r;
    int64_t n = numel(rank, d);
    bool perch = axis >= 0;
    int nsc = perch ? nch : 1;
    bool wu8 = chance(r, 0.08);
    bool narrow = !wu8 && chance(r, 0.3);
    bool wzp = wu8 || chance(r, 0.12);
    int qmin = wu8 ? 0 : narrow ? -127 : -128, qmax = wu8 ? 255 : 127;
    float base = rand_scale(r, -9, -4);
    int zps[512];
    char ds[96];
    dims_str(ds, sizeof ds, rank, d);
    Sb sc = {0}, zs = {0};
    for (int c = 0; c < nsc; c++) {
        float s = perch && chance(r, 0.8) ? (float)(base * (0.5 + 1.5 * fz_unif(r))) : base;
        if (chance(r, 0.02))
            s = base * 1e-3f; /* tiny channel */
        int zp = wu8 ? fz_int(r, 100, 156) : wzp ? fz_int(r, -6, 6) : 0;
        if (zp < qmin)
            zp = qmin;
        sw[c] = s;
        zps[c] = zp;
        sb_printf(&sc, "%s%.9g", c ? ", " : "", (double)s);
        sb_printf(&zs, "%s%d", c ? ", " : "", zp);
    }
    for (int c = nsc; c < nch; c++)
        sw[c] = sw[0];
    char qp[64];
    if (narrow)
        snprintf(qp, sizeof qp, ", range=[%d, %d]", qmin, qmax);
    else
        qp[0] = 0;
    /* channel index of flat element i */
    int64_t inner = 1;
    if (perch)
        for (int k = axis + 1; k < rank; k++)
            inner *= d[k];
    int wv = newval(g), dv;
    const char *et = wu8 ? "u8" : "i8";
    if (chance(r, 0.6)) {
        /* ORT: integer initializer -> dequantize */
        sb_printf(&g->body, "  %%v%d = const dense<%s%s, 0x", wv, et, ds);
        for (int64_t i = 0; i < n; i++) {
            int c = perch ? (int)((i / inner) % d[axis]) : 0;
            int q = chance(r, 0.05) ? (chance(r, 0.5) ? qmin : qmax) : fz_int(r, qmin, qmax);
            if (zps[c] != 0 && chance(r, 0.1))
                q = zps[c];
            sb_printf(&g->body, "%02X", (unsigned)(q & 0xFF));
        }
        sb_printf(&g->body, ">\n");
        dv = newval(g);
        if (perch)
            sb_printf(&g->body, "  %%v%d = dequantize %%v%d, axis=%d, scale=[%s], zp=[%s]%s : f32%s\n",
                      dv, wv, axis, sc.p, zs.p, qp, ds);
        else
            sb_printf(&g->body, "  %%v%d = dequantize %%v%d, scale=%s, zp=%s%s : f32%s\n", dv, wv,
                      sc.p, zs.p, qp, ds);
    } else {
        /* PyTorch / TensorRT: f32 constant -> quantize -> dequantize */
        float *f = malloc((size_t)n * sizeof *f);
        for (int64_t i = 0; i < n; i++) {
            int c = perch ? (int)((i / inner) % d[axis]) : 0;
            double q = (double)fz_int(r, qmin, qmax) - zps[c];
            if (chance(r, 0.1))
                q += 0.5; /* a tie in the weight quantizer */
            else
                q += fz_unif(r) - 0.5;
            f[i] = (float)(q * sw[c]);
        }
        emit_f32_const(g, wv, rank, d, f);
        free(f);
        int qv = newval(g);
        dv = newval(g);
        if (perch) {
            sb_printf(&g->body, "  %%v%d = quantize %%v%d, axis=%d, scale=[%s], zp=[%s]%s : %s%s\n",
                      qv, wv, axis, sc.p, zs.p, qp, et, ds);
            sb_printf(&g->body, "  %%v%d = dequantize %%v%d, axis=%d, scale=[%s], zp=[%s]%s : f32%s\n",
                      dv, qv, axis, sc.p, zs.p, qp, ds);
        } else {
            sb_printf(&g->body, "  %%v%d = quantize %%v%d, scale=%s, zp=%s%s : %s%s\n", qv, wv,
                      sc.p, zs.p, qp, et, ds);
            sb_printf(&g->body, "  %%v%d = dequantize %%v%d, scale=%s, zp=%s%s : f32%s\n", dv, qv,
                      sc.p, zs.p, qp, ds);
        }
    }
    sb_free(&sc);
    sb_free(&zs);
    return dv;
}

/* Bias of n channels: i32 -> dequantize (scale sx*sw[c], ORT), f32 constant (PyTorch), or none
 * (returns 0). mag: typical |bias| in real units. *rounded: the passes round the bias to the
 * accumulator scale sx*sw[c] (an f32 bias, or an i32 one at another scale). */
static int
emit_bias(Gen *g, int n, float sx, const float *sw, bool perch, double mag, bool *rounded)
{
    Rng *r = &g->r;
    double p = fz_unif(r);
    *rounded = p >= 0.65;
    if (p < 0.2)
        return 0;
    int64_t d[1] = {n};
    char ds[32];
    dims_str(ds, sizeof ds, 1, d);
    int bv = newval(g);
    if (p < 0.65) {
        int32_t *q = malloc((size_t)n * sizeof *q);
        float *bs = malloc((size_t)n * sizeof *bs);
        bool odd = chance(r, 0.05); /* bias scale not sx*sw: qdq-fold rescales it */
        *rounded = odd;
        for (int c = 0; c < n; c++) {
            bs[c] = sx * sw[perch ? c : 0];
            if (odd)
                bs[c] *= 1.5f;
            double v = (fz_unif(r) * 2 - 1) * mag / (double)bs[c];
            if (v > 1e8)
                v = 1e8;
            if (v < -1e8)
                v = -1e8;
            q[c] = (int32_t)v;
        }
        sb_printf(&g->body, "  %%v%d = const dense<i32%s, [", bv, ds);
        for (int c = 0; c < n; c++)
            sb_printf(&g->body, "%s%d", c ? ", " : "", q[c]);
        sb_printf(&g->body, "]>\n");
        int dv = newval(g);
        bool uniform = true;
        for (int c = 1; c < n; c++)
            uniform &= bs[c] == bs[0];
        if (uniform && chance(r, 0.7)) {
            sb_printf(&g->body, "  %%v%d = dequantize %%v%d, scale=%.9g, zp=0 : f32%s\n", dv, bv,
                      (double)bs[0], ds);
        } else {
            sb_printf(&g->body, "  %%v%d = dequantize %%v%d, axis=0, scale=[", dv, bv);
            for (int c = 0; c < n; c++)
                sb_printf(&g->body, "%s%.9g", c ? ", " : "", (double)bs[c]);
            sb_printf(&g->body, "], zp=[");
            for (int c = 0; c < n; c++)
                sb_printf(&g->body, "%s0", c ? ", " : "");
            sb_printf(&g->body, "] : f32%s\n", ds);
        }
        free(q);
        free(bs);
        return dv;
    }
    float *f = malloc((size_t)n * sizeof *f);
    for (int c = 0; c < n; c++)
        f[c] = (float)((fz_unif(r) * 2 - 1) * mag);
    emit_f32_const(g, bv, 1, d, f);
    free(f);
    return bv;
}

static float
max_scale(const float *s, int n)
{
    float m = 0;
    for (int c = 0; c < n; c++)
        m = s[c] > m ? s[c] : m;
    return m;
}

static double
mean_scale(const float *s, int n)
{
    double m = 0;
    for (int c = 0; c < n; c++)
        m += s[c];
    return n ? m / n : 0;
}

/* A rounded bias (emit_bias) is quantized at compile time to the accumulator scale sx*sw[c]
 * (weight-fold, qdq-fold), which moves the result by up to (sx*sw[c]/sy)/2 output steps; where
 * that exceeds half a step the passes keep the bias exact in a float add ("coarse biases",
 * docs/passes.md; test/lit/regress/float-bias-coarse-scale.qir). Real exports have
 * sx*sw << sy. With a rounded bias, half the graphs keep sy >= sx*max(sw) (the fold), a quarter
 * keep choose_qp's sy, and a quarter force sy below sx*max(sw) (sx*max(sw)/sy in [1, 32]) with a
 * centred zero point, so that the coarse path is fuzzed too. Drawn from the graph's RNG only
 * when there is a rounded bias: reproducible by seed.
 * --a16: 16-bit activations make sx (and so the forced sy) ~2^8 smaller, down to where f32 can no
 * longer resolve one output step at the magnitude vmag of the op's float values (a bias of 2
 * against a step of 5e-8: 2^25 steps; the literal graph's own f32 arithmetic, the bias add kept
 * float, is then off by several steps, whatever computes it). The forced sy stays at least
 * vmag * 2^-20 there (seed 8554: an f32 add 2 steps away from the f64 reference). */
static void
fit_rounded_bias(Gen *g, QT *proto, bool rounded, float sx, float maxsw, double vmag)
{
    if (!rounded)
        return;
    double p = fz_unif(&g->r);
    float acc = sx * maxsw;
    if (p < 0.5) {
        if (proto->s < acc)
            proto->s = acc;
    } else if (p >= 0.75) {
        float s = acc / (float)(1.0 + 31.0 * fz_unif(&g->r));
        if (g->sp->a16 && s < (float)(vmag * 0x1p-20))
            s = (float)(vmag * 0x1p-20);
        if (s < proto->s) {
            proto->s = s;
            if (proto->zp != proto->qmin) /* a Relu folded into the range keeps zp = qmin */
                proto->zp = proto->u8 ? (proto->w16 ? 32768 : 128) : 0;
        }
    }
}

/* Optional fused activation on f32 value v; sets [*lo, *hi] to the real output range and
 * *relu_q when the Relu is folded into the quantizer's range instead. */
static int
emit_act(Gen *g, int v, int rank, const int64_t *d, double *lo, double *hi, bool *relu_q)
{
    Rng *r = &g->r;
    char ds[96];
    sdims_str(g, ds, sizeof ds, rank, d, g->ysym, ",");
    double p = fz_unif(r);
    *relu_q = false;
    if (p < 0.5)
        return v;
    int y = newval(g);
    if (p < 0.65) {
        sb_printf(&g->body, "  %%v%d = relu %%v%d : f32%s\n", y, v, ds);
        *lo = 0;
    } else if (p < 0.75) {
        sb_printf(&g->body, "  %%v%d = clip %%v%d, min=0.0, max=6.0 : f32%s\n", y, v, ds);
        *lo = 0;
        if (*hi > 6)
            *hi = 6;
    } else if (p < 0.85) {
        double a = -fz_unif(r) * 0.5 * (*hi - *lo), b = fz_unif(r) * 0.5 * (*hi - *lo);
        sb_printf(&g->body, "  %%v%d = clip %%v%d, min=%.6g, max=%.6g : f32%s\n", y, v, a, b, ds);
        *lo = a;
        *hi = b;
    } else {
        *relu_q = true;
        *lo = 0;
        g->nval--; /* no node */
        return v;
    }
    return y;
}

/* ---- ops (each returns the pool index of its output or -1) ---- */

static int
op_conv(Gen *g, bool float_weights)
{
    Rng *r = &g->r;
    const GenSpec *sp = g->sp;
    int xi = pick4(g);
    if (xi < 0)
        return -1;
    QT x = g->pool[xi];
    /* a symbol in the batch axis alone passes through (conv types a symbolic N, OPF_SYMN) */
    if (any_sym(x.sym, 1) && !any_sym(x.sym + 1, 3)) {
        g->sym_aware = true;
        g->ysym[0] = x.sym[0];
    }
    int64_t C = x.d[1], H = x.d[2], W = x.d[3];
    int group = 1, M;
    double p = fz_unif(r);
    if (p < 0.25 && C > 1) {
        group = (int)C; /* depthwise, multiplier 1 or 2 */
        M = (int)C * (chance(r, 0.8) ? 1 : 2);
    } else if (p < 0.4 && C > 1) {
        int divs[16], nd = 0;
        for (int k = 2; k < C && nd < 16; k++)
            if (C % k == 0)
                divs[nd++] = k;
        group = nd ? divs[fz_int(r, 0, nd - 1)] : 1;
        M = group * cap(fz_int(r, 1, 4), sp->maxc);
    } else if (chance(r, 0.1)) {
        M = cap(fz_int(r, 25, 80), 4 * sp->maxc); /* wide: past the kernels' 16/64 blocks */
    } else {
        M = cap(fz_int(r, 1, 24), sp->maxc);
    }
    static const int ks[] = {1, 1, 3, 3, 3, 2, 5, 7};
    int kh = ks[fz_int(r, 0, 7)], kw = chance(r, 0.8) ? kh : ks[fz_int(r, 0, 7)];
    int sh = chance(r, 0.6) ? 1 : fz_int(r, 2, 3), sw_ = chance(r, 0.85) ? sh : fz_int(r, 1, 3);
    int dh = (kh > 1 && chance(r, 0.15)) ? 2 : 1, dw = (kw > 1 && chance(r, 0.8)) ? dh : 1;
    int64_t pads[4];
    if (chance(r, 0.6)) {
        pads[0] = pads[2] = dh * (kh - 1) / 2;
        pads[1] = pads[3] = dw * (kw - 1) / 2;
    } else {
        for (int k = 0; k < 4; k++)
            pads[k] = fz_int(r, 0, (k % 2 ? kw : kh) - 1);
    }
    int64_t oh = (H + pads[0] + pads[2] - dh * (kh - 1) - 1) / sh + 1;
    int64_t ow = (W + pads[1] + pads[3] - dw * (kw - 1) - 1) / sw_ + 1;
    if (H + pads[0] + pads[2] < dh * (kh - 1) + 1 || W + pads[1] + pads[3] < dw * (kw - 1) + 1 ||
        oh < 1 || ow < 1) {
        kh = kw = 1;
        dh = dw = 1;
        memset(pads, 0, sizeof pads);
        oh = (H - 1) / sh + 1;
        ow = (W - 1) / sw_ + 1;
    }
    int64_t wd[4] = {M, C / group, kh, kw};
    int xf = emit_dq(g, xi);
    float *swv = malloc((size_t)M * sizeof *swv);
    int wf;
    bool perch = !float_weights && chance(r, 0.7);
    if (float_weights) {
        /* float island: plain f32 weights (no quantize/dequantize) */
        int64_t n = numel(4, wd);
        float *f = malloc((size_t)n * sizeof *f);
        for (int64_t i = 0; i < n; i++)
            f[i] = (float)((fz_unif(r) * 2 - 1) * 0.3);
        wf = newval(g);
        emit_f32_const(g, wf, 4, wd, f);
        free(f);
        for (int c = 0; c < M; c++)
            swv[c] = 0.3f / 127;
    } else {
        wf = emit_weights(g, 4, wd, perch ? 0 : -1, M, swv);
    }
    double K = (double)(C / group) * kh * kw;
    double ystd = sqrt(K) * qt_mag(&x) * 0.5 * 127 * mean_scale(swv, M) * 0.5;
    bool rounded_bias = false;
    float maxsw = max_scale(swv, M);
    int bf = float_weights ? 0 : emit_bias(g, M, x.s, swv, perch, ystd, &rounded_bias);
    int64_t yd[4] = {x.d[0], M, oh, ow};
    char yds[96];
    sdims_str(g, yds, sizeof yds, 4, yd, g->ysym, ",");
    int cv = newval(g);
    sb_printf(&g->body, "  %%v%d = conv %%v%d, %%v%d", cv, xf, wf);
    if (bf)
        sb_printf(&g->body, ", %%v%d", bf);
    sb_printf(&g->body,
              ", strides=[%d, %d], pads=[%lld, %lld, %lld, %lld], dilations=[%d, %d], group=%d",
              sh, sw_, (long long)pads[0], (long long)pads[1], (long long)pads[2],
              (long long)pads[3], dh, dw, group);
    if (chance(r, 0.5))
        sb_printf(&g->body, ", kernel_shape=[%d, %d]", kh, kw);
    sb_printf(&g->body, " : f32%s\n", yds);
    free(swv);
    double lo = -3 * ystd, hi = 3 * ystd;
    bool relu_q;
    int av = emit_act(g, cv, 4, yd, &lo, &hi, &relu_q);
    /* TensorRT style: no quantize after the last conv, float graph output */
    if (g->gg->nslots_used == g->sp->nslots - 1 && chance(r, 0.1) && av == cv &&
        !any_sym(g->ysym, 4)) { /* (the float output's type is written without symbols) */
        g->gg->float_out_value = cv;
        g->gg->float_out_rank = 4;
        memcpy(g->gg->float_out_dims, yd, sizeof yd);
        return -2;
    }
    QT proto;
    memset(&proto, 0, sizeof proto);
    choose_qp(g, lo, hi, out_u8(g, &x), relu_q, &proto);
    fit_rounded_bias(g, &proto, rounded_bias, x.s, maxsw, fabs(lo) > fabs(hi) ? fabs(lo) : fabs(hi));
    return emit_q(g, av, 4, yd, &proto, 1);
}

static int
op_matmul(Gen *g)
{
    Rng *r = &g->r;
    const GenSpec *sp = g->sp;
    int ai = -1;
    int rank = fz_int(r, 2, 4);
    if (chance(r, 0.6))
        ai = pick(g, rank);
    if (ai < 0) {
        int64_t d[4] = {cap(fz_int(r, 1, 2), sp->maxn), cap(fz_int(r, 1, 8), sp->maxhw),
                        cap(fz_int(r, 1, 40), 4 * sp->maxc), 0};
        if (rank == 4) {
            d[3] = d[2];
            d[2] = d[1];
            d[1] = cap(fz_int(r, 1, 3), sp->maxc);
        } else if (rank == 2) {
            d[0] = d[1];
            d[1] = d[2];
        }
        ai = new_input(g, rank, d, chance(r, 0.6));
        if (ai < 0)
            return -1;
    }
    QT a = g->pool[ai];
    int64_t K = a.d[a.rank - 1];
    int N = chance(r, 0.1) ? cap(fz_int(r, 25, 80), 4 * sp->maxc) : cap(fz_int(r, 1, 24), 2 * sp->maxc);
    int64_t yd[4];
    memcpy(yd, a.d, sizeof yd);
    yd[a.rank - 1] = N;
    if (a.sym[a.rank - 1].m)
        g->sym_fail = true; /* K is the constant weights' dimension */
    memcpy(g->ysym, a.sym, sizeof g->ysym);
    g->ysym[a.rank - 1] = (SymDim){0, 0};
    int af = emit_dq(g, ai), bf;
    double bmag;
    if (chance(r, 0.25)) {
        /* activation x activation: b [.., K, N] with a's batch dims */
        int64_t bd[4];
        SymDim bs[4];
        memcpy(bd, a.d, sizeof bd);
        memcpy(bs, g->ysym, sizeof bs);
        bd[a.rank - 2] = K;
        bd[a.rank - 1] = N;
        bs[a.rank - 2] = (SymDim){0, 0};
        int bi = new_input_qp(g, a.rank, bd, chance(r, 0.6), NULL, bs);
        if (bi < 0)
            return -1;
        bf = emit_dq(g, bi);
        bmag = qt_mag(&g->pool[bi]) * 0.5;
    } else {
        int64_t wd[2] = {K, N};
        float *swv = malloc((size_t)N * sizeof *swv);
        bool perch = chance(r, 0.6);
        bf = emit_weights(g, 2, wd, perch ? 1 : -1, N, swv);
        bmag = 127 * mean_scale(swv, N) * 0.5;
        free(swv);
    }
    char yds[96];
    sdims_str(g, yds, sizeof yds, a.rank, yd, g->ysym, ",");
    int mv = newval(g);
    sb_printf(&g->body, "  %%v%d = matmul %%v%d, %%v%d : f32%s\n", mv, af, bf, yds);
    double ystd = sqrt((double)K) * qt_mag(&a) * 0.5 * bmag;
    double lo = -3 * ystd, hi = 3 * ystd;
    bool relu_q;
    int av = emit_act(g, mv, a.rank, yd, &lo, &hi, &relu_q);
    QT proto;
    memset(&proto, 0, sizeof proto);
    choose_qp(g, lo, hi, out_u8(g, &a), relu_q, &proto);
    return emit_q(g, av, a.rank, yd, &proto, 1);
}

static int
op_gemm(Gen *g)
{
    Rng *r = &g->r;
    const GenSpec *sp = g->sp;
    int ai = pick(g, 2);
    if (ai < 0 || chance(r, 0.3)) {
        int64_t d[4] = {cap(fz_int(r, 1, 4), sp->maxn), cap(fz_int(r, 1, 64), 4 * sp->maxc), 0, 0};
        ai = new_input(g, 2, d, chance(r, 0.6));
        if (ai < 0)
            return -1;
    }
    QT a = g->pool[ai];
    int64_t M = a.d[0], K = a.d[1];
    int N = cap(fz_int(r, 1, 20), 2 * sp->maxc);
    bool transB = chance(r, 0.75);
    int64_t wd[2] = {transB ? N : K, transB ? K : N};
    float *swv = malloc((size_t)N * sizeof *swv);
    bool perch = chance(r, 0.6);
    int af = emit_dq(g, ai);
    int wf = emit_weights(g, 2, wd, perch ? (transB ? 0 : 1) : -1, N, swv);
    double ystd = sqrt((double)K) * qt_mag(&a) * 0.5 * 127 * mean_scale(swv, N) * 0.5;
    bool rounded_bias = false;
    float maxsw = max_scale(swv, N);
    int bf = emit_bias(g, N, a.s, swv, perch, ystd, &rounded_bias);
    free(swv);
    int64_t yd[4] = {M, N, 0, 0};
    char yds[96];
    dims_str(yds, sizeof yds, 2, yd);
    int mv = newval(g);
    sb_printf(&g->body, "  %%v%d = gemm %%v%d, %%v%d", mv, af, wf);
    if (bf)
        sb_printf(&g->body, ", %%v%d", bf);
    sb_printf(&g->body, ", transB=%d", transB ? 1 : 0);
    if (chance(r, 0.05))
        sb_printf(&g->body, ", alpha=0.5");
    sb_printf(&g->body, " : f32%s\n", yds);
    double lo = -3 * ystd, hi = 3 * ystd;
    bool relu_q;
    int av = emit_act(g, mv, 2, yd, &lo, &hi, &relu_q);
    QT proto;
    memset(&proto, 0, sizeof proto);
    choose_qp(g, lo, hi, out_u8(g, &a), relu_q, &proto);
    fit_rounded_bias(g, &proto, rounded_bias, a.s, maxsw, fabs(lo) > fabs(hi) ? fabs(lo) : fabs(hi));
    return emit_q(g, av, 2, yd, &proto, 1);
}

static int
op_binary(Gen *g)
{
    Rng *r = &g->r;
    int ai = pick(g, 0);
    if (ai < 0)
        ai = pick4(g);
    if (ai < 0)
        return -1;
    QT a = g->pool[ai];
    int bi = -1;
    int64_t bd[4];
    SymDim bs[4];
    memcpy(bd, a.d, sizeof bd);
    memcpy(bs, a.sym, sizeof bs);
    memcpy(g->ysym, a.sym, sizeof g->ysym);
    if (chance(r, 0.25) && a.rank >= 2) {
        for (int k = 0; k < a.rank; k++)
            if (k != 1) {
                bd[k] = 1; /* [1,C,1,1] broadcast */
                bs[k] = (SymDim){0, 0};
            }
    } else if (chance(r, 0.5)) {
        for (int i = g->npool - 1; i >= 0; i--)
            if (i != ai && g->pool[i].rank == a.rank &&
                !memcmp(g->pool[i].d, a.d, sizeof a.d)) {
                bi = i;
                for (int k = 0; k < a.rank; k++)
                    if (!same_dim(g->pool[i].sym[k], a.sym[k]))
                        g->sym_fail = true; /* a symbol against its size */
                break;
            }
    }
    if (bi < 0)
        bi = new_input_qp(g, a.rank, bd, chance(r, 0.5) ? a.u8 : !a.u8, NULL, bs);
    if (bi < 0)
        return -1;
    QT b = g->pool[bi];
    bool swap = chance(r, 0.2) && !memcmp(b.d, a.d, sizeof a.d);
    int af = emit_dq(g, swap ? bi : ai), bf = emit_dq(g, swap ? ai : bi);
    static const char *ops[] = {"add", "add", "sub", "mul"};
    int k = fz_int(r, 0, 3);
    char ds[96];
    sdims_str(g, ds, sizeof ds, a.rank, a.d, a.sym, ",");
    int v = newval(g);
    sb_printf(&g->body, "  %%v%d = %s %%v%d, %%v%d : f32%s\n", v, ops[k], af, bf, ds);
    double lo, hi;
    if (k == 3) {
        double m = qt_mag(&a) * qt_mag(&b) * 0.5;
        lo = -m;
        hi = m;
    } else {
        lo = -(qt_mag(&a) + qt_mag(&b)) * 0.7;
        hi = -lo;
    }
    bool relu_q;
    int av = emit_act(g, v, a.rank, a.d, &lo, &hi, &relu_q);
    QT proto;
    memset(&proto, 0, sizeof proto);
    choose_qp(g, lo, hi, out_u8(g, &a), relu_q, &proto);
    return emit_q(g, av, a.rank, a.d, &proto, 1);
}

static int
op_concat(Gen *g)
{
    Rng *r = &g->r;
    const GenSpec *sp = g->sp;
    int ai = pick4(g);
    if (ai < 0)
        return -1;
    QT a = g->pool[ai];
    int n = fz_int(r, 2, 3);
    int idx[3] = {ai, -1, -1};
    int64_t C = a.d[1];
    bool same = chance(r, 0.25);
    memcpy(g->ysym, a.sym, sizeof g->ysym); /* along a symbolic axis: the symbol + sizes */
    SymDim ps[4]; /* the other pieces: a's dimensions, a size along the axis */
    memcpy(ps, a.sym, sizeof ps);
    ps[1] = (SymDim){0, 0};
    for (int k = 1; k < n; k++) {
        int64_t d[4];
        memcpy(d, a.d, sizeof d);
        d[1] = cap(fz_int(r, 1, 12), sp->maxc);
        int bi = -1;
        if (!same && chance(r, 0.3)) {
            for (int i = g->npool - 1; i >= 0; i--)
                if (i != ai && g->pool[i].rank == 4 && g->pool[i].d[0] == a.d[0] &&
                    g->pool[i].d[2] == a.d[2] && g->pool[i].d[3] == a.d[3]) {
                    bi = i;
                    const SymDim *bs = g->pool[i].sym;
                    if (!same_dim(bs[0], a.sym[0]) || bs[1].m || !same_dim(bs[2], a.sym[2]) ||
                        !same_dim(bs[3], a.sym[3]))
                        g->sym_fail = true;
                    break;
                }
        }
        if (bi < 0) {
            /* same: the parameters of a (a pure layout concat) */
            bi = new_input_qp(g, 4, d, a.u8, same ? &a : NULL, ps);
            if (bi < 0)
                return -1;
        }
        idx[k] = bi;
        C += g->pool[bi].d[1];
    }
    int fv[3];
    double lo = 0, hi = 0;
    for (int k = 0; k < n; k++) {
        fv[k] = emit_dq(g, idx[k]);
        if (qt_lo(&g->pool[idx[k]]) < lo)
            lo = qt_lo(&g->pool[idx[k]]);
        if (qt_hi(&g->pool[idx[k]]) > hi)
            hi = qt_hi(&g->pool[idx[k]]);
    }
    int64_t yd[4] = {a.d[0], C, a.d[2], a.d[3]};
    if (a.sym[1].m)
        g->ysym[1].k += (int32_t)(C - a.d[1]);
    char ds[96];
    sdims_str(g, ds, sizeof ds, 4, yd, g->ysym, ",");
    int v = newval(g);
    sb_printf(&g->body, "  %%v%d = concat", v);
    for (int k = 0; k < n; k++)
        sb_printf(&g->body, "%s %%v%d", k ? "," : "", fv[k]);
    sb_printf(&g->body, ", axis=1 : f32%s\n", ds);
    QT proto = a;
    if (!same || chance(r, 0.5))
        choose_qp(g, lo, hi, out_u8(g, &a), false, &proto);
    return emit_q(g, v, 4, yd, &proto, 1);
}

static void
pool_out_dims(int64_t in, int k, int s, int pb, int pe, int dil, bool ceil_mode, int64_t *o)
{
    int64_t span = in + pb + pe - ((int64_t)dil * (k - 1) + 1);
    int64_t v = ceil_mode ? (span + s - 1) / s + 1 : span / s + 1;
    if (ceil_mode && (v - 1) * s >= in + pb)
        v--;
    *o = v;
}

static int
op_pool(Gen *g)
{
    Rng *r = &g->r;
    int xi = pick4(g);
    if (xi < 0)
        return -1;
    QT x = g->pool[xi];
    /* a symbol in the batch axis alone passes through (the pools type a symbolic N, OPF_SYMN) */
    if (any_sym(x.sym, 1) && !any_sym(x.sym + 1, 3)) {
        g->sym_aware = true;
        g->ysym[0] = x.sym[0];
    }
    double p = fz_unif(r);
    int kind = p < 0.4 ? 0 : p < 0.8 ? 1 : 2; /* max, avg, global avg */
    int xf = emit_dq(g, xi);
    int64_t yd[4] = {x.d[0], x.d[1], 1, 1};
    int v = newval(g);
    if (kind == 2) {
        char ds[96];
        sdims_str(g, ds, sizeof ds, 4, yd, g->ysym, ",");
        sb_printf(&g->body, "  %%v%d = global_avgpool %%v%d : f32%s\n", v, xf, ds);
    } else {
        int kh = fz_int(r, 1, 3), kw = chance(r, 0.8) ? kh : fz_int(r, 1, 3);
        if (kh > x.d[2])
            kh = (int)x.d[2];
        if (kw > x.d[3])
            kw = (int)x.d[3];
        int s = fz_int(r, 1, 2);
        int pads[4] = {0, 0, 0, 0};
        if (chance(r, 0.5))
            for (int k = 0; k < 4; k++)
                pads[k] = fz_int(r, 0, (k % 2 ? kw : kh) - 1 > 1 ? 1 : (k % 2 ? kw : kh) - 1);
        bool ceil_mode = chance(r, 0.15);
        int dil = (kind == 0 && chance(r, 0.1) && x.d[2] >= 3 && x.d[3] >= 3) ? 2 : 1;
        if (dil == 2)
            ceil_mode = false;
        pool_out_dims(x.d[2], kh, s, pads[0], pads[2], dil, ceil_mode, &yd[2]);
        pool_out_dims(x.d[3], kw, s, pads[1], pads[3], dil, ceil_mode, &yd[3]);
        if (yd[2] < 1 || yd[3] < 1 || x.d[2] + pads[0] + pads[2] < dil * (kh - 1) + 1 ||
            x.d[3] + pads[1] + pads[3] < dil * (kw - 1) + 1) {
            kh = kw = 1;
            memset(pads, 0, sizeof pads);
            ceil_mode = false;
            dil = 1;
            yd[2] = (x.d[2] - 1) / s + 1;
            yd[3] = (x.d[3] - 1) / s + 1;
        }
        char ds[96];
        sdims_str(g, ds, sizeof ds, 4, yd, g->ysym, ",");
        sb_printf(&g->body,
                  "  %%v%d = %s %%v%d, kernel_shape=[%d, %d], strides=[%d, %d], pads=[%d, %d, %d, %d]",
                  v, kind == 0 ? "maxpool" : "avgpool", xf, kh, kw, s, s, pads[0], pads[1],
                  pads[2], pads[3]);
        if (ceil_mode)
            sb_printf(&g->body, ", ceil_mode=1");
        if (dil != 1)
            sb_printf(&g->body, ", dilations=[%d, %d]", dil, dil);
        if (kind == 1 && chance(r, 0.5))
            sb_printf(&g->body, ", count_include_pad=1");
        sb_printf(&g->body, " : f32%s\n", ds);
    }
    QT proto = x;
    int add = 0;
    if (kind != 0 || chance(r, 0.15)) {
        choose_qp(g, qt_lo(&x) * (kind == 2 ? 0.5 : 0.8), qt_hi(&x) * (kind == 2 ? 0.5 : 0.8),
                  out_u8(g, &x), false, &proto);
        add = 1;
    }
    return emit_q(g, v, 4, yd, &proto, add);
}

static int
op_act(Gen *g)
{
    Rng *r = &g->r;
    int xi = pick(g, 0);
    if (xi < 0)
        return -1;
    QT x = g->pool[xi];
    int xf = emit_dq(g, xi);
    char ds[96];
    memcpy(g->ysym, x.sym, sizeof g->ysym);
    sdims_str(g, ds, sizeof ds, x.rank, x.d, x.sym, ",");
    int v = newval(g);
    double lo = qt_lo(&x), hi = qt_hi(&x);
    switch (fz_int(r, 0, 8)) {
    case 0:
        sb_printf(&g->body, "  %%v%d = relu %%v%d : f32%s\n", v, xf, ds);
        lo = 0;
        break;
    case 1: {
        double a = 0.01 + 0.5 * fz_unif(r);
        sb_printf(&g->body, "  %%v%d = leaky_relu %%v%d, alpha=%.6g : f32%s\n", v, xf, a, ds);
        lo *= a;
        break;
    }
    case 2:
        sb_printf(&g->body, "  %%v%d = sigmoid %%v%d : f32%s\n", v, xf, ds);
        lo = 0;
        hi = 1;
        break;
    case 3:
        sb_printf(&g->body, "  %%v%d = tanh %%v%d : f32%s\n", v, xf, ds);
        lo = lo < -1 ? -1 : lo;
        hi = hi > 1 ? 1 : hi;
        break;
    case 4:
        sb_printf(&g->body, "  %%v%d = hard_swish %%v%d : f32%s\n", v, xf, ds);
        lo = -0.375;
        break;
    case 5:
        sb_printf(&g->body, "  %%v%d = hard_sigmoid %%v%d, alpha=%.6g, beta=0.5 : f32%s\n", v,
                  xf, 0.1 + 0.2 * fz_unif(r), ds);
        lo = 0;
        hi = 1;
        break;
    case 6: {
        double a = lo * fz_unif(r), b = hi * fz_unif(r);
        sb_printf(&g->body, "  %%v%d = clip %%v%d, min=%.6g, max=%.6g : f32%s\n", v, xf, a, b,
                  ds);
        lo = a;
        hi = b;
        break;
    }
    case 7:
        sb_printf(&g->body, "  %%v%d = gelu %%v%d : f32%s\n", v, xf, ds);
        lo = -0.17;
        break;
    default:
        sb_printf(&g->body, "  %%v%d = erf %%v%d : f32%s\n", v, xf, ds);
        lo = -1;
        hi = 1;
        break;
    }
    QT proto;
    memset(&proto, 0, sizeof proto);
    choose_qp(g, lo, hi, out_u8(g, &x), false, &proto);
    return emit_q(g, v, x.rank, x.d, &proto, 1);
}

static int
op_layout(Gen *g)
{
    Rng *r = &g->r;
    int xi = pick(g, 0);
    if (xi < 0)
        return -1;
    QT x = g->pool[xi];
    int64_t yd[4];
    memcpy(yd, x.d, sizeof yd);
    SymDim *ys = g->ysym;
    memcpy(ys, x.sym, sizeof x.sym);
    int yr = x.rank;
    char attrs[256] = "";
    const char *op;
    switch (fz_int(r, 0, 5)) {
    case 0: { /* transpose */
        int perm[4] = {0, 1, 2, 3};
        for (int k = x.rank - 1; k > 0; k--) {
            int j = fz_int(r, 0, k), t = perm[k];
            perm[k] = perm[j];
            perm[j] = t;
        }
        size_t n = (size_t)snprintf(attrs, sizeof attrs, ", perm=[");
        for (int k = 0; k < x.rank; k++) {
            yd[k] = x.d[perm[k]];
            ys[k] = x.sym[perm[k]];
            n += (size_t)snprintf(attrs + n, sizeof attrs - n, k ? ", %d" : "%d", perm[k]);
        }
        snprintf(attrs + n, sizeof attrs - n, "]");
        op = "transpose";
        break;
    }
    case 1: { /* reshape to [d0, rest] or [d0, d1, rest] */
        int64_t tot = numel(x.rank, x.d);
        if (x.rank >= 3 && chance(r, 0.5)) {
            yr = 3;
            yd[0] = x.d[0];
            yd[1] = x.d[1];
            yd[2] = tot / (x.d[0] * x.d[1]);
            ys[2] = sym_prod(g, &x, 2, x.rank);
        } else {
            yr = 2;
            yd[0] = x.d[0];
            yd[1] = tot / x.d[0];
            ys[1] = sym_prod(g, &x, 1, x.rank);
        }
        for (int k = yr; k < 4; k++)
            ys[k] = (SymDim){0, 0};
        char sh[128];
        sdims_str(g, sh, sizeof sh, yr, yd, ys, ", ");
        snprintf(attrs, sizeof attrs, ", shape=%s", sh);
        op = "reshape";
        break;
    }
    case 2: { /* flatten axis 1 */
        yr = 2;
        yd[0] = x.d[0];
        yd[1] = numel(x.rank, x.d) / x.d[0];
        ys[1] = sym_prod(g, &x, 1, x.rank);
        ys[2] = ys[3] = (SymDim){0, 0};
        snprintf(attrs, sizeof attrs, ", axis=1");
        op = "flatten";
        break;
    }
    case 3: { /* slice one axis */
        int ax = fz_int(r, 0, x.rank - 1);
        if (g->sp->sym_pct >= 100 && any_sym(x.sym, x.rank) && chance(r, 0.5))
            for (ax = 0; !x.sym[ax].m; ax++) /* --symbolic: often a symbolic axis */
                ;
        int64_t n = x.d[ax];
        int64_t st = fz_int(r, 0, (int)(n - 1)), en = fz_int(r, (int)st + 1, (int)n);
        int step = fz_int(r, 1, 2);
        if (x.sym[ax].m && g->sp->sym_pct >= 100) {
            en = n; /* --symbolic: what a symbolic axis allows, to its end */
            step = 1;
        }
        yd[ax] = (en - st + step - 1) / step;
        char ends[40];
        snprintf(ends, sizeof ends, "%lld", (long long)en);
        if (x.sym[ax].m && (en != n || step != 1)) {
            g->sym_fail = true; /* a symbolic axis: step 1 to its end only */
        } else if (x.sym[ax].m) {
            dim_str(g, ends, sizeof ends, n, x.sym[ax]); /* ends=[?s] */
            ys[ax].k -= (int32_t)st;
        }
        snprintf(attrs, sizeof attrs, ", starts=[%lld], ends=[%s], axes=[%d], steps=[%d]",
                 (long long)st, ends, ax, step);
        op = "slice";
        break;
    }
    case 4: { /* pad (constant 0.0, which quantizes to the zero point) */
        int64_t p[8] = {0};
        if (any_sym(x.sym, x.rank))
            g->sym_fail = true; /* pad does not type symbols */
        for (int k = 0; k < x.rank; k++) {
            if (k == 0)
                continue;
            p[k] = fz_int(r, 0, 2);
            p[x.rank + k] = fz_int(r, 0, 2);
            yd[k] = x.d[k] + p[k] + p[x.rank + k];
        }
        size_t m = (size_t)snprintf(attrs, sizeof attrs, ", pads=[");
        for (int k = 0; k < 2 * x.rank; k++)
            m += (size_t)snprintf(attrs + m, sizeof attrs - m, k ? ", %lld" : "%lld",
                                  (long long)p[k]);
        snprintf(attrs + m, sizeof attrs - m, "], value=0.0");
        op = "pad";
        break;
    }
    default:
        op = "identity";
        break;
    }
    int xf = emit_dq(g, xi);
    char ds[96];
    sdims_str(g, ds, sizeof ds, yr, yd, ys, ",");
    int v = newval(g);
    sb_printf(&g->body, "  %%v%d = %s %%v%d%s : f32%s\n", v, op, xf, attrs, ds);
    QT proto = x;
    int add = 0;
    if (chance(r, 0.1)) {
        choose_qp(g, qt_lo(&x), qt_hi(&x), out_u8(g, &x), false, &proto);
        add = 1;
    }
    return emit_q(g, v, yr, yd, &proto, add);
}

static int
op_requant(Gen *g)
{
    int xi = pick(g, 0);
    if (xi < 0)
        return -1;
    QT x = g->pool[xi];
    memcpy(g->ysym, x.sym, sizeof g->ysym);
    int xf = emit_dq(g, xi);
    QT proto;
    memset(&proto, 0, sizeof proto);
    choose_qp(g, qt_lo(&x), qt_hi(&x), !x.u8 ? chance(&g->r, 0.5) : chance(&g->r, 0.7), false,
              &proto);
    return emit_q(g, xf, x.rank, x.d, &proto, 1);
}

static int
op_softmax(Gen *g)
{
    int xi = pick(g, 0);
    if (xi < 0)
        return -1;
    QT x = g->pool[xi];
    int xf = emit_dq(g, xi);
    char ds[96];
    memcpy(g->ysym, x.sym, sizeof g->ysym);
    sdims_str(g, ds, sizeof ds, x.rank, x.d, x.sym, ",");
    int v = newval(g);
    sb_printf(&g->body, "  %%v%d = softmax %%v%d, axis=%d : f32%s\n", v, xf,
              chance(&g->r, 0.7) ? -1 : fz_int(&g->r, 0, x.rank - 1), ds);
    QT proto;
    memset(&proto, 0, sizeof proto);
    choose_qp(g, 0, 1, chance(&g->r, 0.7), false, &proto);
    return emit_q(g, v, x.rank, x.d, &proto, 1);
}

/* A Q->DQ pair whose DequantizeLinear has its own parameters (--qdq-pairs: checks that each
 * dequantize is computed with its own parameters, not its producer's). x (pool) -> dequantize
 * (x's parameters) -> [relu | maxpool 1x2 | nothing] -> quantize A -> a plain integer value ->
 * dequantize B -> [relu | nothing] -> quantize C (a new pool entry). A is x's parameters, or the same values in the
 * other 8-bit type (zero point +-128): dequantize -> max/relu -> quantize A is then exact, so
 * quantize C is the only rounding on the path and the 1-step bound applies to the result. B
 * differs from A in the scale, the zero point (or omits it: 0), both, per channel (axis) where
 * A is per tensor, a run-time scale (a scalar graph input, "// fz-scale" tells fuzz.c its
 * range) with a constant zero point, or not at all (a control). Consecutive pairs, and the
 * pool's later slots, make chains of them. */
static int
op_qdq_pair(Gen *g)
{
    Rng *r = &g->r;
    int xi = pick(g, 0);
    if (xi < 0 || g->npool >= MAXPOOL - 2)
        return -1;
    QT x = g->pool[xi];
    int xf = emit_dq(g, xi);
    char ds[96], ds2[96];
    dims_str(ds, sizeof ds, x.rank, x.d);
    int64_t d[4];
    memcpy(d, x.d, sizeof d);
    /* between: relu, or a 1x2 max pool on the last axis of a 4-D value */
    int mid = fz_int(r, 0, 2);
    if (mid == 1) {
        int v = newval(g);
        sb_printf(&g->body, "  %%v%d = relu %%v%d : f32%s\n", v, xf, ds);
        xf = v;
    } else if (mid == 2 && x.rank == 4 && x.d[3] >= 2) {
        d[3] = x.d[3] - 1;
        dims_str(ds2, sizeof ds2, 4, d);
        int v = newval(g);
        sb_printf(&g->body, "  %%v%d = maxpool %%v%d, kernel_shape=[1, 2], strides=[1, 1], "
                  "pads=[0, 0, 0, 0] : f32%s\n", v, xf, ds2);
        xf = v;
    }
    dims_str(ds, sizeof ds, x.rank, d);
    /* A: x's parameters, maybe in the other type */
    bool au8 = x.u8;
    int azp = x.zp, aqmin = x.qmin, aqmax = x.qmax;
    if (chance(r, 0.25)) {
        int sh = (x.u8 ? -128 : 128) * (x.w16 ? 256 : 1);
        au8 = !x.u8;
        azp += sh;
        aqmin += sh;
        aqmax += sh;
    }
    char q[160];
    qp_str(q, sizeof q, au8, x.w16, x.s, azp, aqmin, aqmax);
    q[strlen(q) - 1] = 0;
    int va = newval(g);
    sb_printf(&g->body, "  %%v%d = quantize %%v%d, %s : %s%s\n", va, xf, q + 1,
              st_name(au8, x.w16), ds);
    /* B */
    int lo = st_lo(au8, x.w16), hi = st_hi(au8, x.w16);
    int mode = fz_int(r, 0, 6);
    float sb = x.s;
    int zb = azp;
    double fmax = 1.0; /* largest B scale (per channel, run time) relative to sb */
    int vb = newval(g);
    if (mode == 0) {
        static const float f[] = {0.5f, 2.0f, 1.375f, 0.8125f, 3.0f};
        sb = x.s * f[fz_int(r, 0, 4)];
    } else if (mode == 1) {
        zb = fz_int(r, lo, hi);
    } else if (mode == 2) {
        zb = 0; /* ONNX: zero point omitted */
        if (!au8 && chance(r, 0.5))
            sb = x.s * 1.5f;
    } else if (mode == 3) {
        sb = rand_scale(r, log2(x.s) - 2, log2(x.s) + 2);
        zb = fz_int(r, lo, hi);
    }
    if (mode == 4 && (x.rank == 4 || x.rank == 2)) {
        int axis = 1;
        int nc = (int)d[axis];
        Sb sl = {0}, zl = {0};
        for (int c = 0; c < nc; c++) {
            float sc = x.s * (float)(0.5 + 0.25 * fz_int(r, 0, 6));
            int zc = chance(r, 0.5) ? azp : fz_int(r, lo, hi);
            if (sc / x.s > fmax)
                fmax = sc / x.s;
            sb_printf(&sl, "%s%.9g", c ? ", " : "", (double)sc);
            sb_printf(&zl, "%s%d", c ? ", " : "", zc);
            if (c == 0 || abs(zc - azp) > abs(zb - azp))
                zb = zc;
        }
        sb_printf(&g->body, "  %%v%d = dequantize %%v%d, axis=%d, scale=[%s], zp=[%s] : f32%s\n",
                  vb, va, axis, sl.p, zl.p, ds);
        sb_free(&sl);
        sb_free(&zl);
    } else if (mode == 5 && g->nin < MAXIN && g->gg->nscale_in < 8) {
        /* run-time scale: a scalar graph input, filled in [s, 1.25 s] */
        int in = g->nin++;
        sb_printf(&g->sig, "%s%%in%d: f32[]", in ? ", " : "", in);
        g->gg->scale_in[g->gg->nscale_in].input = in;
        g->gg->scale_in[g->gg->nscale_in].lo = x.s;
        g->gg->scale_in[g->gg->nscale_in].hi = x.s * 1.25f;
        g->gg->nscale_in++;
        fmax = 1.25;
        zb = chance(r, 0.5) ? azp : fz_int(r, lo, hi);
        int vz = newval(g);
        sb_printf(&g->body, "  %%v%d = const dense<%s[], [%d]>\n", vz, st_name(au8, x.w16), zb);
        sb_printf(&g->body, "  %%v%d = dequantize %%v%d, %%in%d, %%v%d : f32%s\n", vb, va, in,
                  vz, ds);
    } else {
        sb_printf(&g->body, "  %%v%d = dequantize %%v%d, scale=%.9g, zp=%d : f32%s\n", vb, va,
                  (double)sb, zb, ds);
    }
    /* after: relu or nothing, then quantize C over the values B can give */
    double flo = (aqmin - zb) * (double)sb * fmax, fhi = (aqmax - zb) * (double)sb * fmax;
    if (flo > fhi) {
        double t = flo;
        flo = fhi;
        fhi = t;
    }
    int vf = vb;
    if (chance(r, 0.3)) {
        vf = newval(g);
        sb_printf(&g->body, "  %%v%d = relu %%v%d : f32%s\n", vf, vb, ds);
        if (flo < 0)
            flo = 0;
    }
    QT proto;
    memset(&proto, 0, sizeof proto);
    choose_qp(g, flo, fhi, chance(r, 0.6), false, &proto);
    return emit_q(g, vf, x.rank, d, &proto, 1);
}

/* A side trip through an opset-21 storage type (--qdq-types): x dequantized,
 * quantized to i4, u4, i16 or u16 per tensor, per axis (axis 1) or blocked (block_size 1-4 on
 * the last axis, constant scale and zero point operands), dequantized with the same
 * parameters, then quantized to 8 bits as usual. The scale is chosen so that the values mostly
 * fit the narrow type and sometimes saturate. */
static int
op_qdq_types(Gen *g)
{
    Rng *r = &g->r;
    int xi = pick(g, 0);
    if (xi < 0 || g->npool >= MAXPOOL - 2)
        return -1;
    QT x = g->pool[xi];
    int xf = emit_dq(g, xi);
    char ds[96];
    dims_str(ds, sizeof ds, x.rank, x.d);
    static const char *tname[] = {"i4", "u4", "i16", "u16"};
    static const int tlo[] = {-8, 0, -32768, 0}, thi[] = {7, 15, 32767, 65535};
    int t = fz_int(r, 0, 3), lo = tlo[t], hi = thi[t];
    double m = qt_mag(&x);
    if (m < 1e-6)
        m = 1e-6;
    double e = log2(2.0 * m / (double)(hi - lo));
    int mid = lo + (hi - lo) / 2, wob = (hi - lo) / 8;
    int form = fz_int(r, 0, 2);
    int64_t numel_x = numel(x.rank, x.d);
    int axis = x.rank - 1, block = fz_int(r, 1, 4);
    int64_t pdim = x.rank ? (x.d[axis] + block - 1) / block : 1;
    if (form == 1 && x.rank < 2)
        form = 0;
    if (form == 2 && (x.rank < 1 || numel_x / (x.d[axis] ? x.d[axis] : 1) * pdim > 4096))
        form = 0;
    int vq = newval(g), vd = newval(g);
    if (form == 0) {
        float sc = rand_scale(r, e - 1, e + 1);
        int zp = fz_int(r, mid - wob, mid + wob);
        sb_printf(&g->body, "  %%v%d = quantize %%v%d, scale=%.9g, zp=%d : %s%s\n", vq, xf,
                  (double)sc, zp, tname[t], ds);
        sb_printf(&g->body, "  %%v%d = dequantize %%v%d, scale=%.9g, zp=%d : f32%s\n", vd, vq,
                  (double)sc, zp, ds);
    } else if (form == 1) {
        Sb sl = {0}, zl = {0};
        for (int c = 0; c < (int)x.d[1]; c++) {
            sb_printf(&sl, "%s%.9g", c ? ", " : "", (double)rand_scale(r, e - 1, e + 1));
            sb_printf(&zl, "%s%d", c ? ", " : "", fz_int(r, mid - wob, mid + wob));
        }
        sb_printf(&g->body, "  %%v%d = quantize %%v%d, axis=1, scale=[%s], zp=[%s] : %s%s\n", vq,
                  xf, sl.p, zl.p, tname[t], ds);
        sb_printf(&g->body, "  %%v%d = dequantize %%v%d, axis=1, scale=[%s], zp=[%s] : f32%s\n",
                  vd, vq, sl.p, zl.p, ds);
        sb_free(&sl);
        sb_free(&zl);
    } else {
        int64_t pd[4];
        memcpy(pd, x.d, sizeof pd);
        pd[axis] = pdim;
        int64_t np = numel(x.rank, pd);
        char ps[96];
        dims_str(ps, sizeof ps, x.rank, pd);
        Sb sl = {0}, zl = {0};
        for (int64_t i = 0; i < np; i++) {
            sb_printf(&sl, "%s%.9g", i ? ", " : "", (double)rand_scale(r, e - 1, e + 1));
            sb_printf(&zl, "%s%d", i ? ", " : "", fz_int(r, mid - wob, mid + wob));
        }
        int vs = newval(g), vz = newval(g);
        sb_printf(&g->body, "  %%v%d = const dense<f32%s, [%s]>\n", vs, ps, sl.p);
        sb_printf(&g->body, "  %%v%d = const dense<%s%s, [%s]>\n", vz, tname[t], ps, zl.p);
        sb_printf(&g->body, "  %%v%d = quantize %%v%d, %%v%d, %%v%d, block_size=%d, axis=%d : "
                  "%s%s\n", vq, xf, vs, vz, block, axis, tname[t], ds);
        sb_printf(&g->body, "  %%v%d = dequantize %%v%d, %%v%d, %%v%d, block_size=%d, axis=%d : "
                  "f32%s\n", vd, vq, vs, vz, block, axis, ds);
        sb_free(&sl);
        sb_free(&zl);
    }
    QT proto;
    memset(&proto, 0, sizeof proto);
    choose_qp(g, qt_lo(&x), qt_hi(&x), chance(r, 0.6), false, &proto);
    return emit_q(g, vd, x.rank, x.d, &proto, 2);
}

/* ---- transformer patterns (--transformer: attention and float islands) ---- */

/* A stage of a multi-op slot starts with no inputs: each stage's result is its own pool entry
 * whose dependencies are that stage's inputs, so the per-op bound applies stage by stage. */
static void
stage(Gen *g)
{
    g->ncur_deps = 0;
}

static void
emit_f32_scalar(Gen *g, int v, double x)
{
    float f = (float)x;
    int64_t d1[4] = {1, 0, 0, 0};
    emit_f32_const(g, v, 1, d1, &f);
}

/* x (pool) -> dequantize -> L -> quantize with x's parameters: the Q/DQ an exporter writes
 * around a Reshape or Transpose (exact, no rounding) */
static int
layout_stage(Gen *g, int xi, const char *op, int rank, const int64_t *d)
{
    stage(g);
    QT x = g->pool[xi];
    int xf = emit_dq(g, xi);
    char ds[96];
    dims_str(ds, sizeof ds, rank, d);
    int v = newval(g);
    sb_printf(&g->body, "  %%v%d = %s %%v%d, %s : f32%s\n", v, strncmp(op, "perm", 4) == 0 ? "transpose" : "reshape",
              xf, op, ds);
    return emit_q(g, v, rank, d, &x, 0);
}

/* [1, S, H*D] -> Reshape [1, S, H, D] (-> Q/DQ) -> Transpose perm -> heads */
static int
heads_stage(Gen *g, int xi, int S, int H, int D, bool kt)
{
    int64_t rd[4] = {1, S, H, D};
    char sh[64];
    snprintf(sh, sizeof sh, "shape=[1, %d, %d, %d]", S, H, D);
    int ri = layout_stage(g, xi, sh, 4, rd);
    if (ri < 0)
        return -1;
    int64_t td[4] = {1, H, kt ? D : S, kt ? S : D};
    return layout_stage(g, ri, kt ? "perm=[0, 2, 3, 1]" : "perm=[0, 2, 1, 3]", 4, td);
}

/* BERT/GPT-style self-attention with ORT's QDQ: Q, K, V as [1, S, H*D] quantized tensors,
 * heads by Reshape + Transpose between Q/DQ pairs with unchanged parameters (K to [0,2,3,1],
 * i.e. K^T), DQ(Q) x DQ(K^T) -> [x 1/sqrt(D)] -> Q, DQ -> [+ additive mask, causal or none] ->
 * Softmax -> Q (ORT's fixed 1/256, zero point 0, or calibrated), DQ(P) x DQ(V) -> Q, then
 * Transpose + Reshape back between Q/DQ pairs. Every stage is a pool entry. */
static int
op_attention(Gen *g)
{
    Rng *r = &g->r;
    const GenSpec *sp = g->sp;
    int H = cap(fz_int(r, 1, 3), sp->maxc), S = cap(fz_int(r, 1, 12), sp->maxhw);
    int D = cap(chance(r, 0.2) ? fz_int(r, 33, 80) : fz_int(r, 1, 24), 4 * sp->maxc);
    int64_t xd[4] = {1, S, (int64_t)H * D, 0};
    bool u8 = chance(r, 0.7);
    int qi = new_input(g, 3, xd, u8), ki = new_input(g, 3, xd, u8), vi = new_input(g, 3, xd, chance(r, 0.5) ? u8 : !u8);
    if (qi < 0 || ki < 0 || vi < 0)
        return -1;
    int qh = heads_stage(g, qi, S, H, D, false), kh = heads_stage(g, ki, S, H, D, true),
        vh = heads_stage(g, vi, S, H, D, false);
    if (qh < 0 || kh < 0 || vh < 0)
        return -1;
    /* scores */
    stage(g);
    QT q = g->pool[qh], k = g->pool[kh];
    int qf = emit_dq(g, qh), kf = emit_dq(g, kh);
    int64_t sd[4] = {1, H, S, S};
    char sds[96];
    dims_str(sds, sizeof sds, 4, sd);
    int sv = newval(g);
    sb_printf(&g->body, "  %%v%d = matmul %%v%d, %%v%d : f32%s\n", sv, qf, kf, sds);
    double sstd = sqrt((double)D) * qt_mag(&q) * 0.5 * qt_mag(&k) * 0.5;
    if (chance(r, 0.6)) {
        int c = newval(g), v2 = newval(g);
        emit_f32_scalar(g, c, chance(r, 0.5) ? sqrt((double)D) : 8.0);
        sb_printf(&g->body, "  %%v%d = div %%v%d, %%v%d : f32%s\n", v2, sv, c, sds);
        sv = v2;
        sstd /= sqrt((double)D);
    }
    QT proto;
    memset(&proto, 0, sizeof proto);
    choose_qp(g, -3 * sstd, 3 * sstd, chance(r, 0.7) ? u8 : !u8, false, &proto);
    int si = emit_q(g, sv, 4, sd, &proto, 1);
    if (si < 0)
        return -1;
    /* softmax */
    stage(g);
    int sf = emit_dq(g, si);
    if (chance(r, 0.4)) {
        float *m = malloc((size_t)S * S * sizeof *m);
        bool causal = chance(r, 0.6);
        for (int i = 0; i < S; i++)
            for (int j = 0; j < S; j++)
                m[i * S + j] = (causal ? j > i : chance(r, 0.2)) ? -10000.0f : 0.0f;
        int64_t md[4] = {1, 1, S, S};
        int c = newval(g), v2 = newval(g);
        emit_f32_const(g, c, 4, md, m);
        free(m);
        sb_printf(&g->body, "  %%v%d = add %%v%d, %%v%d : f32%s\n", v2, sf, c, sds);
        sf = v2;
    }
    int pv = newval(g);
    sb_printf(&g->body, "  %%v%d = softmax %%v%d, axis=-1 : f32%s\n", pv, sf, sds);
    memset(&proto, 0, sizeof proto);
    if (chance(r, 0.5)) { /* ORT's QDQSoftmax: 1/256, zero point 0, u8 */
        proto.u8 = true;
        proto.s = 1.0f / 256;
        proto.zp = 0;
        proto.qmin = 0;
        proto.qmax = 255;
    } else {
        choose_qp(g, 0, 1, chance(r, 0.8), false, &proto);
    }
    int pi = emit_q(g, pv, 4, sd, &proto, 1);
    if (pi < 0)
        return -1;
    /* context */
    stage(g);
    QT vq = g->pool[vh];
    int pf = emit_dq(g, pi), vf = emit_dq(g, vh);
    int64_t od[4] = {1, H, S, D};
    char ods[96];
    dims_str(ods, sizeof ods, 4, od);
    int ov = newval(g);
    sb_printf(&g->body, "  %%v%d = matmul %%v%d, %%v%d : f32%s\n", ov, pf, vf, ods);
    memset(&proto, 0, sizeof proto);
    choose_qp(g, qt_lo(&vq), qt_hi(&vq), chance(r, 0.7) ? vq.u8 : !vq.u8, false, &proto);
    int oi = emit_q(g, ov, 4, od, &proto, 1);
    if (oi < 0)
        return -1;
    int64_t td[4] = {1, S, H, D};
    int ti = layout_stage(g, oi, "perm=[0, 2, 1, 3]", 4, td);
    if (ti < 0)
        return -1;
    char sh[64];
    snprintf(sh, sizeof sh, "shape=[1, %d, %d]", S, H * D);
    return layout_stage(g, ti, sh, 3, xd);
}

/* element-wise chain ops for op_island: one input x, scalar or per-channel constants */
enum { E_ADDC, E_SUBC, E_MULC, E_DIVC, E_MULX, E_ADDX, E_RELU, E_SIGMOID, E_TANH, E_ERF, E_COUNT };

typedef struct EOp {
    int op;
    float *c; /* constants: 1 (scalar) or C (last axis) */
    int nc;
} EOp;

static double
eop_eval(const EOp *o, double v, double x, int ch)
{
    float c = o->c ? o->c[o->nc > 1 ? ch : 0] : 0;
    /* f32 per op, as the graph computes it */
    switch (o->op) {
    case E_ADDC: return (float)(v + c);
    case E_SUBC: return (float)(v - c);
    case E_MULC: return (float)(v * c);
    case E_DIVC: return (float)(v / c);
    case E_MULX: return (float)(v * x);
    case E_ADDX: return (float)(v + x);
    case E_RELU: return v > 0 ? v : 0;
    case E_SIGMOID: return (float)(1.0 / (1.0 + exp(-v)));
    case E_TANH: return (float)tanh(v);
    default: return (float)erf(v);
    }
}

/* A float island between DQ and Q (what exports leave unquantized): LayerNorm over the last
 * axis, the erf GELU as torch exports it (Div, Erf, Add, Mul, Mul), the tanh GELU (GPT-2's
 * gelu_new with x^3 as Mul, Mul), or a random chain of 2-5 element-wise ops over x with scalar
 * or per-channel constants (x may be used again). The output Q's range comes from evaluating
 * the chain over every integer of x's storage range and every channel. */
static int
op_island(Gen *g)
{
    Rng *r = &g->r;
    int xi = pick(g, 0);
    if (xi < 0)
        return -1;
    QT x = g->pool[xi];
    int C = (int)x.d[x.rank - 1];
    char ds[96];
    dims_str(ds, sizeof ds, x.rank, x.d);
    int xf = emit_dq(g, xi);
    int kind = fz_int(r, 0, 3);
    double lo = INFINITY, hi = -INFINITY;
    int cur = xf;
    if (kind == 0) {
        float *sc = malloc((size_t)C * sizeof *sc), *bi = malloc((size_t)C * sizeof *bi);
        double gm = 0, bm = 0;
        for (int c = 0; c < C; c++) {
            sc[c] = (float)(0.5 + fz_unif(r));
            bi[c] = (float)(fz_unif(r) - 0.5);
            gm = fmax(gm, sc[c]);
            bm = fmax(bm, fabs(bi[c]));
        }
        int64_t cd[4] = {C, 0, 0, 0};
        int sv = newval(g), bv = newval(g), v = newval(g);
        emit_f32_const(g, sv, 1, cd, sc);
        emit_f32_const(g, bv, 1, cd, bi);
        free(sc);
        free(bi);
        sb_printf(&g->body, "  %%v%d = layernorm %%v%d, %%v%d, %%v%d, axis=-1, epsilon=%g : f32%s\n", v,
                  xf, sv, bv, chance(r, 0.5) ? 1e-5 : 1e-12, ds);
        double m = sqrt(C > 1 ? C - 1.0 : 1.0);
        m = m > 3 ? 3 : m;
        lo = -m * gm - bm;
        hi = m * gm + bm;
        cur = v;
    } else {
        EOp ops[9];
        int n = 0;
        if (kind == 1) { /* erf GELU */
            static const float k2 = 1.41421353816986083984f, one = 1.0f, half = 0.5f;
            ops[n++] = (EOp){E_DIVC, (float *)&k2, 1};
            ops[n++] = (EOp){E_ERF, NULL, 0};
            ops[n++] = (EOp){E_ADDC, (float *)&one, 1};
            ops[n++] = (EOp){E_MULX, NULL, 0};
            ops[n++] = (EOp){E_MULC, (float *)&half, 1};
        } else if (kind == 2) { /* tanh GELU: 0.5 x (1 + tanh(0.79788 (x + 0.044715 x^3))) */
            static const float a = 0.044715f, b = 0.7978845834732056f, one = 1.0f, half = 0.5f;
            ops[n++] = (EOp){E_MULX, NULL, 0};
            ops[n++] = (EOp){E_MULX, NULL, 0};
            ops[n++] = (EOp){E_MULC, (float *)&a, 1};
            ops[n++] = (EOp){E_ADDX, NULL, 0};
            ops[n++] = (EOp){E_MULC, (float *)&b, 1};
            ops[n++] = (EOp){E_TANH, NULL, 0};
            ops[n++] = (EOp){E_ADDC, (float *)&one, 1};
            ops[n++] = (EOp){E_MULX, NULL, 0};
            ops[n++] = (EOp){E_MULC, (float *)&half, 1};
        } else {
            int len = fz_int(r, 2, 5);
            for (int i = 0; i < len; i++) {
                int op = fz_int(r, 0, E_COUNT - 1);
                EOp o = {op, NULL, 0};
                if (op <= E_DIVC) {
                    o.nc = chance(r, 0.4) ? C : 1;
                    o.c = malloc((size_t)o.nc * sizeof *o.c);
                    for (int c = 0; c < o.nc; c++) {
                        double v = op == E_DIVC ? 0.25 + 2 * fz_unif(r) : 2 * fz_unif(r) - 1;
                        o.c[c] = (float)(op == E_DIVC && chance(r, 0.3) ? -v : v);
                    }
                }
                ops[n++] = o;
            }
        }
        /* the range: every integer of x, every channel */
        for (int q = x.qmin; q <= x.qmax; q++) {
            double xv = (float)((double)(q - x.zp) * x.s);
            for (int ch = 0; ch < C; ch++) {
                double v = xv;
                for (int i = 0; i < n; i++)
                    v = eop_eval(&ops[i], v, xv, ch);
                if (isfinite(v)) {
                    lo = fmin(lo, v);
                    hi = fmax(hi, v);
                }
                bool perch = false;
                for (int i = 0; i < n; i++)
                    perch |= ops[i].nc > 1;
                if (!perch)
                    break;
            }
        }
        static const char *names[E_COUNT] = {"add", "sub", "mul", "div", "mul", "add", "relu",
                                             "sigmoid", "tanh", "erf"};
        for (int i = 0; i < n; i++) {
            int v = newval(g);
            const EOp *o = &ops[i];
            if (o->c) {
                int c = newval(g);
                int64_t cd[4] = {o->nc, 0, 0, 0};
                emit_f32_const(g, c, 1, cd, o->c);
                sb_printf(&g->body, "  %%v%d = %s %%v%d, %%v%d : f32%s\n", v, names[o->op], cur, c, ds);
            } else if (o->op == E_MULX || o->op == E_ADDX) {
                sb_printf(&g->body, "  %%v%d = %s %%v%d, %%v%d : f32%s\n", v, names[o->op], cur, xf, ds);
            } else {
                sb_printf(&g->body, "  %%v%d = %s %%v%d : f32%s\n", v, names[o->op], cur, ds);
            }
            cur = v;
        }
        if (kind == 3)
            for (int i = 0; i < n; i++)
                free(ops[i].c);
    }
    if (!(lo <= hi)) {
        lo = -1;
        hi = 1;
    }
    QT proto;
    memset(&proto, 0, sizeof proto);
    choose_qp(g, lo, hi, out_u8(g, &x), false, &proto);
    return emit_q(g, cur, x.rank, x.d, &proto, 1);
}

/* Selection and reduction ops between a dequantize and a quantize (--select-ops): where on a
 * comparison with a constant or with a broadcast reduce_max (an argmax-like mask), the other
 * branch a constant on x's grid; reduce_max / reduce_min kept as 1 and expanded back; tile;
 * reduce_sum; a cast round trip through f16; and a gather along an axis by the run-time
 * indices of argmax (reshaped to a vector and sliced to at most 8). The selections and copies
 * keep x's parameters (no new rounding: the result is values of x or a constant on its grid). */
static int
op_select(Gen *g)
{
    Rng *r = &g->r;
    int xi = pick(g, 0);
    if (xi < 0)
        return -1;
    QT x = g->pool[xi];
    int xf = emit_dq(g, xi), v = newval(g), rank = x.rank, a = fz_int(r, 0, x.rank - 1);
    int64_t yd[4];
    memcpy(yd, x.d, sizeof yd);
    char xs[96], ys[96];
    dims_str(xs, sizeof xs, x.rank, x.d);
    float grid = (float)((double)(fz_int(r, x.qmin, x.qmax) - x.zp) * x.s);
    QT proto = x;
    int add = 0;
    switch (fz_int(r, 0, 6)) {
    case 0: { /* where(cmp(x, c), x, u) */
        static const char *cmp[] = {"less", "less_equal", "greater", "greater_equal", "equal"};
        int c = newval(g), u = newval(g), m = newval(g);
        float cv = (float)((double)(fz_int(r, x.qmin, x.qmax) - x.zp) * x.s);
        sb_printf(&g->body, "  %%v%d = const dense<f32[], [%.9g]>\n", c, (double)cv);
        sb_printf(&g->body, "  %%v%d = %s %%v%d, %%v%d : bool%s\n", m, cmp[fz_int(r, 0, 4)],
                  xf, c, xs);
        sb_printf(&g->body, "  %%v%d = const dense<f32[], [%.9g]>\n", u, (double)grid);
        sb_printf(&g->body, "  %%v%d = where %%v%d, %%v%d, %%v%d : f32%s\n", v, m, xf, u, xs);
        break;
    }
    case 1: { /* where(equal(x, reduce_max(x, a)), x, u): the mask broadcasts along a */
        int mx = newval(g), m = newval(g), u = newval(g);
        int64_t md[4];
        memcpy(md, x.d, sizeof md);
        md[a] = 1;
        char ms[96];
        dims_str(ms, sizeof ms, x.rank, md);
        sb_printf(&g->body, "  %%v%d = reduce_max %%v%d, axes=[%d], keepdims=1 : f32%s\n", mx,
                  xf, a, ms);
        sb_printf(&g->body, "  %%v%d = equal %%v%d, %%v%d : bool%s\n", m, xf, mx, xs);
        sb_printf(&g->body, "  %%v%d = const dense<f32[], [%.9g]>\n", u, (double)grid);
        sb_printf(&g->body, "  %%v%d = where %%v%d, %%v%d, %%v%d : f32%s\n", v, m, u, xf, xs);
        break;
    }
    case 2: { /* expand(reduce_max|min(x, a, keepdims)) */
        int rm = newval(g);
        int64_t md[4];
        memcpy(md, x.d, sizeof md);
        md[a] = 1;
        char ms[96], sh[96];
        dims_str(ms, sizeof ms, x.rank, md);
        dims_str(sh, sizeof sh, x.rank, x.d);
        sb_printf(&g->body, "  %%v%d = %s %%v%d, axes=[%d], keepdims=1 : f32%s\n", rm,
                  chance(r, 0.5) ? "reduce_max" : "reduce_min", xf, a, ms);
        sb_printf(&g->body, "  %%v%d = expand %%v%d, shape=%s : f32%s\n", v, rm, sh, xs);
        break;
    }
    case 3: { /* tile one axis twice */
        char rep[64] = "[";
        for (int k = 0; k < x.rank; k++) {
            yd[k] = k == a ? 2 * x.d[k] : x.d[k];
            snprintf(rep + strlen(rep), sizeof rep - strlen(rep), k ? ", %d" : "%d", k == a ? 2 : 1);
        }
        dims_str(ys, sizeof ys, x.rank, yd);
        sb_printf(&g->body, "  %%v%d = tile %%v%d, repeats=%s] : f32%s\n", v, xf, rep, ys);
        break;
    }
    case 4: { /* reduce_sum over a, kept as 1 */
        yd[a] = 1;
        dims_str(ys, sizeof ys, x.rank, yd);
        sb_printf(&g->body, "  %%v%d = reduce_sum %%v%d, axes=[%d], keepdims=1 : f32%s\n", v, xf,
                  a, ys);
        memset(&proto, 0, sizeof proto);
        double n = (double)x.d[a];
        choose_qp(g, qt_lo(&x) * n, qt_hi(&x) * n, out_u8(g, &x), false, &proto);
        add = 1;
        break;
    }
    case 5: { /* cast to f16 and back */
        int h = newval(g);
        sb_printf(&g->body, "  %%v%d = cast %%v%d, to=\"f16\" : f16%s\n", h, xf, xs);
        sb_printf(&g->body, "  %%v%d = cast %%v%d, to=\"f32\" : f32%s\n", v, h, xs);
        add = 1;
        break;
    }
    default: { /* gather along a by argmax's run-time indices (over axis b != a if any) */
        int b = x.rank > 1 ? (a + 1) % x.rank : a, am = newval(g), fl = newval(g), sl = newval(g);
        int64_t ad[4], cnt = 1;
        int ar = 0;
        for (int k = 0; k < x.rank; k++)
            if (k != b) {
                ad[ar++] = x.d[k];
                cnt *= x.d[k];
            }
        char as[96];
        dims_str(as, sizeof as, ar, ad);
        int64_t take = cnt < 8 ? cnt : 8;
        /* argmax over b gives indices into b; gather them along a only if a has b's size */
        int ga = x.d[a] == x.d[b] ? a : b;
        sb_printf(&g->body, "  %%v%d = argmax %%v%d, axis=%d, keepdims=0 : i64%s\n", am, xf, b, as);
        sb_printf(&g->body, "  %%v%d = reshape %%v%d, shape=[%lld] : i64[%lld]\n", fl, am,
                  (long long)cnt, (long long)cnt);
        sb_printf(&g->body, "  %%v%d = slice %%v%d, starts=[0], ends=[%lld] : i64[%lld]\n", sl, fl,
                  (long long)take, (long long)take);
        yd[ga] = take;
        dims_str(ys, sizeof ys, x.rank, yd);
        sb_printf(&g->body, "  %%v%d = gather %%v%d, %%v%d, axis=%d : f32%s\n", v, xf, sl, ga, ys);
        break;
    }
    }
    return emit_q(g, v, rank, yd, &proto, add);
}

/* ONNX Runtime's dynamic quantization of a MatMul (--dynq): x dequantized,
 * then dynamic_quantize, matmul_integer with constant weights [K, N] (i8 with zero point 0, i8
 * with a small zero point, or u8 with one zero point per column; the zero point operands
 * sometimes absent), cast to f32, mul by mul(x_scale, w_scale) (w_scale one value or one per
 * column; either operand order), optionally an add of a constant f32 bias [N], then quantized
 * into the pool. The pipeline folds it into one matmul_integer with the same f32 operations
 * (docs/numerics.md), so only the final quantize rounds. */
static int
op_dynq(Gen *g)
{
    Rng *r = &g->r;
    const GenSpec *sp = g->sp;
    int ai = pick(g, fz_int(r, 2, 4));
    if (ai < 0) {
        int64_t d[4] = {cap(fz_int(r, 1, 17), sp->maxhw), cap(fz_int(r, 1, 80), 4 * sp->maxc), 0, 0};
        if ((ai = new_input(g, 2, d, chance(r, 0.6))) < 0)
            return -1;
    }
    QT a = g->pool[ai];
    int64_t K = a.d[a.rank - 1];
    int N = chance(r, 0.15) ? cap(fz_int(r, 33, 90), 4 * sp->maxc) : cap(fz_int(r, 1, 24), 2 * sp->maxc);
    int64_t yd[4];
    memcpy(yd, a.d, sizeof yd);
    yd[a.rank - 1] = N;
    char xds[96], yds[96], nds[32];
    dims_str(xds, sizeof xds, a.rank, a.d);
    dims_str(yds, sizeof yds, a.rank, yd);
    int af = emit_dq(g, ai);
    int vq = newval(g), vs = newval(g), vz = newval(g);
    sb_printf(&g->body, "  %%v%d, %%v%d, %%v%d = dynamic_quantize %%v%d : u8%s, f32[], u8[]\n",
              vq, vs, vz, af, xds);
    int kind = fz_int(r, 0, 2); /* i8 zp 0, i8 small zp, u8 per-column zp */
    bool wu8 = kind == 2, perch = wu8 || chance(r, 0.5);
    snprintf(nds, sizeof nds, perch ? "[%d]" : "[]", N);
    int vw = newval(g);
    sb_printf(&g->body, "  %%v%d = const dense<%s[%lld,%d], 0x", vw, wu8 ? "u8" : "i8", (long long)K, N);
    for (int64_t i = 0; i < K * N; i++)
        sb_printf(&g->body, "%02X", (unsigned)(fz_int(r, wu8 ? 0 : -128, wu8 ? 255 : 127) & 0xFF));
    sb_printf(&g->body, ">\n");
    int vwz = 0;
    if (kind > 0 || chance(r, 0.5)) {
        vwz = newval(g);
        sb_printf(&g->body, "  %%v%d = const dense<%s%s, [", vwz, wu8 ? "u8" : "i8", wu8 ? nds : "[]");
        for (int c = 0; c < (wu8 ? N : 1); c++)
            sb_printf(&g->body, "%s%d", c ? ", " : "", kind == 0 ? 0 : wu8 ? fz_int(r, 100, 156) : fz_int(r, -6, 6));
        sb_printf(&g->body, "]>\n");
    }
    float ws = rand_scale(r, -10, -6);
    float *sv = malloc((size_t)N * sizeof *sv);
    for (int c = 0; c < N; c++)
        sv[c] = perch ? (float)(ws * (0.5 + fz_unif(r))) : ws;
    int vws = newval(g);
    emit_f32_const(g, vws, perch ? 1 : 0, (int64_t[]){N}, sv);
    int va = newval(g), vc = newval(g), vp = newval(g), vm = newval(g);
    if (vwz)
        sb_printf(&g->body, "  %%v%d = matmul_integer %%v%d, %%v%d, %%v%d, %%v%d : i32%s\n", va, vq, vw, vz, vwz, yds);
    else
        sb_printf(&g->body, "  %%v%d = matmul_integer %%v%d, %%v%d, %%v%d : i32%s\n", va, vq, vw, vz, yds);
    sb_printf(&g->body, "  %%v%d = cast %%v%d, to=\"f32\" : f32%s\n", vc, va, yds);
    bool sw = chance(r, 0.5);
    sb_printf(&g->body, "  %%v%d = mul %%v%d, %%v%d : f32%s\n", vp, sw ? vws : vs, sw ? vs : vws, nds);
    sw = chance(r, 0.5);
    sb_printf(&g->body, "  %%v%d = mul %%v%d, %%v%d : f32%s\n", vm, sw ? vp : vc, sw ? vc : vp, yds);
    /* the result's spread: sqrt(K) products of x (about 0.3 of its range's magnitude) and
     * weights (about 74 steps of ws, uniform integers) */
    double ystd = sqrt((double)K) * qt_mag(&a) * 0.3 * 74.0 * ws;
    int vy = vm;
    if (chance(r, 0.6)) {
        int vb = newval(g);
        for (int c = 0; c < N; c++)
            sv[c] = (float)((fz_unif(r) - 0.5) * ystd);
        emit_f32_const(g, vb, 1, (int64_t[]){N}, sv);
        vy = newval(g);
        sb_printf(&g->body, "  %%v%d = add %%v%d, %%v%d : f32%s\n", vy, vm, vb, yds);
    }
    free(sv);
    double lo = -2.5 * ystd, hi = 2.5 * ystd;
    bool relu_q;
    int av = emit_act(g, vy, a.rank, yd, &lo, &hi, &relu_q);
    QT proto;
    memset(&proto, 0, sizeof proto);
    choose_qp(g, lo, hi, out_u8(g, &a), relu_q, &proto);
    return emit_q(g, av, a.rank, yd, &proto, 1);
}

/* ---- weight-only ops (--wonly) ----
 * A float activation (a graph input, filled uniformly in [-4.4, 4.4) by fuzz.c, never a
 * dequantize: qdq-fold would make the op integer) times constant weights behind a dequantize:
 * i8, u8, i4 or u4 integers per tensor, per output channel or (matmul, gemm) in blocks along K
 * (DequantizeLinear-21 block_size, constant scale and zero point operands), or f32 weights
 * behind quantize -> dequantize with a narrow range ([-8, 7], [-32, 31], [-7, 7], [-127, 127]:
 * 4- and 6-bit fake quantizers in i8 storage). The result is quantized back into the pool, so
 * the literal-vs-integer bound and the JIT-vs-reference check both see the weight-only kernels
 * (wmatmul, wconv) and their edges: K not a multiple of the blocks, partial panels and tiles,
 * zero points, odd element counts of 4-bit constants. */

typedef struct WoW {
    int axis, kaxis; /* output channel axis, K axis (blocks); kaxis -1: no blocks */
    double mag;      /* typical |w - zp| * scale */
} WoW;

static void
wo_ints(Gen *g, Sb *b, const char *et, int64_t n, const int *v)
{
    bool hex = !strcmp(et, "i8") || !strcmp(et, "u8");
    sb_printf(b, hex ? "0x" : "[");
    for (int64_t i = 0; i < n; i++)
        sb_printf(b, hex ? "%02X" : i ? ", %d" : "%d", hex ? (unsigned)(v[i] & 0xFF) : (unsigned)v[i]);
    sb_printf(b, hex ? "" : "]");
    (void)g;
}

/* The dequantized weight [d] (rank 2 or 4); returns its f32 value id. */
static int
wo_weight(Gen *g, int rank, const int64_t *d, WoW *w)
{
    Rng *r = &g->r;
    static const char *et[] = {"i8", "u8", "i4", "u4"};
    static const int tlo[] = {-128, 0, -8, 0}, thi[] = {127, 255, 7, 15};
    static const int nlo[] = {-8, -32, -7, -127}, nhi[] = {7, 31, 7, 127};
    int t = fz_int(r, 0, 4); /* 4: f32 behind a narrow quantize -> dequantize */
    int nr = fz_int(r, 0, 3);
    int lo = t < 4 ? tlo[t] : nlo[nr], hi = t < 4 ? thi[t] : nhi[nr];
    int form = fz_int(r, 0, w->kaxis >= 0 && t < 4 ? 2 : 1); /* tensor, channel, blocks */
    int64_t n = numel(rank, d), inner = 1;
    for (int k = (form == 2 ? w->kaxis : w->axis) + 1; k < rank; k++)
        inner *= d[k];
    int bs = form == 2 ? fz_int(r, 1, (int)(d[w->kaxis] < 40 ? d[w->kaxis] : 40)) : 1;
    int64_t pd[4];
    memcpy(pd, d, sizeof pd);
    if (form == 2)
        pd[w->kaxis] = (d[w->kaxis] + bs - 1) / bs;
    int64_t np = form == 0 ? 1 : form == 1 ? d[w->axis] : numel(rank, pd);
    float base = rand_scale(r, -9, -4);
    bool zp = t == 1 || t == 3 || chance(r, 0.25);
    int mid = (lo + hi + 1) / 2, wob = (hi - lo) / 16 + 1;
    float *sv = malloc((size_t)np * sizeof *sv);
    int *zv = malloc((size_t)np * sizeof *zv), *q = malloc((size_t)n * sizeof *q);
    for (int64_t i = 0; i < np; i++) {
        sv[i] = chance(r, 0.7) ? (float)(base * (0.5 + 1.5 * fz_unif(r))) : base;
        zv[i] = !zp ? 0 : t == 4 ? 0 : fz_int(r, mid - wob, mid + wob);
    }
    bool uni = chance(r, 0.3); /* one zero point for all: the 4-bit table form */
    for (int64_t i = 0; uni && i < np; i++)
        zv[i] = zv[0];
    char ds[96], ps[96];
    dims_str(ds, sizeof ds, rank, d);
    dims_str(ps, sizeof ps, rank, pd);
    for (int64_t i = 0; i < n; i++)
        q[i] = chance(r, 0.05) ? (chance(r, 0.5) ? lo : hi) : fz_int(r, lo, hi);
    Sb sl = {0}, zl = {0};
    for (int64_t i = 0; i < np; i++) {
        sb_printf(&sl, "%s%.9g", i ? ", " : "", (double)sv[i]);
        sb_printf(&zl, "%s%d", i ? ", " : "", zv[i]);
    }
    double mag = 0;
    for (int64_t i = 0; i < np; i++)
        mag += sv[i];
    w->mag = mag / (double)np * (hi - lo) / 4.0;
    int wv = newval(g), dv = newval(g);
    if (t == 4) {
        /* PyTorch style with a narrow range: f32 weights, quantize (i8, per tensor or axis), dequantize */
        float *f = malloc((size_t)n * sizeof *f);
        for (int64_t i = 0; i < n; i++) {
            int64_t c = form ? (i / inner) % d[w->axis] : 0;
            f[i] = (float)(((double)q[i] + (chance(r, 0.1) ? 0.5 : fz_unif(r) - 0.5) + (chance(r, 0.03) ? 40 : 0)) * sv[c]);
        }
        emit_f32_const(g, wv, rank, d, f);
        free(f);
        int qv = newval(g);
        char ax[32] = "";
        if (form)
            snprintf(ax, sizeof ax, "axis=%d, ", w->axis);
        const char *br = form ? "[" : "", *kt = form ? "]" : "";
        sb_printf(&g->body, "  %%v%d = quantize %%v%d, %sscale=%s%s%s, zp=%s%s%s, range=[%d, %d] : i8%s\n", qv, wv,
                  ax, br, sl.p, kt, br, zl.p, kt, lo, hi, ds);
        sb_printf(&g->body, "  %%v%d = dequantize %%v%d, %sscale=%s%s%s, zp=%s%s%s, range=[%d, %d] : f32%s\n", dv, qv,
                  ax, br, sl.p, kt, br, zl.p, kt, lo, hi, ds);
    } else {
        sb_printf(&g->body, "  %%v%d = const dense<%s%s, ", wv, et[t], ds);
        wo_ints(g, &g->body, et[t], n, q);
        sb_printf(&g->body, ">\n");
        if (form == 2) {
            int vs = newval(g), vz = newval(g);
            sb_printf(&g->body, "  %%v%d = const dense<f32%s, [%s]>\n", vs, ps, sl.p);
            if (zp) {
                sb_printf(&g->body, "  %%v%d = const dense<%s%s, ", vz, et[t], ps);
                wo_ints(g, &g->body, et[t], np, zv);
                sb_printf(&g->body, ">\n");
                sb_printf(&g->body, "  %%v%d = dequantize %%v%d, %%v%d, %%v%d, block_size=%d, axis=%d : f32%s\n",
                          dv, wv, vs, vz, bs, w->kaxis, ds);
            } else {
                sb_printf(&g->body, "  %%v%d = dequantize %%v%d, %%v%d, block_size=%d, axis=%d : f32%s\n",
                          dv, wv, vs, bs, w->kaxis, ds);
            }
        } else if (form == 1) {
            sb_printf(&g->body, "  %%v%d = dequantize %%v%d, axis=%d, scale=[%s], zp=[%s] : f32%s\n", dv, wv,
                      w->axis, sl.p, zl.p, ds);
        } else {
            sb_printf(&g->body, "  %%v%d = dequantize %%v%d, scale=%s, zp=%s : f32%s\n", dv, wv, sl.p, zl.p, ds);
        }
    }
    sb_free(&sl);
    sb_free(&zl);
    free(sv), free(zv), free(q);
    return dv;
}

/* A float graph input; its name "%inN" in name. */
static bool
wo_input(Gen *g, int rank, const int64_t *d, char *name, size_t len)
{
    if (g->nin >= MAXIN)
        return false;
    char ds[96];
    dims_str(ds, sizeof ds, rank, d);
    int in = g->nin++;
    sb_printf(&g->sig, "%s%%in%d: f32%s", in ? ", " : "", in, ds);
    snprintf(name, len, "%%in%d", in);
    return true;
}

static int
op_wonly(Gen *g)
{
    Rng *r = &g->r;
    const GenSpec *sp = g->sp;
    char x[32];
    int kind = fz_int(r, 0, 2); /* matmul, gemm, conv */
    int64_t yd[4], K;
    int yrank, mv = newval(g);
    WoW w = {0};
    Sb op = {0};
    if (kind < 2) {
        static const int ms[] = {1, 1, 1, 2, 3, 5, 8, 16};
        int64_t M = cap(ms[fz_int(r, 0, 7)], 4 * sp->maxn);
        K = cap(fz_int(r, 1, chance(r, 0.2) ? 300 : 70), 16 * sp->maxc);
        int64_t N = cap(fz_int(r, 1, chance(r, 0.2) ? 200 : 40), 16 * sp->maxc);
        bool batch = kind == 0 && chance(r, 0.25), tb = kind == 1 && chance(r, 0.6);
        int64_t xd[4] = {batch ? cap(fz_int(r, 2, 3), sp->maxn) : M, M, K, 0};
        if (!batch)
            xd[1] = K;
        if (!wo_input(g, batch ? 3 : 2, xd, x, sizeof x))
            return -1;
        int64_t wd[4] = {tb ? N : K, tb ? K : N, 0, 0};
        w.axis = tb ? 0 : 1;
        w.kaxis = tb ? 1 : 0;
        int wf = wo_weight(g, 2, wd, &w);
        yrank = batch ? 3 : 2;
        memcpy(yd, xd, sizeof yd);
        yd[yrank - 1] = N;
        char yds[96];
        dims_str(yds, sizeof yds, yrank, yd);
        if (kind == 0) {
            sb_printf(&op, "  %%v%d = matmul %s, %%v%d : f32%s\n", mv, x, wf, yds);
        } else {
            int bv = 0;
            if (chance(r, 0.6)) {
                float *f = malloc((size_t)N * sizeof *f);
                for (int64_t j = 0; j < N; j++)
                    f[j] = (float)((fz_unif(r) * 2 - 1) * 2);
                bv = newval(g);
                emit_f32_const(g, bv, 1, &N, f);
                free(f);
            }
            sb_printf(&op, "  %%v%d = gemm %s, %%v%d", mv, x, wf);
            if (bv)
                sb_printf(&op, ", %%v%d", bv);
            sb_printf(&op, ", transB=%d%s%s : f32%s\n", tb ? 1 : 0, chance(r, 0.1) ? ", alpha=0.5" : "",
                      bv && chance(r, 0.2) ? ", beta=2.0" : "", yds);
        }
    } else {
        int64_t Nb = cap(fz_int(r, 1, 2), sp->maxn), C = cap(fz_int(r, 1, 24), 2 * sp->maxc);
        int64_t H = cap(fz_int(r, 1, 14), sp->maxhw), W = cap(fz_int(r, 1, chance(r, 0.2) ? 40 : 14), 3 * sp->maxhw);
        int group = 1;
        int64_t M = cap(fz_int(r, 1, 40), 2 * sp->maxc);
        if (chance(r, 0.3) && C > 1) {
            group = (int)C;
            M = C * (chance(r, 0.8) ? 1 : 2);
        } else if (chance(r, 0.15) && C % 2 == 0 && M % 2 == 0) {
            group = 2;
        }
        static const int ks[] = {1, 1, 3, 3, 3, 2, 5};
        int kh = ks[fz_int(r, 0, 6)], kw = chance(r, 0.8) ? kh : ks[fz_int(r, 0, 6)];
        int sh = chance(r, 0.6) ? 1 : fz_int(r, 2, 3), sw = chance(r, 0.85) ? sh : fz_int(r, 1, 3);
        int dh = kh > 1 && chance(r, 0.15) ? 2 : 1, dw = kw > 1 && chance(r, 0.8) ? dh : 1;
        int64_t pads[4];
        for (int k = 0; k < 4; k++)
            pads[k] = chance(r, 0.6) ? (k % 2 ? dw * (kw - 1) / 2 : dh * (kh - 1) / 2) : fz_int(r, 0, (k % 2 ? kw : kh) - 1);
        if (H + pads[0] + pads[2] < dh * (kh - 1) + 1 || W + pads[1] + pads[3] < dw * (kw - 1) + 1) {
            kh = kw = dh = dw = 1;
            memset(pads, 0, sizeof pads);
        }
        int64_t xd[4] = {Nb, C, H, W};
        if (!wo_input(g, 4, xd, x, sizeof x))
            return -1;
        int64_t wd[4] = {M, C / group, kh, kw};
        w.axis = 0;
        w.kaxis = -1;
        int wf = wo_weight(g, 4, wd, &w);
        K = C / group * kh * kw;
        int bv = 0;
        if (chance(r, 0.6)) {
            float *f = malloc((size_t)M * sizeof *f);
            for (int64_t j = 0; j < M; j++)
                f[j] = (float)((fz_unif(r) * 2 - 1) * 2);
            bv = newval(g);
            emit_f32_const(g, bv, 1, &M, f);
            free(f);
        }
        yrank = 4;
        int64_t y4[4] = {Nb, M, (H + pads[0] + pads[2] - dh * (kh - 1) - 1) / sh + 1,
                         (W + pads[1] + pads[3] - dw * (kw - 1) - 1) / sw + 1};
        memcpy(yd, y4, sizeof yd);
        char yds[96];
        dims_str(yds, sizeof yds, 4, yd);
        sb_printf(&op, "  %%v%d = conv %s, %%v%d", mv, x, wf);
        if (bv)
            sb_printf(&op, ", %%v%d", bv);
        sb_printf(&op, ", strides=[%d, %d], pads=[%lld, %lld, %lld, %lld], dilations=[%d, %d], group=%d : f32%s\n",
                  sh, sw, (long long)pads[0], (long long)pads[1], (long long)pads[2], (long long)pads[3], dh, dw,
                  group, yds);
    }
    sb_printf(&g->body, "%s", op.p);
    sb_free(&op);
    double ystd = sqrt((double)K) * 2.5 * w.mag + 1e-3;
    double lo = -3 * ystd, hi = 3 * ystd;
    bool relu_q;
    int av = emit_act(g, mv, yrank, yd, &lo, &hi, &relu_q);
    QT proto;
    memset(&proto, 0, sizeof proto);
    choose_qp(g, lo, hi, chance(r, 0.5), relu_q, &proto);
    return emit_q(g, av, yrank, yd, &proto, 1);
}

/* ---- driver ---- */

enum { K_CONV, K_MATMUL, K_GEMM, K_BIN, K_CONCAT, K_POOL, K_ACT, K_LAYOUT, K_REQ, K_SOFTMAX,
       K_FCONV, K_QDQ, K_TYPES, K_ATTN, K_ISLAND, K_SELECT, K_DYNQ, K_WONLY, K_COUNT };
/* K_QDQ's weight is 0 without --qdq-pairs, K_TYPES's without --qdq-types, K_ATTN's and
 * K_ISLAND's without --transformer, K_SELECT's without --select-ops, K_DYNQ's without --dynq,
 * K_WONLY's without --wonly, so the other graphs of a seed stay the same */
static const int kweights[K_COUNT] = {30, 10, 8, 12, 6, 10, 10, 10, 3, 2, 2, 0, 0, 0, 0, 0, 0, 0};
#define K_QDQ_WEIGHT 25
#define K_TYPES_WEIGHT 25
#define K_ATTN_WEIGHT 20
#define K_ISLAND_WEIGHT 30
#define K_SELECT_WEIGHT 40
#define K_DYNQ_WEIGHT 25
#define K_WONLY_WEIGHT 40

static int
run_slot(Gen *g)
{
    int w[K_COUNT], tot = 0;
    memcpy(w, kweights, sizeof w);
    if (g->sp->qdq_pairs)
        w[K_QDQ] = K_QDQ_WEIGHT;
    if (g->sp->qdq_types)
        w[K_TYPES] = K_TYPES_WEIGHT;
    if (g->sp->transformer) {
        w[K_ATTN] = K_ATTN_WEIGHT;
        w[K_ISLAND] = K_ISLAND_WEIGHT;
    }
    if (g->sp->select_ops)
        w[K_SELECT] = K_SELECT_WEIGHT;
    if (g->sp->dynq)
        w[K_DYNQ] = K_DYNQ_WEIGHT;
    if (g->sp->wonly)
        w[K_WONLY] = K_WONLY_WEIGHT;
    if (g->sp->sym_pct >= 100) {
        /* --symbolic: fewer of the kinds that do not type symbols, so most graphs keep them */
        w[K_CONV] = 4;
        w[K_FCONV] = 1;
        w[K_GEMM] = 2;
        w[K_POOL] = 2;
    }
    for (int k = 0; k < K_COUNT; k++)
        tot += w[k];
    int x = fz_int(&g->r, 0, tot - 1), k = 0;
    while (x >= w[k])
        x -= w[k++];
    if (g->sp->only_kind >= 0)
        k = g->sp->only_kind;
    /* the op kinds whose IR ops all type symbolic dimensions (OPF_SYMDIM), within the limits
     * each of them checks (sym_fail) */
    g->sym_aware = k == K_MATMUL || k == K_BIN || k == K_CONCAT || k == K_ACT ||
                   k == K_LAYOUT || k == K_REQ || k == K_SOFTMAX;
    memset(g->ysym, 0, sizeof g->ysym);
    switch (k) {
    case K_CONV: return op_conv(g, false);
    case K_FCONV: return op_conv(g, true);
    case K_MATMUL: return op_matmul(g);
    case K_GEMM: return op_gemm(g);
    case K_BIN: return op_binary(g);
    case K_CONCAT: return op_concat(g);
    case K_POOL: return op_pool(g);
    case K_ACT: return op_act(g);
    case K_LAYOUT: return op_layout(g);
    case K_REQ: return op_requant(g);
    case K_TYPES: return op_qdq_types(g);
    case K_ATTN: return op_attention(g);
    case K_ISLAND: return op_island(g);
    case K_SELECT: return op_select(g);
    case K_DYNQ: return op_dynq(g);
    case K_WONLY: return op_wonly(g);
    case K_QDQ: {
        int pi = op_qdq_pair(g);
        if (pi >= 0 && chance(&g->r, 0.3))
            pi = op_qdq_pair(g); /* a chain: the next pair starts from this one's result */
        return pi;
    }
    default: return op_softmax(g);
    }
}

/* Outputs: quantized integers (the quantize result) or dequantized f32. */
static void
add_output(Gen *g, int pi, bool dq, Sb *ret, Sb *rty)
{
    GenGraph *gg = g->gg;
    QT *t = &g->pool[pi];
    if (gg->nout >= FZ_MAXOUT)
        return;
    GenOut *o = &gg->out[gg->nout];
    memset(o, 0, sizeof *o);
    o->scale = t->s;
    o->depth = t->depth;
    o->slot = t->slot;
    for (int k = 0; k < 4; k++)
        o->deps[k] = t->deps[k] >= 0 ? g->pool[t->deps[k]].out : (t->deps[k] == -1 ? -1 : -1);
    /* inputs that are not outputs (mode B) are unknown: -2 */
    for (int k = 0; k < 4; k++)
        if (t->deps[k] >= 0 && g->pool[t->deps[k]].slot >= 0 && g->pool[t->deps[k]].out < 0)
            o->deps[k] = -2;
    char ty[256];
    if (dq) {
        char ds[96];
        sdims_str(g, ds, sizeof ds, t->rank, t->d, t->sym, ",");
        int v = emit_dq(g, pi);
        o->kind = OUT_DQ;
        sb_printf(ret, "%s%%v%d", gg->nout ? ", " : "", v);
        sb_printf(rty, "%sf32%s", gg->nout ? ", " : "", ds);
    } else {
        qtype_str(g, ty, sizeof ty, t);
        o->kind = OUT_Q;
        sb_printf(ret, "%s%%v%d", gg->nout ? ", " : "", t->id);
        sb_printf(rty, "%s%s", gg->nout ? ", " : "", ty);
    }
    t->out = gg->nout++;
}

/* Which dimensions of the first graph input are symbols (sp->sym_pct percent of the graphs;
 * one or two dimensions, ?b and ?s), bound to the sizes drawn for them. From a random stream
 * of its own: the graph is the one drawn without symbols. */
static void
sym_choose(Gen *g, int rank, const int64_t *d)
{
    const GenSpec *sp = g->sp;
    Rng r = {sp->seed * 0xA24BAED4963EE407ull + 29};
    if (fz_int(&r, 0, 99) >= sp->sym_pct)
        return;
    int k0 = chance(&r, 0.6) ? 0 : fz_int(&r, 1, rank - 1);
    int k1 = fz_int(&r, 0, rank - 2);
    if (k1 >= k0)
        k1++;
    g->nsym = fz_int(&r, 1, 2);
    if (g->nsym == 2 && k1 < k0) { /* ?b before ?s */
        int t = k0;
        k0 = k1;
        k1 = t;
    }
    g->sym0[k0].m = 1;
    g->symsize[0] = d[k0];
    if (g->nsym == 2) {
        g->sym0[k1].m = 2;
        g->symsize[1] = d[k1];
    }
}

/* One generation of the graph of sp into gg: with sizes, or (print_sym) with the symbols of
 * sym_choose; *sym_ok: the graph has symbols and every op on their paths types them. */
static bool
gen_pass(const GenSpec *sp, GenGraph *gg, bool print_sym, bool *sym_ok)
{
    Gen *g = calloc(1, sizeof *g);
    memset(gg, 0, sizeof *gg);
    g->sp = sp;
    g->gg = gg;
    g->print_sym = print_sym;
    Rng r0 = {sp->seed * 0x2545F4914F6CDD1Dull + 17};
    /* graph input */
    g->r = r0;
    int64_t d[4] = {cap(fz_int(&g->r, 1, 2), sp->maxn), cap(fz_int(&g->r, 1, 16), sp->maxc),
                    cap(fz_int(&g->r, 1, 12), sp->maxhw), cap(fz_int(&g->r, 1, 12), sp->maxhw)};
    if (chance(&g->r, 0.1))
        d[1] = cap(fz_int(&g->r, 17, 72), 4 * sp->maxc); /* deep: K past 64 */
    if (chance(&g->r, 0.15)) {
        int64_t d2[4] = {d[0], cap(fz_int(&g->r, 1, 48), 4 * sp->maxc), 0, 0};
        sym_choose(g, 2, d2);
        new_input_qp(g, 2, d2, chance(&g->r, 0.6), NULL, g->sym0);
    } else {
        sym_choose(g, 4, d);
        new_input_qp(g, 4, d, chance(&g->r, 0.6), NULL, g->sym0);
    }
    bool all_out = sp->all_outputs;
    Sb ret = {0}, rty = {0};
    for (int s = 0; s < sp->nslots; s++) {
        gg->nslots_used = s;
        if (s < 64 && (sp->skip >> s) & 1)
            continue;
        g->r.s = (sp->seed + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)(s + 1) * 0xD1B54A32D192ED03ull);
        g->ncur_deps = 0;
        int before = g->npool;
        int pi = run_slot(g);
        if (pi == -2) {
            gg->nslots_used = s;
            break; /* float output: graph ends */
        }
        (void)before;
        (void)pi;
    }
    if (all_out) {
        /* every quantized result is an output (or, when shrinking to one slot, that slot's
         * result and its direct inputs, so the per-op bound still applies) */
        int oi = -1;
        for (int i = 0; i < g->npool; i++)
            if (g->pool[i].slot >= 0 && g->pool[i].slot == sp->only_slot)
                oi = i;
        for (int i = 0; i < g->npool; i++) {
            if (g->pool[i].slot < 0)
                continue;
            bool want = sp->only_slot < 0 || i == oi;
            for (int k = 0; oi >= 0 && k < 4; k++)
                want |= g->pool[oi].deps[k] == i;
            if (want)
                add_output(g, i, false, &ret, &rty);
        }
    }
    /* unconsumed pool entries made by slots become outputs (mode B), or the last one */
    if (!all_out) {
        for (int i = 0; i < g->npool; i++)
            if (!g->consumed[i] && g->pool[i].slot >= 0 && g->pool[i].out < 0 &&
                (sp->only_slot < 0 || sp->only_slot == g->pool[i].slot))
                add_output(g, i, chance(&g->r, 0.5), &ret, &rty);
    }
    if (gg->float_out_value) {
        char ds[96];
        dims_str(ds, sizeof ds, gg->float_out_rank, gg->float_out_dims);
        GenOut *o = &gg->out[gg->nout];
        memset(o, 0, sizeof *o);
        o->kind = OUT_F32;
        o->depth = 1;
        for (int k = 0; k < 4; k++)
            o->deps[k] = g->cur_deps[k] < 0 || k >= g->ncur_deps ? -1
                         : g->pool[g->cur_deps[k]].out >= 0 ? g->pool[g->cur_deps[k]].out
                         : g->pool[g->cur_deps[k]].slot < 0 ? -1 : -2;
        for (int k = 0; k < g->ncur_deps; k++)
            if (g->pool[g->cur_deps[k]].depth + 1 > o->depth)
                o->depth = g->pool[g->cur_deps[k]].depth + 1;
        sb_printf(&ret, "%s%%v%d", gg->nout ? ", " : "", gg->float_out_value);
        sb_printf(&rty, "%sf32%s", gg->nout ? ", " : "", ds);
        gg->nout++;
    }
    if (gg->nout == 0) {
        /* nothing produced (all slots skipped): return the requantized input */
        g->ncur_deps = 0;
        g->r.s = sp->seed ^ 0x5555;
        g->sym_aware = true;
        memset(g->ysym, 0, sizeof g->ysym);
        int pi = op_requant(g);
        if (pi >= 0)
            add_output(g, pi, false, &ret, &rty);
    }
    Sb *t = &gg->text;
    sb_printf(t, "// qdqc-fuzz seed=%llu slots=%d skip=0x%llx maxn=%d maxc=%d maxhw=%d out=%s%s%s%s%s%s%s%s\n",
              (unsigned long long)sp->seed, sp->nslots, (unsigned long long)sp->skip, sp->maxn,
              sp->maxc, sp->maxhw, sp->all_outputs ? "all" : "leaves",
              sp->only_slot >= 0 ? " (one output)" : "", sp->qdq_pairs ? " --qdq-pairs" : "",
              sp->qdq_types ? " --qdq-types" : "", sp->transformer ? " --transformer" : "",
              sp->select_ops ? " --select-ops" : "", sp->dynq ? " --dynq" : "",
              sp->wonly ? " --wonly" : "");
    if (sp->a16) /* (its own line: the first stays byte-identical without the flag) */
        sb_printf(t, "// qdqc-fuzz --a16\n");
    for (int j = 0; print_sym && j < g->nsym; j++)
        sb_printf(t, "// fz-dim %s %lld\n", sym_name[j], (long long)g->symsize[j]);
    for (int i = 0; i < gg->nscale_in; i++)
        sb_printf(t, "// fz-scale %d %.9g %.9g\n", gg->scale_in[i].input,
                  (double)gg->scale_in[i].lo, (double)gg->scale_in[i].hi);
    for (int i = 0; i < gg->nout; i++) {
        const GenOut *o = &gg->out[i];
        sb_printf(t, "// fz-out %s %.9g %d %d %d %d %d\n",
                  o->kind == OUT_Q ? "q" : o->kind == OUT_DQ ? "dq" : "f32", (double)o->scale,
                  o->depth, o->deps[0], o->deps[1], o->deps[2], o->deps[3]);
    }
    sb_printf(t, "graph @fuzz%llu(%s) -> %s%s%s {\n%s  return %s\n}\n",
              (unsigned long long)sp->seed, g->sig.p ? g->sig.p : "", gg->nout > 1 ? "(" : "",
              rty.p ? rty.p : "", gg->nout > 1 ? ")" : "", g->body.p ? g->body.p : "",
              ret.p ? ret.p : "");
    sb_free(&ret);
    sb_free(&rty);
    sb_free(&g->sig);
    sb_free(&g->body);
    *sym_ok = g->nsym > 0 && !g->sym_fail;
    gg->nsym = *sym_ok ? g->nsym : 0;
    for (int j = 0; j < gg->nsym; j++) {
        gg->sym_name[j] = sym_name[j];
        gg->sym_size[j] = g->symsize[j];
    }
    free(g);
    return gg->nout > 0;
}

bool
fz_generate(const GenSpec *sp, GenGraph *gg)
{
    bool sym = false;
    bool ok = gen_pass(sp, gg, false, &sym);
    if (sym) {
        /* the same graph again, its symbols printed */
        GenGraph *t = malloc(sizeof *t);
        bool sym2 = false;
        gen_pass(sp, t, true, &sym2);
        gg->sym_text = t->text;
        free(t);
    }
    return ok;
}

void
fz_graph_free(GenGraph *gg)
{
    sb_free(&gg->text);
    sb_free(&gg->sym_text);
}
