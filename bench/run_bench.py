#!/usr/bin/python3
"""run_bench.py: the one-command performance harness of qdqc.

    /usr/bin/python3 bench/run_bench.py [--build build-perf] [--work /tmp/qdqc_bench]
                                        [--iters 60] [--rounds 6] [--threads 1,2]
                                        [--models a,b] [--no-gemm] [--no-models] [--quick]
                                        [--out docs/performance.md]

1. Generates the full-size models (test/models/gen_fixtures.py --full WORK/models --full-only)
   and the real PyTorch QAT exports (test/models/torch_qat.py --out WORK/models: torchvision's
   ResNet-18, MobileNetV2, MobileNetV3-small, ShuffleNetV2; needs python3-torch); named in
   --models, the FX QAT transformers of test/models/torch_vit.py (vit2_qat, vit2_qat_o17,
   swins1_qat, swin_t_qat, vitb16_qat; bench/torch_vit_bench.py times them with a profile) and
   the quantize_dynamic BertModels of test/models/bert_dynq.py (bert_base_dynq, bert_small_dynq;
   peer environment; two int64 inputs from WORK/models/<name>/inputs.npz) and the edge CNNs of
   test/models/edge_cnns.py (peer environment: <net>_ort / <net>_qat for mobilenet_v3_small,
   mobilenet_v3_large, efficientnet_b0, mnasnet1_0, convnext_atto; `--models edge` for all ten).
2. For every model, at each thread count: qdqc (JIT through the public C API, libqdqc.so, via
   ctypes: qdqc_jit_create / qdqc_jit_run, a qdqc_threadpool as the parallel-for hook for > 1
   thread) and ONNX Runtime (bench/ort_run.py MODEL --bench K --threads N --opt all),
   alternating in `rounds` rounds of iters/rounds runs each, so that load on the shared machine
   hits both alike. Reported: median of all qdqc runs and the median of ORT's per-round medians,
   the best (min) of each, their ratios, GOPS (2 x int8 MACs from `qdqc --report` / latency),
   compile time (`qdqc MODEL -o x.o`: wall and CPU), workspace bytes (qdqc_jit_workspace_size).
3. A GEMM sweep: bench/gemm_bench.c (the generated AVX512-VNNI kernel) vs oneDNN
   (bench/dnnl/dnnl_bench.c against Debian's libdnnl-dev) vs the measured vpdpbusd peak
   (bench/peak/peak.c, 12 zmm accumulators), on square/rectangular GEMMs and on the ResNet-18 /
   MobileNetV2 conv shapes (as the im2col GEMM for qdqc, as a convolution for oneDNN).
4. Weight-only models (bench/gen_wonly_mlp.py: float activations, DequantizeLinear(int8 weights
   per column, or int4 in blocks of 32 / 128 along K) -> MatMul: MLPs and LLaMA-7B-shaped
   decoder linears at batch 1 and 16): qdqc vs ORT latency, qdqc's read
   rate in GB/s against this core's measured read bandwidth (bench/readbw.c: L3 for weights
   that fit it, DRAM otherwise; both measured at the start of the run), the difference from
   ORT's outputs (--opt disabled: against the per-element bound of test/e2e/wonly_ort.py) and
   what ORT --opt all makes of the graph. `--wonly-only` runs just this part, `--wonly-models`
   a subset.
5. Transformer blocks (`--transformers`, or by name in --models): the models of
   test/models/gen_transformers.py --full (BERT-base layer as ORT quantize_static, quantize_dynamic
   and TensorRT export, ViT-B/16 block, GPT-2 block, torch's nn.TransformerEncoderLayer), timed
   like the CNNs, with GOPS over every MAC of the model (int8 and float), the int8 part's share of
   the measured vpdpbusd peak and, from `qdqc bench --profile --json`, the attention qmatmuls'
   GMAC/s and share of the peak; table between <!-- bench-transformers:begin/end -->.
   A model qdqc refuses is a row with its message. `--transformers-only` runs just this part.
6. A16W8 (16-bit activations, int8 weights): the vpdpwssd peak (bench/peak,
   --peak12w), the generated A16W8 GEMM (gemm_bench --a16) on the GEMM and ResNet-18 conv shapes
   against it, and the A16W8 ResNet-18-shaped net (gen_fixtures.py --full:
   resnet18_ort_a16w8_224, opset-21 uint16 Q/DQ) against ORT, alternating, with its share of the
   vpdpwssd peak and its agreement with ORT's literal output (--opt disabled). `--a16-only`
   runs just this part, `--no-a16` skips it.
7. Writes the tables, the machine and the command into docs/performance.md between the markers
   <!-- bench:begin --> and <!-- bench:end --> (the weight-only table between
   <!-- bench-wonly:begin --> and <!-- bench-wonly:end -->, the A16W8 tables between
   <!-- bench-a16:begin --> and <!-- bench-a16:end -->; the prose around them is kept).
Only /usr/bin/python3 + numpy; needs the peer environment (tools/setup.sh --peer: ONNX Runtime), cc, clang-22 (peak probe), libdnnl-dev.
"""
import argparse
import ctypes
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "peer"))
import peerenv  # noqa: E402
MODELS = ["resnet18_ort_u8_224", "resnet18_torch_u8_224", "resnet18_trt_i8_224",
          "mobilenetv2_ort_u8_224", "mobilenetv2_torch_u8_224", "mobilenetv2_trt_i8_224"]
# real PyTorch QAT exports (test/models/torch_qat.py: torchvision, torch 1.13, opset 13)
TORCH_MODELS = ["resnet18_qat", "mobilenetv2_qat", "mobilenetv3s_qat", "shufflenetv2_qat"]
# FX QAT exports of torchvision's transformers (test/models/torch_vit.py; attention float), by name
# in --models only (not in the default list; bench/torch_vit_bench.py times them with a profile)
TORCH_VIT_MODELS = ["vit2_qat", "vit2_qat_o17", "swins1_qat", "swin_t_qat", "vitb16_qat"]
# a whole transformers BertModel quantized by ORT's quantize_dynamic (test/models/bert_dynq.py,
# peer environment; inputs input_ids and attention_mask from WORK/models/<name>/inputs.npz), by
# name in --models only
BERT_DYNQ_MODELS = ["bert_base_dynq", "bert_small_dynq"]
# edge CNNs (test/models/edge_cnns.py, peer environment): torchvision
# MobileNetV3-small/-large, EfficientNet-B0, MnasNet 1.0 and timm ConvNeXt-atto, each as ORT
# quantize_static QDQ (_ort) and PT2E QAT (_qat); by name in --models only, `edge` for all ten
EDGE_MODELS = ["%s_%s" % (n, s) for n in ("mobilenet_v3_small", "mobilenet_v3_large", "efficientnet_b0",
                                          "mnasnet1_0", "convnext_atto") for s in ("ort", "qat")]
# transformer blocks (test/models/gen_transformers.py --full): BERT-base layer in
# three quantizer styles, ViT-B/16 block with patch embedding, GPT-2 block, torch
# TransformerEncoderLayer export; their attention products (both operands activations)
TRANSFORMERS = ["bert_qs_base", "bert_dyn_base", "vit_qs_b16", "bert_trt_base", "gpt2_qs_base",
                "tel_qs_base", "tel17_qs_base"]
ATTENTION_NODE = re.compile(r"/attn/MatMul_\d+$|/self_attn/MatMul_[12]$")
GEMMS = [(64, 64, 64), (256, 256, 256), (512, 512, 512), (1024, 1024, 1024),
         (2048, 2048, 2048), (2048, 64, 2048), (64, 2048, 2048), (2048, 2048, 64),
         (256, 1024, 2048)]
# (name, N, C, H, W, OC, KH, KW, stride, pad, groups)
CONVS = [("r18 conv1 7x7 s2", 1, 3, 224, 224, 64, 7, 7, 2, 3, 1),
         ("r18 l1 3x3 64", 1, 64, 56, 56, 64, 3, 3, 1, 1, 1),
         ("r18 l2 3x3 128", 1, 128, 28, 28, 128, 3, 3, 1, 1, 1),
         ("r18 l3 3x3 256", 1, 256, 14, 14, 256, 3, 3, 1, 1, 1),
         ("r18 l4 3x3 512", 1, 512, 7, 7, 512, 3, 3, 1, 1, 1),
         ("mv2 1x1 24->144 56", 1, 24, 56, 56, 144, 1, 1, 1, 0, 1),
         ("mv2 1x1 144->24 56", 1, 144, 56, 56, 24, 1, 1, 1, 0, 1),
         ("mv2 1x1 96->576 14", 1, 96, 14, 14, 576, 1, 1, 1, 0, 1),
         ("mv2 dw 3x3 144 56", 1, 144, 56, 56, 144, 3, 3, 1, 1, 144)]


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def run(cmd, env=None, check=True):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if check and r.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s%s" % (" ".join(cmd), r.returncode, r.stdout, r.stderr))
    return r.stdout


def timed(cmd):
    """Run cmd; returns (wall s, cpu s of the child)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode()
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError("%s failed:\n%s" % (" ".join(cmd), err))
    return wall, ru.ru_utime + ru.ru_stime


# ---- qdqc through the public C API (ctypes) ----

class Qdqc:
    def __init__(self, libpath):
        V = ctypes.c_void_p
        self.lib = lib = ctypes.CDLL(libpath)
        lib.qdqc_context_create.restype = V
        lib.qdqc_context_destroy.argtypes = [V]
        lib.qdqc_context_get_diagnostics.restype = ctypes.c_char_p
        lib.qdqc_context_get_diagnostics.argtypes = [V]
        lib.qdqc_module_load_file.argtypes = [V, ctypes.c_char_p, ctypes.POINTER(V)]
        lib.qdqc_module_run_passes.argtypes = [V, ctypes.c_char_p]
        lib.qdqc_context_set_option.argtypes = [V, ctypes.c_char_p, ctypes.c_char_p]
        lib.qdqc_module_destroy.argtypes = [V]
        lib.qdqc_module_output_count.argtypes = [V]
        lib.qdqc_module_output_count.restype = ctypes.c_size_t
        lib.qdqc_module_output_rank.argtypes = [V, ctypes.c_size_t]
        lib.qdqc_module_output_dims.argtypes = [V, ctypes.c_size_t]
        lib.qdqc_module_output_dims.restype = ctypes.POINTER(ctypes.c_int64)
        lib.qdqc_module_output_elem_type.argtypes = [V, ctypes.c_size_t]
        lib.qdqc_module_output_elem_type.restype = ctypes.c_char_p
        lib.qdqc_jit_create.argtypes = [V, V, ctypes.POINTER(V)]
        lib.qdqc_jit_run.argtypes = [V, V, V]
        lib.qdqc_jit_set_parallel_for.argtypes = [V, V, V]
        lib.qdqc_jit_workspace_size.argtypes = [V]
        lib.qdqc_jit_workspace_size.restype = ctypes.c_size_t
        lib.qdqc_jit_destroy.argtypes = [V]
        lib.qdqc_threadpool_create.argtypes = [ctypes.c_int]
        lib.qdqc_threadpool_create.restype = V
        lib.qdqc_threadpool_destroy.argtypes = [V]
        self.pf = ctypes.cast(lib.qdqc_threadpool_parallel_for, V)

    def load(self, path, x, options=()):
        """JIT-compile path (with context options, (name, value) pairs, e.g. ("weight-only",
        "int8-acts")); returns a Model with .run() and .workspace."""
        lib, V = self.lib, ctypes.c_void_p
        ctx = lib.qdqc_context_create()
        for k, v in options:
            if lib.qdqc_context_set_option(ctx, k.encode(), v.encode()) != 0:
                raise RuntimeError(lib.qdqc_context_get_diagnostics(ctx).decode())
        m = V()
        if lib.qdqc_module_load_file(ctx, path.encode(), ctypes.byref(m)) != 0 or \
                lib.qdqc_module_run_passes(m, None) != 0:
            raise RuntimeError(lib.qdqc_context_get_diagnostics(ctx).decode())
        outs = []
        for i in range(lib.qdqc_module_output_count(m)):
            r = lib.qdqc_module_output_rank(m, i)
            dims = lib.qdqc_module_output_dims(m, i)
            et = lib.qdqc_module_output_elem_type(m, i).decode()
            dt = {"f32": np.float32, "i8": np.int8, "u8": np.uint8, "i32": np.int32,
                  "i64": np.int64, "i16": np.int16, "u16": np.uint16}[et]
            outs.append(np.zeros([dims[d] for d in range(r)], dt))
        j = V()
        t0 = time.perf_counter()
        if lib.qdqc_jit_create(m, None, ctypes.byref(j)) != 0:
            raise RuntimeError(lib.qdqc_context_get_diagnostics(ctx).decode())
        jit_s = time.perf_counter() - t0
        lib.qdqc_module_destroy(m)
        return Model(self, ctx, j, x, outs, jit_s)


class Model:
    def __init__(self, q, ctx, j, x, outs, jit_s):
        self.q, self.ctx, self.j, self.x, self.outs, self.jit_s = q, ctx, j, x, outs, jit_s
        V = ctypes.c_void_p
        xs = list(x) if isinstance(x, (list, tuple)) else [x]  # the model's inputs in order
        self.ins = (V * len(xs))(*[a.ctypes.data for a in xs])
        self.outp = (V * len(outs))(*[o.ctypes.data for o in outs])
        self.workspace = q.lib.qdqc_jit_workspace_size(j)
        self.pool = None

    def set_threads(self, n):
        lib = self.q.lib
        if self.pool:
            lib.qdqc_threadpool_destroy(self.pool)
            self.pool = None
        if n > 1:
            self.pool = lib.qdqc_threadpool_create(n)
            lib.qdqc_jit_set_parallel_for(self.j, self.q.pf, self.pool)
        else:
            lib.qdqc_jit_set_parallel_for(self.j, None, None)

    def time(self, iters):
        """[(wall ms, process cpu ms)] per run."""
        ts = []
        for _ in range(iters):
            c0, t0 = time.process_time(), time.perf_counter()
            if self.q.lib.qdqc_jit_run(self.j, self.ins, self.outp) != 0:
                raise RuntimeError("qdqc_jit_run failed")
            ts.append(((time.perf_counter() - t0) * 1e3, (time.process_time() - c0) * 1e3))
        return ts

    def close(self):
        self.set_threads(1)
        self.q.lib.qdqc_jit_destroy(self.j)
        self.q.lib.qdqc_context_destroy(self.ctx)


def ort_bench(model, inp, iters, threads):
    """[(wall ms, process cpu ms)] per run: bench/ort_cpu.py, the session options of
    `ort_run.py --opt all --threads N`, with per-run process CPU time (ort_run.py prints only
    wall-clock summaries, which the load of a shared machine dominates)."""
    out = run([peerenv.python(), peerenv.ORT_CPU, model, inp, str(iters), str(threads)])
    return [tuple(float(v) for v in line.split()) for line in out.strip().splitlines()]


def macs_of(qdqc, model):
    """int8 MACs plus the int16 x int8 MACs of 16-bit activations (`qdqc --report`)."""
    out = run([qdqc, model, "--report"])
    m16 = re.search(r"(\d+) int16xint8 MACs", out)
    return int(re.search(r"(\d+) int8 MACs", out).group(1)) + (int(m16.group(1)) if m16 else 0)


def work_of(qdqc, model):
    """(int8 MACs, float FLOPs) from `qdqc --report`."""
    out = run([qdqc, model, "--report"])
    return (int(re.search(r"(\d+) int8 MACs", out).group(1)),
            int(re.search(r"(\d+) float FLOPs", out).group(1)))


def attention_profile(qdqc, model):
    """(MACs, ms) of the attention qmatmuls (ATTENTION_NODE) in `qdqc bench --profile --json`,
    1 thread, min over the runs per node."""
    out = run([qdqc, "bench", model, "--profile", "--json", "--iters", "40"])
    js = json.loads(out[out.index("{"):])
    nodes = [n for n in js["nodes"] if n["op"] == "qmatmul" and ATTENTION_NODE.search(n["name"])]
    return sum(n["macs"] for n in nodes), sum(n["ms"] for n in nodes), len(nodes)


def bench_models(a, qdqc, q, threads):
    rows = []
    mdir = os.path.join(a.work, "models")
    for name in a.models:
        path = os.path.join(mdir, name + ".onnx")
        inp = os.path.join(mdir, name, "input.npy")
        if os.path.exists(os.path.join(mdir, name, "inputs.npz")):  # several inputs, in graph order
            inp = os.path.join(mdir, name, "inputs.npz")
            with np.load(inp) as z:
                x = [np.ascontiguousarray(z[k]) for k in z.files]
        else:
            x = np.ascontiguousarray(np.load(inp))
        if name in TRANSFORMERS:
            try:
                macs, flops = work_of(qdqc, path)
            except RuntimeError as e:  # a model qdqc refuses: a row that says why
                msg = [l for l in str(e).splitlines() if "error" in l]
                rows.append(dict(model=name, threads=0, q_err=(msg or [str(e)])[0].split("error: ", 1)[-1]))
                log("%s: qdqc refused: %s" % (name, rows[-1]["q_err"]))
                continue
        else:
            macs, flops = macs_of(qdqc, path), 0
        ort_path = path
        if name in TORCH_MODELS or name in TORCH_VIT_MODELS:
            # ORT 1.30 refuses torch's [1]-shaped scales at --opt all (QLinearAdd): it runs a
            # copy with rank-0 scales and zero points (the same numbers, test/e2e/torch_qat.py)
            sys.path.insert(0, os.path.join(ROOT, "test", "e2e"))
            import torch_qat
            ort_path = os.path.join(a.work, name + ".scalar.onnx")
            torch_qat.scalarize(path, ort_path)
        walls, cpus = [], []
        for _ in range(a.compile_reps):
            w, c = timed([qdqc, path, "-o", os.path.join(a.work, name + ".o")])
            walls.append(w)
            cpus.append(c)
        log("%s: compile %.2f s wall, %.2f s cpu (min of %d)" % (name, min(walls), min(cpus), a.compile_reps))
        m = q.load(path, x)
        per = max(1, a.iters // a.rounds)
        for th in threads:
            m.set_threads(th)
            m.time(3)  # warm-up
            qt, ot, oerr = [], [], None
            for _ in range(a.rounds):
                qt += m.time(per)
                if oerr is None:
                    try:
                        ot += ort_bench(ort_path, inp, per, th)
                    except RuntimeError as e:  # e.g. ORT refusing the model at --opt all
                        oerr = str(e).strip().splitlines()[-1]
                        log("%s: ORT failed: %s" % (name, oerr))
            med = lambda v, i: statistics.median(x[i] for x in v) if v else None
            r = dict(model=name, threads=th, macs=macs, flops=flops, q_med=med(qt, 0), q_min=min(x[0] for x in qt),
                     q_cpu=med(qt, 1), o_med=med(ot, 0), o_min=min(x[0] for x in ot) if ot else None,
                     o_cpu=med(ot, 1), o_err=oerr, compile_wall=min(walls), compile_cpu=min(cpus),
                     jit_s=m.jit_s, workspace=m.workspace, iters=len(qt))
            log("%s t%d: qdqc %.2f ms (min %.2f, cpu %.2f), ORT %s ms (min %s, cpu %s)" %
                (name, th, r["q_med"], r["q_min"], r["q_cpu"], fmt(r["o_med"]), fmt(r["o_min"]),
                 fmt(r["o_cpu"])))
            rows.append(r)
            with open(os.path.join(a.work, "rows.json"), "w") as fh:
                json.dump(rows, fh, indent=1)
        m.close()
        if name in TRANSFORMERS:
            am, ams, an = attention_profile(qdqc, path)
            for r in rows:
                if r["model"] == name:
                    r.update(att_macs=am, att_ms=ams, att_n=an)
    return rows


def report_transformers(a, rows, peak, cmdline):
    L = ["Machine: " + machine() + "; load average at end %.1f." % os.getloadavg()[0], ""]
    L.append("Command: `%s`" % cmdline)
    L.append("")
    L.append("vpdpbusd zmm peak (bench/peak, 12 accumulators, 1 thread), measured before the runs: "
             "**%.1f GMAC/s**." % peak)
    L.append("")
    L.append("| model | threads | qdqc wall ms (median / min) | ORT wall ms (median / min) "
             "| qdqc/ORT wall (median / min) | qdqc / ORT cpu ms | qdqc/ORT cpu | qdqc GOPS "
             "| int8 MACs: share, GMAC/s, % of peak | attention qmatmuls: GMAC/s, % of peak |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "q_err" in r:
            L.append("| %s | - | qdqc refused: %s | | | | | | | |" % (r["model"], r["q_err"].replace("|", "/")))
            continue
        tot = 2 * r["macs"] + r["flops"]
        # at 1 thread the process CPU time is the latency on an idle core (a shared machine's
        # load inflates the wall figures); at 2 threads the best wall
        t = r["q_cpu"] if r["threads"] == 1 else r["q_min"]
        gm = r["macs"] / t * 1e-6
        i8 = "%.0f%%, %.1f, %.0f%%" % (100.0 * 2 * r["macs"] / max(tot, 1), gm, 100 * gm / peak) \
            if r["macs"] else "0 (no integer MatMul)"
        att = "-"
        if r["threads"] == 1 and r.get("att_n"):
            ag = r["att_macs"] / r["att_ms"] * 1e-6
            att = "%.1f, %.0f%% (%d nodes)" % (ag, 100 * ag / peak, r["att_n"])
        if r["o_med"] is None:
            o = "ORT failed: %s | - | %.2f / - | -" % (r["o_err"].replace("|", "/"), r["q_cpu"])
        else:
            o = "%.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %.2f" % (
                r["o_med"], r["o_min"], r["q_med"] / r["o_med"], r["q_min"] / r["o_min"], r["q_cpu"],
                r["o_cpu"], r["q_cpu"] / r["o_cpu"])
        L.append("| %s | %d | %.2f / %.2f | %s | %.1f | %s | %s |" % (
            r["model"], r["threads"], r["q_med"], r["q_min"], o, tot / t * 1e-6, i8, att))
    L.append("")
    its = next((r["iters"] for r in rows if "iters" in r), 0)
    L.append("%d qdqc runs and as many ORT runs per row, alternating in %d rounds (qdqc: JIT through "
             "libqdqc.so; ORT: bench/ort_cpu.py, `--opt all`). cpu = process user+system time per run "
             "(all threads). GOPS = (2 x int8 MACs + float FLOPs, from `qdqc --report`) / time, the "
             "time being the median CPU time per run at 1 thread (the latency on an idle core; the "
             "wall figures carry the shared machine's load) and the best wall at 2 threads. int8 "
             "MACs: their share of the model's operations, their rate over the same time and its "
             "share of the peak. Attention qmatmuls: the products of two activations "
             "(Q x K^T, P x V), from `qdqc bench --profile --json` (1 thread, min per node over 40 "
             "runs)." % (its, a.rounds))
    return "\n".join(L) + "\n"


# ---- weight-only MLPs ----

def l3_bytes():
    try:
        v = open("/sys/devices/system/cpu/cpu0/cache/index3/size").read().strip()
        return int(v[:-1]) * {"K": 1 << 10, "M": 1 << 20}[v[-1]]
    except (OSError, ValueError, KeyError):
        return 32 << 20


def readbw(a, sizes):
    """Single-thread read bandwidth (GB/s) over buffers of these byte sizes: bench/readbw.c."""
    exe = os.path.join(a.work, "readbw")
    if not os.path.exists(exe):
        run(["cc", "-O2", "-march=native", "-std=c11", os.path.join(ROOT, "bench", "readbw.c"),
             "-o", exe])
    out = run([exe] + [str(v) for v in sizes])
    return [float(re.search(r": ([0-9.]+) GB/s", l).group(1)) for l in out.strip().splitlines()]


def wonly_models(a):
    """(name, M, K, N, layers, bits, block, bytes read per run) of the weight-only rows: the MLPs
    and the LLaMA-7B-shaped decoder linears of bench/gen_wonly_mlp.py (--wonly-models filters)."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import gen_wonly_mlp
    ms = [(n, m, d, d, l, 8, 0, l * (d * d + 4 * d)) for n, m, d, l in gen_wonly_mlp.MLPS]
    for n, m, k, nn, bits, bs in gen_wonly_mlp.LINEARS:
        g = k // bs if bs else 1
        ms.append((n, m, k, nn, 1, bits, bs, k * nn * bits // 8 + 4 * g * nn))
    want = [w for w in a.wonly_models.split(",") if w] if a.wonly_models else None
    return [r for r in ms if not want or r[0] in want]


def bench_wonly(a, q, threads):
    mdir = os.path.join(a.work, "wonly")
    run(["/usr/bin/python3", os.path.join(ROOT, "bench", "gen_wonly_mlp.py"), mdir])
    sys.path.insert(0, os.path.join(ROOT, "test", "e2e"))
    import wonly_ort
    bw_l3, bw_dram = readbw(a, [8 << 20, 1 << 30])
    fma = float(re.search(r"fma: ([0-9.]+) G", run([os.path.join(a.work, "readbw"), "fma"])).group(1))
    log("read bandwidth: L3 %.1f GB/s, DRAM %.1f GB/s; %.2f G zmm fma/s" % (bw_l3, bw_dram, fma))
    rows = []
    for name, mm, k, n, layers, bits, bs, rbytes in wonly_models(a):
        path = os.path.join(mdir, name + ".onnx")
        inp = os.path.join(mdir, name, "input.npy")
        x = np.ascontiguousarray(np.load(inp))
        # accuracy: qdqc's output against ORT's without graph optimizations (DQ then an f32
        # MatMul: within the bound of docs/agreement.md) and with all of them (what is timed)
        m = q.load(path, x)
        m.time(1)
        y = m.outs[0].copy()
        err, graph = {}, ""
        for opt in ("disabled", "all"):
            od = os.path.join(mdir, name, "ort_" + opt)
            os.makedirs(od, exist_ok=True)
            run([peerenv.python(), peerenv.ORT_RUN, path, "--input", "x=" + inp,
                 "--output-dir", od, "--opt", opt, "--threads", "1", "--save-optimized",
                 os.path.join(od, "graph.onnx")])
            yo = np.load(os.path.join(od, "y.npy"))
            err[opt] = float(np.max(np.abs(y - yo)) / max(1e-30, float(np.max(np.abs(yo)))))
            if opt == "disabled":
                e = wonly_ort.bound(path, x)
                err["ratio"] = float(np.max(np.abs(y.astype(np.float64) - yo) / np.maximum(e, 1e-300)))
            else:
                graph = wonly_ort.ort_graph(os.path.join(od, "graph.onnx"))
        per = max(1, a.iters // a.rounds)
        for th in threads:
            m.set_threads(th)
            m.time(3)
            qt, ot = [], []
            for _ in range(a.rounds):
                qt += m.time(per)
                ot += ort_bench(path, inp, per, th)
            # the read rate of a plain loop over as many bytes, measured right after the runs
            bw = readbw(a, [rbytes])[0]
            r = dict(model=name, M=mm, K=k, N=n, layers=layers, bits=bits, block=bs, threads=th,
                     rbytes=rbytes, q_med=statistics.median(v[0] for v in qt), q_min=min(v[0] for v in qt),
                     q_cpu=statistics.median(v[1] for v in qt),
                     o_med=statistics.median(v[0] for v in ot), o_min=min(v[0] for v in ot),
                     o_cpu=statistics.median(v[1] for v in ot),
                     bw=bw, where="L3" if rbytes <= l3_bytes() else "DRAM",
                     err_dis=err["disabled"], err_all=err["all"], ratio=err["ratio"], graph=graph,
                     iters=len(qt))
            log("%s t%d: qdqc %.3f ms (min %.3f, cpu %.3f), ORT %.3f ms (min %.3f, cpu %.3f)" %
                (name, th, r["q_med"], r["q_min"], r["q_cpu"], r["o_med"], r["o_min"], r["o_cpu"]))
            rows.append(r)
            with open(os.path.join(a.work, "wonly_rows.json"), "w") as fh:
                json.dump(rows, fh, indent=1)
        m.close()
    return rows, bw_l3, bw_dram, fma


def report_wonly(a, rows, bw_l3, bw_dram, fma, cmdline):
    L = ["Machine: " + machine() + "; load average at end %.1f." % os.getloadavg()[0], ""]
    L.append("Command: `%s`" % cmdline)
    L.append("")
    L.append("Single-thread read bandwidth (bench/readbw.c, best pass) at the start: **%.1f GB/s** "
             "over 8 MiB (L3), **%.1f GB/s** over 1 GiB (DRAM). 16-lane f32 fma rate (`readbw fma`): "
             "**%.2f G/s**, so a kernel with one fma per int8 weight is bound by %.1f GB/s "
             "(%.0f%% of the L3 rate) from the compute side." % (bw_l3, bw_dram, fma, 16 * fma,
                                                                 100 * 16 * fma / bw_l3))
    L.append("")
    L.append("| model | M x K x N, layers | weights | threads | qdqc wall ms (median / min) | ORT wall ms "
             "(median / min) | qdqc/ORT (median / min) | qdqc / ORT cpu ms | GB/s read (min) "
             "| read rate of the same bytes GB/s | % of it | vs ORT --opt disabled: max rel. diff, "
             "/ bound | vs ORT --opt all | ORT --opt all graph |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        gbs = r["rbytes"] / (r["q_min"] * 1e-3) / 1e9
        wt = "int8 per column" if r["bits"] == 8 else "int4 blocks of %d" % r["block"]
        L.append("| %s | %d x %d x %d, %d | %s | %d | %.3f / %.3f | %.2f / %.2f | %.3f / %.3f | %.3f / %.2f "
                 "| %.1f | %.1f (%s) | %.0f%% | %.1e, %.2g | %.1e | %s |" % (
                     r["model"], r["M"], r["K"], r["N"], r["layers"], wt, r["threads"], r["q_med"],
                     r["q_min"], r["o_med"], r["o_min"], r["q_med"] / r["o_med"], r["q_min"] / r["o_min"],
                     r["q_cpu"], r["o_cpu"], gbs, r["bw"], r["where"], 100 * gbs / r["bw"], r["err_dis"],
                     r["ratio"], r["err_all"], r["graph"]))
    L.append("")
    L.append("%d runs each per row, alternating qdqc and ORT (`--opt all`) in %d rounds. GB/s read = "
             "bytes the kernel must read per run (the packed weights and their f32 scales) / best qdqc "
             "wall; read rate of the same bytes = bench/readbw.c over a buffer of that size right after "
             "the row's runs (L3 when it fits its %d MiB, else DRAM); cpu = process time per run (all "
             "threads). max rel. diff = max |qdqc - ORT| / max |ORT| over the output; / bound = the "
             "largest |qdqc - ORT| relative to its per-element bound (docs/agreement.md, at most 1)." % (
                 rows[0]["iters"] if rows else 0, a.rounds, l3_bytes() >> 20))
    return "\n".join(L) + "\n"


# ---- A16W8 (16-bit activations, int8 weights) ----

A16_MODELS = ["resnet18_ort_a16w8_224"]


def a16_gemm_run(tools, m, n, k, wmax):
    reps = 8 if m * n * k >= 2 ** 30 else 15
    out = run([tools["gemm"], "--a16", "--m=%d" % m, "--n=%d" % n, "--k=%d" % k,
               "--reps=%d" % reps, "--wmax=%d" % wmax])
    i32 = re.search(r"-> i32\s+([0-9.]+) ms\s+([0-9.]+) GMAC/s", out)
    q16 = re.search(r"-> requant i16\s+([0-9.]+) ms\s+([0-9.]+) GMAC/s", out)
    return float(i32.group(2)), float(q16.group(2)), "int64 chunks" if "(wide)" in out else "int32"


def ort_agree(a, model, inp, y):
    """Largest difference from ORT's literal output (--opt disabled), in output steps (the
    smallest gap between distinct values), and how many elements differ."""
    od = os.path.join(a.work, "a16_ort_dis")
    run([peerenv.python(), peerenv.ORT_RUN, model, "--input", "input=" + inp,
         "--output-dir", od, "--opt", "disabled", "--threads", "1"])
    yo = np.load(os.path.join(od, "logits.npy"))
    vals = np.unique(np.concatenate([y.ravel(), yo.ravel()]))
    step = float(np.diff(vals).min()) if vals.size > 1 else 1.0
    d = np.abs(np.rint(y.astype(np.float64) / step) - np.rint(yo.astype(np.float64) / step))
    return float(d.max()), int((d > 0).sum()), int(d.size), bool(y.argmax() == yo.argmax())


def bench_a16(a, qdqc, tools, threads):
    grows = []
    wmax = 40  # per-channel int8 conv weights average |w| ~ 30: |w| <= 40 is typical
    for (m, n, k) in (GEMMS[:4] if a.quick else GEMMS):
        for wm in (127, wmax):
            qi, q16, acc = a16_gemm_run(tools, m, n, k, wm)
            grows.append(dict(kind="gemm", name="%dx%dx%d" % (m, n, k), wmax=wm, q_i32=qi,
                              q_q16=q16, acc=acc))
            log("a16 gemm %dx%dx%d |w|<=%d: %.1f / %.1f GMAC/s (%s)" % (m, n, k, wm, qi, q16, acc))
    for c in (CONVS[:3] if a.quick else CONVS):
        name, N, C, H, W, OC, KH, KW, st, pad, G = c
        if G != 1:
            continue
        OH, OW = (H + 2 * pad - KH) // st + 1, (W + 2 * pad - KW) // st + 1
        qi, q16, acc = a16_gemm_run(tools, N * OH * OW, OC, C * KH * KW, wmax)
        grows.append(dict(kind="conv", name=name, wmax=wmax, q_i32=qi, q_q16=q16, acc=acc,
                          shape="M=%d N=%d K=%d" % (N * OH * OW, OC, C * KH * KW)))
        log("a16 conv %s: %.1f / %.1f GMAC/s (%s)" % (name, qi, q16, acc))
    mdir = os.path.join(a.work, "models")
    if not all(os.path.exists(os.path.join(mdir, m + ".onnx")) for m in A16_MODELS):
        log("generating the A16W8 model into %s" % mdir)
        run(["/usr/bin/python3", os.path.join(ROOT, "test", "models", "gen_fixtures.py"), "--full", mdir,
             "--full-only", "--only", ",".join(m + ".onnx" for m in A16_MODELS)])
    saved = a.models
    a.models = A16_MODELS
    mrows = bench_models(a, qdqc, Qdqc(os.path.join(a.build, "libqdqc.so")), threads)
    a.models = saved
    agree = {}
    for name in A16_MODELS:
        path, inp = os.path.join(mdir, name + ".onnx"), os.path.join(mdir, name, "input.npy")
        q = Qdqc(os.path.join(a.build, "libqdqc.so"))
        m = q.load(path, np.ascontiguousarray(np.load(inp)))
        m.time(1)
        agree[name] = ort_agree(a, path, inp, m.outs[0].copy())
        m.close()
    return grows, mrows, agree


def report_a16(a, grows, mrows, agree, peakw, peak8, cmdline):
    L = ["Machine: " + machine() + "; load average at end %.1f." % os.getloadavg()[0], ""]
    L.append("Command: `%s`" % cmdline)
    L.append("")
    L.append("vpdpwssd zmm peak (bench/peak `--peak12w`, 12 accumulators, 1 thread): **%.1f GMAC/s** "
             "(int16 MACs; vpdpbusd: %.1f GMAC/s of int8 MACs)." % (peakw, peak8))
    L.append("")
    L.append("| kernel | shape | weights | accumulator | qdqc i32 GMAC/s | qdqc requant i16 GMAC/s "
             "| % of the vpdpwssd peak (i32 / i16) |")
    L.append("|---|---|---|---|---|---|---|")
    for g in grows:
        L.append("| %s %s | %s | \\|w\\| <= %d | %s | %.1f | %.1f | %.0f%% / %.0f%% |" % (
            g["kind"], g["name"], g.get("shape", g["name"]), g["wmax"], g["acc"], g["q_i32"],
            g["q_q16"], 100 * g["q_i32"] / peakw, 100 * g["q_q16"] / peakw))
    L.append("")
    L.append("A16W8 GEMM = bench/gemm_bench.c --a16: uint16 A (zero point 32768) x int8 B, one "
             "thread, best of repetitions of this thread's CPU time. Weights uniform in [-W, W]: "
             "W = 127 (full range) makes the worst case of the accumulator leave int32 for long K, "
             "so the kernel sums K in int32 chunks added into int64 (`int64 chunks`); W = 40 "
             "(about what per-channel conv weights are) keeps the int32 accumulator exact for "
             "these K (`int32`). Conv rows time the im2col GEMM only.")
    L.append("")
    if mrows:
        L.append("| model | threads | qdqc wall ms (median / min) | ORT wall ms (median / min) "
                 "| qdqc/ORT wall (median / min) | qdqc / ORT cpu ms per run | qdqc/ORT cpu "
                 "| qdqc GMAC/s per core (cpu) | % of the vpdpwssd peak | qdqc GMAC/s (min wall) "
                 "| compile s (wall / cpu) |")
        L.append("|---|---|---|---|---|---|---|---|---|---|---|")
        for r in mrows:
            gc = r["macs"] / r["q_cpu"] * 1e-6  # per busy core: cpu time is all threads' work
            L.append("| %s | %d | %.2f / %.2f | %s / %s | %s / %s | %.2f / %s | %s | %.1f | %.0f%% "
                     "| %.1f | %.2f / %.2f |" % (
                         r["model"], r["threads"], r["q_med"], r["q_min"], fmt(r["o_med"]),
                         fmt(r["o_min"]), fmt(r["o_med"] and r["q_med"] / r["o_med"]),
                         fmt(r["o_min"] and r["q_min"] / r["o_min"]), r["q_cpu"], fmt(r["o_cpu"]),
                         fmt(r["o_cpu"] and r["q_cpu"] / r["o_cpu"]), gc, 100 * gc / peakw,
                         r["macs"] / r["q_min"] * 1e-6, r["compile_wall"], r["compile_cpu"]))
        L.append("")
        L.append("%d qdqc runs and as many ORT runs per row, alternating in %d rounds (as the table "
                 "above). cpu = process user+system time per run, all threads (at 1 thread the "
                 "latency on an idle core). GMAC/s per core = int16 x int8 MACs (`qdqc --report`) "
                 "/ cpu time per run, and its share of the 1-thread vpdpwssd peak: the figure "
                 "load on a shared machine disturbs least; min wall = MACs / best wall (all "
                 "threads). ORT 1.30 runs this opset-21 int16 QDQ graph unfused (its CPU QDQ "
                 "fusions take 8-bit tensors only): float Conv/Add/Gemm between DequantizeLinear "
                 "and QuantizeLinear." % (mrows[0]["iters"], a.rounds))
        L.append("")
        for name, (mx, nd, n, am) in agree.items():
            L.append("Agreement of %s with ORT's literal output (`--opt disabled`, 1000 logits): "
                     "max %.0f output step%s, %d of %d differ, argmax %s." % (
                         name, mx, "" if mx == 1 else "s", nd, n, "equal" if am else "DIFFERENT"))
    return "\n".join(L) + "\n"


# ---- GEMM sweep ----

def build_tools(a):
    tools = {}
    inc = ["-I" + os.path.join(ROOT, "include"), "-I" + os.path.join(ROOT, "lib"),
           "-I/usr/lib/llvm-22/include"]
    gb = os.path.join(a.work, "gemm_bench")
    run(["cc", "-O2", "-std=c11"] + inc + [os.path.join(ROOT, "bench", "gemm_bench.c"),
         os.path.join(a.build, "libqdqc.a"), "-L/usr/lib/llvm-22/lib", "-lLLVM", "-lstdc++",
         "-lm", "-lpthread", "-o", gb])
    tools["gemm"] = gb
    db = os.path.join(a.work, "dnnl_bench")
    try:
        run(["cc", "-O2", "-std=c11", "-Wall", "-Wextra",
             os.path.join(ROOT, "bench", "dnnl", "dnnl_bench.c"), "-ldnnl", "-o", db])
        tools["dnnl"] = db
    except RuntimeError as e:
        log("oneDNN bench not built (install libdnnl-dev): %s" % e)
    out = run(["sh", os.path.join(ROOT, "bench", "peak", "run.sh"), "--peak12"])
    tools["peak"] = float(out.strip().splitlines()[-1])
    return tools


def gemm_run(tools, m, n, k):
    reps = 8 if m * n * k >= 2 ** 30 else 15
    out = run([tools["gemm"], "--m=%d" % m, "--n=%d" % n, "--k=%d" % k, "--reps=%d" % reps])
    i32 = re.search(r"-> i32\s+([0-9.]+) ms\s+([0-9.]+) GMAC/s", out)
    q8 = re.search(r"-> requant i8\s+([0-9.]+) ms\s+([0-9.]+) GMAC/s", out)
    return float(i32.group(2)), float(q8.group(2))


def dnnl_run(tools, args):
    if "dnnl" not in tools:
        return None
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = run([tools["dnnl"]] + [str(v) for v in args], env=env, check=False)
    r = re.search(r"([0-9.]+) GMAC/s", out)
    return float(r.group(1)) if r else None


def bench_gemm(a, tools):
    rows = []
    for (m, n, k) in (GEMMS[:4] if a.quick else GEMMS):
        qi, q8 = gemm_run(tools, m, n, k)
        d = dnnl_run(tools, ["matmul", m, n, k])
        rows.append(dict(kind="gemm", name="%dx%dx%d" % (m, n, k), q_i32=qi, q_q8=q8, dnnl=d))
        log("gemm %dx%dx%d: qdqc %.1f / %.1f GMAC/s, oneDNN %s" % (m, n, k, qi, q8, d))
    for c in (CONVS[:3] if a.quick else CONVS):
        name, N, C, H, W, OC, KH, KW, st, pad, G = c
        OH, OW = (H + 2 * pad - KH) // st + 1, (W + 2 * pad - KW) // st + 1
        d = dnnl_run(tools, ["conv", N, C, H, W, OC, KH, KW, st, pad, G])
        if G == 1:
            qi, q8 = gemm_run(tools, N * OH * OW, OC, C * KH * KW)
        else:
            qi = q8 = None  # depthwise: not a GEMM (see the model table)
        rows.append(dict(kind="conv", name=name, shape="M=%d N=%d K=%d" % (N * OH * OW, OC, C // G * KH * KW),
                         q_i32=qi, q_q8=q8, dnnl=d))
        log("conv %s: qdqc %s, oneDNN %s" % (name, q8, d))
    return rows


# ---- report ----

def machine():
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    flags = open("/proc/cpuinfo").read()
    isa = [f for f in ("avx512_vnni", "avx_vnni", "amx_int8") if f in flags]
    ortv = peerenv.version("onnxruntime")
    git = run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).strip()
    dirty = run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"]).strip()
    return ("%s, %d logical CPUs (%s), Linux %s; load average at start %.1f; "
            "ONNX Runtime %s (Python); qdqc %s%s" %
            (cpu, os.cpu_count(), " ".join(isa), platform.release(), os.getloadavg()[0], ortv,
             git, " + uncommitted changes" if dirty else ""))


def fmt(v, f="%.2f"):
    return "-" if v is None else f % v


def report(a, rows, grows, peak, cmdline, load_end):
    L = []
    L.append("Machine: " + machine() + "; load average at end %.1f." % load_end)
    L.append("")
    if max(os.getloadavg()[0], load_end) > (os.cpu_count() or 1):
        L.append("**Warning: the machine was oversubscribed (load average above its CPU count): "
                 "wall-clock figures, their ratios and the scaling column are dominated by "
                 "scheduling; compare the cpu columns.**")
        L.append("")
    L.append("Command: `%s`" % cmdline)
    L.append("")
    if rows:
        L.append("| model | threads | qdqc wall ms (median / min) | ORT wall ms (median / min) "
                 "| qdqc/ORT wall (median / min) | qdqc / ORT cpu ms per run | qdqc/ORT cpu "
                 "| qdqc GOPS (min) | ORT GOPS (min) | scaling 1->2 (qdqc / ORT) "
                 "| compile s (wall / cpu) | workspace MiB |")
        L.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        base = {(r["model"], r["threads"]): r for r in rows}
        for r in rows:
            sc = "-"
            b1 = base.get((r["model"], 1))
            if r["threads"] > 1 and b1:
                sc = "%.2fx / %s" % (b1["q_min"] / r["q_min"],
                                     fmt(r["o_min"] and b1["o_min"] / r["o_min"], "%.2fx"))
            if r["o_med"] is None:
                L.append("| %s | %d | %.2f / %.2f | ORT failed: %s | - | %.2f / - | - | %.1f | - | %s "
                         "| %.2f / %.2f | %.1f |" % (
                             r["model"], r["threads"], r["q_med"], r["q_min"],
                             r["o_err"].replace("|", "/"), r["q_cpu"],
                             2 * r["macs"] / r["q_min"] * 1e-6, sc, r["compile_wall"],
                             r["compile_cpu"], r["workspace"] / 2 ** 20))
                continue
            L.append("| %s | %d | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %.2f "
                     "| %.1f | %.1f | %s | %.2f / %.2f | %.1f |" % (
                         r["model"], r["threads"], r["q_med"], r["q_min"], r["o_med"], r["o_min"],
                         r["q_med"] / r["o_med"], r["q_min"] / r["o_min"], r["q_cpu"], r["o_cpu"],
                         r["q_cpu"] / r["o_cpu"], 2 * r["macs"] / r["q_min"] * 1e-6,
                         2 * r["macs"] / r["o_min"] * 1e-6, sc, r["compile_wall"],
                         r["compile_cpu"], r["workspace"] / 2 ** 20))
        L.append("")
        L.append("%d qdqc runs and as many ORT runs per row (after warm-up), alternating in %d rounds "
                 "(qdqc: JIT through libqdqc.so; ORT: bench/ort_cpu.py, the options of `ort_run.py "
                 "--opt all --threads N`). cpu = process user+system time per run (all threads), the "
                 "figure that other load on a shared machine disturbs least: at 1 thread it is the "
                 "latency on an idle core; at 2 threads it is total work. Scaling = best 1-thread wall "
                 "/ best 2-thread wall. GOPS = 2 x int8 MACs (`qdqc --report`) / best wall. Compile = "
                 "`qdqc MODEL -o x.o` (best of %d)." % (rows[0]["iters"], a.rounds, a.compile_reps))
        if a.reuse_models:
            L.append("")
            L.append("(Model rows reused from the previous full run in the same work directory, "
                     "`--reuse-models`; compile best of 1.)")
        L.append("")
    if grows:
        L.append("vpdpbusd zmm peak (bench/peak, 12 accumulators, 1 thread): **%.1f GMAC/s**." % peak)
        L.append("")
        L.append("| kernel | shape | qdqc i32 GMAC/s | qdqc requant i8 GMAC/s | % of peak (i32 / i8) "
                 "| oneDNN GMAC/s | qdqc/oneDNN (like for like) |")
        L.append("|---|---|---|---|---|---|---|")
        for g in grows:
            # like for like: oneDNN's matmul writes s32 (vs qdqc i32), its conv requantizes to u8
            same = g["q_i32"] if g["kind"] == "gemm" else g["q_q8"]
            pk = "-" if g["q_i32"] is None else "%.0f%% / %.0f%%" % (100 * g["q_i32"] / peak,
                                                                  100 * g["q_q8"] / peak)
            L.append("| %s %s | %s | %s | %s | %s | %s | %s |" % (
                g["kind"], g["name"], g.get("shape", g["name"]), fmt(g["q_i32"], "%.1f"),
                fmt(g["q_q8"], "%.1f"), pk, fmt(g["dnnl"], "%.1f"),
                fmt(same and g["dnnl"] and same / g["dnnl"], "%.2f")))
        L.append("")
        L.append("qdqc/oneDNN compares like for like: GEMM rows qdqc's i32 output with oneDNN's s32 "
                 "matmul, conv rows qdqc's requantized i8 with oneDNN's requantized u8 convolution. ")
        L.append("GEMM: u8 x s8, one thread, best of repetitions of this thread's CPU time (both "
                 "programs); qdqc = bench/gemm_bench.c (AVX512-VNNI kernel, weights packed at "
                 "compile time); oneDNN = matmul u8 x s8 -> s32 (weights in its preferred "
                 "layout) and, for conv rows, its int8 convolution to u8 with per-channel scales "
                 "(layouts of its choice, reorders untimed). Conv rows time qdqc's im2col GEMM "
                 "only (M = output pixels, N = output channels, K = C/G x KH x KW).")
    return "\n".join(L) + "\n"


# ---- run-time batch dimension (--dynamic) ----
def set_batch(src, dst, value=None):
    """test/models/batch_dynamic.py: axis 0 of src's inputs and outputs the symbol N, or `value`."""
    sys.path.insert(0, os.path.join(ROOT, "test", "models"))
    import batch_dynamic
    batch_dynamic.set_batch(src, dst, value=value)


def qdqc_bench_ms(qdqc, args, iters):
    """Median process CPU ms per run of `qdqc bench` (1 thread: robust to other load)."""
    out = run([qdqc, "bench"] + args + ["--iters", str(iters), "--json"])
    return json.loads(out[out.index("{"):])["median_cpu_ms"]


def bench_dynamic(a, qdqc):
    """Per model and batch size n: the object compiled once with --dim N=1..HI (run through
    qdqc_jit_run_shapes), the static compile at n (--dim N=n) and ONNX Runtime on the dynamic file
    and on a static file of batch n; medians of process CPU time (1 thread), alternated over
    a.rounds rounds, the minimum round kept (shared-machine noise only adds)."""
    rows, hi = [], max(a.dynamic_sizes)
    mdir = os.path.join(a.work, "models")
    for name in a.models:
        src = os.path.join(mdir, name + ".onnx")
        x1 = np.load(os.path.join(mdir, name, "input.npy"))
        dyn = os.path.join(a.work, name + ".dyn.onnx")
        set_batch(src, dyn)
        iname = run(["/usr/bin/python3", "-c", "import onnx,sys; m=onnx.load(sys.argv[1]); "
                     "print(m.graph.input[0].name)", dyn]).strip()
        for n in a.dynamic_sizes:
            stat = os.path.join(a.work, "%s.b%d.onnx" % (name, n))
            set_batch(src, stat, value=n)
            inp = os.path.join(a.work, "%s.b%d.npy" % (name, n))
            np.save(inp, np.ascontiguousarray(np.repeat(x1, n, axis=0)))
            shape = "x".join(str(d) for d in (n,) + x1.shape[1:])
            per = max(3, a.iters // a.rounds)
            best = dict(dyn=[], static=[], ort_dyn=[], ort_static=[])
            for _ in range(a.rounds):
                best["dyn"].append(qdqc_bench_ms(qdqc, [dyn, "--dim", "N=1..%d" % hi, "--shape",
                                                        "%s=%s" % (iname, shape)], per))
                best["static"].append(qdqc_bench_ms(qdqc, [dyn, "--dim", "N=%d" % n], per))
                for k, f in (("ort_dyn", dyn), ("ort_static", stat)):
                    try:
                        best[k].append(statistics.median(c for _, c in ort_bench(f, inp, per, 1)))
                    except RuntimeError as e:  # ORT refusing the file (e.g. [1]-shaped scales)
                        log("%s: ORT failed: %s" % (name, str(e).strip().splitlines()[-1]))
            r = dict(model=name, n=n, **{k: min(v) if v else None for k, v in best.items()})
            log("%s n=%d: dynamic %.2f ms, static %.2f ms, ORT dynamic file %s ms, ORT static "
                "file %s ms" % (name, n, r["dyn"], r["static"], fmt(r["ort_dyn"]), fmt(r["ort_static"])))
            rows.append(r)
    return rows


def report_dynamic(a, rows, cmdline):
    t = ["Run-time batch dimension (`--dim N=1..%d`, one object for every size) against the "
         "static compile at each size and ONNX Runtime on the same files; %s. 1 thread, process "
         "CPU time per run, the minimum over %d rounds of each round's median. Reproduce: `%s`." %
         (max(a.dynamic_sizes), machine(), a.rounds, cmdline), "",
         "| model | N | dynamic ms | static ms | dynamic / static | ORT dynamic file ms | "
         "ORT static file ms | ORT dynamic / static |",
         "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        ort = r["ort_dyn"] and r["ort_static"]
        t.append("| %s | %d | %.2f | %.2f | %.2f | %s | %s | %s |" %
                 (r["model"], r["n"], r["dyn"], r["static"], r["dyn"] / r["static"],
                  fmt(r["ort_dyn"]), fmt(r["ort_static"]),
                  fmt(r["ort_dyn"] / r["ort_static"]) if ort else "ORT refused the file"))
    return "\n".join(t) + "\n"


def write_doc(path, text, tag="bench"):
    begin, end = "<!-- %s:begin -->" % tag, "<!-- %s:end -->" % tag
    old = open(path).read() if os.path.exists(path) else ""
    if begin in old and end in old:
        new = old[:old.index(begin) + len(begin)] + "\n" + text + old[old.index(end):]
    elif old:
        new = old.rstrip("\n") + "\n\n" + begin + "\n" + text + end + "\n"
    else:
        new = "# Performance\n\n" + begin + "\n" + text + end + "\n"
    with open(path, "w") as f:
        f.write(new)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build-perf"))
    ap.add_argument("--work", default="/tmp/qdqc_bench")
    ap.add_argument("--iters", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--compile-reps", type=int, default=2)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--models", default=",".join(MODELS + TORCH_MODELS))
    ap.add_argument("--no-gemm", action="store_true")
    ap.add_argument("--no-wonly", action="store_true", help="skip the weight-only MLPs")
    ap.add_argument("--wonly-only", action="store_true", help="only the weight-only MLPs")
    ap.add_argument("--wonly-models", default="", help="comma-separated weight-only models (default all)")
    ap.add_argument("--no-models", action="store_true")
    ap.add_argument("--transformers", action="store_true", help="also the transformer blocks")
    ap.add_argument("--transformers-only", action="store_true", help="only the transformer blocks")
    ap.add_argument("--no-a16", action="store_true", help="skip the A16W8 part")
    ap.add_argument("--a16-only", action="store_true", help="only the A16W8 part")
    ap.add_argument("--reuse-a16", action="store_true", help="re-render WORK/a16.json (A16W8 part)")
    ap.add_argument("--quick", action="store_true", help="fewer GEMM shapes")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "performance.md"))
    ap.add_argument("--dynamic", action="store_true",
                    help="only the run-time batch dimension: dynamic object vs static compile vs ORT")
    ap.add_argument("--dynamic-sizes", default="1,4,8", help="batch sizes of --dynamic")
    ap.add_argument("--reuse-models", action="store_true",
                    help="take the model rows of the last run from WORK/rows.json (GEMM sweep only)")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    a.dynamic_sizes = [int(v) for v in a.dynamic_sizes.split(",")]
    a.models = [x for m in a.models.split(",") if m for x in (EDGE_MODELS if m == "edge" else [m])]
    threads = [int(t) for t in a.threads.split(",")]
    os.makedirs(a.work, exist_ok=True)
    qdqc = os.path.join(a.build, "bin", "qdqc")
    rows, grows, peak = [], [], 0.0
    cmdline = ("/usr/bin/python3 bench/run_bench.py " + " ".join(sys.argv[1:])).strip()
    if a.dynamic:
        mdir = os.path.join(a.work, "models")
        if not all(os.path.exists(os.path.join(mdir, m + ".onnx")) for m in a.models):
            log("generating the full-size models into %s" % mdir)
            run(["/usr/bin/python3", os.path.join(ROOT, "test", "models", "gen_fixtures.py"),
                 "--full", mdir, "--full-only"])
        text = report_dynamic(a, bench_dynamic(a, qdqc), cmdline)
        write_doc(a.out, text, "bench-dynamic")
        sys.stdout.write(text)
        return
    if a.transformers or a.transformers_only:
        names = [m for m in a.models if m in TRANSFORMERS] or TRANSFORMERS
        mdir = os.path.join(a.work, "models")
        miss = [m for m in names if not os.path.exists(os.path.join(mdir, m + ".onnx"))]
        if miss:
            log("generating the transformer models into %s" % mdir)
            r = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "test", "models", "gen_transformers.py"),
                                "--full", mdir, "--only", ",".join(miss)], capture_output=True, text=True)
            if r.returncode not in (0, 77):
                raise RuntimeError("gen_transformers.py failed (%d):\n%s" % (r.returncode, r.stderr))
            log(r.stderr.strip())
            names = [m for m in names if os.path.exists(os.path.join(mdir, m + ".onnx"))]
        peak = float(run(["sh", os.path.join(ROOT, "bench", "peak", "run.sh"), "--peak12"]).strip().splitlines()[-1])
        log("peak %.1f GMAC/s" % peak)
        saved = a.models
        a.models = names
        trows = bench_models(a, qdqc, Qdqc(os.path.join(a.build, "libqdqc.so")), threads)
        a.models = saved
        ttext = report_transformers(a, trows, peak, cmdline)
        write_doc(a.out, ttext, "bench-transformers")
        sys.stdout.write(ttext)
        if a.transformers_only:
            return
    a.models = [m for m in a.models if m not in TRANSFORMERS]
    if not a.no_wonly:
        wrows, bw_l3, bw_dram, fma = bench_wonly(a, Qdqc(os.path.join(a.build, "libqdqc.so")), threads)
        wtext = report_wonly(a, wrows, bw_l3, bw_dram, fma, cmdline)
        write_doc(a.out, wtext, "bench-wonly")
        sys.stdout.write(wtext)
        if a.wonly_only:
            return
    if not a.no_a16:
        jpath = os.path.join(a.work, "a16.json")
        if a.reuse_a16:  # re-render the last A16W8 run of this work directory
            d = json.load(open(jpath))
            g16, m16, peakw, peak8 = d["grows"], d["mrows"], d["peakw"], d["peak8"]
            agree = {k: tuple(v) for k, v in d["agree"].items()}
        else:
            tools = build_tools(a)
            peak8 = tools["peak"]
            peakw = float(run(["sh", os.path.join(ROOT, "bench", "peak", "run.sh"),
                               "--peak12w"]).strip().splitlines()[-1])
            log("vpdpwssd peak %.1f GMAC/s" % peakw)
            g16, m16, agree = bench_a16(a, qdqc, tools, threads)
            with open(jpath, "w") as fh:
                json.dump(dict(grows=g16, mrows=m16, agree=agree, peakw=peakw, peak8=peak8), fh,
                          indent=1)
        atext = report_a16(a, g16, m16, agree, peakw, peak8, cmdline)
        write_doc(a.out, atext, "bench-a16")
        sys.stdout.write(atext)
        if a.a16_only:
            return
    if a.reuse_models:
        rows = json.load(open(os.path.join(a.work, "rows.json")))
        a.iters, a.rounds = rows[0]["iters"], a.rounds
    elif not a.no_models:
        mdir = os.path.join(a.work, "models")
        if not all(os.path.exists(os.path.join(mdir, m + ".onnx")) for m in a.models
                   if m not in TORCH_MODELS and m not in TORCH_VIT_MODELS and m not in BERT_DYNQ_MODELS
                   and m not in EDGE_MODELS):
            log("generating the full-size models into %s" % mdir)
            run(["/usr/bin/python3", os.path.join(ROOT, "test", "models", "gen_fixtures.py"),
                 "--full", mdir, "--full-only"])
        tm = [m for m in a.models if m in TORCH_MODELS and
              not os.path.exists(os.path.join(mdir, m + ".onnx"))]
        if tm:
            log("exporting the PyTorch QAT models into %s" % mdir)
            r = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "test", "models", "torch_qat.py"),
                                "--out", mdir, "--only", ",".join(tm)], capture_output=True, text=True)
            if r.returncode == 77:  # no PyTorch: bench the other models
                log(r.stderr.strip())
                a.models = [m for m in a.models if m not in tm]
            elif r.returncode != 0:
                raise RuntimeError("torch_qat.py failed (%d):\n%s" % (r.returncode, r.stderr))
        tv = [m for m in a.models if m in TORCH_VIT_MODELS and
              not os.path.exists(os.path.join(mdir, m + ".onnx"))]
        if tv:
            log("exporting the PyTorch FX QAT transformers into %s" % mdir)
            r = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "test", "models", "torch_vit.py"),
                                "--out", mdir, "--only", ",".join(tv)], capture_output=True, text=True)
            if r.returncode == 77:
                log(r.stderr.strip())
                a.models = [m for m in a.models if m not in tv]
            elif r.returncode != 0:
                raise RuntimeError("torch_vit.py failed (%d):\n%s" % (r.returncode, r.stderr))
        tb = [m for m in a.models if m in BERT_DYNQ_MODELS and
              not os.path.exists(os.path.join(mdir, m + ".onnx"))]
        if tb:
            log("exporting the quantize_dynamic BERTs into %s" % mdir)
            run([peerenv.python(), os.path.join(ROOT, "test", "models", "bert_dynq.py"), "--out", mdir,
                 "--only", ",".join(tb)])
        te = [m for m in a.models if m in EDGE_MODELS and
              not os.path.exists(os.path.join(mdir, m + ".onnx"))]
        if te:
            log("exporting the edge CNNs into %s" % mdir)
            run([peerenv.python(), os.path.join(ROOT, "test", "models", "edge_cnns.py"), "--out", mdir,
                 "--only", ",".join(te)])
            bad = [m for m in te if not os.path.exists(os.path.join(mdir, m + ".onnx"))]
            for m in bad:  # the producer could not make it (edge_cnns.py wrote <model>.error.txt)
                log("%s: not made: %s" % (m, open(os.path.join(mdir, m + ".error.txt")).read().strip().splitlines()[-1]))
            a.models = [m for m in a.models if m not in bad]
        rows = bench_models(a, qdqc, Qdqc(os.path.join(a.build, "libqdqc.so")), threads)
    if not a.no_gemm:
        tools = build_tools(a)
        peak = tools["peak"]
        log("peak %.1f GMAC/s" % peak)
        grows = bench_gemm(a, tools)
    text = report(a, rows, grows, peak, cmdline, os.getloadavg()[0])
    write_doc(a.out, text)
    sys.stdout.write(text)
    log("peak RSS of this process: %.0f MiB" % (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))


if __name__ == "__main__":
    main()
