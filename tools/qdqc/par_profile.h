/* par_profile.h: `qdqc bench --par-profile`: where multi-thread scaling is lost, measured on
 * one thread. A recording parallel-for hook runs every region's units [i, i+1) one after the
 * other on the calling thread and times each with the thread's CPU clock, and the time between
 * regions (serial work); over several runs it keeps the minimum of each. The report then
 * schedules the units of every region on T simulated threads the way qdqc_threadpool does
 * (chunks of max(1, n / (QDQC_POOL_CHUNKS_PER_THREAD * T)) units, each taken by the first free
 * thread) and prints the serial share, the imbalance and the predicted scaling (Amdahl with
 * the simulated per-region makespans; dispatch latency and memory contention not included).
 * With the model's step hook (par_prof_step_hook), every region is named by its node. */
#ifndef QDQC_TOOL_PAR_PROFILE_H
#define QDQC_TOOL_PAR_PROFILE_H

#include <qdqc/qdqc.h>

#include <stdbool.h>
#include <stdio.h>

typedef struct ParProf ParProf;

ParProf *par_prof_create(void);
void par_prof_destroy(ParProf *p);
/* matches qdqc_parallel_for_fn; ctx is the ParProf */
void par_prof_hook(void *ctx, qdqc_parallel_fn fn, void *arg, int64_t n);
/* matches qdqc_profile_fn: tells p which step of the model runs, so that each region is
 * named by the node whose step opened it */
void par_prof_step_hook(void *ctx, int32_t step, int32_t end);
void par_prof_run_begin(ParProf *p);
/* false if this run's regions differ from the first run's (then the profile is unusable) */
bool par_prof_run_end(ParProf *p);
/* The model's steps (qdqc_jit_step_name / qdqc_jit_step_op), n of them, to name regions */
typedef struct ParProfSteps {
    size_t n;
    const char *const *name, *const *op;
} ParProfSteps;
/* The report as text lines, or (json) as the members of a JSON object without its braces;
 * st may be NULL. */
void par_prof_report(const ParProf *p, int threads, const ParProfSteps *st, bool json, FILE *f);

#endif
