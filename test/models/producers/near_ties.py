#!/usr/bin/env python3
"""near_ties.py: where a QDQ network's engines first disagree, layer by layer, and who is right.

    PEER_PYTHON test/models/producers/near_ties.py QDQC MODEL.onnx [--input NAME=FILE.npy ...]

Runs in the peer environment (ONNX Runtime, torch). Inputs default to run_corpus.py's seeded
ones. Every activation QuantizeLinear output of MODEL becomes a graph output, and three engines
run the copy: ONNX Runtime with graph optimisations disabled (the literal graph, f32), qdqc's
literal run (`qdqc run --engine=ref --passes=`: the graph as written, f32) and qdqc's compiled
code (`--engine=jit`, default pipeline).
1. End to end, per quantizer in graph order: elements where ORT differs from qdqc's literal run
   and where the compiled code does, with the largest difference (steps).
2. Isolated: each quantizer cut out (onnx.utils.extract_model) with its quantized inputs fed the
   same integers (qdqc literal's), so each layer's own disagreement shows without what earlier
   layers passed on.
3. At every element where the isolated engines disagree: the exact value (float64 from the
   integers, the dequantized weights and the bias, through DequantizeLinear, QuantizeLinear of
   constants, Conv, Gemm, MatMul, Add, Relu, MaxPool, ReduceMean, GlobalAveragePool, Flatten,
   Reshape and Identity) in steps of the quantizer, and what each engine wrote.
For f32 graphs (qdqc's literal run does not compute f16 arithmetic).
Every disagreement should be a near tie: the exact value within TIE_STEPS of k + 1/2 (f32
evaluations of the literal graph and the f32 requantization of the compiled code, docs/numerics.md
"Float mode", both land on either side there) and each engine at k or k + 1. Exit 1 when one is
not (a disagreement the rounding cannot explain) or has no exact rule; 0 otherwise
(docs/agreement.md, "Real quantizers").
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper, utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
TIE_STEPS = 1e-3
import run_corpus  # noqa: E402  (inputs_for, ort_run, safe)


class Engines:
    def __init__(self, qdqc, work):
        self.qdqc, self.work = qdqc, work

    def qdqc_run(self, path, feeds, engine):
        d = tempfile.mkdtemp(dir=self.work)
        cmd = [self.qdqc, "run", path, "--engine=" + engine, "--output-dir", d]
        if engine == "ref":
            cmd.append("--passes=")
        for i, (k, v) in enumerate(feeds.items()):
            f = os.path.join(d, "in%d.npy" % i)
            np.save(f, v)
            cmd += ["--input", "%s=%s" % (k, f)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(r.stderr.strip())
        return lambda name: np.load(os.path.join(d, run_corpus.safe(name) + ".npy"))

    def all3(self, path, feeds):
        import onnxruntime as ort
        o = run_corpus.ort_run(path, feeds, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
        return (lambda n: o[n]), self.qdqc_run(path, feeds, "ref"), self.qdqc_run(path, feeds, "jit")


class Exact:
    """float64 values of the float tensors of a QDQ graph, from given quantized tensors."""

    def __init__(self, m):
        self.cst = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
        self.prod = {o: n for n in m.graph.node for o in n.output}

    def val(self, t, given):
        if t in given:
            return given[t]
        if t in self.cst:
            return self.cst[t]
        p = self.prod[t]
        x = lambda i: self.val(p.input[i], given)  # noqa: E731
        a = {at.name: helper.get_attribute_value(at) for at in p.attribute}
        if p.op_type == "DequantizeLinear":
            q, s = x(0).astype(np.float64), x(1).astype(np.float64)
            z = x(2).astype(np.float64) if len(p.input) > 2 and p.input[2] else np.zeros_like(s)
            if s.size > 1:
                sh = [1] * q.ndim
                sh[a.get("axis", 1)] = -1
                s, z = s.reshape(sh), z.reshape(sh)
            return (q - z) * s
        if p.op_type == "QuantizeLinear":  # of a constant weight (ModelOpt, NNCF)
            v, sc = np.asarray(x(0), np.float64), np.asarray(x(1), np.float64)
            z = np.asarray(x(2)) if len(p.input) > 2 and p.input[2] else np.zeros((), np.uint8)
            if sc.size > 1:
                sh = [1] * v.ndim
                sh[a.get("axis", 1)] = -1
                sc, z = sc.reshape(sh), z.reshape(sh)
            lo, hi = np.iinfo(z.dtype).min, np.iinfo(z.dtype).max
            return np.clip(np.rint(v / sc) + z.astype(np.float64), lo, hi)
        if p.op_type == "Conv":
            import torch
            pads = a.get("pads", [0] * 4)
            f64 = lambda i: torch.from_numpy(np.asarray(x(i), np.float64))  # noqa: E731
            b = f64(2) if len(p.input) > 2 and p.input[2] else None
            if pads[:2] != pads[2:]:
                raise ValueError("asymmetric pads")
            return torch.nn.functional.conv2d(f64(0), f64(1), b,
                                              stride=a.get("strides", [1, 1]), padding=pads[:2],
                                              dilation=a.get("dilations", [1, 1]),
                                              groups=a.get("group", 1)).numpy()
        if p.op_type == "Relu":
            return np.maximum(x(0), 0)
        if p.op_type == "MaxPool":
            import torch
            pads = a.get("pads", [0] * 4)
            v = torch.from_numpy(np.asarray(x(0), np.float64))
            v = torch.nn.functional.pad(v, [pads[1], pads[3], pads[0], pads[2]], value=-np.inf)
            return torch.nn.functional.max_pool2d(v, a["kernel_shape"], a.get("strides", [1, 1])).numpy()
        if p.op_type == "Add":
            return x(0) + x(1)
        if p.op_type == "Identity":
            return x(0)
        if p.op_type in ("ReduceMean", "GlobalAveragePool"):
            v = np.asarray(x(0), np.float64)
            axes = tuple(range(2, v.ndim)) if p.op_type == "GlobalAveragePool" else tuple(
                a["axes"] if "axes" in a else x(1).tolist())
            return v.mean(axis=axes, keepdims=bool(a.get("keepdims", 1)))
        if p.op_type in ("Flatten", "Reshape"):
            v = x(0)
            return v.reshape(v.shape[0], -1) if p.op_type == "Flatten" else v.reshape(x(1))
        if p.op_type in ("Gemm", "MatMul"):
            v, w = np.asarray(x(0), np.float64), np.asarray(x(1), np.float64)
            if a.get("transB", 0):
                w = w.T
            r = v @ w
            return r + np.asarray(x(2), np.float64) if p.op_type == "Gemm" and len(p.input) > 2 else r
        raise ValueError("no exact rule for %s" % p.op_type)

    def steps(self, qnode, given, i):
        """The quantizer's input at flat index i in its steps, plus its zero point."""
        s = float(self.cst[qnode.input[1]])
        z = float(self.cst[qnode.input[2]]) if len(qnode.input) > 2 else 0.0
        return float(self.val(qnode.input[0], given).ravel()[i]) / s + z


def sources(qnode, prod, inits):
    """The activation quantizer outputs that reach qnode's input without another quantizer."""
    srcs, stack, seen = set(), [qnode.input[0]], set()
    while stack:
        t = stack.pop()
        if t in seen or t in inits:
            continue
        seen.add(t)
        p = prod.get(t)
        if p is None:
            continue
        if p.op_type == "QuantizeLinear":
            srcs.add(t)
            continue
        stack.extend(i for i in p.input if i)
    return sorted(srcs)


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    qdqc, model = os.path.abspath(argv[0]), argv[1]
    feeds = run_corpus.inputs_for(model)
    for i, a in enumerate(argv):
        if a == "--input" and i + 1 < len(argv):
            k, f = argv[i + 1].split("=", 1)
            feeds[k] = np.load(f)
    work = tempfile.mkdtemp(prefix="near-ties-")
    m = onnx.load(model)
    vi = {v.name: v for v in onnx.shape_inference.infer_shapes(m).graph.value_info}
    inits = {t.name for t in m.graph.initializer}  # and every value computed from constants only
    for n in m.graph.node:
        if all(not i or i in inits for i in n.input):
            inits.update(n.output)
    prod = {o: n for n in m.graph.node for o in n.output}
    qs = [n for n in m.graph.node if n.op_type == "QuantizeLinear" and n.input[0] not in inits]
    graph_in = {i.name for i in m.graph.input}
    m.graph.output.extend([vi[n.output[0]] for n in qs if n.output[0] in vi])
    full = os.path.join(work, "all.onnx")
    onnx.save(m, full)
    eng, exact = Engines(qdqc, work), Exact(m)
    o, lit, jit = eng.all3(full, feeds)
    fmt = "  %-60s %7d %3d | %7d %3d"
    print("end to end: quantizer output | ORT literal vs qdqc literal: elements, max | qdqc compiled vs qdqc literal")
    for n in qs:
        t = n.output[0]
        a, b, c = (f(t).astype(np.int64) for f in (o, lit, jit))
        print(fmt % (t[-60:], (a != b).sum(), np.abs(a - b).max(), (c != b).sum(), np.abs(c - b).max()))
    print("isolated (the same quantized inputs):")
    ties, bad = [], 0
    for n in qs:
        if n.input[0] in graph_in:
            continue
        srcs, t = sources(n, prod, inits), n.output[0]
        sub = os.path.join(work, "sub.onnx")
        utils.extract_model(full, sub, srcs, [t])
        given = {s: lit(s) for s in srcs}
        so, sl, sj = eng.all3(sub, given)
        a, b, c = (f(t).astype(np.int64).ravel() for f in (so, sl, sj))
        print(fmt % (t[-60:], (a != b).sum(), np.abs(a - b).max(), (c != b).sum(), np.abs(c - b).max()))
        for i in np.nonzero((a != b) | (c != b))[0]:
            ties.append((n, given, int(i), a[i], b[i], c[i]))
    print("exact values where the isolated engines disagree (steps, zero point included):")
    right = {"ORT literal": 0, "qdqc literal": 0, "qdqc compiled": 0}
    for n, given, i, a, b, c in ties:
        try:
            e = exact.steps(n, given, i)
        except ValueError as ex:
            print("  %s [%d]: %s" % (n.output[0], i, ex))
            bad += 1
            continue
        k, r = np.floor(e), int(np.rint(e))
        near = abs(e - (k + 0.5)) <= TIE_STEPS and all(v in (k, k + 1) for v in (a, b, c))
        bad += not near
        for name, v in zip(right, (a, b, c)):
            right[name] += v == r
        print("  %s [%d]: exact %.7f -> %d (%.1e steps from the tie%s) | ORT literal %d, qdqc literal %d, qdqc compiled %d" % (
            n.output[0], i, e, r, abs(e - (k + 0.5)), "" if near else ": NOT A NEAR TIE", a, b, c))
    print("%d disagreements, %d not near ties; the exact value rounded: %s" % (
        len(ties), bad, ", ".join("%s %d" % kv for kv in right.items())))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
