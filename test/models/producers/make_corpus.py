#!/usr/bin/env python3
"""make_corpus.py: quantized ONNX files written by real quantizers (the producer corpus).

    PEER_PYTHON test/models/producers/make_corpus.py WORKDIR --producer NAME [--quick]

Runs in the peer environment (tools/setup.sh --peer; .peer-venv/bin/python), offline
(HF_HUB_OFFLINE=1, TRANSFORMERS_OFFLINE=1: nothing is downloaded; every network is built from
its config with seeded random weights). One producer per call (run_corpus.py calls each in its
own process, so one producer's crash or missing package cannot take the others down).

Float models (WORKDIR/float/, written once, deterministic: torch.manual_seed(0)):
  resnet18  torchvision resnet18, random weights, input 1x3x64x64 (opset 17, torch.onnx.export)
  bert      transformers BertModel(BertConfig: 2 layers, hidden 64, 2 heads, intermediate 128,
            vocab 512), eager attention, inputs input_ids and attention_mask [1,16] (int64)
Calibration: 8 seeded batches (numpy default_rng(1)); images in [-1, 1], token ids < 512, masks
with a padded tail.

Producers (NAME) and the files they write, WORKDIR/<producer>/<model>_<variant>.onnx:
  ort       onnxruntime.quantization: quantize_static QDQ (pt: per tensor; pc: per channel;
            rr: per channel + reduce_range; sym: ActivationSymmetric with int8 activations;
            entropy, percentile: those calibrations), quantize_dynamic (dyn), and for bert the
            4-bit weight quantizer MatMulNBitsQuantizer (nbits: MatMulNBits com.microsoft;
            nbits_qdq: QDQ format, block-wise int4 DequantizeLinear)
  nncf      nncf.quantize on the ONNX model (bert: model_type=TRANSFORMER)
  brevitas  brevitas QCDQ export (export_onnx_qcdq): a small QuantConv2d CNN (cnn) and a
            transformer-style FFN block of QuantLinear (ffn), weights and activations quantized
            (QuantIdentity, QuantReLU): 8-bit, 4-bit weights (w4), 4-bit weights and activations
            (a4w4), per-layer widths of 2 to 8 bits with per-channel weights (mixed);
            brevitas needs onnxoptimizer, which the peer environment lacks: a stand-in module
            does the two passes brevitas asks of it (onnxoptimizer_stand_in)
  pt2e      PyTorch 2 export quantization (torchao.quantization.pt2e): X86InductorQuantizer (x86)
            and XNNPACKQuantizer (xnnpack, symmetric, per-channel weights) on resnet18 and bert,
            then torch.onnx.export (opset 18)
  modelopt  modelopt.onnx.quantization.quantize, int8, max calibration, CPU execution provider;
            its default float parts in fp16 (int8) and high_precision_dtype="fp32" (int8_fp32);
            for bert also weight-only block-wise int4 (block 32): rtn_dq (int4_rtn), awq_clip
            (int4_awq)
  quark     quark.onnx ModelQuantizer with A8W8_QCONFIG
A producer that cannot run at all writes WORKDIR/<producer>/ERROR.txt with the exact exception
(its last line is the message) and exits 3; a variant it cannot make writes <file>.error.txt
the same way instead of <file>.onnx, and the others go on. A finished producer writes DONE. --quick: only the first variant
of each model (brevitas: the mixed 2-8-bit ones; pt2e: X86InductorQuantizer; modelopt: the
default fp16 int8). Prints one line per written file. Exit 0 ok, 3 producer failed, 1 usage error.
"""
import os
import sys
import traceback

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

SEQ = 16
VOCAB = 512
IMG = (1, 3, 64, 64)
NCAL = 8
PRODUCERS = ["ort", "nncf", "brevitas", "pt2e", "modelopt", "quark"]


def calib(model):
    rng = np.random.default_rng(1)
    out = []
    for i in range(NCAL):
        if model == "resnet18":
            out.append({"input": rng.uniform(-1, 1, IMG).astype(np.float32)})
        else:
            ids = rng.integers(0, VOCAB, (1, SEQ)).astype(np.int64)
            mask = np.ones((1, SEQ), np.int64)
            mask[0, SEQ - (i % 4) * 2:] = 0
            out.append({"input_ids": ids, "attention_mask": mask})
    return out


def bert_module(mask4d=False):
    """The corpus' BERT (seeded weights) wrapped to take input_ids and attention_mask [1, SEQ] and
    return last_hidden_state. mask4d: the wrapper turns the mask into BERT's additive [1,1,1,SEQ]
    float mask (0 or float32's lowest) itself, which transformers then uses as it is (the same
    numbers: transformers builds that mask from the 2-D one); for PT2E's XNNPACKQuantizer, whose
    graph transform turns the integer `arange + 0` of transformers' own mask code into a float add
    (the index that follows then fails)."""
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=128, max_position_embeddings=64, attn_implementation="eager")
    bert = BertModel(cfg).eval()

    class Wrap(torch.nn.Module):
        def __init__(self, b):
            super().__init__()
            self.b = b
            self.register_buffer("pos", torch.arange(SEQ, dtype=torch.int64)[None])
            self.register_buffer("tt", torch.zeros((1, SEQ), dtype=torch.int64))

        def forward(self, input_ids, attention_mask):
            if mask4d:
                attention_mask = ((1.0 - attention_mask[:, None, None, :].to(torch.float32)) *
                                  torch.finfo(torch.float32).min)
            return self.b(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=self.tt,
                          position_ids=self.pos).last_hidden_state

    return Wrap(bert).eval()


def bert_example():
    import torch
    ids = torch.ones((1, SEQ), dtype=torch.int64)
    mask = torch.ones((1, SEQ), dtype=torch.int64)
    mask[0, SEQ // 2:] = 0
    return ids, mask


def float_models(work):
    d = os.path.join(work, "float")
    os.makedirs(d, exist_ok=True)
    paths = {"resnet18": os.path.join(d, "resnet18.onnx"), "bert": os.path.join(d, "bert.onnx")}
    if all(os.path.exists(p) for p in paths.values()):
        return paths
    import torch
    import torchvision

    torch.manual_seed(0)
    m = torchvision.models.resnet18(weights=None).eval()
    tmp = paths["resnet18"] + ".tmp"
    torch.onnx.export(m, (torch.zeros(IMG),), tmp, input_names=["input"], output_names=["logits"],
                      opset_version=17, dynamo=False)
    os.replace(tmp, paths["resnet18"])

    bert = bert_module()
    tmp = paths["bert"] + ".tmp"
    torch.onnx.export(bert, bert_example(), tmp, input_names=["input_ids", "attention_mask"],
                      output_names=["last_hidden_state"], opset_version=17, dynamo=False)
    os.replace(tmp, paths["bert"])
    return paths


def reader(model):
    from onnxruntime.quantization import CalibrationDataReader

    class R(CalibrationDataReader):
        def __init__(self):
            self.it = iter(calib(model))

        def get_next(self):
            return next(self.it, None)

        def rewind(self):
            self.it = iter(calib(model))

    return R()


def emit(path):
    print("wrote %s" % path, flush=True)


def attempt(path, fn):
    """Run fn() that writes path; on failure write path's .error.txt (the exact exception) instead,
    so one variant the producer cannot make does not stop the others."""
    err = path[:-5] + ".error.txt"
    try:
        fn()
        emit(path)
    except Exception as e:  # the producer's own failure is a result, recorded
        msg = "%s: %s" % (type(e).__name__, (str(e).strip().splitlines() or [""])[0])
        with open(err, "w") as f:
            f.write(traceback.format_exc() + "\n" + msg + "\n")
        print("failed %s: %s" % (path, msg), flush=True)


# ---- producers -------------------------------------------------------------------------------

def prod_ort(work, fm, out, quick):
    from onnxruntime.quantization import (CalibrationMethod, QuantFormat, QuantType, quantize_dynamic,
                                          quantize_static)
    variants = [
        ("pt", dict(per_channel=False)),
        ("pc", dict(per_channel=True)),
        ("rr", dict(per_channel=True, reduce_range=True)),
        ("sym", dict(per_channel=True, activation_type=QuantType.QInt8,
                     extra_options={"ActivationSymmetric": True})),
        ("entropy", dict(calibrate_method=CalibrationMethod.Entropy)),
        ("percentile", dict(calibrate_method=CalibrationMethod.Percentile)),
    ]
    for model in ("resnet18", "bert"):
        for name, kw in (variants[:1] if quick else variants):
            p = os.path.join(out, "%s_%s.onnx" % (model, name))
            args = dict(quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8)
            args.update(kw)
            attempt(p, lambda p=p, args=args, model=model: quantize_static(fm[model], p, reader(model), **args))
        if quick:
            continue
        p = os.path.join(out, "%s_dyn.onnx" % model)
        attempt(p, lambda p=p, model=model: quantize_dynamic(fm[model], p, weight_type=QuantType.QInt8))
    if quick:
        return
    import onnx
    from onnxruntime.quantization.matmul_nbits_quantizer import (DefaultWeightOnlyQuantConfig,
                                                                 MatMulNBitsQuantizer)
    for name, fmt in (("nbits", QuantFormat.QOperator), ("nbits_qdq", QuantFormat.QDQ)):
        def nbits(p, fmt=fmt):
            cfg = DefaultWeightOnlyQuantConfig(block_size=32, is_symmetric=True, quant_format=fmt)
            q = MatMulNBitsQuantizer(onnx.load(fm["bert"]), algo_config=cfg)
            q.process()
            q.model.save_model_to_file(p, False)
        p = os.path.join(out, "bert_%s.onnx" % name)
        attempt(p, lambda p=p, nbits=nbits: nbits(p))


def prod_nncf(work, fm, out, quick):
    import nncf
    import onnx
    for model in ("resnet18", "bert"):
        kw = {"model_type": nncf.ModelType.TRANSFORMER} if model == "bert" else {}
        p = os.path.join(out, "%s_int8.onnx" % model)
        attempt(p, lambda p=p, model=model, kw=kw: onnx.save(
            nncf.quantize(onnx.load(fm[model]), nncf.Dataset(calib(model)), subset_size=NCAL, **kw), p))


def onnxoptimizer_stand_in():
    """brevitas' legacy ONNX export imports onnxoptimizer (not in the peer environment: no wheel
    for its Python in tools/peer-requirements.txt) and runs two of its passes on the QCDQ graph:
    extract_constant_to_initializer and eliminate_unused_initializer. This module does exactly
    those two, so the file is the one brevitas would write; any other pass is an error."""
    import types
    import onnx

    def optimize(model, passes):
        g = model.graph
        for p in passes:
            if p == "extract_constant_to_initializer":
                keep = []
                for n in g.node:
                    if n.op_type == "Constant" and len(n.attribute) == 1 and n.attribute[0].name == "value":
                        t = onnx.TensorProto()
                        t.CopyFrom(n.attribute[0].t)
                        t.name = n.output[0]
                        g.initializer.append(t)
                    else:
                        keep.append(n)
                del g.node[:]
                g.node.extend(keep)
            elif p == "eliminate_unused_initializer":
                used = {i for n in g.node for i in n.input} | {o.name for o in g.output}
                keep = [t for t in g.initializer if t.name in used]
                del g.initializer[:]
                g.initializer.extend(keep)
                gi = [i for i in g.input if i.name in used or i.name not in {t.name for t in model.graph.initializer}]
                del g.input[:]
                g.input.extend(gi)
            else:
                raise NotImplementedError("onnxoptimizer stand-in: pass %s" % p)
        return model

    m = types.ModuleType("onnxoptimizer")
    m.optimize = optimize
    sys.modules.setdefault("onnxoptimizer", m)


def prod_brevitas(work, fm, out, quick):
    onnxoptimizer_stand_in()
    import torch
    import brevitas.nn as qnn
    from brevitas.export import export_onnx_qcdq
    from brevitas.quant import (Int8ActPerTensorFloat, Int8WeightPerChannelFloat, Int8WeightPerTensorFloat,
                                Int32Bias)

    # Per layer: wb = weight bit widths, ab = activation bit widths (QuantIdentity, QuantReLU).
    # Below 8 bits brevitas writes QuantizeLinear -> Clip(the b-bit range) -> DequantizeLinear for
    # activations too (QCDQ), unsigned after a ReLU, signed after an identity.
    def layers(wb, ab, wq):
        kw = [dict(weight_bit_width=w, weight_quant=wq, bias_quant=Int32Bias, return_quant_tensor=True)
              for w in wb]
        kw[-1]["return_quant_tensor"] = False  # a float tensor out (a QuantTensor exports its bit width too)
        ident = [qnn.QuantIdentity(act_quant=Int8ActPerTensorFloat, bit_width=a, return_quant_tensor=True)
                 for a in ab]
        relu = [qnn.QuantReLU(bit_width=a, return_quant_tensor=True) for a in ab]
        return kw, ident, relu

    def cnn(wb, ab, wq=Int8WeightPerTensorFloat):
        torch.manual_seed(0)
        kw, ident, relu = layers(wb, ab, wq)
        return torch.nn.Sequential(
            ident[0], qnn.QuantConv2d(3, 16, 3, padding=1, **kw[0]), relu[1],
            qnn.QuantConv2d(16, 32, 3, stride=2, padding=1, **kw[1]), relu[2],
            qnn.QuantConv2d(32, 32, 3, padding=1, **kw[2]), relu[3],
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), ident[4],
            qnn.QuantLinear(32, 10, bias=True, **kw[3])).eval(), torch.zeros(IMG)

    def ffn(wb, ab, wq=Int8WeightPerTensorFloat):
        torch.manual_seed(0)
        kw, ident, relu = layers(wb, ab, wq)
        return torch.nn.Sequential(
            ident[0], qnn.QuantLinear(64, 128, bias=True, **kw[0]), relu[1],
            qnn.QuantLinear(128, 64, bias=True, **kw[1])).eval(), torch.zeros((1, SEQ, 64))

    pc = Int8WeightPerChannelFloat
    full = [("cnn", cnn, [8] * 4, [8] * 5, {}), ("ffn", ffn, [8] * 2, [8] * 2, {}),
            ("cnn_mixed", cnn, [8, 6, 4, 3], [8, 6, 4, 2, 3], {"wq": pc}),  # 2..8-bit acts
            ("cnn_w4", cnn, [4] * 4, [8] * 5, {}), ("ffn_w4", ffn, [4] * 2, [8] * 2, {}),
            ("cnn_a4w4", cnn, [4] * 4, [4] * 5, {}), ("ffn_a4w4", ffn, [4] * 2, [4] * 2, {}),
            ("ffn_mixed", ffn, [6, 3], [5, 2], {"wq": pc})]
    todo = [t for t in full if t[0] in ("cnn_mixed", "ffn_mixed")] if quick else full

    def one(p, mk, wb, ab, kw):
        m, x = mk(wb, ab, **kw)
        g = torch.Generator().manual_seed(1)
        with torch.no_grad():  # calibrate the activation scales (stats collection in train mode)
            m.train()
            for _ in range(NCAL):
                m(torch.rand(x.shape, generator=g) * 2 - 1)
            m.eval()
        export_onnx_qcdq(m, args=x, export_path=p, input_names=["input"], opset_version=17,
                        dynamo=False)  # brevitas: dynamo=True "does not support quantized bias"

    for name, mk, wb, ab, kw in todo:
        p = os.path.join(out, "%s.onnx" % name)
        attempt(p, lambda p=p, mk=mk, wb=wb, ab=ab, kw=kw: one(p, mk, wb, ab, kw))


def prod_pt2e(work, fm, out, quick):
    """PT2E: torch.export (strict: it records source_fn_stack, from which the quantizers find
    their patterns; the non-strict trace records a reused module such as torchvision's BasicBlock
    ReLU as one partition with two outputs and X86InductorQuantizer stops), dead code dropped
    (BERT's unused pooler: its Tanh partition has no output node and X86InductorQuantizer stops),
    prepare_pt2e, calibration, convert_pt2e, then torch.onnx.export (the dynamo exporter, opset 18,
    its lowest: quantized_decomposed quantize/dequantize become QuantizeLinear/DequantizeLinear).
    XNNPACKQuantizer is torchao's copy (torchao.testing.pt2e; executorch maintains the same
    quantizer and requires this torchao)."""
    import torch
    import torchvision
    import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer as xiq
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    from torchao.testing.pt2e._xnnpack_quantizer import (XNNPACKQuantizer,
                                                         get_symmetric_quantization_config)

    def quantizer(name):
        if name == "x86":
            return xiq.X86InductorQuantizer().set_global(xiq.get_default_x86_inductor_quantization_config())
        return XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))

    def one(p, model, name):
        torch.manual_seed(0)
        if model == "resnet18":
            m = torchvision.models.resnet18(weights=None).eval()
            ex = (torch.zeros(IMG),)
            names = dict(input_names=["input"], output_names=["logits"])
        else:
            m, ex = bert_module(mask4d=True), bert_example()
            names = dict(input_names=["input_ids", "attention_mask"], output_names=["last_hidden_state"])
        gm = torch.export.export(m, ex, strict=True).module()
        gm.graph.eliminate_dead_code()
        gm.recompile()
        gm = prepare_pt2e(gm, quantizer(name))
        with torch.no_grad():
            for c in calib(model):
                gm(*[torch.from_numpy(v) for v in c.values()])
        gm = convert_pt2e(gm)
        torch.onnx.export(gm, ex, p, opset_version=18, external_data=False, **names)

    for model in ("resnet18", "bert"):
        for name in (("x86",) if quick else ("x86", "xnnpack")):
            p = os.path.join(out, "%s_%s.onnx" % (model, name))
            attempt(p, lambda p=p, model=model, name=name: one(p, model, name))


def prod_modelopt(work, fm, out, quick):
    from modelopt.onnx.quantization import quantize
    for model in ("resnet18", "bert"):
        cal = calib(model)
        data = {k: np.concatenate([c[k] for c in cal]) for k in cal[0]}
        # default (fp16 float parts, the TensorRT deployment style) and fp32 float parts
        for suffix, hp in (("int8", "fp16"),) + (() if quick else (("int8_fp32", "fp32"),)):
            p = os.path.join(out, "%s_%s.onnx" % (model, suffix))
            attempt(p, lambda p=p, model=model, data=data, hp=hp: quantize(
                fm[model], quantize_mode="int8", calibration_data=data, calibration_method="max",
                calibration_eps=["cpu"], high_precision_dtype=hp, output_path=p))
        if model != "bert" or quick:
            continue
        # weight-only int4, block-wise (DequantizeLinear with block_size 32 of INT4 weights, opset
        # 21): round to nearest (rtn_dq) and its default AWQ with clipping (awq_clip). The float
        # parts stay fp32 (int4 mode does not convert them).
        for suffix, meth in (("int4_rtn", "rtn_dq"), ("int4_awq", "awq_clip")):
            p = os.path.join(out, "bert_%s.onnx" % suffix)
            attempt(p, lambda p=p, data=data, meth=meth: quantize(
                fm["bert"], quantize_mode="int4", calibration_data=data, calibration_method=meth,
                calibration_eps=["cpu"], block_size=32, output_path=p))


def prod_quark(work, fm, out, quick):
    import copy
    from quark.onnx import A8W8_QCONFIG, ModelQuantizer
    for model in ("resnet18", "bert"):
        p = os.path.join(out, "%s_a8w8.onnx" % model)
        # a copy per call: quantize_model rewrites the config it is given (its deprecated
        # `activation` field moved to `input_tensors`), and a second call with the same object
        # stops with "Both `activation` and `input_tensors` are provided"
        attempt(p, lambda p=p, model=model: ModelQuantizer(copy.deepcopy(A8W8_QCONFIG)).quantize_model(
            fm[model], p, reader(model)))


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    quick = "--quick" in argv
    prod = None
    if "--producer" in argv:
        i = argv.index("--producer")
        prod = argv[i + 1] if i + 1 < len(argv) else None
        args = [a for a in args if a != prod]
    if len(args) != 1 or prod not in PRODUCERS:
        sys.stderr.write("usage: make_corpus.py WORKDIR --producer %s [--quick]\n" % "|".join(PRODUCERS))
        return 1
    work = os.path.abspath(args[0])
    out = os.path.join(work, prod)
    os.makedirs(out, exist_ok=True)
    err = os.path.join(out, "ERROR.txt")
    if os.path.exists(err):
        os.remove(err)
    try:
        import torch
        torch.manual_seed(0)
        fm = float_models(work)
        globals()["prod_" + prod](work, fm, out, quick)
        open(os.path.join(out, "DONE"), "w").close()
    except BaseException as e:  # noqa: B036 -- any failure is the producer's recorded result
        tb = traceback.format_exc()
        msg = "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else "")
        with open(err, "w") as f:
            f.write(tb + "\n" + msg + "\n")
        sys.stderr.write("make_corpus: %s: %s\n" % (prod, msg))
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
