/* run_profile_main.c: links a model compiled with --profile (header model.h) and checks
 * model_run_profile: the hook sees begin/end of steps 0 .. MODEL_NUM_STEPS - 1 in order, the
 * outputs equal model_run_ex's, and a NULL hook runs as model_run_ex. Prints the step names
 * in run order and "ok". */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Seen {
    int32_t next; /* 2 * step + end of the call expected next */
    int bad;
} Seen;

static void
hook(void *ctx, int32_t step, int32_t end)
{
    Seen *s = ctx;
    if (2 * step + end != s->next)
        s->bad = 1;
    s->next++;
}

int
main(void)
{
    static const size_t in_bytes[] = {MODEL_INPUT0_BYTES}, out_bytes[] = {MODEL_OUTPUT0_BYTES};
    void *in0 = calloc(1, in_bytes[0]);
    void *a = calloc(1, out_bytes[0]), *b = calloc(1, out_bytes[0]), *c = calloc(1, out_bytes[0]);
    void *ws = aligned_alloc(64, (MODEL_WORKSPACE_SIZE + 63) / 64 * 64 + 64);
    if (!in0 || !a || !b || !c || !ws)
        return 2;
    for (size_t i = 0; i < in_bytes[0] / sizeof(float); i++)
        ((float *)in0)[i] = (float)((int)(i * 37 % 101) - 50) / 25.0f;
    const void *ins[] = {in0};
    void *oa[] = {a}, *ob[] = {b}, *oc[] = {c};
    Seen s = {0, 0};
    if (model_run_ex(ins, oa, ws, NULL, NULL) != 0 ||
        model_run_profile(ins, ob, ws, NULL, NULL, hook, &s) != 0 ||
        model_run_profile(ins, oc, ws, NULL, NULL, NULL, NULL) != 0)
        return 3;
    if (s.bad || s.next != 2 * MODEL_NUM_STEPS) {
        printf("hook calls out of order (%d calls for %d steps)\n", s.next, MODEL_NUM_STEPS);
        return 1;
    }
    if (memcmp(a, b, out_bytes[0]) || memcmp(a, c, out_bytes[0])) {
        printf("outputs differ from model_run_ex\n");
        return 1;
    }
    for (int i = 0; i < MODEL_NUM_STEPS; i++)
        printf("step %d %s\n", i, model_step_names[i]);
    printf("ok\n");
    return 0;
}
