#!/usr/bin/python3
"""numeric_guards.py QDQC [--out DIR]: the int32 accumulator and run-time scales, end to end
(docs/numerics.md "The int32 accumulator", docs/abi.md).

1. Gemm whose int32 bias is INT32_MAX (ONNX Runtime style: int8 weights, int32 bias behind a
   DequantizeLinear with scale sx*sw, u8 activations), and a control whose bias fits. Compiling
   warns, naming the node and the channel; `qdqc run --engine=jit` and `--engine=ref` both exit
   0 with equal outputs (bit for bit), equal to the graph as imported (`--passes=`) and to a
   numpy evaluation within one output step. (Before: the reference exited 1, "int32
   accumulator overflows", and the JIT returned a wrapped value.)
2. A QuantizeLinear and a DequantizeLinear whose scale is a graph input, run with scales 0,
   -0.05, NaN, inf and 0.05: for the invalid ones the reference and the JIT both exit 1 with
   "scale must be positive and finite" / "run-time quantization scale", and the AOT object
   (test/e2e/cross_driver.c linked with `qdqc MODEL -o model.o`) returns QDQC_ERR_RUNTIME (9)
   from model_run; for 0.05 all three agree with numpy. (Before: the JIT returned zeros or
   garbage with exit 0.)
Prints one line per check and "N checks, M failed"; exit 1 on any failure. Run with
/usr/bin/python3."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

F32 = np.float32
HERE = os.path.dirname(os.path.abspath(__file__))


def init(name, arr):
    return nh.from_array(np.asarray(arr), name)


def save(nodes, ins, outs, inits, path):
    g = h.make_graph(nodes, "g", ins, outs, initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], producer_name="numeric_guards")
    m.ir_version = 7
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)


def q(x, s, z, lo=0, hi=255):
    return np.clip(np.rint(x.astype(F32) / F32(s)) + z, lo, hi).astype(np.int64)


def gemm_model(path, bias0):
    """y = DQ(Q(Gemm(DQ(Q(x)), DQ(w)^T, DQ(b)))); the bias of column 0 is bias0."""
    sx, sw, sy = F32(0.02), F32(0.01), F32(0.05)
    w = (np.arange(32 * 10) % 7 - 3).astype(np.int8).reshape(10, 32)
    b = (np.arange(10) * 100 - 300).astype(np.int32)
    b[0] = bias0
    inits = [init("sx", sx), init("zx", np.uint8(128)), init("w", w), init("sw", sw),
             init("zw", np.int8(0)), init("b", b), init("sb", F32(sx * sw)),
             init("zb", np.int32(0)), init("sy", sy), init("zy", np.uint8(128))]
    nodes = [h.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"], name="q_x"),
             h.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"], name="dq_x"),
             h.make_node("DequantizeLinear", ["w", "sw", "zw"], ["wd"], name="dq_w"),
             h.make_node("DequantizeLinear", ["b", "sb", "zb"], ["bd"], name="dq_b"),
             h.make_node("Gemm", ["xd", "wd", "bd"], ["g"], name="fc", transB=1),
             h.make_node("QuantizeLinear", ["g", "sy", "zy"], ["gq"], name="q_y"),
             h.make_node("DequantizeLinear", ["gq", "sy", "zy"], ["y"], name="dq_y")]
    save(nodes, [h.make_tensor_value_info("x", TP.FLOAT, [2, 32])],
         [h.make_tensor_value_info("y", TP.FLOAT, [2, 10])], inits, path)
    x = np.stack([np.linspace(-2, 2, 32), np.linspace(2, -2, 32)]).astype(F32)
    # numpy: the literal graph (f32 dequantized operands, f64 sums)
    xd = ((q(x, sx, 128) - 128).astype(F32) * sx).astype(np.float64)
    wd = (w.astype(F32) * sw).astype(np.float64)
    bd = (b.astype(F32) * F32(sx * sw)).astype(np.float64)
    g = (xd @ wd.T + bd).astype(F32)
    y = ((q(g, sy, 128) - 128).astype(F32) * sy).astype(F32)
    return x, y, float(sy)


def scale_models(d):
    """q_rt: x -> Q(x, s input, 128) -> DQ(0.05, 128); dq_rt: xq u8 -> DQ(xq, s input, 128)."""
    s2 = F32(0.05)
    save([h.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="q_rt"),
          h.make_node("DequantizeLinear", ["xq", "s2", "z"], ["y"], name="dq")],
         [h.make_tensor_value_info("x", TP.FLOAT, [2, 3]),
          h.make_tensor_value_info("s", TP.FLOAT, [])],
         [h.make_tensor_value_info("y", TP.FLOAT, [2, 3])],
         [init("z", np.uint8(128)), init("s2", s2)], os.path.join(d, "q_rt.onnx"))
    save([h.make_node("DequantizeLinear", ["xq", "s", "z"], ["y"], name="dq_rt")],
         [h.make_tensor_value_info("xq", TP.UINT8, [2, 3]),
          h.make_tensor_value_info("s", TP.FLOAT, [])],
         [h.make_tensor_value_info("y", TP.FLOAT, [2, 3])],
         [init("z", np.uint8(128))], os.path.join(d, "dq_rt.onnx"))
    x = np.array([[-1, 0, 0.5], [1, 2.5, -7]], F32)
    xq = np.array([[0, 100, 128], [129, 200, 255]], np.uint8)
    return {"q_rt": ("x", x, lambda s: ((q(x, s, 128) - 128).astype(F32) * s2).astype(F32)),
            "dq_rt": ("xq", xq, lambda s: ((xq.astype(np.int64) - 128).astype(F32) *
                                           F32(s)).astype(F32))}


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    qdqc = argv[1]
    tmpdir = None if "--out" in argv else tempfile.TemporaryDirectory(prefix="numeric_guards.")
    d = argv[argv.index("--out") + 1] if "--out" in argv else tmpdir.name
    os.makedirs(d, exist_ok=True)
    nchk = nfail = 0

    def report(ok, what):
        nonlocal nchk, nfail
        nchk += 1
        nfail += not ok
        print("%s %s" % ("PASS" if ok else "FAIL", what))

    # ---- 1. int32 bias ----
    for tag, bias0, warn in (("int32_max", 2147483647, True), ("fits", 1000, False)):
        mp = os.path.join(d, "gemm_%s.onnx" % tag)
        x, want, step = gemm_model(mp, bias0)
        xp = os.path.join(d, "gemm_x.npy")
        np.save(xp, x)
        rc, msg = run([qdqc, mp, "--emit=ir", "-o", os.path.join(d, "gemm_%s.qir" % tag)])
        warned = "node 'fc' (Gemm): warning: int32 accumulator may overflow: output channel 0" in msg
        report(rc == 0 and warned == warn, "gemm_%s compile (warning %s)%s" %
               (tag, "expected" if warn else "not expected", "" if rc == 0 and warned == warn
                else ": " + msg.strip()))
        res = {}
        for eng, args in (("ref-literal", ["--engine=ref", "--passes="]),
                          ("ref", ["--engine=ref"]), ("jit", ["--engine=jit"])):
            od = os.path.join(d, "gemm_%s_%s" % (tag, eng))
            rc, msg = run([qdqc, "run", mp, "--input", "x=" + xp, "--output-dir", od] + args)
            report(rc == 0, "gemm_%s %s exit 0%s" % (tag, eng, "" if rc == 0 else ": " + msg.strip()))
            if rc == 0:
                res[eng] = np.load(os.path.join(od, "y.npy"))
        if len(res) == 3:
            report(np.array_equal(res["jit"], res["ref"]), "gemm_%s jit == ref" % tag)
            for eng in ("ref", "ref-literal"):
                diff = float(np.max(np.abs(res[eng].astype(np.float64) - want)))
                report(diff <= step * 1.0001, "gemm_%s %s == numpy within one step (max diff %g)"
                       % (tag, eng, diff))

    # ---- 2. run-time scales ----
    drv = os.path.join(d, "driver")
    cc_ok = None
    for name, (iname, x, oracle) in scale_models(d).items():
        mp = os.path.join(d, name + ".onnx")
        obj = os.path.join(d, name + ".o")
        exe = os.path.join(d, name + "_aot")
        rc, msg = run([qdqc, mp, "-o", obj])
        if rc == 0:
            rc, msg = run(["cc", "-O1", "-o", exe, os.path.join(HERE, "cross_driver.c"), obj, "-lm"])
        cc_ok = rc == 0
        report(cc_ok, "%s AOT object and driver build%s" % (name, "" if cc_ok else ": " + msg))
        xp = os.path.join(d, name + "_x.npy")
        np.save(xp, x)
        with open(os.path.join(d, name + "_x.bin"), "wb") as f:
            f.write(x.tobytes())
        for sv in (0.0, -0.05, float("nan"), float("inf"), 0.05):
            sp = os.path.join(d, "s_%s.npy" % sv)
            np.save(sp, F32(sv))
            with open(os.path.join(d, "s_%s.bin" % sv), "wb") as f:
                f.write(F32(sv).tobytes())
            good = sv == 0.05
            outs = {}
            for eng in ("ref", "jit"):
                od = os.path.join(d, "%s_%s_%s" % (name, sv, eng))
                rc, msg = run([qdqc, "run", mp, "--engine=" + eng, "--input", iname + "=" + xp,
                               "--input", "s=" + sp, "--output-dir", od])
                if good:
                    ok = rc == 0
                    if ok:
                        outs[eng] = np.load(os.path.join(od, "y.npy"))
                else:
                    ok = rc == 1 and ("scale must be positive and finite" in msg if eng == "ref"
                                      else "run-time check failed" in msg)
                report(ok, "%s s=%s %s %s" % (name, sv, eng, "exit 0" if good else
                                              "exit 1, named") + ("" if ok else ": " + msg.strip()))
            if cc_ok:
                ob = os.path.join(d, "%s_%s_aot.bin" % (name, sv))
                rc, msg = run([exe, "2", os.path.join(d, name + "_x.bin"),
                               os.path.join(d, "s_%s.bin" % sv), "1", ob, str(x.size * 4)])
                if good:
                    ok = rc == 0
                    if ok:
                        outs["aot"] = np.fromfile(ob, F32).reshape(x.shape)
                else:
                    ok = rc == 3 and "model_run returned 9" in msg
                report(ok, "%s s=%s aot %s" % (name, sv, "status 0" if good else
                                               "status 9 (QDQC_ERR_RUNTIME)") +
                       ("" if ok else ": rc=%d %s" % (rc, msg.strip())))
            if good:
                want = oracle(F32(sv))
                for eng, got in outs.items():
                    report(np.array_equal(got, want), "%s s=%s %s == numpy" % (name, sv, eng))
    print("%d checks, %d failed" % (nchk, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
