#!/usr/bin/python3
"""narrow_range.py QDQC [--out DIR] [--ir NAME]: fake quantizers narrower than their storage
type (n_bits 2-7, signed and unsigned, and the symmetric restricted int8 range [-127, 127])
keep their clamps through the passes.

The encoding is the one PyTorch 1.13 uses for its only narrow range it exports, (0, 127):
QuantizeLinear -> Clip(integer bounds) -> DequantizeLinear; qdqc folds the Clip into the
quantize as range=[lo, hi] (lib/import/onnx_ops.c clip_of_quantize). PyTorch 1.13 refuses every
other (quant_min, quant_max) at export ("ONNX allows only (0, 127), (0, 255) and (-128, 127)"),
so these models are written with python3-onnx. Per range, three models:
  act  : fq(x) -> Relu -> fq, fq(x) -> MaxPool -> fq, fq(x) + fq(x2) -> fq  (lut, maxpool and
         qadd after the passes), and a fake-quantized graph output;
  conv : fq(x) -> Conv(weights f32 -> Q(i8 per channel) -> Clip -> DQ, the weight range as the
         activation's when signed, else [-7, 7]) -> fq  (qconv, requantized with a clamp);
  ties : fq of inputs that are exact ties x / s = k + 0.5 around both bounds (s a power of two):
         rne first, then the clamp (-127.5 -> -128 -> -127 in [-127, 127]).
Checks, each printed as PASS/FAIL:
  - `--engine=ref` with the default pipeline equals `--engine=ref --passes=` (the graph as
    imported) exactly for act and ties, within one step of the output scale for conv;
  - `--passes=` equals a numpy evaluation of the ONNX graph (exactly for act and ties);
  - `--engine=jit` equals the reference bit for bit;
  - every output, read back as integers ((y / s) + zp), lies in [lo, hi], and the numpy
    evaluation has values on both bounds that the unclamped storage range would not (so the
    clamp is tested, not idle).
--ir NAME prints the IR after the pipeline of one model (for the lit test). Prints
"N checks, M failed"; exit 1 on any failure. Run with /usr/bin/python3."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

F32 = np.float32

# (name, storage, lo, hi): n_bits 2-7 in i8/u8 storage, and [-127, 127]
RANGES = [("s2", np.int8, -2, 1), ("s3", np.int8, -4, 3), ("s4", np.int8, -8, 7),
          ("s5", np.int8, -16, 15), ("s6", np.int8, -32, 31), ("s7", np.int8, -64, 63),
          ("u2", np.uint8, 0, 3), ("u4", np.uint8, 0, 15), ("u7", np.uint8, 0, 127),
          ("sym4", np.int8, -7, 7), ("sym8", np.int8, -127, 127)]


def fq_np(x, s, z, lo, hi, dt):
    info = np.iinfo(dt)
    q = np.clip(np.rint(x.astype(F32) / F32(s)) + z, info.min, info.max)
    q = np.clip(q, lo, hi)
    return ((q - z).astype(F32) * F32(s)).astype(F32)


class G:
    def __init__(self, name):
        self.name, self.nodes, self.inits, self.inputs, self.outs, self.k = name, [], [], [], [], 0

    def fresh(self, b):
        self.k += 1
        return "%s%d" % (b, self.k)

    def const(self, arr, b="c"):
        n = self.fresh(b)
        self.inits.append(nh.from_array(np.asarray(arr), n))
        return n

    def node(self, op, ins, **attrs):
        out = self.fresh(op.lower())
        self.nodes.append(h.make_node(op, ins, [out], name=out, **attrs))
        return out

    def fq(self, x, s, z, lo, hi, dt, axis=None):
        """QuantizeLinear -> Clip(lo, hi as dt) -> DequantizeLinear."""
        sc, zc = self.const(np.asarray(s, F32), "s"), self.const(np.asarray(z, dt), "z")
        attrs = {} if axis is None else {"axis": axis}
        q = self.node("QuantizeLinear", [x, sc, zc], **attrs)
        c = self.node("Clip", [q, self.const(np.asarray(lo, dt), "lo"),
                               self.const(np.asarray(hi, dt), "hi")])
        return self.node("DequantizeLinear", [c, sc, zc], **attrs)

    def model(self, ins, outs):
        g = h.make_graph(self.nodes, self.name,
                         [h.make_tensor_value_info(n, TP.FLOAT, list(a.shape)) for n, a in ins],
                         [h.make_tensor_value_info(n, TP.FLOAT, list(shape)) for n, shape in outs],
                         initializer=self.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], producer_name="narrow_range")
        m.ir_version = 7
        onnx.checker.check_model(m, full_check=True)
        return m


def models():
    """(name, model, inputs {name: array}, outputs [(name, scale, zp, lo, hi, exact, want)])."""
    rng = np.random.default_rng(15)
    out = []
    for tag, dt, lo, hi in RANGES:
        n = hi - lo
        s = F32(4.0 / n)                      # the range covers about [-2, 2] (signed)
        z = 0 if lo < 0 else (lo + hi) // 2  # asymmetric for the unsigned ones
        x = rng.uniform(-3, 3, (1, 3, 6, 6)).astype(F32)
        x2 = rng.uniform(-3, 3, (1, 3, 6, 6)).astype(F32)

        # act: relu, maxpool, add, plain
        g = G("act_" + tag)
        a = g.fq("x", s, z, lo, hi, dt)
        b = g.fq("x2", s, z, lo, hi, dt)
        r = g.fq(g.node("Relu", [a]), s, z, lo, hi, dt)
        mp = g.fq(g.node("MaxPool", [a], kernel_shape=[2, 2], strides=[2, 2]), s, z, lo, hi, dt)
        s2 = F32(s * 2)
        ad = g.fq(g.node("Add", [a, b]), s2, z, lo, hi, dt)
        fa, fb = fq_np(x, s, z, lo, hi, dt), fq_np(x2, s, z, lo, hi, dt)
        fmp = fa.reshape(1, 3, 3, 2, 3, 2).max(axis=(3, 5))
        outs = [(a, s, z, lo, hi, True, fa),
                (r, s, z, lo, hi, True, fq_np(np.maximum(fa, 0), s, z, lo, hi, dt)),
                (mp, s, z, lo, hi, True, fq_np(fmp, s, z, lo, hi, dt)),
                (ad, s2, z, lo, hi, True, fq_np(fa + fb, s2, z, lo, hi, dt))]
        m = g.model([("x", x), ("x2", x2)], [(o[0], o[6].shape) for o in outs])
        out.append(("act_" + tag, m, {"x": x, "x2": x2}, outs))

        # conv: narrow weights (per channel), narrow activations in and out
        g = G("conv_" + tag)
        wlo, whi = (lo, hi) if lo < 0 else (-7, 7)
        w = rng.uniform(-1, 1, (4, 3, 3, 3)).astype(F32)
        ws = (np.abs(w).reshape(4, -1).max(axis=1) / whi * F32(0.8)).astype(F32)  # some clamp
        bias = rng.uniform(-0.5, 0.5, 4).astype(F32)
        a = g.fq("x", s, z, lo, hi, dt)
        wq = g.fq(g.const(w, "w"), ws, np.zeros(4, np.int8), wlo, whi, np.int8, axis=0)
        c = g.node("Conv", [a, wq, g.const(bias, "b")], pads=[1, 1, 1, 1])
        so = F32(s * 2)
        y = g.fq(c, so, z, lo, hi, dt)
        # numpy conv in float64 of the fake-quantized operands
        fw = np.stack([fq_np(w[i], ws[i], 0, wlo, whi, np.int8) for i in range(4)])
        xp = np.pad(fa.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
        acc = np.zeros((1, 4, 6, 6))
        for i in range(3):
            for j in range(3):
                acc += np.einsum("nchw,mc->nmhw", xp[:, :, i:i + 6, j:j + 6], fw[:, :, i, j])
        acc += bias.reshape(1, 4, 1, 1)
        outs = [(y, so, z, lo, hi, False, fq_np(acc.astype(F32), so, z, lo, hi, dt))]
        m = g.model([("x", x)], [(y, (1, 4, 6, 6))])
        out.append(("conv_" + tag, m, {"x": x}, outs))

        # ties around both bounds and zero
        k = np.array([lo - 1.5, lo - 0.5, lo + 0.5, lo + 1.5, -0.5, 0.5, 1.5, 2.5,
                      hi - 1.5, hi - 0.5, hi + 0.5, hi + 1.5], F32) - z
        st = F32(0.25)
        xt = (k * st).astype(F32).reshape(1, 12)
        g = G("ties_" + tag)
        y = g.fq("x", st, z, lo, hi, dt)
        y = g.fq(g.node("Relu", [y]), st, z, lo, hi, dt)
        want = fq_np(np.maximum(fq_np(xt, st, z, lo, hi, dt), 0), st, z, lo, hi, dt)
        m = g.model([("x", xt)], [(y, (1, 12))])
        out.append(("ties_" + tag, m, {"x": xt}, [(y, st, z, lo, hi, True, want)]))
    return out


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    qdqc = args[0]
    keep = args[args.index("--out") + 1] if "--out" in args else None
    tmp = tempfile.TemporaryDirectory()
    root = keep or tmp.name
    all_models = models()
    if "--ir" in args:
        name = args[args.index("--ir") + 1]
        for n, m, _, _ in all_models:
            if n == name:
                p = os.path.join(root, n + ".onnx")
                onnx.save(m, p)
                rc, log = run([qdqc, p])
                print(log, end="")
                return rc
        sys.exit("no model " + name)
    checks = failed = 0

    def check(name, what, ok, detail=""):
        nonlocal checks, failed
        checks += 1
        failed += not ok
        print("%s %s %s%s" % ("PASS" if ok else "FAIL", name, what,
                              "" if ok or not detail else ": " + str(detail).strip()[-600:]))

    for name, m, feeds, outs in all_models:
        d = os.path.join(root, name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        onnx.save(m, path)
        ins = []
        for k, v in feeds.items():
            f = os.path.join(d, k + ".npy")
            np.save(f, v)
            ins += ["--input", "%s=%s" % (k, f)]
        res = {}
        for tag, extra in (("ref", ["--engine=ref"]), ("imported", ["--engine=ref", "--passes="]),
                           ("jit", ["--engine=jit"])):
            od = os.path.join(d, tag)
            rc, log = run([qdqc, "run", path, "--output-dir", od] + extra + ins)
            if rc:
                check(name, tag + " runs", False, log)
                continue
            res[tag] = {o[0]: np.load(os.path.join(od, o[0] + ".npy")) for o in outs}
        if len(res) != 3:
            continue
        for o, s, z, lo, hi, exact, want in outs:
            ref, imp, jit = res["ref"][o], res["imported"][o], res["jit"][o]
            what = "%s [%d, %d]" % (o, lo, hi)
            check(name, what + " jit == ref", ref.tobytes() == jit.tobytes())
            steps = np.abs(ref.astype(np.float64) - imp) / s
            tol = 0 if exact else 1
            check(name, what + " passes == imported", steps.max() <= tol + 1e-6,
                  "max %g steps" % steps.max())
            dn = np.abs(imp.astype(np.float64) - want) / s
            check(name, what + " imported == numpy", dn.max() <= tol + 1e-6,
                  "max %g steps" % dn.max())
            codes = np.rint(ref.astype(np.float64) / s) + z
            inside = codes.min() >= lo and codes.max() <= hi
            wc = np.rint(want.astype(np.float64) / s) + z
            bites = (wc == lo).any() or (wc == hi).any()
            check(name, what + " in range, clamp bites", inside and bites,
                  "codes [%d, %d], at a bound: %s" % (codes.min(), codes.max(), bites))
    print("%d checks, %d failed" % (checks, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
