#!/usr/bin/env python3
"""peers_worker.py: one engine on one model for bench/peers.py (runs under the peer python).

  PEER_PYTHON bench/peers_worker.py ENGINE MODEL.onnx INPUT.npy|INPUTS.npz THREADS WORKDIR [LIBQDQC]

INPUT: one array for a one-input model, or an .npz holding every graph input by name.

ENGINE: qdqc (JIT through libqdqc.so's C API, ctypes), ort (--opt all), ortlit (--opt disabled),
tvm (Relax: relax.frontend.onnx.from_onnx, the "zero" pipeline, tvm.compile for
`llvm -mcpu=<host>`, relax.VirtualMachine), iree (iree-import-onnx, iree-compile llvm-cpu
--iree-llvmcpu-target-cpu=host, iree.runtime; 1 thread: the local-sync driver, N: local-task
with N workers), iree-mlir (qdqc's --emit=mlir export compiled by iree-compile). It compiles the model and prints "ready <compile s>", or "error <one line>" and
exits 0; writes its first run's outputs to WORKDIR/<ENGINE><THREADS>.out<i>.npy; then for each
line K read from stdin runs K times and prints K lines "<wall ms> <process cpu ms>" and "end".
"""
import os
import re
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def one_line(e):
    lines = [l.strip() for l in str(e).strip().splitlines() if l.strip()]
    errs = [l for l in lines if "error" in l.lower()]
    line = (errs or lines or [type(e).__name__])[0]
    return re.sub(r"(?:^|(?<=: ))/\S+?:\d+:\d+: ", "", line)[:300]  # no temporary paths


def host_cpu():
    try:
        r = subprocess.run(["clang-22", "-march=native", "-###", "-x", "c", "/dev/null"],
                           capture_output=True, text=True)
        i = r.stderr.index('"-target-cpu" "')
        return r.stderr[i + 15:].split('"', 1)[0]
    except (OSError, ValueError):
        return "native"


def load_qdqc(model, xs, threads, lib):
    sys.path.insert(0, HERE)
    import run_bench
    q = run_bench.Qdqc(lib)
    m = q.load(model, xs)
    m.set_threads(threads)

    def f():
        if q.lib.qdqc_jit_run(m.j, m.ins, m.outp) != 0:
            raise RuntimeError("qdqc_jit_run failed")
        return m.outs
    return f


def load_ort(model, xs, threads, opt):
    sys.path.insert(0, HERE)
    import ort_run
    import onnxruntime as ort
    s = ort.InferenceSession(model, ort_run.session_options(ort, opt, threads),
                             providers=["CPUExecutionProvider"])
    feeds = {i.name: x for i, x in zip(s.get_inputs(), xs)}
    return lambda: s.run(None, feeds)


def load_tvm(model, xs, threads, work):
    os.environ["TVM_NUM_THREADS"] = str(threads)
    import onnx
    import tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx
    m = onnx.load(model)
    names = graph_inputs(model)
    mod = from_onnx(m, shape_dict={n: list(x.shape) for n, x in zip(names, xs)},
                    keep_params_in_input=False)
    mod = relax.transform.DecomposeOpsForInference()(mod)
    target = tvm.target.Target({"kind": "llvm", "mcpu": host_cpu(), "num-cores": threads})
    with tvm.transform.PassContext(opt_level=3):
        mod = relax.get_pipeline("zero")(mod)
        ex = tvm.compile(mod, target)
    vm = relax.VirtualMachine(ex, tvm.cpu())
    xt = [tvm.runtime.tensor(x) if hasattr(tvm.runtime, "tensor") else tvm.nd.array(x) for x in xs]

    def f():
        r = vm["main"](*xt)
        r = r if isinstance(r, (list, tuple)) or not hasattr(r, "numpy") else [r]
        return [o.numpy() for o in r]
    return f


def load_iree(model, xs, threads, work):
    import iree.runtime as rt
    bindir = os.path.dirname(sys.executable)
    mlir = os.path.join(work, "iree.mlir")
    vmfb = os.path.join(work, "iree.vmfb")
    for cmd in ([os.path.join(bindir, "iree-import-onnx"), model, "-o", mlir],
                [os.path.join(bindir, "iree-compile"), "--iree-hal-target-backends=llvm-cpu",
                 "--iree-llvmcpu-target-cpu=host", mlir, "-o", vmfb]):
        if not os.path.exists(vmfb) or cmd[0].endswith("onnx"):
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode:
                raise RuntimeError("%s: %s" % (os.path.basename(cmd[0]), one_line(r.stderr or r.stdout)))
    if threads > 1:
        rt.flags.parse_flags("--task_topology_max_group_count=%d" % threads)
        cfg = rt.Config("local-task")
    else:
        cfg = rt.Config("local-sync")
    ctx = rt.SystemContext(config=cfg)
    with open(vmfb, "rb") as fh:
        vm = rt.VmModule.copy_buffer(cfg.vm_instance, fh.read())
    ctx.add_vm_module(vm)
    names = [n for n in vm.function_names if not n.startswith("__") and "$" not in n]
    fn = ctx.modules[vm.name]["main_graph" if "main_graph" in names else names[0]]
    dx = [rt.asdevicearray(cfg.device, x) for x in xs]

    def f():
        r = fn(*dx)
        r = r if isinstance(r, (list, tuple)) else [r]
        return [o.to_host() for o in r]
    return f


def load_iree_mlir(model, xs, threads, work, lib):
    """qdqc's own export: `qdqc --requant=fixed --emit=mlir`, the generic form (mlir-opt-22), then
    iree-compile and iree.runtime as load_iree (docs/mlir.md, "Running exported MLIR with IREE")."""
    import iree.runtime as rt
    qdqc = os.path.join(os.path.dirname(os.path.abspath(lib)), "bin", "qdqc")
    mlir, gen = os.path.join(work, "qdqc.mlir"), os.path.join(work, "qdqc.generic.mlir")
    vmfb = os.path.join(work, "qdqc.vmfb")
    for cmd in ([qdqc, model, "--requant=fixed", "--emit=mlir", "-o", mlir],
                ["mlir-opt-22", "--mlir-print-op-generic", mlir, "-o", gen],
                [os.path.join(os.path.dirname(sys.executable), "iree-compile"),
                 "--iree-hal-target-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host",
                 "--iree-input-demote-f64-to-f32=false", gen, "-o", vmfb]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError("%s: %s" % (os.path.basename(cmd[0]), one_line(r.stderr or r.stdout)))
    func = re.search(r'func\.func @([\w.$-]+|"[^"]*")\(', open(mlir).read()).group(1).strip('"')
    m = rt.load_vm_flatbuffer_file(vmfb, driver="local-sync")
    fn = m[func]

    def f():
        r = fn(*xs)
        r = r if isinstance(r, (list, tuple)) else [r]
        return [o.to_host() for o in r]
    return f


def graph_inputs(model):
    """The names of the model's graph inputs that are not initializers, in order."""
    import onnx
    m = onnx.load(model, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    return [i.name for i in m.graph.input if i.name not in inits]


def load_inputs(model, inp):
    """The input arrays in the model's input order (.npz: by name; .npy: the one input)."""
    if not inp.endswith(".npz"):
        return [np.ascontiguousarray(np.load(inp))]
    z = np.load(inp)
    return [np.ascontiguousarray(z[n]) for n in graph_inputs(model)]


def main():
    engine, model, inp, threads, work = sys.argv[1:6]
    threads = int(threads)
    lib = sys.argv[6] if len(sys.argv) > 6 else None
    os.makedirs(work, exist_ok=True)
    t0 = time.perf_counter()
    try:
        xs = load_inputs(model, inp)
        if engine == "qdqc":
            f = load_qdqc(model, xs, threads, lib)
        elif engine in ("ort", "ortlit"):
            f = load_ort(model, xs, threads, "all" if engine == "ort" else "disabled")
        elif engine == "tvm":
            f = load_tvm(model, xs, threads, work)
        elif engine == "iree":
            f = load_iree(model, xs, threads, work)
        elif engine == "iree-mlir":
            f = load_iree_mlir(model, xs, threads, work, lib)
        else:
            raise ValueError("unknown engine " + engine)
        outs = f()
    except Exception as e:  # every engine's own exception classes
        print("error " + one_line(e), flush=True)
        return 0
    compile_s = time.perf_counter() - t0
    for i, o in enumerate(outs):
        np.save(os.path.join(work, "%s%d.out%d.npy" % (engine, threads, i)), np.asarray(o))
    print("ready %.3f" % compile_s, flush=True)
    for _ in range(2):
        f()
    for line in sys.stdin:
        k = int(line)
        res = []
        for _ in range(k):
            c0, w0 = time.process_time_ns(), time.perf_counter_ns()
            f()
            w, c = time.perf_counter_ns() - w0, time.process_time_ns() - c0
            res.append("%.4f %.4f" % (w / 1e6, c / 1e6))
        print("\n".join(res) + "\nend", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
