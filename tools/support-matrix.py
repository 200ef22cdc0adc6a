#!/usr/bin/env python3
"""support-matrix.py [--src ROOT] [--write FILE | --check FILE]: docs/support-matrix.md from the op registry.

Reads lib/ir/ops.def (one row per qdqc op: its flags, its LOWER, MLIR and SUP columns) and the
ONNX reader's op list (lib/import/onnx_attrs.c) and prints the support matrix: for each ONNX op,
the qdqc op it becomes, how that op is compiled (integer code, float island, layout, folded),
its element types, its quantization granularity and whether --emit=mlir maps it.
  --write FILE   write the matrix to FILE
  --check FILE   exit 1 (with a diff) when FILE differs from the matrix the registry gives
Without either, print it.
"""
import argparse
import difflib
import os
import re
import sys


def split_args(s):
    """Top-level comma-separated arguments of a macro call's text (parentheses, strings)."""
    out, depth, cur, q = [], 0, '', False
    for ch in s:
        if q:
            cur += ch
            q = ch != '"'
            continue
        if ch == '"':
            q = True
        elif ch == '(':
            depth += 1
        elif ch == ')':
            depth -= 1
        elif ch == ',' and depth == 0:
            out.append(cur.strip())
            cur = ''
            continue
        cur += ch
    out.append(cur.strip())
    return out


def rows(src):
    """The OP(...) rows of ops.def as lists of argument strings, in order."""
    text = open(os.path.join(src, 'lib/ir/ops.def')).read()
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    res, i = [], 0
    while True:
        i = text.find('OP(', i)
        if i < 0:
            return res
        depth, j = 0, i + 2
        while True:
            depth += {'(': 1, ')': -1}.get(text[j], 0)
            if depth == 0:
                break
            j += 1
        res.append(split_args(text[i + 3:j]))
        i = j


def onnx_ops(src):
    """The op names the ONNX reader knows (its attribute table, lib/import/onnx_attrs.c)."""
    text = open(os.path.join(src, 'lib/import/onnx_attrs.c')).read()
    seen = []
    for m in re.finditer(r'\{"([A-Z][A-Za-z]*)", \d+, \d+,', text):
        if m.group(1) not in seen:
            seen.append(m.group(1))
    return seen


def compiled_as(flags, lower):
    if lower == 'none':
        return 'folded to a constant'
    if 'OPF_QDQ' in flags:
        return 'boundary (integer code)'
    if 'OPF_INT' in flags:
        return 'integer'
    if 'OPF_LAYOUT' in flags:
        return 'layout (integer on quantized values)'
    if lower in ('select', 'reduce', 'cast'):
        return 'plain values'
    if lower in ('wmatmul', 'wconv'):
        return 'weight-only'
    return 'float island'


def mlir(col):
    if col == 'NONE':
        return 'no'
    return 'f32 only' if col.startswith('F32(') else 'yes'


def sup(col):
    m = re.fullmatch(r'SUP\((.*)\)', col, flags=re.S)
    a = split_args(m.group(1))
    return [x.strip('"') for x in a]


HEAD = """# Support matrix

Which ONNX ops qdqc compiles, and how. Generated from the op registry (`lib/ir/ops.def`) by
`python3 tools/support-matrix.py --write docs/support-matrix.md`; the `support-matrix` test fails
when this page and the registry differ.

Columns: the ONNX op (or QDQ pattern) a qdqc op comes from; the qdqc op (docs/ir.md); how it
is compiled: **integer** (integer kernels; the requantization in f32 or fixed point,
`--requant`, docs/numerics.md), **float island** (f32 kernels
between a dequantize and a quantize, bit-exact with the reference interpreter, docs/numerics.md),
**layout** (moves values: quantized integers pass unchanged), **boundary** (quantize /
dequantize: integer code, float code when the scale or zero point is a run-time value),
**plain values** (comparisons, logic, selection, reductions, cast: the stored numbers, float or
integer, as `lib/ir/eval.c` defines them), **weight-only** (f32 activations times constant 4- or
8-bit weights converted in registers), **folded to a constant** (evaluated at compile time); the
element types it takes; its quantization granularity; whether `--emit=mlir` maps it (`f32
only`: on f32 operands and results; docs/mlir.md lists the forms it refuses, such as block-wise
scales). "Q/DQ around X" is X between DequantizeLinear and QuantizeLinear nodes: it becomes the
integer op when the passes (docs/passes.md) can fold the Q/DQ around it; otherwise X runs as a
float island.

| ONNX op | qdqc op | compiled as | element types | quantization | `--emit=mlir` |
|---|---|---|---|---|---|
"""


def matrix(src):
    out = [HEAD]
    named = set()
    for r in rows(src):
        name, flags, lower, mlir_col = r[1].strip('"'), r[6], r[9], r[12]
        onnx, types, quant = sup(r[16])
        named.update(re.findall(r'\b[A-Z][A-Za-z]+\b', onnx))
        out.append(f'| {onnx} | `{name}` | {compiled_as(flags, lower)} | {types} | {quant} '
                   f'| {mlir(mlir_col)} |\n')
    rest = [o for o in onnx_ops(src) if o not in named]
    out.append('\n## Refused\n\n')
    if rest:
        out.append('Imported only when every input is a constant (evaluated at import, '
                   'docs/onnx.md), refused otherwise: ' + ', '.join(rest) + '.\n\n')
    out.append('Any other ONNX op is refused by the reader, which names every such op of the '
               'model at once (`error: 3 nodes use ops qdqc does not support: NonMaxSuppression '
               'x2 (first: \'nms_0\'), TopK x1 (\'topk\')`); the `com.microsoft` ops it reads '
               'are in docs/onnx.md.\n')
    return ''.join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--src', default=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    ap.add_argument('--write')
    ap.add_argument('--check')
    a = ap.parse_args()
    text = matrix(a.src)
    if a.write:
        with open(a.write, 'w') as f:
            f.write(text)
        return 0
    if a.check:
        have = open(a.check).read()
        if have == text:
            return 0
        sys.stdout.writelines(difflib.unified_diff(have.splitlines(True), text.splitlines(True),
                                                   a.check, 'registry'))
        print(f'support-matrix: {a.check} differs from the registry '
              f'(python3 tools/support-matrix.py --write {a.check})')
        return 1
    sys.stdout.write(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
