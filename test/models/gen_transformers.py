#!/usr/bin/python3
"""gen_transformers.py: quantized transformer models, deterministic.

    /usr/bin/python3 test/models/gen_transformers.py --out DIR            # the tiny CI variants
    /usr/bin/python3 test/models/gen_transformers.py --full DIR           # the full-size models
    /usr/bin/python3 test/models/gen_transformers.py --out DIR --only a,b # some of them
    /usr/bin/python3 test/models/gen_transformers.py --list

Each model is written as DIR/<name>.onnx with its seeded input DIR/<name>/input.npy (graph input
`input`, float32). A float graph is built first (numpy weights from a seeded Generator, or a real
torch.onnx.export), then quantized by one of the emulated tools of test/models/ort_quant.py,
calibrated with MinMax on CALIB seeded standard-normal inputs (the test input is another one):

  bert_qs_*    BERT encoder layer (post-LN, as HF BertLayer exports at opset 17): Q/K/V/output
               linears as MatMul + Add(bias), heads by Reshape + Transpose (K to [0,2,3,1]),
               MatMul(Q, K^T) -> Div(sqrt(dh)) -> Softmax -> MatMul(P, V), residual Add,
               LayerNormalization, FFN with the erf GELU (Div, Erf, Add, Mul, Mul), residual,
               LayerNormalization; ORT quantize_static QDQ (the GELU's nodes excluded, the way a
               user keeps it float; LayerNormalization is outside ORT 1.16's QDQ op types).
  bert_trt_*   the same float layer, TensorRT/ModelOpt int8: QDQ only on MatMul inputs.
  bert_dyn_*   the same float layer, ORT quantize_dynamic (MatMulInteger + scales Mul).
  vit_qs_*     ViT-B/16 pre-LN block with its patch embedding: Conv(k=s=16) + bias (an int32
               bias behind DQ), Reshape, Transpose, Concat(class token), Add(position
               embedding), LayerNormalization, attention, LayerNormalization, erf-GELU MLP;
               ORT quantize_static QDQ.
  gpt2_qs_*    GPT-2 pre-LN block: LayerNorm as torch exports it below opset 17 (ReduceMean,
               Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add), c_attn as one MatMul + Add then
               Split into Q/K/V, causal mask Where(mask, scores, -10000), the tanh GELU
               ("gelu_new": Pow, Mul, Add, Mul, Tanh, Add, Mul, Mul); ORT quantize_static QDQ
               (LayerNorm and GELU nodes excluded).
  tel_qs_*     a real torch.onnx.export (torch 1.13, opset 13) of nn.TransformerEncoderLayer
               (batch_first, ReLU, dropout 0), ORT quantize_static QDQ inserted into the
               exported graph (its decomposed LayerNorm nodes excluded). Needs python3-torch:
               skipped with a message (exit 77 if nothing else was asked) without it.
  tel17_qs_*   the same export at opset 17 (LayerNormalization nodes instead of ReduceMean, Pow,
               Sqrt, ...): Q/K/V sliced from one in-projection by Slice with computed bounds,
               the out-projection as Gemm (int32 bias), the ReLU folded into the FFN's Q.

Sizes: *_tiny (CI) hidden 64, 2 heads, sequence 16 (ViT: 32x32 image, patch 8, 17 tokens);
*_base (--full) hidden 768, 12 heads, sequence 128, FFN 3072 (ViT: 224x224, 197 tokens).
Files are byte-identical between runs (seeded Generators, scales rounded to 12 bits).
"""
import argparse
import copy
import hashlib
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ort_quant  # noqa: E402

CALIB = 4
TINY = dict(hidden=64, heads=2, seq=16, ffn=256, image=32, patch=8)
BASE = dict(hidden=768, heads=12, seq=128, ffn=3072, image=224, patch=16)


def seed_of(name):
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little")


class F:
    """Float ONNX graph builder with torch-export-like names."""

    def __init__(self, name, seed, opset=17):
        self.name, self.opset = name, opset
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.inputs = [], [], []
        self.scope = []
        self.k = 0
        self.excl = []  # nodes a user keeps float (nodes_to_exclude)
        self.track = None

    def path(self):
        return "/" + "/".join(self.scope) + "/" if self.scope else "/"

    def node(self, op, ins, nout=1, **at):
        self.k += 1
        nm = "%s%s_%d" % (self.path(), op, self.k)
        outs = ["%s_output_%d" % (nm, i) for i in range(nout)]
        self.nodes.append(helper.make_node(op, list(ins), outs, nm, **at))
        if self.track is not None:
            self.track.append(nm)
        return outs[0] if nout == 1 else outs

    def init(self, base, arr):
        self.k += 1
        nm = "%s.%s" % (".".join(self.scope), base) if self.scope else base
        nm = "%s_%d" % (nm, self.k)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), nm))
        return nm

    def c(self, v, dt=np.float32):
        return self.init("const", np.array(v, dt))

    def input(self, shape):
        self.inputs.append(helper.make_tensor_value_info("input", TensorProto.FLOAT, list(shape)))
        return "input"

    def under(self, s):
        b = self

        class S:
            def __enter__(self):
                b.scope.append(s)

            def __exit__(self, *a):
                b.scope.pop()
        return S()

    def excluded(self):
        b = self

        class S:
            def __enter__(self):
                b.track = []

            def __exit__(self, *a):
                b.excl += b.track
                b.track = None
        return S()

    def linear(self, x, k, n, name):
        with self.under(name):
            w = (self.rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
            b = (self.rng.standard_normal(n) * 0.1).astype(np.float32)
            return self.node("Add", [self.node("MatMul", [x, self.init("weight_t", w)]), self.init("bias", b)])

    def layernorm(self, x, h, name, decomposed=False):
        g = (1 + 0.1 * self.rng.standard_normal(h)).astype(np.float32)
        b = (0.1 * self.rng.standard_normal(h)).astype(np.float32)
        with self.under(name), self.excluded():
            if not decomposed:
                return self.node("LayerNormalization", [x, self.init("weight", g), self.init("bias", b)],
                                 axis=-1, epsilon=1e-5)
            mu = self.node("ReduceMean", [x], axes=[-1])
            d = self.node("Sub", [x, mu])
            var = self.node("ReduceMean", [self.node("Pow", [d, self.c(2.0)])], axes=[-1])
            r = self.node("Sqrt", [self.node("Add", [var, self.c(1e-5)])])
            return self.node("Add", [self.node("Mul", [self.node("Div", [d, r]), self.init("weight", g)]),
                                     self.init("bias", b)])

    def gelu(self, x, kind="erf"):
        with self.under("act"), self.excluded():
            if kind == "erf":  # torch 1.13's export of F.gelu: x * 0.5 * (1 + erf(x / sqrt(2)))
                e = self.node("Erf", [self.node("Div", [x, self.c(1.4142135381698608)])])
                return self.node("Mul", [self.node("Mul", [x, self.node("Add", [e, self.c(1.0)])]), self.c(0.5)])
            # GPT-2 gelu_new: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
            p = self.node("Mul", [self.node("Pow", [x, self.c(3.0)]), self.c(0.044715)])
            t = self.node("Tanh", [self.node("Mul", [self.node("Add", [x, p]), self.c(0.7978845608028654)])])
            return self.node("Mul", [self.node("Mul", [self.c(0.5), x]), self.node("Add", [self.c(1.0), t])])

    def heads(self, t, seq, nh, dh, perm):
        r = self.node("Reshape", [t, self.init("shape", np.array([1, seq, nh, dh], np.int64))])
        return self.node("Transpose", [r], perm=perm)

    def attention(self, x, seq, h, nh, causal=False, fused_qkv=False):
        dh = h // nh
        with self.under("attn"):
            if fused_qkv:  # GPT-2 c_attn: one linear, Split into Q, K, V
                qkv = self.linear(x, h, 3 * h, "c_attn")
                q, k, v = self.node("Split", [qkv, self.init("split", np.array([h, h, h], np.int64))], nout=3, axis=2)
            else:
                q, k, v = (self.linear(x, h, h, n) for n in ("query", "key", "value"))
            qh = self.heads(q, seq, nh, dh, [0, 2, 1, 3])
            kt = self.heads(k, seq, nh, dh, [0, 2, 3, 1])
            vh = self.heads(v, seq, nh, dh, [0, 2, 1, 3])
            s = self.node("Div", [self.node("MatMul", [qh, kt]), self.c(float(np.sqrt(dh)))])
            if causal:
                mask = np.tril(np.ones((seq, seq), bool)).reshape(1, 1, seq, seq)
                s = self.node("Where", [self.init("bias", mask), s, self.c(-10000.0)])
            p = self.node("Softmax", [s], axis=-1)
            o = self.node("Transpose", [self.node("MatMul", [p, vh])], perm=[0, 2, 1, 3])
            o = self.node("Reshape", [o, self.init("shape", np.array([1, seq, h], np.int64))])
            return self.linear(o, h, h, "output" if not fused_qkv else "c_proj")

    def model(self, out):
        g = helper.make_graph(self.nodes, self.name, self.inputs, [], self.inits)
        g.output.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, None))
        m = helper.make_model(g, producer_name="qdqc-gen_transformers",
                              opset_imports=[helper.make_opsetid("", self.opset)])
        m.ir_version = 8
        m = onnx.shape_inference.infer_shapes(m)
        for o in m.graph.output:  # fill the output's shape from inference
            for vi in m.graph.value_info:
                if vi.name == o.name:
                    o.CopyFrom(vi)
        del m.graph.value_info[:]
        return m


def bert_float(name, d):
    b = F(name, seed_of(name))
    h, s, nh, ff = d["hidden"], d["seq"], d["heads"], d["ffn"]
    x = b.input((1, s, h))
    with b.under("encoder/layer.0"):
        a = b.attention(x, s, h, nh)
        a = b.layernorm(b.node("Add", [a, x]), h, "attention_LayerNorm")
        f = b.linear(a, h, ff, "intermediate")
        f = b.gelu(f)
        o = b.linear(f, ff, h, "output")
        y = b.layernorm(b.node("Add", [o, a]), h, "output_LayerNorm")
    return b.model(y), b.excl, (1, s, h)


def vit_float(name, d):
    b = F(name, seed_of(name))
    h, nh, ff, img, p = d["hidden"], d["heads"], d["ffn"], d["image"], d["patch"]
    n = (img // p) ** 2
    seq = n + 1
    x = b.input((1, 3, img, img))
    with b.under("embeddings"):
        w = (b.rng.standard_normal((h, 3, p, p)) / np.sqrt(3 * p * p)).astype(np.float32)
        bias = (0.1 * b.rng.standard_normal(h)).astype(np.float32)
        e = b.node("Conv", [x, b.init("patch.weight", w), b.init("patch.bias", bias)],
                   kernel_shape=[p, p], strides=[p, p])
        e = b.node("Reshape", [e, b.init("shape", np.array([1, h, n], np.int64))])
        e = b.node("Transpose", [e], perm=[0, 2, 1])
        cls = b.init("cls_token", (0.5 * b.rng.standard_normal((1, 1, h))).astype(np.float32))
        e = b.node("Concat", [cls, e], axis=1)
        pos = b.init("position_embeddings", (0.5 * b.rng.standard_normal((1, seq, h))).astype(np.float32))
        e = b.node("Add", [e, pos])
    with b.under("encoder/layer.0"):
        a = b.attention(b.layernorm(e, h, "layernorm_before"), seq, h, nh)
        r = b.node("Add", [a, e])
        f = b.gelu(b.linear(b.layernorm(r, h, "layernorm_after"), h, ff, "intermediate"))
        y = b.node("Add", [b.linear(f, ff, h, "output"), r])
    return b.model(y), b.excl, (1, 3, img, img)


def gpt2_float(name, d):
    b = F(name, seed_of(name), opset=13)
    h, s, nh, ff = d["hidden"], d["seq"], d["heads"], d["ffn"]
    x = b.input((1, s, h))
    with b.under("h.0"):
        a = b.attention(b.layernorm(x, h, "ln_1", decomposed=True), s, h, nh, causal=True, fused_qkv=True)
        r = b.node("Add", [a, x])
        with b.under("mlp"):
            f = b.gelu(b.linear(b.layernorm(r, h, "ln_2", decomposed=True), h, ff, "c_fc"), "tanh")
            y = b.node("Add", [b.linear(f, ff, h, "c_proj"), r])
    return b.model(y), b.excl, (1, s, h)


def tel_float(name, d):
    """torch.onnx.export of nn.TransformerEncoderLayer; returns (model, LayerNorm nodes, shape)."""
    import io
    import warnings
    import torch
    torch.manual_seed(seed_of(name) & 0x7fffffff)
    torch.set_num_threads(1)
    h, s, nh, ff = d["hidden"], d["seq"], d["heads"], d["ffn"]
    m = torch.nn.TransformerEncoderLayer(h, nh, dim_feedforward=ff, dropout=0.0, batch_first=True)
    m.eval()
    x = torch.zeros(1, s, h)
    f = io.BytesIO()
    with warnings.catch_warnings():  # grad enabled: not the fused fast path (no ONNX export)
        warnings.simplefilter("ignore")
        torch.onnx.export(m, x, f, opset_version=d.get("opset", 13), input_names=["input"], output_names=["output"],
                          do_constant_folding=True)
    model = onnx.load_from_string(f.getvalue())
    for i, n in enumerate(model.graph.node):  # torch 1.13 leaves some nodes unnamed
        if not n.name:
            n.name = "%s_%d" % (n.op_type, i)
    return model, layernorm_nodes(model), (1, s, h)


def tel17_float(name, d):
    """The same export at opset 17: torch 1.13 writes LayerNormalization nodes."""
    return tel_float(name, dict(d, opset=17))


def layernorm_nodes(model):
    """The nodes of each decomposed LayerNorm (ReduceMean ... Div -> Mul(gamma) -> Add(beta)) of
    a torch export: from every Div fed by a Sqrt back to its ReduceMean, plus the Mul and Add
    after it."""
    prod = {o: n for n in model.graph.node for o in n.output}
    cons = {}
    for n in model.graph.node:
        for i in n.input:
            cons.setdefault(i, []).append(n)
    out = set()
    for n in model.graph.node:
        if n.op_type == "Div" and n.input[1] in prod and prod[n.input[1]].op_type == "Sqrt":
            stack = [n]
            while stack:
                c = stack.pop()
                if c.name in out or c.op_type not in ("Div", "Sqrt", "Add", "ReduceMean", "Pow", "Sub"):
                    continue
                out.add(c.name)
                stack += [prod[i] for i in c.input if i in prod]
            mul = cons.get(n.output[0], [None])[0]
            if mul is not None and mul.op_type == "Mul":
                out.add(mul.name)
                add = cons.get(mul.output[0], [None])[0]
                if add is not None and add.op_type == "Add":
                    out.add(add.name)
    # the residual Add before the ReduceMean is the LayerNorm's input, not part of it
    for n in model.graph.node:
        if n.name in out and n.op_type == "Add" and not any(
                i in prod and prod[i].op_type in ("ReduceMean", "Mul") for i in n.input):
            out.discard(n.name)
    return sorted(out)


MODELS = {
    # name: (float builder, quantizer)
    "bert_qs": (bert_float, "static"),
    "bert_trt": (bert_float, "trt"),
    "bert_dyn": (bert_float, "dynamic"),
    "vit_qs": (vit_float, "static"),
    "gpt2_qs": (gpt2_float, "static"),
    "tel_qs": (tel_float, "static"),
    "tel17_qs": (tel17_float, "static"),
}
SIZES = {"tiny": TINY, "base": BASE}
FULL_NAMES = {"vit_qs": "vit_qs_b16"}


def full_name(stem, size):
    if size == "base" and stem in FULL_NAMES:
        return FULL_NAMES[stem]
    return "%s_%s" % (stem, size)


def all_names(size):
    return [full_name(s, size) for s in MODELS]


def build(name):
    stem, size = next((s, z) for s in MODELS for z in SIZES if full_name(s, z) == name)
    fb, style = MODELS[stem]
    d = SIZES[size]
    # the float graph's own seed is the stem's (bert_qs/_trt/_dyn share one float layer)
    fname = ("bert_" if stem.startswith("bert") else "tel_" if stem.startswith("tel") else stem + "_") + size
    model, excl, shape = fb(fname, d)
    rng = np.random.default_rng(seed_of(name) ^ 0x5eed)
    calib = [{"input": rng.standard_normal(shape).astype(np.float32)} for _ in range(CALIB)]
    x = rng.standard_normal(shape).astype(np.float32)
    fmodel = copy.deepcopy(model)  # the quantizers rewrite model in place
    if style == "static":
        q = ort_quant.quantize_static(model, calib, nodes_to_exclude=excl)
    elif style == "trt":
        q = ort_quant.modelopt_int8(model, calib)
    else:
        q = ort_quant.quantize_dynamic(model)
    q.graph.name = name
    return q, x, fmodel


def have_torch():
    import importlib.util
    return bool(importlib.util.find_spec("torch"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="write the tiny (CI) variants into this directory")
    ap.add_argument("--full", help="write the full-size models into this directory")
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--float", action="store_true",
                    help="also write each float graph before quantization, NAME_float.onnx "
                         "(for qdqc compare)")
    a = ap.parse_args()
    if a.list:
        for z in SIZES:
            for n in all_names(z):
                print(n)
        return 0
    jobs = []
    if a.out:
        jobs += [(n, a.out) for n in all_names("tiny")]
    if a.full:
        jobs += [(n, a.full) for n in all_names("base")]
    if a.only:
        want = set(a.only.split(","))
        unknown = want - {n for z in SIZES for n in all_names(z)}
        if unknown:
            print("gen_transformers.py: unknown model(s) %s (--list)" % ", ".join(sorted(unknown)), file=sys.stderr)
            return 2
        jobs = [j for j in jobs if j[0] in want]
    if not jobs:
        print("gen_transformers.py: give --out DIR and/or --full DIR", file=sys.stderr)
        return 2
    skipped = 0
    for n, d in jobs:
        if n.startswith("tel") and not have_torch():
            print("gen_transformers.py: SKIP %s: PyTorch is not installed for %s" % (n, sys.executable),
                  file=sys.stderr)
            skipped += 1
            continue
        q, x, fm = build(n)
        os.makedirs(os.path.join(d, n), exist_ok=True)
        with open(os.path.join(d, n + ".onnx"), "wb") as f:
            f.write(q.SerializeToString())
        if a.float:
            with open(os.path.join(d, n + "_float.onnx"), "wb") as f:
                f.write(fm.SerializeToString())
        with open(os.path.join(d, n, "input.npy"), "wb") as f:
            np.save(f, x, allow_pickle=False)
        print("wrote %s" % os.path.join(d, n + ".onnx"))
    return 77 if skipped == len(jobs) else 0


if __name__ == "__main__":
    sys.exit(main())
