#!/usr/bin/python3
"""torch_qat.py: real PyTorch QAT exports of torchvision's quantizable CNNs.

Run with Debian's interpreter and its torch 1.13 / torchvision 0.14 (python3-torch,
python3-torchvision; tools/setup.sh installs them):

    /usr/bin/python3 test/models/torch_qat.py --out DIR          # DIR/<model>.onnx + DIR/<model>/input.npy
    /usr/bin/python3 test/models/torch_qat.py --cache ROOT       # ROOT/<key>/..., skipped when present;
                                                                 # prints the directory
    /usr/bin/python3 test/models/torch_qat.py --list

Models (224x224x3 input, batch 1, 1000 logits, random initialisation: no weights are
downloaded): resnet18_qat, mobilenetv2_qat, mobilenetv3s_qat, shufflenetv2_qat, from
torchvision.models.quantization. Recipe, the one torchvision's QAT reference script uses:
model.train(); model.fuse_model(is_qat=True); qconfig get_default_qat_qconfig('x86', version=0)
(identical to 'fbgemm' in 1.13: u8 activations with reduce_range, i.e. [0, 127], per-channel
symmetric i8 weights; version 0 = FakeQuantize modules: the fused moving-average observer of
version 1 has no ONNX export); prepare_qat; CALIB_BATCHES forward passes on seeded standard
normal batches (observers and BatchNorm statistics move); then eval(), observers frozen, and
torch.onnx.export at opset 13 (the fake quantizers become QuantizeLinear -> [Clip(0, 127) on the
u8 value, torch's encoding of reduce_range] -> DequantizeLinear, weights stay fp32 behind Q->DQ,
QAT Conv-BN modules export as Conv -> Div -> BatchNormalization).

Deterministic: torch.manual_seed(seed) before each model, one intra-op thread (calibration
statistics do not depend on the machine's thread count); two runs write byte-identical files
(checked with sha256sum on torch 1.13.1+dfsg-4, test/models/README.md). The cache key is a hash
of this script, the seed and the torch/torchvision versions.
"""
import argparse
import hashlib
import io
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_cache  # noqa: E402

MODELS = {
    "resnet18_qat": "resnet18",
    "mobilenetv2_qat": "mobilenet_v2",
    "mobilenetv3s_qat": "mobilenet_v3 (small configuration)",  # hardswish, SE blocks (hardsigmoid . mul)
    "shufflenetv2_qat": "shufflenet_v2_x1_0",  # channel shuffle, chunk, concat
}
CALIB_BATCHES = 4
CALIB_BATCH = 2
SIZE = 224


def have_torch():
    import importlib.util
    return bool(importlib.util.find_spec("torch") and importlib.util.find_spec("torchvision"))


def export(name, seed, out):
    import numpy as np
    import torch
    import torch.ao.quantization as tq
    import torchvision.models.quantization as tvq
    torch.manual_seed(seed)
    if name == "mobilenetv3s_qat":
        # torchvision 0.14 ships only the large quantizable MobileNetV3; the small one is the
        # same quantizable classes with the small configuration
        from torchvision.models.mobilenetv3 import _mobilenet_v3_conf
        from torchvision.models.quantization.mobilenetv3 import _mobilenet_v3_model
        setting, last = _mobilenet_v3_conf("mobilenet_v3_small")
        m = _mobilenet_v3_model(setting, last, None, False, False)
    else:
        m = getattr(tvq, MODELS[name])(weights=None, quantize=False)
    m.train()
    m.fuse_model(is_qat=True)
    m.qconfig = tq.get_default_qat_qconfig("x86", version=0)
    tq.prepare_qat(m, inplace=True)
    g = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for _ in range(CALIB_BATCHES):
            m(torch.randn(CALIB_BATCH, 3, SIZE, SIZE, generator=g))
    m.eval()
    m.apply(tq.disable_observer)
    x = torch.randn(1, 3, SIZE, SIZE, generator=g)
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, x, f, opset_version=13, input_names=["input"],
                          output_names=["logits"], do_constant_folding=True)
    with open(os.path.join(out, name + ".onnx"), "wb") as fh:
        fh.write(f.getvalue())
    os.makedirs(os.path.join(out, name), exist_ok=True)
    np.save(os.path.join(out, name, "input.npy"), x.numpy().astype(np.float32))


def cache_key(seed):
    import torch
    import torchvision
    h = hashlib.sha256()
    with open(os.path.abspath(__file__), "rb") as f:
        h.update(f.read())
    h.update(("%d %s %s" % (seed, torch.__version__, torchvision.__version__)).encode())
    return h.hexdigest()[:16]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="write the models into this directory")
    ap.add_argument("--cache", help="write them into CACHE/<key>/ unless already there; print that directory")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        for n, f in MODELS.items():
            print("%-18s torchvision.models.quantization.%s" % (n, f))
        return 0
    if not have_torch():
        print("torch_qat.py: SKIP: PyTorch is not installed for %s (apt-get install python3-torch "
              "python3-torchvision, or tools/setup.sh)" % sys.executable, file=sys.stderr)
        return 77
    names = [n for n in (a.only.split(",") if a.only else MODELS) if n]
    for n in names:
        if n not in MODELS:
            print("torch_qat.py: unknown model %r (--list)" % n, file=sys.stderr)
            return 2
    if bool(a.out) == bool(a.cache):
        print("torch_qat.py: give one of --out DIR or --cache DIR", file=sys.stderr)
        return 2
    import torch
    torch.set_num_threads(1)
    out = a.out or os.path.join(a.cache, cache_key(a.seed))
    os.makedirs(out, exist_ok=True)
    model_cache.fill("torch_qat.py", out, names, lambda n: export(n, a.seed, out), bool(a.cache))
    if a.cache:
        print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
