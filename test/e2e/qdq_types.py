#!/usr/bin/python3
"""qdq_types.py QDQC [--out DIR] [--list]: ONNX opset-21 QuantizeLinear/DequantizeLinear with the
element types and forms of opset 21, end to end.

Types INT4/UINT4 (packed two per byte, low nibble first, odd element counts), INT16/UINT16,
beside u8/i8; per tensor, per axis and blocked (`block_size`, also with a block that does not
divide the axis), with constant parameters (imported as the node's own parameters, or as
operands when blocked) and with run-time ones (graph inputs); constant int4 weights from
raw_data and from int32_data; the shapes of ONNX's own opset-21 node tests (quantizelinear_int4,
_uint4, _int16, _uint16, _blocked_asymmetric, _blocked_symmetric, dequantizelinear_int4, ...),
which Debian's libonnx-testdata (1.12) does not ship, with inputs of our own. For each model:
  - `qdqc run --engine=ref` equals an independent numpy evaluation of ONNX's definition
    (y = saturate(rne(x / s) + zp), x = (q - zp) * s, f32 arithmetic), exactly;
  - `qdqc run --engine=jit` equals the reference bit for bit;
  - the text IR after the pipeline parses back (`qdqc opt`) and prints the same;
  - `--emit=mlir` (tosa/linalg) run by tools/mlir_run.py equals the reference bit for bit, or
    the export refuses with the reason expected for the case: a u4 graph input or output (no
    unsigned 4-bit boundary), run-time scale/zero point operands, or the float matmul of the
    weight cases (no float matmul export). Blocked constant parameters export.
Inputs include exact ties (x / s = k + 0.5, power-of-two scales), values beyond the storage
range on both sides and NaN-free random values. Prints one line per check and
"N checks, M failed"; exit 1 on any failure. Run with /usr/bin/python3 (python3-onnx 1.12 has no
INT4/UINT4 constants: data types 21/22 are written as numbers)."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

F32 = np.float32
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UINT4, INT4 = 21, 22
RANGE = {TP.UINT8: (0, 255), TP.INT8: (-128, 127), TP.UINT16: (0, 65535),
         TP.INT16: (-32768, 32767), UINT4: (0, 15), INT4: (-8, 7)}
NPT = {TP.UINT8: np.uint8, TP.INT8: np.int8, TP.UINT16: np.uint16, TP.INT16: np.int16,
       UINT4: np.uint8, INT4: np.int8}  # 4-bit values are held one per byte (numpy and qdqc run)


# ---- numpy oracle (ONNX QuantizeLinear-21 / DequantizeLinear-21) ----
def expand(p, x, axis, block):
    """The parameter of every element of x: per tensor, per axis or blocked."""
    p = np.asarray(p)
    if p.ndim == 0 and block:  # a zero point omitted: 0 everywhere
        return p
    if p.size == 1 and not block:
        return p.reshape(())
    axis = axis % x.ndim
    if not block:
        shape = [1] * x.ndim
        shape[axis] = p.size
        return p.reshape(shape)
    return np.take(np.repeat(p, block, axis=axis), np.arange(x.shape[axis]), axis=axis)


def quantize(x, s, z, dt, axis=1, block=0):
    lo, hi = RANGE[dt]
    s = expand(np.asarray(s, F32), x, axis, block)
    z = expand(np.asarray(z, np.int64), x, axis, block)
    q = np.rint(x.astype(F32) / s).astype(np.float64) + z
    return np.clip(q, lo, hi).astype(NPT[dt])


def dequantize(q, s, z, axis=1, block=0):
    s = expand(np.asarray(s, F32), q, axis, block)
    z = expand(np.asarray(z, np.int64), q, axis, block)
    return ((q.astype(np.int64) - z).astype(F32) * s).astype(F32)


# ---- tensors ----
def pack4(vals):
    v = [int(a) & 15 for a in np.asarray(vals).flatten()]
    if len(v) % 2:
        v.append(0)
    return bytes(v[i] | (v[i + 1] << 4) for i in range(0, len(v), 2))


def tensor(name, dt, arr, raw=True):
    """An initializer of ONNX type dt; 4-bit values packed two per byte, low nibble first,
    in raw_data or (raw=False) one packed byte per int32_data entry."""
    arr = np.asarray(arr)
    if dt not in (INT4, UINT4):
        return nh.from_array(arr.astype(NPT[dt]) if dt in NPT else arr, name)
    t = TP()
    t.name, t.data_type = name, dt
    t.dims.extend(arr.shape)
    if raw:
        t.raw_data = pack4(arr)
    else:
        t.int32_data.extend(pack4(arr))
    return t


class Case:
    def __init__(self, name):
        self.name, self.nodes, self.inits, self.inputs, self.feeds = name, [], [], [], {}
        self.outs, self.expect = [], {}

    def input(self, name, dt, arr):
        self.inputs.append(h.make_tensor_value_info(name, dt, list(np.shape(arr))))
        self.feeds[name] = np.asarray(arr).astype(NPT.get(dt, F32))

    def init(self, name, dt, arr, raw=True):
        self.inits.append(tensor(name, dt, arr, raw))

    def node(self, op, ins, out, **attrs):
        self.nodes.append(h.make_node(op, ins, [out], name=out, **attrs))

    def output(self, name, dt, arr):
        self.outs.append(h.make_tensor_value_info(name, dt, list(np.shape(arr))))
        self.expect[name] = np.asarray(arr)

    def model(self):
        g = h.make_graph(self.nodes, self.name, self.inputs, self.outs, initializer=self.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 21)], producer_name="qdq_types")
        m.ir_version = 10
        return m


def ties(shape, s, lo, hi, rng):
    """Values around and beyond [lo, hi] * s, half of them exact ties k + 0.5 (s a power of
    two keeps x / s exact)."""
    k = rng.integers(lo - 3, hi + 3, size=shape).astype(F32)
    half = rng.integers(0, 2, size=shape).astype(F32) * F32(0.5)
    return ((k + half) * F32(s)).astype(F32)


def cases():
    rng = np.random.default_rng(21)
    out = []

    # per tensor, every storage type: Q of a graph input (ties, saturation) and DQ back
    for dt, nm in ((INT4, "i4"), (UINT4, "u4"), (TP.INT16, "i16"), (TP.UINT16, "u16"),
                   (TP.INT8, "i8"), (TP.UINT8, "u8")):
        lo, hi = RANGE[dt]
        s = 0.25 if dt not in (TP.INT16, TP.UINT16) else 0.5
        zp = {INT4: -2, UINT4: 9, TP.INT16: 300, TP.UINT16: 40000, TP.INT8: 5, TP.UINT8: 130}[dt]
        x = ties((3, 7), s, lo - zp, hi - zp, rng)
        c = Case("qdq_%s_per_tensor" % nm)
        c.input("x", TP.FLOAT, x)
        c.init("s", TP.FLOAT, np.array(s, F32))
        c.init("z", dt, np.array(zp))
        q = quantize(x, s, zp, dt)
        c.node("QuantizeLinear", ["x", "s", "z"], "q")
        c.node("DequantizeLinear", ["q", "s", "z"], "y")
        c.output("q", dt, q)
        c.output("y", TP.FLOAT, dequantize(q, s, zp))
        out.append(c)

    # the shapes of ONNX's quantizelinear_int4 / _uint4 (axis 0, zero point 1), our data
    for dt, nm in ((INT4, "int4"), (UINT4, "uint4")):
        x = np.array([[0.0, 2.5, 4.8, 8.6], [-30, -20, 6, 9], [12, 15, 16, 40]], F32)
        x[0, 1] = 3.0  # 3 / 2 = 1.5: a tie
        s = np.array([2.0, 3.0, 4.0], F32)
        z = np.ones(3, np.int64)
        c = Case("node_quantizelinear_%s" % nm)
        c.input("x", TP.FLOAT, x)
        c.init("y_scale", TP.FLOAT, s)
        c.init("y_zero_point", dt, z)
        c.node("QuantizeLinear", ["x", "y_scale", "y_zero_point"], "y", axis=0)
        c.output("y", dt, quantize(x, s, z, dt, axis=0))
        out.append(c)

    # quantizelinear_int16 / _uint16 shapes: per tensor, saturation at both ends
    x = np.array([0, -514, 3, -3, 2.9, -2.9, 3.1, -3.1, 65022, -66046, 65023, -66047, 65024,
                  -66048, 70000, -70000], F32)
    for dt, nm, zp in ((TP.INT16, "int16", 256), (TP.UINT16, "uint16", 32767)):
        c = Case("node_quantizelinear_%s" % nm)
        c.input("x", TP.FLOAT, x)
        c.init("y_scale", TP.FLOAT, np.array(2.0, F32))
        c.init("y_zero_point", dt, np.array(zp))
        c.node("QuantizeLinear", ["x", "y_scale", "y_zero_point"], "y")
        c.output("y", dt, quantize(x, 2.0, zp, dt))
        out.append(c)

    # dequantizelinear_int4 / _uint4 / _int16 / _uint16 shapes: a graph input, per tensor;
    # 5 elements (odd)
    for dt, nm, zp in ((INT4, "int4", 1), (UINT4, "uint4", 1), (TP.INT16, "int16", -1024),
                       (TP.UINT16, "uint16", 32767)):
        lo, hi = RANGE[dt]
        q = np.array([lo, lo + 1, 0 if lo < 0 else 1, hi - 1, hi])
        c = Case("node_dequantizelinear_%s" % nm)
        c.input("x", dt, q)
        c.init("x_scale", TP.FLOAT, np.array(2.0, F32))
        c.init("x_zero_point", dt, np.array(zp))
        c.node("DequantizeLinear", ["x", "x_scale", "x_zero_point"], "y", axis=0)
        c.output("y", TP.FLOAT, dequantize(q.astype(NPT[dt]), 2.0, zp))
        out.append(c)

    # blocked, the shapes of ONNX's quantizelinear_blocked_asymmetric (u8 zero point) and
    # _blocked_symmetric (no zero point, output_dtype INT16), and dequantizelinear_blocked
    x = np.array([[6.0, 12.0, 50.0, 5.0], [1.0, 8.0, 4.0, 5.0], [0.0, 20.0, 10.0, 4.0]], F32)
    s = np.array([[1.5, 2.5], [3.0, 4.9], [5.1, 6.9]], F32)
    z = np.array([[0, 1], [1, 0], [2, 3]])
    c = Case("node_quantizelinear_blocked_asymmetric")
    c.input("x", TP.FLOAT, x)
    c.init("y_scale", TP.FLOAT, s)
    c.init("y_zero_point", TP.UINT8, z)
    c.node("QuantizeLinear", ["x", "y_scale", "y_zero_point"], "y", axis=1, block_size=2)
    c.output("y", TP.UINT8, quantize(x, s, z, TP.UINT8, 1, 2))
    out.append(c)
    xs = x.copy()
    xs[0, 1:3] = [-8, -10]
    c = Case("node_quantizelinear_blocked_symmetric")
    c.input("x", TP.FLOAT, xs)
    c.init("y_scale", TP.FLOAT, s)
    c.node("QuantizeLinear", ["x", "y_scale"], "y", axis=1, block_size=2,
           output_dtype=TP.INT16)
    c.output("y", TP.INT16, quantize(xs, s, 0, TP.INT16, 1, 2))
    out.append(c)
    q = np.array([[[[3, 89], [34, 200], [74, 59]], [[5, 24], [24, 87], [32, 13]],
                   [[5, 12], [12, 33], [65, 42]], [[245, 99], [4, 142], [121, 102]]]])
    s4 = np.array([[[[3.0, 2.0], [4.0, 1.0], [2.0, 2.0]], [[5.0, 2.0], [4.0, 3.0], [5.0, 2.0]]]],
                  F32)
    z4 = np.array([[[[1, 0], [0, 1], [1, 0]], [[0, 2], [1, 0], [1, 1]]]])
    c = Case("node_dequantizelinear_blocked")
    c.input("x", TP.UINT8, q)
    c.init("x_scale", TP.FLOAT, s4)
    c.init("x_zero_point", TP.UINT8, z4)
    c.node("DequantizeLinear", ["x", "x_scale", "x_zero_point"], "y", axis=1, block_size=2)
    c.output("y", TP.FLOAT, dequantize(q.astype(np.uint8), s4, z4, 1, 2))
    out.append(c)

    # blocked int4 / uint4 / int16 / uint16 Q -> DQ, a block (3) that does not divide the axis
    # (7 -> 3 blocks, the last of 1), axis 1 of a rank-3 tensor, negative axis on the last one
    for dt, nm in ((INT4, "i4"), (UINT4, "u4"), (TP.INT16, "i16"), (TP.UINT16, "u16")):
        lo, hi = RANGE[dt]
        for axis, block, shape in ((1, 3, (2, 7, 3)), (-1, 2, (3, 2, 5)), (0, 4, (3, 5))):
            a = axis % len(shape)
            ps = list(shape)
            ps[a] = -(-shape[a] // block)
            sp = (2.0 ** rng.integers(-3, 2, size=ps)).astype(F32)
            zp = rng.integers(lo // 2, hi // 2 + 1, size=ps)
            x = ties(shape, 1.0, lo, hi, rng) * expand(sp, np.zeros(shape), a, block)
            x = x.astype(F32)
            c = Case("qdq_%s_blocked_axis%d_b%d" % (nm, axis, block))
            c.input("x", TP.FLOAT, x)
            c.init("s", TP.FLOAT, sp)
            c.init("z", dt, zp)
            qv = quantize(x, sp, zp, dt, a, block)
            c.node("QuantizeLinear", ["x", "s", "z"], "q", axis=axis, block_size=block)
            c.node("DequantizeLinear", ["q", "s", "z"], "y", axis=axis, block_size=block)
            c.output("q", dt, qv)
            c.output("y", TP.FLOAT, dequantize(qv, sp, zp, a, block))
            out.append(c)

    # per axis: int4 / uint4 / int16 / uint16, constant and run-time parameters
    for dt, nm in ((INT4, "i4"), (UINT4, "u4"), (TP.INT16, "i16"), (TP.UINT16, "u16")):
        lo, hi = RANGE[dt]
        sp = np.array([0.5, 0.125, 1.0, 0.25], F32)
        zp = np.array([lo, hi, (lo + hi) // 2, 0 if lo < 0 else 1])
        x = (ties((2, 4, 3), 1.0, lo, hi, rng) * sp.reshape(1, 4, 1)).astype(F32)
        qv = quantize(x, sp, zp, dt, 1)
        for runtime in (False, True):
            c = Case("qdq_%s_per_axis%s" % (nm, "_runtime" if runtime else ""))
            c.input("x", TP.FLOAT, x)
            if runtime:
                c.input("s", TP.FLOAT, sp)
                c.input("z", dt, zp)
            else:
                c.init("s", TP.FLOAT, sp)
                c.init("z", dt, zp)
            c.node("QuantizeLinear", ["x", "s", "z"], "q", axis=1)
            c.node("DequantizeLinear", ["q", "s", "z"], "y", axis=1)
            c.output("q", dt, qv)
            c.output("y", TP.FLOAT, dequantize(qv, sp, zp, 1))
            out.append(c)

    # blocked with run-time parameters (graph inputs), int4
    sp = np.array([[0.5, 0.25, 1.0], [0.125, 2.0, 0.5]], F32)
    zp = np.array([[-3, 0, 7], [-8, 2, 1]])
    x = (ties((2, 5), 1.0, -8, 7, rng) * expand(sp, np.zeros((2, 5)), 1, 2)).astype(F32)
    qv = quantize(x, sp, zp, INT4, 1, 2)
    c = Case("qdq_i4_blocked_runtime")
    c.input("x", TP.FLOAT, x)
    c.input("s", TP.FLOAT, sp)
    c.input("z", INT4, zp)
    c.node("QuantizeLinear", ["x", "s", "z"], "q", axis=1, block_size=2)
    c.node("DequantizeLinear", ["q", "s", "z"], "y", axis=1, block_size=2)
    c.output("q", INT4, qv)
    c.output("y", TP.FLOAT, dequantize(qv, sp, zp, 1, 2))
    out.append(c)

    # constant int4 / uint4 weights with an odd element count (15: 8 bytes, the last high
    # nibble unused), from raw_data and from int32_data, DQ per axis and blocked, into a MatMul
    # (a float island: the weights are dequantized at run time)
    for dt, nm in ((INT4, "i4"), (UINT4, "u4")):
        lo, hi = RANGE[dt]
        w = rng.integers(lo, hi + 1, size=(3, 5))
        for raw in (True, False):
            for block in (0, 2):
                sw = (np.array([0.5, 0.25, 0.125], F32) if not block else
                      (2.0 ** rng.integers(-3, 1, size=(3, 3))).astype(F32))
                zw = (np.array([1, -1 if lo else 3, 0]) if not block else
                      rng.integers(lo, hi + 1, size=(3, 3)))
                c = Case("w_%s_%s_%s" % (nm, "raw" if raw else "int32data",
                                         "blocked" if block else "per_axis"))
                x = ties((2, 3), 0.5, -4, 4, rng)
                c.input("x", TP.FLOAT, x)
                c.init("w", dt, w, raw)
                c.init("sw", TP.FLOAT, sw)
                c.init("zw", dt, zw, raw)
                attrs = {"axis": 0}
                if block:
                    attrs = {"axis": 1, "block_size": block}
                c.node("DequantizeLinear", ["w", "sw", "zw"], "wf", **attrs)
                c.node("MatMul", ["x", "wf"], "y")
                wf = dequantize(w.astype(NPT[dt]), sw, zw, attrs["axis"], block)
                c.output("wf", TP.FLOAT, wf)
                # the matmul is compared JIT vs reference only (float summation order)
                c.expect["y"] = None
                c.outs.append(h.make_tensor_value_info("y", TP.FLOAT, [2, 5]))
                out.append(c)
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
    all_cases = cases()
    if "--list" in args:
        for c in all_cases:
            print(c.name)
        return 0
    checks = failed = 0
    tmp = tempfile.TemporaryDirectory()
    root = keep or tmp.name

    def check(name, what, ok, detail=""):
        nonlocal checks, failed
        checks += 1
        failed += not ok
        print("%s %s %s%s" % ("PASS" if ok else "FAIL", name, what,
                              "" if ok or not detail else ": " + detail.strip()[-800:]))

    for c in all_cases:
        d = os.path.join(root, c.name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        onnx.save(c.model(), path)
        ins = []
        for k, v in c.feeds.items():
            f = os.path.join(d, "in_%s.npy" % k)
            np.save(f, v)
            ins += ["--input", "%s=%s" % (k, f)]
        outs = {}
        for eng in ("ref", "jit"):
            od = os.path.join(d, eng)
            rc, log = run([qdqc, "run", path, "--engine=" + eng, "--output-dir", od] + ins)
            if rc:
                check(c.name, "%s runs" % eng, False, log)
                continue
            outs[eng] = {o.name: np.load(os.path.join(od, o.name + ".npy")) for o in c.outs}
        if "ref" in outs:
            good, why = True, ""
            for k, want in c.expect.items():
                if want is None:
                    continue
                got = outs["ref"][k]
                if got.shape != want.shape or not np.array_equal(
                        got.astype(np.float64), want.astype(np.float64)):
                    good, why = False, "%s: got %s want %s" % (k, got.flatten()[:16],
                                                                want.flatten()[:16])
                    break
            check(c.name, "ref == numpy", good, why)
        if "ref" in outs and "jit" in outs:
            same = all(outs["ref"][k].dtype == outs["jit"][k].dtype and
                       outs["ref"][k].tobytes() == outs["jit"][k].tobytes() for k in outs["ref"])
            check(c.name, "jit == ref", same)
        # MLIR export: runs and equals the reference, or refuses for the expected reason
        mpath = os.path.join(d, "model.mlir")
        rc, log = run([qdqc, path, "--emit=mlir", "-o", mpath])
        runtime = any(i.name in ("s", "z") for i in c.inputs)
        u4_in = any(v.type.tensor_type.elem_type == UINT4 for v in c.inputs)
        u4_out = any(v.type.tensor_type.elem_type == UINT4 for v in c.outs)
        # the first error the exporter meets: graph inputs, then the nodes in order, then
        # the graph outputs
        if u4_in:
            why = "has element type u4: unsigned values cross the function boundary"
        elif runtime:
            why = "scale and zero point operands (run-time parameters) are not exported"
        elif u4_out:
            why = "has element type u4: unsigned values cross the function boundary"
        else:
            why = None
        if why:
            check(c.name, "mlir refused: " + why, rc != 0 and why in log, log)
        elif rc:
            check(c.name, "mlir == ref", False, log)
        elif "ref" in outs:
            md = os.path.join(d, "mlir")
            mins = []
            for v in c.inputs:
                mins += ["--input", os.path.join(d, "in_%s.npy" % v.name)]
            names = ",".join(o.name for o in c.outs)
            rc, log = run([sys.executable, os.path.join(REPO, "tools", "mlir_run.py"), mpath,
                           "--output-dir", md, "--names", names] + mins)
            same = rc == 0 and all(
                np.load(os.path.join(md, k + ".npy")).tobytes() == outs["ref"][k].tobytes()
                for k in outs["ref"])
            check(c.name, "mlir == ref", same, log)
        ir1 = os.path.join(d, "after.qir")
        rc, log = run([qdqc, path, "-o", ir1])
        if rc == 0:
            rc, text2 = run([qdqc, "opt", ir1])
            with open(ir1) as f:
                text1 = f.read()
            check(c.name, "text IR round trip", rc == 0 and text1 == text2, text2)
        else:
            check(c.name, "text IR round trip", False, log)
    print("%d checks, %d failed" % (checks, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
