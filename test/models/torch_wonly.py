#!/usr/bin/python3
"""torch_wonly.py: 4- and 6-bit weight-only fake-quant exports from PyTorch 1.13.

    /usr/bin/python3 test/models/torch_wonly.py --out DIR      # DIR/<model>.onnx + DIR/<model>/input.npy
    /usr/bin/python3 test/models/torch_wonly.py --cache ROOT   # ROOT/<key>/..., skipped when present;
                                                               # prints the directory

Models (float activations, no activation fake quantizer; every weight behind a per-channel
symmetric torch.ao.quantization.FakeQuantize with a PerChannelMinMaxObserver on axis 0):
  cnn_w4, cnn_w6: Conv 3x3 (3 -> 16, pad 1) -> ReLU -> depthwise Conv 3x3 stride 2 (16 groups)
      -> ReLU -> Conv 1x1 (16 -> 24) -> ReLU -> global average pool -> flatten -> Linear
      (24 -> 64) -> ReLU -> Linear (64 -> 10); input 1x3x16x16;
  mlp_w4, mlp_w6: Linear (48 -> 96) -> ReLU -> Linear (96 -> 96) -> ReLU -> Linear (96 -> 16);
      input 4x48 (a batch of rows);
w4: quant_min -8, quant_max 7 (int4 values in int8 storage); w6: -32, 31.

torch 1.13's ONNX exporter refuses (quant_min, quant_max) other than (0, 255), (-128, 127) and
(0, 127) ("ONNX allows only ..."), so this script registers a symbolic for
fake_quantize_per_channel_affine at opset 13 that writes the encoding torch itself uses for its
one narrow range (0, 127): QuantizeLinear -> Clip(quant_min, quant_max as int8) ->
DequantizeLinear (the same nodes torch 1.13 writes; only the bounds differ). Everything else is
torch.onnx.export at opset 13 with constant folding.

Recipe: torch.manual_seed(seed) before each model, one intra-op thread, CALIB forward passes on
seeded standard normal inputs with the observers on (they set the scales), then eval(), observers
off, export with a seeded input (saved as input.npy). Two runs write byte-identical files; the
cache key is a hash of this script, the seed and the torch version."""
import argparse
import hashlib
import io
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_cache  # noqa: E402

MODELS = {"cnn_w4": ("cnn", -8, 7), "cnn_w6": ("cnn", -32, 31),
          "mlp_w4": ("mlp", -8, 7), "mlp_w6": ("mlp", -32, 31)}
CALIB = 4


def have_torch():
    import importlib.util
    return bool(importlib.util.find_spec("torch"))


def register_symbolic():
    """fake_quantize_per_channel_affine at opset 13 with any signed (quant_min, quant_max):
    Q -> Clip -> DQ, torch's own encoding of (0, 127)."""
    import torch
    from torch.onnx import symbolic_helper

    @symbolic_helper.parse_args("v", "v", "v", "i", "i", "i")
    def fq_per_channel(g, inputs, scale, zero_point, axis, quant_min=-128, quant_max=127):
        zero_point = g.op("Cast", zero_point, to_i=3)  # INT8
        q = g.op("QuantizeLinear", inputs, scale, zero_point, axis_i=axis)
        if (quant_min, quant_max) != (-128, 127):
            q = g.op("Clip", q, g.op("Constant", value_t=torch.tensor(quant_min, dtype=torch.int8)),
                     g.op("Constant", value_t=torch.tensor(quant_max, dtype=torch.int8)))
        return g.op("DequantizeLinear", q, scale, zero_point, axis_i=axis)

    torch.onnx.register_custom_op_symbolic("::fake_quantize_per_channel_affine", fq_per_channel, 13)


def build(kind, qmin, qmax):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.ao.quantization as tq

    def fq():
        return tq.FakeQuantize(observer=tq.PerChannelMinMaxObserver, quant_min=qmin, quant_max=qmax,
                               dtype=torch.qint8, qscheme=torch.per_channel_symmetric, ch_axis=0)

    class WConv(nn.Conv2d):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            self.wfq = fq()

        def forward(self, x):
            return self._conv_forward(x, self.wfq(self.weight), self.bias)

    class WLinear(nn.Linear):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            self.wfq = fq()

        def forward(self, x):
            return F.linear(x, self.wfq(self.weight), self.bias)

    class Cnn(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = WConv(3, 16, 3, padding=1)
            self.dw = WConv(16, 16, 3, stride=2, padding=1, groups=16)
            self.pw = WConv(16, 24, 1)
            self.fc1 = WLinear(24, 64)
            self.fc2 = WLinear(64, 10)

        def forward(self, x):
            x = F.relu(self.pw(F.relu(self.dw(F.relu(self.c1(x))))))
            x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
            return self.fc2(F.relu(self.fc1(x)))

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1, self.l2, self.l3 = WLinear(48, 96), WLinear(96, 96), WLinear(96, 16)

        def forward(self, x):
            return self.l3(F.relu(self.l2(F.relu(self.l1(x)))))

    return (Cnn(), (1, 3, 16, 16)) if kind == "cnn" else (Mlp(), (4, 48))


def export(name, seed, out):
    import numpy as np
    import torch
    torch.manual_seed(seed)
    kind, qmin, qmax = MODELS[name]
    m, shape = build(kind, qmin, qmax)
    g = torch.Generator().manual_seed(seed + 1)
    m.train()
    with torch.no_grad():
        for _ in range(CALIB):
            m(torch.randn(*shape, generator=g))
    m.eval()
    import torch.ao.quantization as tq
    m.apply(tq.disable_observer)
    x = torch.randn(*shape, generator=g)
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, x, f, opset_version=13, input_names=["input"], output_names=["y"],
                          do_constant_folding=True)
    with open(os.path.join(out, name + ".onnx"), "wb") as fh:
        fh.write(f.getvalue())
    os.makedirs(os.path.join(out, name), exist_ok=True)
    np.save(os.path.join(out, name, "input.npy"), x.numpy().astype(np.float32))


def cache_key(seed):
    import torch
    h = hashlib.sha256()
    with open(os.path.abspath(__file__), "rb") as f:
        h.update(f.read())
    h.update(("%d %s" % (seed, torch.__version__)).encode())
    return h.hexdigest()[:16]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="write the models into this directory")
    ap.add_argument("--cache", help="write them into CACHE/<key>/ unless already there; print that directory")
    ap.add_argument("--seed", type=int, default=3)
    a = ap.parse_args()
    if not have_torch():
        print("torch_wonly.py: SKIP: PyTorch is not installed for %s (apt-get install python3-torch)"
              % sys.executable, file=sys.stderr)
        return 77
    if bool(a.out) == bool(a.cache):
        print("torch_wonly.py: give one of --out DIR or --cache DIR", file=sys.stderr)
        return 2
    import torch
    torch.set_num_threads(1)
    register_symbolic()
    out = a.out or os.path.join(a.cache, cache_key(a.seed))
    os.makedirs(out, exist_ok=True)
    model_cache.fill("torch_wonly.py", out, MODELS, lambda n: export(n, a.seed, out), bool(a.cache))
    if a.cache:
        print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
