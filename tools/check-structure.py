#!/usr/bin/env python3
"""check-structure.py BUILD_DIR [--src ROOT] [--max-lines N]: the tree's structure rules, as a test.

Three checks over lib/ and tools/ (docs/architecture.md, "The tree" and the layering paragraph),
and one over the text of lib/, tools/, include/ and docs/:
1. No loop of files that call each other. From the object files of the build (nm): file A
   depends on file B when A uses a global symbol B defines; every strongly connected component
   of more than one file is a failure.
2. No function longer than --max-lines (150) lines. A function is a body opening with '{' in
   column 0 (the project's style); its length counts from its first declaration line to the
   closing '}' in column 0.
3. Includes follow the layering. Every folder of lib/ has a rank (LAYERS below, bottom first); a
   file may include headers of its own folder and of lower-ranked ones, plus the pairs in
   ALLOWED. tools/ includes the public headers (include/qdqc), its own, and lib/support.
4. No file cites an issue of the project's tracker by number ("issue" or "issues", an optional
   '#', then a digit; any case): a comment or page says what the thing is, and history belongs in
   CHANGELOG.md, the one file not read. Another project's issue is cited as owner/repo#N.
Prints each failure and a summary line; exit 1 on any failure.
"""
import argparse
import os
import re
import subprocess
import sys

# bottom first: a folder may include from the folders before it
LAYERS = [
    ('support',),
    ('numerics', 'runtime'),
    ('ir',),
    ('import', 'transforms', 'ref', 'codegen/target'),
    ('mlir', 'codegen/irb'),
    ('codegen/gemm',),
    ('codegen/plan', 'codegen/lower'),
    ('codegen',),
    ('api',),
]
RANK = {d: i for i, ds in enumerate(LAYERS) for d in ds}
# the one pair that uses each other on purpose: the plan asks lower.c's table for scratch sizes
# and the lowerings read the layout plan
ALLOWED = {('codegen/plan', 'codegen/lower'), ('codegen/lower', 'codegen/plan')}


def sources(src):
    for top in ('lib', 'tools'):
        for dp, _, fs in os.walk(os.path.join(src, top)):
            for f in sorted(fs):
                if f.endswith(('.c', '.h', '.def')):
                    yield os.path.relpath(os.path.join(dp, f), src)


def call_loops(build, src):
    objs = {}
    for dp, _, fs in os.walk(build):
        for f in fs:
            if not f.endswith('.c.o') or '.dir' + os.sep not in dp + os.sep:
                continue
            rel = re.sub(r'^.*?\.dir/', '', os.path.join(dp, f))[:-2]
            if rel.startswith(('lib/', 'tools/')) and os.path.exists(os.path.join(src, rel)):
                objs.setdefault(rel, os.path.join(dp, f))
    if not objs:
        return None, ['no object files of lib/ or tools/ under ' + build]
    defs, uses = {}, {}
    for rel, p in objs.items():
        out = subprocess.run(['nm', p], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in 'TDBR':
                defs.setdefault(parts[2], rel)
            elif len(parts) == 2 and parts[0] == 'U':
                uses.setdefault(rel, set()).add(parts[1])
    edges = {r: sorted({defs[s] for s in uses.get(r, ()) if s in defs and defs[s] != r})
             for r in objs}
    # Tarjan's strongly connected components, iteratively
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter[0]
                counter[0] += 1
                stack.append(v)
                on.add(v)
            if i < len(edges[v]):
                work.append((v, i + 1))
                w = edges[v][i]
                if w not in index:
                    work.append((w, 0))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            for w in edges[v]:
                if w in on:
                    low[v] = min(low[v], low[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))
    return len(objs), ['call loop of %d files: %s' % (len(c), ' '.join(c)) for c in comps]


def long_functions(src, limit):
    fails, longest = [], (0, '')
    for rel in sources(src):
        if not rel.endswith('.c'):
            continue
        lines = open(os.path.join(src, rel), errors='replace').read().split('\n')
        for i, line in enumerate(lines):
            if not line.startswith('{'):
                continue
            j = i - 1
            while j > 0 and not re.search(r'\w+\s*\(', lines[j]):
                j -= 1
            m = re.search(r'(\w+)\s*\(', lines[j])
            start = j
            while start > 0 and lines[start - 1].strip() and \
                    not lines[start - 1].rstrip().endswith((';', '}', '*/')) and \
                    not lines[start - 1].startswith('#'):
                start -= 1
            k = i + 1
            while k < len(lines) and not lines[k].startswith('}'):
                k += 1
            n = k - start + 1
            name = '%s:%s' % (rel, m.group(1) if m else '?')
            longest = max(longest, (n, name))
            if n > limit:
                fails.append('function of %d lines (limit %d): %s' % (n, limit, name))
    return longest, fails


def folder(rel):
    """lib/codegen/gemm/x.c -> codegen/gemm; lib/codegen/x.c -> codegen; tools/qdqc/x.c -> tools"""
    parts = rel.split('/')
    if parts[0] == 'tools':
        return 'tools'
    if parts[1] == 'codegen' and len(parts) > 3:
        return 'codegen/' + parts[2]
    return parts[1]


def bad_includes(src):
    fails = []
    for rel in sources(src):
        here = folder(rel)
        text = open(os.path.join(src, rel), errors='replace').read()
        for m in re.finditer(r'^#\s*include\s+"([^"]+)"', text, re.M):
            inc = m.group(1)
            local = os.path.normpath(os.path.join(os.path.dirname(rel), inc))
            if os.path.exists(os.path.join(src, local)):
                target = local
            elif os.path.exists(os.path.join(src, 'lib', inc)):
                target = 'lib/' + inc
            elif os.path.exists(os.path.join(src, 'include', inc)):
                continue  # the public API: anyone may include it
            else:
                continue  # generated (onnx.pb-c.h) or system
            there = folder(target)
            if there == here:
                continue
            if here == 'tools':
                ok = there == 'support'
            else:
                ok = there in RANK and here in RANK and \
                    (RANK[there] < RANK[here] or (here, there) in ALLOWED)
            if not ok:
                fails.append('include against the layering: %s (%s) includes %s (%s)'
                             % (rel, here, target, there))
    return fails


# 4: where the text rule applies, and what it refuses
TEXT_DIRS = ('lib', 'tools', 'include', 'docs')
ISSUE_REF = re.compile(r'\bissues? #?[0-9]', re.I)


def issue_refs(src):
    fails = []
    for top in TEXT_DIRS:
        for dp, _, fs in os.walk(os.path.join(src, top)):
            for f in sorted(fs):
                path = os.path.join(dp, f)
                rel = os.path.relpath(path, src)
                if f == 'CHANGELOG.md' or not os.path.isfile(path):
                    continue
                with open(path, 'rb') as fh:
                    data = fh.read()
                if b'\0' in data:
                    continue  # binary
                for n, line in enumerate(data.decode('utf-8', 'replace').split('\n'), 1):
                    m = ISSUE_REF.search(line)
                    if m:
                        fails.append('issue number in %s:%d: "%s" (say what it is instead)'
                                     % (rel, n, line.strip()[:80]))
    return fails


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('build')
    ap.add_argument('--src', default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument('--max-lines', type=int, default=150)
    a = ap.parse_args()
    for rel in sources(a.src):
        if rel.startswith('lib/') and folder(rel) not in RANK:
            print('check-structure: %s is in no layer: add its folder to LAYERS' % rel)
            return 1
    nobj, loops = call_loops(a.build, a.src)
    longest, long_fails = long_functions(a.src, a.max_lines)
    incl = bad_includes(a.src)
    refs = issue_refs(a.src)
    for f in loops + long_fails + incl + refs:
        print('check-structure: ' + f)
    print('check-structure: %s object files; %d call loops; longest function %d lines (%s); '
          '%d includes against the layering; %d issue numbers'
          % (nobj, 0 if nobj is None else len(loops), longest[0], longest[1], len(incl), len(refs)))
    return 1 if loops or long_fails or incl or refs else 0


if __name__ == '__main__':
    sys.exit(main())
