#!/usr/bin/env python3
"""ir-identity: is the LLVM IR qdqc emits unchanged?

Compiles a list of models from the source tree with pinned targets (--target plus --isa, which picks
a baseline CPU, so the result does not depend on the host) and --emit=llvm, and either writes the IR
into a directory, diffs two such directories, or compares SHA-256 hashes of the IR with a committed
list (test/ir-identity.sha256, written at a commit whose output is the expectation).

  ir-identity.py --qdqc BIN --out DIR [--all]     write DIR/<model>@<config>.ll
  ir-identity.py --diff REFDIR DIR                 compare two output directories (exit 1 on a difference)
  ir-identity.py --qdqc BIN --write-hashes FILE [--all]
  ir-identity.py --qdqc BIN --check FILE [--all]   exit 1 when an emitted IR's hash differs from FILE's
  --only GLOB[,GLOB...]   restrict to the models whose source path matches (with --write-hashes, the
                          other entries of FILE are kept: refresh a few models after a merge)

Without --all, a handful of models (the ctest); with --all, every .qir graph of test/e2e/graphs,
every ONNX fixture of test/models/fixtures and the examples. Models are named relative to the source
root and compiled from it, so the output does not depend on where the tree lives.
"""
import argparse, concurrent.futures, difflib, glob, hashlib, os, subprocess, sys

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CONFIGS = {
    'x86-avx512vnni': ['--target=x86_64', '--isa=avx512vnni'],
    'x86-avx512vnni-fixed': ['--target=x86_64', '--isa=avx512vnni', '--requant=fixed'],
    'x86-avx2': ['--target=x86_64', '--isa=avx2'],
    'x86-generic': ['--target=x86_64', '--isa=generic'],
    'a64-i8mm': ['--target=aarch64', '--isa=i8mm'],
    'a64-dotprod': ['--target=aarch64', '--isa=dotprod'],
    'a64-neon': ['--target=aarch64', '--isa=neon'],
    'a64-mattr-neon': ['--target=aarch64', '--mattr=+neon'],
}

# The ctest's handful: one model per kernel family (GEMM conv, depthwise, NHWC chains, element-wise
# vector code, pooling, float islands, parallel split) and the example network.
SMALL = [
    'test/e2e/graphs/conv_c65.qir',
    'test/e2e/graphs/conv_depthwise.qir',
    'test/e2e/graphs/conv_f32.qir',
    'test/e2e/graphs/nhwc_chain_d.qir',
    'test/e2e/graphs/elem_vec.qir',
    'test/e2e/graphs/par_split.qir',
    'test/models/fixtures/avgpool_u8.onnx',
    'test/models/fixtures/add_bcast_i8.onnx',
    'examples/mobilenetv2_qdq.onnx',
]


def models(all_models, only=None):
    if only:
        import fnmatch
        return [m for m in models(True) if any(fnmatch.fnmatch(m, p) for p in only)]
    if not all_models:
        return [m for m in SMALL if os.path.exists(os.path.join(SRC, m))]
    found = []
    for pat in ('test/e2e/graphs/*.qir', 'test/models/fixtures/*.onnx', 'examples/*.onnx'):
        found += sorted(os.path.relpath(p, SRC) for p in glob.glob(os.path.join(SRC, pat)))
    return found


def key(model, cfg):
    return model.replace('/', '__') + '@' + cfg


def emit(qdqc, model, cfg):
    """The IR text (bytes) or, when qdqc refuses the model, its exit code and stderr (also compared)."""
    r = subprocess.run([qdqc, model, '--emit=llvm', '-o', '-'] + CONFIGS[cfg], cwd=SRC,
                       capture_output=True)
    if r.returncode != 0:
        return b'; qdqc exit %d\n' % r.returncode + r.stderr
    return r.stdout


def run_all(qdqc, all_models, jobs, only=None):
    qdqc = os.path.abspath(qdqc)
    work = [(m, c) for m in models(all_models, only) for c in CONFIGS]
    out = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        for (m, c), text in zip(work, ex.map(lambda mc: emit(qdqc, *mc), work)):
            out[key(m, c)] = text
    return out


def read_hashes(path):
    h = {}
    with open(path) as f:
        for line in f:
            if line.strip() and not line.startswith('#'):
                digest, name = line.split()
                h[name] = digest
    return h


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--qdqc')
    ap.add_argument('--out')
    ap.add_argument('--diff', nargs=2, metavar=('REFDIR', 'DIR'))
    ap.add_argument('--write-hashes')
    ap.add_argument('--check')
    ap.add_argument('--all', action='store_true')
    ap.add_argument('--only', type=lambda v: v.split(','), default=None)
    ap.add_argument('-j', '--jobs', type=int, default=2)
    a = ap.parse_args()

    if a.diff:
        ref, new = a.diff
        names = sorted(set(os.listdir(ref)) | set(os.listdir(new)))
        bad = 0
        for n in names:
            p, q = os.path.join(ref, n), os.path.join(new, n)
            if not (os.path.exists(p) and os.path.exists(q)):
                print(f'{n}: only in {ref if os.path.exists(p) else new}')
                bad += 1
                continue
            x, y = open(p, 'rb').read(), open(q, 'rb').read()
            if x != y:
                bad += 1
                d = difflib.unified_diff(x.decode(errors='replace').splitlines(),
                                         y.decode(errors='replace').splitlines(), p, q, lineterm='', n=1)
                print('\n'.join(list(d)[:40]))
        print(f'ir-identity: {len(names) - bad}/{len(names)} identical')
        return 1 if bad else 0

    if not a.qdqc:
        ap.error('--qdqc BIN is needed (or --diff)')
    res = run_all(a.qdqc, a.all, a.jobs, a.only)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        for k, text in res.items():
            with open(os.path.join(a.out, k + '.ll'), 'wb') as f:
                f.write(text)
        print(f'ir-identity: wrote {len(res)} files to {a.out}')
    digests = {k: hashlib.sha256(t).hexdigest() for k, t in res.items()}
    if a.write_hashes:
        old = read_hashes(a.write_hashes) if os.path.exists(a.write_hashes) else {}
        old.update(digests)
        with open(a.write_hashes, 'w') as f:
            f.write('# sha256 of `qdqc MODEL --emit=llvm -o - CONFIG` (tools/ir-identity.py); '
                    'regenerate only for an intended change of the emitted IR\n')
            for k in sorted(old):
                f.write(f'{old[k]} {k}\n')
        print(f'ir-identity: {len(digests)} hashes into {a.write_hashes}')
    if a.check:
        want = read_hashes(a.check)
        bad = [k for k in sorted(digests) if want.get(k) != digests[k]]
        for k in bad:
            print(f'ir-identity: {k}: ' + ('no expected hash' if k not in want else 'IR differs'))
        print(f'ir-identity: {len(digests) - len(bad)}/{len(digests)} identical')
        return 1 if bad else 0
    return 0


if __name__ == '__main__':
    sys.exit(main())
