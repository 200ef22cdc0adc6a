#!/usr/bin/env python3
"""edge_cnns.py: edge CNNs (MobileNetV3, EfficientNet-B0, MnasNet, ConvNeXt) quantized two ways.

Run with the peer environment's interpreter (torch 2.x, torchvision, timm, torchao, ONNX Runtime;
tools/setup.sh --peer), offline:

    .peer-venv/bin/python test/models/edge_cnns.py --out DIR     # DIR/<model>.onnx + DIR/<model>/input.npy
    .peer-venv/bin/python test/models/edge_cnns.py --cache ROOT  # ROOT/<key>/..., skipped when present;
                                                                 # prints the directory
    .peer-venv/bin/python test/models/edge_cnns.py --list

Networks (input 1x3x224x224, 1000 logits, random initialisation, nothing is
downloaded: weights=None / pretrained=False, torch.manual_seed(SEED) before each build):
  mobilenet_v3_small, mobilenet_v3_large, efficientnet_b0 (stochastic_depth_prob=0: the same
  eval graph, and no Bernoulli in the QAT trace), mnasnet1_0   torchvision.models
  convnext_atto                                                 timm (the smallest ConvNeXt)
Each in two styles, <network>_<style>.onnx:
  ort  the float eval model exported by torch.onnx.export (TorchScript exporter, opset 17,
       constant folding: BatchNorm folded into the convolutions), then
       onnxruntime.quantization.quant_pre_process (symbolic shape inference + ORT's basic graph
       optimisations) and quantize_static(QuantFormat.QDQ, activations QUInt8, weights QInt8
       per channel, MinMax calibration) on CALIB seeded batches of one image (the
       CalibrationDataReader of test/models/producers/make_corpus.py).
  qat  PyTorch 2 export QAT (torchao.quantization.pt2e): torch.export.export (strict, train
       mode), prepare_qat_pt2e with X86InductorQuantizer(get_default_x86_inductor_quantization_config
       (is_qat=True)), QAT_STEPS steps of SGD (lr 1e-5, momentum 0.9) with cross entropy on seeded
       random batches of QAT_BATCH images and random labels, move_exported_model_to_eval,
       convert_pt2e, torch.onnx.export (the dynamo exporter, opset 18, one file) as
       make_corpus.py's prod_pt2e does.
Images are numpy default_rng(1) (calibration) / torch.Generator seed 2 (QAT), uniform in [-1, 1].
Beside each model DIR/<model>/input.npy: the input test/models/producers/run_corpus.py's
inputs_for() draws for it (default_rng(7), uniform [-1, 1]), for the bench.
A model a style cannot make writes DIR/<model>.error.txt (the traceback; its last line the
exact exception) instead of the .onnx, and the others go on (exit 0; 1 on a usage error).

Deterministic: one intra-op thread, fixed seeds. The cache key is a hash of this script and
tools/peer-requirements.txt (the pinned peer packages).
"""
import argparse
import contextlib
import hashlib
import os
import sys
import traceback
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_cache  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SEED = 0
SIZE = 224
CALIB = 8
QAT_STEPS = 4
QAT_BATCH = 1  # torch.export specialises the batch; the ONNX file has batch 1
NETS = {
    "mobilenet_v3_small": "torchvision.models.mobilenet_v3_small",
    "mobilenet_v3_large": "torchvision.models.mobilenet_v3_large",
    "efficientnet_b0": "torchvision.models.efficientnet_b0(stochastic_depth_prob=0)",
    "mnasnet1_0": "torchvision.models.mnasnet1_0",
    "convnext_atto": "timm.create_model('convnext_atto')",
}
STYLES = ["ort", "qat"]
MODELS = ["%s_%s" % (n, s) for n in NETS for s in STYLES]


def net(name):
    import torch
    torch.manual_seed(SEED)
    if name == "convnext_atto":
        import timm
        return timm.create_model("convnext_atto", pretrained=False, num_classes=1000)
    import torchvision
    kw = {"stochastic_depth_prob": 0.0} if name == "efficientnet_b0" else {}
    return getattr(torchvision.models, name)(weights=None, **kw)


def calib():
    rng = np.random.default_rng(1)
    return [{"input": rng.uniform(-1, 1, (1, 3, SIZE, SIZE)).astype(np.float32)} for _ in range(CALIB)]


def reader():
    from onnxruntime.quantization import CalibrationDataReader

    class R(CalibrationDataReader):
        def __init__(self):
            self.it = iter(calib())

        def get_next(self):
            return next(self.it, None)

        def rewind(self):
            self.it = iter(calib())

    return R()


def make_ort(name, path, tmp):
    import torch
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process
    m = net(name).eval()
    f32, pre = os.path.join(tmp, name + ".f32.onnx"), os.path.join(tmp, name + ".pre.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, (torch.zeros(1, 3, SIZE, SIZE),), f32, input_names=["input"],
                          output_names=["logits"], opset_version=17, do_constant_folding=True,
                          dynamo=False)
    quant_pre_process(f32, pre)
    quantize_static(pre, path, reader(), quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8, per_channel=True)


def make_qat(name, path, tmp):
    import torch
    import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer as xiq
    from torchao.quantization.pt2e import move_exported_model_to_eval
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_qat_pt2e
    m = net(name).train()
    ex = (torch.zeros(1, 3, SIZE, SIZE),)
    gm = torch.export.export(m, ex, strict=True).module()
    q = xiq.X86InductorQuantizer().set_global(xiq.get_default_x86_inductor_quantization_config(is_qat=True))
    gm = prepare_qat_pt2e(gm, q)
    g = torch.Generator().manual_seed(2)
    opt = torch.optim.SGD(gm.parameters(), lr=1e-5, momentum=0.9)
    for _ in range(QAT_STEPS):
        x = torch.rand(QAT_BATCH, 3, SIZE, SIZE, generator=g) * 2 - 1
        y = torch.randint(0, 1000, (QAT_BATCH,), generator=g)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(gm(x), y)
        loss.backward()
        opt.step()
    move_exported_model_to_eval(gm)
    gm = convert_pt2e(gm)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(gm, ex, path, opset_version=18, external_data=False,
                          input_names=["input"], output_names=["logits"])


def write_input(out, model):
    d = os.path.join(out, model)
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(7)  # run_corpus.inputs_for's draw for a single float input
    np.save(os.path.join(d, "input.npy"), rng.uniform(-1, 1, (1, 3, SIZE, SIZE)).astype(np.float32))


def make(model, out):
    """Write OUT/<model>.onnx (or OUT/<model>.error.txt); True when the .onnx was written."""
    import tempfile
    name, style = model.rsplit("_", 1)
    path = os.path.join(out, model + ".onnx")
    err = os.path.join(out, model + ".error.txt")
    for p in (path, err):
        if os.path.exists(p):
            os.remove(p)
    tmp = tempfile.mkdtemp(dir=out, prefix=".tmp-")
    try:
        # the exporters' progress lines to stderr: stdout is for the cache path
        with contextlib.redirect_stdout(sys.stderr):
            (make_ort if style == "ort" else make_qat)(name, path + ".part", tmp)
        os.replace(path + ".part", path)
        write_input(out, model)
        return True
    except Exception as e:  # the producer's own failure is a result, recorded
        msg = "%s: %s" % (type(e).__name__, (str(e).strip().splitlines() or [""])[0])
        with open(err, "w") as f:
            f.write(traceback.format_exc() + "\n" + msg + "\n")
        print("edge_cnns.py: %s failed: %s" % (model, msg), file=sys.stderr)
        return False
    finally:
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
        if os.path.exists(path + ".part"):
            os.remove(path + ".part")


def cache_key(seed):
    h = hashlib.sha256()
    for p in (os.path.abspath(__file__), os.path.join(ROOT, "tools", "peer-requirements.txt")):
        with open(p, "rb") as f:
            h.update(f.read())
    h.update(("%d" % seed).encode())
    return h.hexdigest()[:16]


def main():
    global SEED
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="write the models into this directory")
    ap.add_argument("--cache", help="write them into CACHE/<key>/ unless already there; print that directory")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--only", default="", help="comma-separated model names (<network>_<style>)")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        for m in MODELS:
            n, s = m.rsplit("_", 1)
            how = "quantize_static QDQ" if s == "ort" else "PT2E QAT (X86InductorQuantizer)"
            print("%-24s %s, %s" % (m, NETS[n], how))
        return 0
    names = [n for n in (a.only.split(",") if a.only else MODELS) if n]
    for n in names:
        if n not in MODELS:
            print("edge_cnns.py: unknown model %r (--list)" % n, file=sys.stderr)
            return 1
    if bool(a.out) == bool(a.cache):
        print("edge_cnns.py: give one of --out DIR or --cache DIR", file=sys.stderr)
        return 1
    SEED = a.seed
    import torch
    torch.set_num_threads(1)
    out = os.path.abspath(a.out or os.path.join(a.cache, cache_key(a.seed)))
    os.makedirs(out, exist_ok=True)
    model_cache.fill("edge_cnns.py", out, names, lambda n: make(n, out), bool(a.cache),
                     lambda n: os.path.exists(os.path.join(out, n + ".error.txt")))
    if a.cache:
        print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
