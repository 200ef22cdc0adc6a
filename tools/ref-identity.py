#!/usr/bin/env python3
"""ref-identity: are the reference interpreter's outputs unchanged, byte for byte?

Runs `qdqc run MODEL --engine=ref --random-inputs SEED --output-dir D` over every .qir graph of
test/e2e/graphs, every ONNX fixture of test/models/fixtures and the examples (plus any --extra
models), in three configurations: the default pipeline (integer kernels), --passes= (the graph as
imported: the float conv/matmul/pool paths on dequantized values) and --requant=fixed. Each run's
output arrays, its printed summary, exit code and error text are kept, so a refusal that appears
or disappears also counts as a difference. Use it around a change to lib/ref that must not move a
bit: write the outputs with the old binary, write them again with the new one, --diff the two.

  ref-identity.py --qdqc BIN --out DIR [--extra MODEL ...] [-j N]   write DIR/<model>@<config>/
  ref-identity.py --diff REFDIR DIR                                  exit 1 on any difference
"""
import argparse, concurrent.futures, glob, os, shutil, subprocess, sys

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CONFIGS = {
    'default': [],
    'literal': ['--passes='],
    'fixed': ['--requant=fixed'],
}


def models(extra):
    found = []
    for pat in ('test/e2e/graphs/*.qir', 'test/models/fixtures/*.onnx', 'examples/*.onnx'):
        found += sorted(os.path.relpath(p, SRC) for p in glob.glob(os.path.join(SRC, pat)))
    return found + [os.path.abspath(m) for m in extra]


def key(model, cfg):
    name = os.path.relpath(model, SRC) if not model.startswith('/') else os.path.basename(model)
    return name.replace('/', '__') + '@' + cfg


def run_one(qdqc, model, cfg, out, seed):
    d = os.path.join(out, key(model, cfg))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    r = subprocess.run([qdqc, 'run', model, '--engine=ref', '--random-inputs', str(seed),
                        '--output-dir', d] + CONFIGS[cfg], cwd=SRC, capture_output=True)
    with open(os.path.join(d, 'run.txt'), 'wb') as f:
        f.write(b'exit %d\n' % r.returncode + r.stdout.replace(d.encode(), b'DIR') + r.stderr)
    return r.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--qdqc')
    ap.add_argument('--out')
    ap.add_argument('--extra', nargs='*', default=[])
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--diff', nargs=2, metavar=('REFDIR', 'DIR'))
    ap.add_argument('-j', '--jobs', type=int, default=2)
    a = ap.parse_args()

    if a.diff:
        ref, new = a.diff
        names = sorted(set(os.listdir(ref)) | set(os.listdir(new)))
        bad = 0
        for n in names:
            p, q = os.path.join(ref, n), os.path.join(new, n)
            fp = sorted(os.listdir(p)) if os.path.isdir(p) else None
            fq = sorted(os.listdir(q)) if os.path.isdir(q) else None
            if fp is None or fq is None or fp != fq:
                print(f'ref-identity: {n}: different files ({fp} vs {fq})')
                bad += 1
                continue
            diff = [f for f in fp if open(os.path.join(p, f), 'rb').read() != open(os.path.join(q, f), 'rb').read()]
            if diff:
                print(f'ref-identity: {n}: {", ".join(diff)} differ')
                bad += 1
        print(f'ref-identity: {len(names) - bad}/{len(names)} runs identical')
        return 1 if bad else 0

    if not (a.qdqc and a.out):
        ap.error('--qdqc BIN --out DIR (or --diff REFDIR DIR)')
    qdqc = os.path.abspath(a.qdqc)
    work = [(m, c) for m in models(a.extra) for c in CONFIGS]
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        codes = list(ex.map(lambda mc: run_one(qdqc, mc[0], mc[1], a.out, a.seed), work))
    print(f'ref-identity: {len(work)} runs into {a.out} ({sum(c != 0 for c in codes)} refused)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
