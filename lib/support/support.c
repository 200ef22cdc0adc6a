/* support.c: allocation helpers, arena, string builder, interning, float formatting. */
#include "support.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
qdqc_fatal(const char *file, int line, const char *msg)
{
    fprintf(stderr, "%s:%d: qdqc internal error: %s\n", file, line, msg);
    abort();
}

/* ---- out of memory (support.h) ---- */
typedef struct OomFrame {
    bool abort_only; /* a failure under this trap aborts */
    unsigned ncleanup;
    struct {
        void (*fn)(void *);
        void *arg;
    } cleanup[6];
    char what[OOM_WHAT_LEN];   /* what failed */
    const char *file; /* where, for the diagnostic */
} OomFrame;
static _Thread_local OomTrap *oom_top;
static _Thread_local OomFrame oom_frames[OOM_TRAP_DEPTH];
static _Thread_local long fail_countdown, alloc_count;

void
qdqc_test_fail_alloc_after(long n)
{
    fail_countdown = n > 0 ? n : 0;
    alloc_count = 0;
}

long
qdqc_test_alloc_count(void)
{
    return alloc_count;
}

bool
qdqc_alloc_fails(void)
{
    alloc_count++;
    return fail_countdown > 0 && --fail_countdown == 0;
}

static OomFrame *
top_frame(void)
{
    return oom_top ? &oom_frames[oom_top->depth] : NULL;
}

void
oom_trap_push(OomTrap *t, const char *file)
{
    t->prev = oom_top;
    t->depth = oom_top ? oom_top->depth + 1 : 0;
    QDQC_ASSERT(t->depth < OOM_TRAP_DEPTH);
    OomFrame *f = &oom_frames[t->depth];
    f->abort_only = false;
    f->ncleanup = 0;
    f->what[0] = 0;
    f->file = file;
    oom_top = t;
}

const char *
oom_trap_file(const OomTrap *t)
{
    return oom_frames[t->depth].file;
}

void
oom_trap_push_abort(OomTrap *t)
{
    oom_trap_push(t, NULL);
    oom_frames[t->depth].abort_only = true;
}

void
oom_trap_pop(OomTrap *t)
{
    QDQC_ASSERT(oom_top == t);
    oom_top = t->prev;
}

void
oom_defer(void (*fn)(void *), void *arg)
{
    OomFrame *f = top_frame();
    if (!f || f->abort_only)
        return;
    QDQC_ASSERT(f->ncleanup < ARRAY_LEN(f->cleanup));
    f->cleanup[f->ncleanup].fn = fn;
    f->cleanup[f->ncleanup].arg = arg;
    f->ncleanup++;
}

void
oom_undefer(void *arg)
{
    OomFrame *f = top_frame();
    if (!f || f->abort_only)
        return;
    for (unsigned i = f->ncleanup; i-- > 0;)
        if (f->cleanup[i].arg == arg) {
            memmove(&f->cleanup[i], &f->cleanup[i + 1],
                    (f->ncleanup - i - 1) * sizeof f->cleanup[0]);
            f->ncleanup--;
            return;
        }
}

void
oom_raise(const char *fmt, ...)
{
    OomFrame *f = top_frame();
    char what[sizeof f->what];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (!f || f->abort_only) {
        char msg[sizeof what + 16];
        snprintf(msg, sizeof msg, "out of memory: %s", what);
        qdqc_fatal(__FILE__, __LINE__, msg);
    }
    memcpy(f->what, what, sizeof what);
    longjmp(oom_top->jb, 1);
}

void
oom_trap_unwind(OomTrap *t, char *what, size_t whatlen, const char **file)
{
    oom_trap_pop(t);
    OomFrame *f = &oom_frames[t->depth];
    for (unsigned i = f->ncleanup; i-- > 0;)
        f->cleanup[i].fn(f->cleanup[i].arg);
    f->ncleanup = 0;
    /* copied out: a later trap (the report's) reuses this frame's slot */
    snprintf(what, whatlen, "%s", f->what);
    *file = f->file;
}

void *
try_malloc(size_t n)
{
    return qdqc_alloc_fails() ? NULL : malloc(n ? n : 1);
}

void *
try_calloc(size_t n, size_t size)
{
    return qdqc_alloc_fails() ? NULL : calloc(n ? n : 1, size ? size : 1);
}

void *
try_realloc(void *p, size_t n)
{
    return qdqc_alloc_fails() ? NULL : realloc(p, n ? n : 1);
}

void *
xmalloc(size_t n)
{
    void *p = try_malloc(n);
    if (!p)
        oom_raise("cannot allocate %zu bytes", n);
    return p;
}

void *
xcalloc(size_t n, size_t size)
{
    void *p = try_calloc(n, size);
    if (!p)
        oom_raise("cannot allocate %zu x %zu bytes", n, size);
    return p;
}

void *
xrealloc(void *p, size_t n)
{
    void *q = try_realloc(p, n);
    if (!q)
        oom_raise("cannot allocate %zu bytes", n);
    return q;
}

char *
xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

bool
size_mul(size_t a, size_t b, size_t *out)
{
    if (a && b > SIZE_MAX / a)
        return false;
    *out = a * b;
    return true;
}

bool
size_add(size_t a, size_t b, size_t *out)
{
    if (b > SIZE_MAX - a)
        return false;
    *out = a + b;
    return true;
}

/* ---- arena ---- */
struct ArenaBlock {
    ArenaBlock *next;
    size_t cap, used;
    _Alignas(16) unsigned char data[];
};

void
arena_init(Arena *a)
{
    a->head = NULL;
    a->used_total = 0;
}

void
arena_free(Arena *a)
{
    ArenaBlock *b = a->head;
    while (b) {
        ArenaBlock *n = b->next;
        free(b);
        b = n;
    }
    a->head = NULL;
}

void *
arena_alloc(Arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    ArenaBlock *b = a->head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        b = xmalloc(sizeof(ArenaBlock) + cap);
        b->cap = cap;
        b->used = 0;
        /* Large one-off blocks go behind the head so the head keeps serving small requests. */
        if (a->head && n > 65536) {
            b->next = a->head->next;
            a->head->next = b;
        } else {
            b->next = a->head;
            a->head = b;
        }
    }
    void *p = b->data + b->used;
    b->used += n;
    a->used_total += n;
    memset(p, 0, n);
    return p;
}

void *
arena_dup(Arena *a, const void *p, size_t n)
{
    void *q = arena_alloc(a, n);
    if (n)
        memcpy(q, p, n);
    return q;
}

char *
arena_strdup(Arena *a, const char *s)
{
    return arena_dup(a, s, strlen(s) + 1);
}

/* ---- StrBuf ---- */
void
sb_init(StrBuf *b)
{
    b->data = NULL;
    b->len = b->cap = 0;
}

void
sb_free(StrBuf *b)
{
    free(b->data);
    sb_init(b);
}

static void
sb_reserve(StrBuf *b, size_t extra)
{
    if (b->len + extra + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + extra + 1)
            cap *= 2;
        b->data = xrealloc(b->data, cap);
        b->cap = cap;
    }
}

void
sb_putn(StrBuf *b, const char *s, size_t n)
{
    sb_reserve(b, n);
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void
sb_putc(StrBuf *b, char c)
{
    sb_putn(b, &c, 1);
}

void
sb_puts(StrBuf *b, const char *s)
{
    sb_putn(b, s, strlen(s));
}

void
sb_vprintf(StrBuf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return;
    sb_reserve(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void
sb_printf(StrBuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(b, fmt, ap);
    va_end(ap);
}

char *
sb_take(StrBuf *b)
{
    if (!b->data)
        return xstrdup("");
    char *s = b->data;
    sb_init(b);
    return s;
}

/* ---- interning ---- */
static uint32_t
hash_bytes(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

void
intern_init(Interner *in)
{
    memset(in, 0, sizeof *in);
    in->cap = 64;
    in->strs = xmalloc(in->cap * sizeof(char *));
    in->strs[0] = xstrdup("");
    in->nstrs = 1;
    in->tcap = 128;
    in->table = xcalloc(in->tcap, sizeof(uint32_t));
}

void
intern_free(Interner *in)
{
    for (uint32_t i = 0; i < in->nstrs; i++)
        free(in->strs[i]);
    free(in->strs);
    free(in->table);
    memset(in, 0, sizeof *in);
}

static void
intern_rehash(Interner *in)
{
    uint32_t ncap = in->tcap * 2;
    uint32_t *t = xcalloc(ncap, sizeof(uint32_t));
    for (uint32_t id = 1; id < in->nstrs; id++) {
        uint32_t h = hash_bytes(in->strs[id], strlen(in->strs[id])) & (ncap - 1);
        while (t[h])
            h = (h + 1) & (ncap - 1);
        t[h] = id + 1;
    }
    free(in->table);
    in->table = t;
    in->tcap = ncap;
}

uint32_t
intern_n(Interner *in, const char *s, size_t n)
{
    if (n == 0)
        return 0;
    uint32_t h = hash_bytes(s, n) & (in->tcap - 1);
    while (in->table[h]) {
        uint32_t id = in->table[h] - 1;
        const char *t = in->strs[id];
        if (strncmp(t, s, n) == 0 && t[n] == 0)
            return id;
        h = (h + 1) & (in->tcap - 1);
    }
    /* allocate before changing anything: an allocation failure leaves the table intact */
    if (in->nstrs == in->cap) {
        in->strs = xrealloc(in->strs, in->cap * 2 * sizeof(char *));
        in->cap *= 2;
    }
    char *copy = xstrndup(s, n);
    uint32_t id = in->nstrs++;
    in->strs[id] = copy;
    in->table[h] = id + 1;
    if (in->nstrs * 2 > in->tcap)
        intern_rehash(in);
    return id;
}

uint32_t
intern(Interner *in, const char *s)
{
    return intern_n(in, s, strlen(s));
}

uint32_t
intern_lookup(const Interner *in, const char *s)
{
    size_t n = strlen(s);
    if (n == 0)
        return 0;
    uint32_t h = hash_bytes(s, n) & (in->tcap - 1);
    while (in->table[h]) {
        uint32_t id = in->table[h] - 1;
        if (strcmp(in->strs[id], s) == 0)
            return id;
        h = (h + 1) & (in->tcap - 1);
    }
    return 0;
}

const char *
intern_str(const Interner *in, uint32_t id)
{
    return id < in->nstrs ? in->strs[id] : "";
}

/* ---- float formatting ---- */
static void
ensure_floaty(char *buf)
{
    if (strpbrk(buf, ".eEni"))
        return;
    strcat(buf, ".0");
}

void
fmt_float(char *buf, float f)
{
    if (isnan(f)) {
        strcpy(buf, signbit(f) ? "-nan" : "nan");
        return;
    }
    if (isinf(f)) {
        strcpy(buf, f < 0 ? "-inf" : "inf");
        return;
    }
    for (int p = 1; p <= 9; p++) {
        snprintf(buf, 32, "%.*g", p, (double)f);
        if (strtof(buf, NULL) == f)
            break;
    }
    ensure_floaty(buf);
}

void
fmt_double(char *buf, double d)
{
    if (isnan(d)) {
        strcpy(buf, "nan");
        return;
    }
    if (isinf(d)) {
        strcpy(buf, d < 0 ? "-inf" : "inf");
        return;
    }
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, 40, "%.*g", p, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    ensure_floaty(buf);
}
