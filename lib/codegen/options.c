/* options.c: the target of a compile from its options (--target, --mcpu, --mattr, --isa) and the
 * kernel path (--isa) checked against it: the baseline CPU each path implies, the rule by which
 * the host fills in what the options leave open, and the messages for unknown or unsupported
 * paths (docs/targets.md). */
#include "codegen/codegen.h"

#include <stdio.h>
#include <string.h>

/* "generic, avx2, ..." : the kernel paths of one architecture (their records, isa.h), for
 * messages. */
static void
isa_list(bool x86, char *buf, size_t len)
{
    size_t n;
    const CgIsaDesc *const *d = cg_isa_descs(x86, &n);
    buf[0] = 0;
    for (size_t i = 0; i < n; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", used ? ", " : "", d[i]->name);
    }
}

bool
cg_isa_lookup(const CgTarget *t, const char *name, CgGemmIsa *out, char *err, size_t errlen)
{
    const CgIsaDesc *r = cg_isa_desc_named(t->x86, name);
    if (!r) {
        char valid[128];
        isa_list(t->x86, valid, sizeof valid);
        snprintf(err, errlen, "unknown kernel path '%.31s' for %s (valid: %s)", name,
                 t->x86 ? "x86-64" : "aarch64", valid);
        return false;
    }
    if (!r->supported(t)) {
        char have[128] = "";
        size_t n;
        const CgIsaDesc *const *d = cg_isa_descs(t->x86, &n);
        for (size_t j = 0; j < n; j++) {
            size_t used = strlen(have);
            if (d[j]->supported(t) && !strstr(have, d[j]->name))
                snprintf(have + used, sizeof have - used, "%s%s", used ? ", " : "", d[j]->name);
        }
        snprintf(err, errlen, "kernel path '%s' needs %s, which the target (cpu %s%s%s) lacks; "
                 "its paths: %s", name, r->needs, t->cpu,
                 t->features[0] ? ", features " : "",
                 strlen(t->features) < 80 ? t->features : "...", have);
        return false;
    }
    *out = r->isa;
    return true;
}

/* The target is a function of the options alone wherever they say anything about the CPU:
 *   nothing given            the host: its triple, CPU name (tuning) and feature string
 *   only --mattr             the host's CPU and features, then --mattr
 *   --mcpu                   that CPU's features, then --mattr (host: the triple, if no --target)
 *   --isa without --mcpu     the path's baseline CPU (its record), then --mattr
 *   --target without either  "generic" for that triple, then --mattr
 * so any test that pins --mcpu or --isa emits the same IR on every host. */
bool
cg_options_target(const CgOptions *o, CgTarget *t, char *err, size_t errlen)
{
    if (!o->triple[0] && !o->cpu[0] && !o->mattr[0] && !o->isa[0])
        return cg_target_host(t, err, errlen);
    if (!o->triple[0] && !o->cpu[0] && !o->isa[0])
        return cg_target_parse(t, NULL, "native", o->mattr, err, errlen);
    if (o->cpu[0] || !o->isa[0])
        return cg_target_parse(t, o->triple, o->cpu, o->mattr, err, errlen);
    /* --isa without --mcpu: the architecture first, then the path's baseline */
    if (!cg_target_parse(t, o->triple, "generic", "", err, errlen))
        return false;
    const CgIsaDesc *r = cg_isa_desc_named(t->x86, o->isa);
    if (r) {
        char mattr[sizeof o->mattr + 32];
        snprintf(mattr, sizeof mattr, "%s%s%s", r->base_mattr,
                 r->base_mattr[0] && o->mattr[0] ? "," : "", o->mattr);
        return cg_target_parse(t, o->triple, r->base_cpu, mattr, err, errlen);
    }
    CgGemmIsa unused;
    return cg_isa_lookup(t, o->isa, &unused, err, errlen); /* the unknown-path message */
}
