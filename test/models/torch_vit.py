#!/usr/bin/python3
"""torch_vit.py: real PyTorch FX QAT exports of torchvision's transformers.

Run with Debian's interpreter and its torch 1.13 / torchvision 0.14:

    /usr/bin/python3 test/models/torch_vit.py --out DIR          # DIR/<model>.onnx + DIR/<model>/input.npy
    /usr/bin/python3 test/models/torch_vit.py --cache ROOT       # ROOT/<key>/..., skipped when present;
                                                                 # prints the directory
    /usr/bin/python3 test/models/torch_vit.py --list

Models (224x224x3 input, batch 1, 1000 logits, seeded random initialisation, nothing downloaded):
  vit2_qat, vit2_qat_o17  torchvision VisionTransformer(image_size=224, patch_size=16, num_layers=2,
                          num_heads=12, hidden_dim=768, mlp_dim=3072), opset 13 / opset 17
  swins1_qat              torchvision SwinTransformer with swin_t's first stage only (patch 4,
                          embed 96, depths [2], heads [3], window 7), opset 17
  swin_t_qat              torchvision swin_t, opset 17
  vitb16_qat              torchvision vit_b_16 (12 layers), opset 13 (not in the default list:
                          ~340 MB of fp32 weights; --only vitb16_qat)
Recipe, the one the PyTorch 1.13 FX docs teach: model.train(); prepare_qat_fx(model,
get_default_qat_qconfig_mapping("fbgemm", version=0), example) (version 0 = plain FakeQuantize
modules: u8 activations with reduce_range, per-channel symmetric i8 weights; the fused observer
of version 1 has no ONNX export); CALIB_BATCHES forward passes on seeded standard normal
batches; eval(), observers frozen; convert is NOT applied: the fake-quant model is exported by
torch.onnx.export. FX treats nn.MultiheadAttention as a leaf and Swin's shifted_window_attention
is an fx.wrap'ed function (ViT's _process_input is replaced by the same computation with the
image size fixed, which FX can trace: fx_patch_input), so the attention (in-projection, Q.K^T, softmax, P.V, and for ViT the
out-projection) stays float; the MLP Linears, patch embedding Conv and heads are QDQ.

Swin is built with stochastic_depth_prob=0: FX traces torchvision's stochastic_depth() in train
mode with its `if not training` branch resolved, so a traced Bernoulli would reach the export
(torch.onnx has no Bernoulli export); at inference stochastic depth is an identity anyway.

Deterministic: torch.manual_seed(seed) before each model, one intra-op thread. The cache key is
a hash of this script, the seed and the torch/torchvision versions.
"""
import argparse
import hashlib
import io
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_cache  # noqa: E402

# name: (builder, opset)
MODELS = {
    "vit2_qat": ("vit2", 13),
    "vit2_qat_o17": ("vit2", 17),
    "swins1_qat": ("swins1", 17),
    "swin_t_qat": ("swin_t", 17),
    "vitb16_qat": ("vit_b_16", 13),
}
DEFAULT = ["vit2_qat", "vit2_qat_o17", "swins1_qat", "swin_t_qat"]
CALIB_BATCHES = 3
CALIB_BATCH = 2
SIZE = 224


def have_torch():
    import importlib.util
    return bool(importlib.util.find_spec("torch") and importlib.util.find_spec("torchvision"))


def fx_patch_input(m):
    """torchvision 0.14's VisionTransformer._process_input unpacks `n, c, h, w = x.shape`, which
    FX cannot trace (a Proxy is not iterable): the same computation with the image size fixed
    (the patch embedding Conv, then reshape to [n, hidden, patches] and permute)."""
    import types

    def _process_input(self, x):
        p = self.image_size // self.patch_size
        x = self.conv_proj(x)
        x = x.reshape(x.shape[0], self.hidden_dim, p * p)
        return x.permute(0, 2, 1)
    m._process_input = types.MethodType(_process_input, m)

    # EncoderBlock unpacks `x, _ = self.self_attention(...)`: torch 1.13's Proxy.__iter__ reads
    # the caller's bytecode by f_lasti // 2, wrong on Python >= 3.11; index the tuple instead
    def _block(self, input):
        x = self.ln_1(input)
        x = self.self_attention(query=x, key=x, value=x, need_weights=False)[0]
        x = self.dropout(x)
        x = x + input
        y = self.ln_2(x)
        y = self.mlp(y)
        return x + y
    for b in m.encoder.layers:
        b.forward = types.MethodType(_block, b)
    return m


def build(kind):
    m = build_raw(kind)
    if kind.startswith("vit"):
        # torchvision zero-initialises ViT's classifier (weight and bias): logits would be all
        # zero; draw it like the other Linears so the outputs say something
        import torch
        torch.nn.init.normal_(m.heads.head.weight, std=0.02)
        torch.nn.init.normal_(m.heads.head.bias, std=0.02)
    return m


def build_raw(kind):
    import torchvision
    from torchvision.models.swin_transformer import SwinTransformer
    from torchvision.models.vision_transformer import VisionTransformer
    if kind == "vit2":
        return fx_patch_input(VisionTransformer(image_size=224, patch_size=16, num_layers=2,
                                                num_heads=12, hidden_dim=768, mlp_dim=3072))
    if kind == "vit_b_16":
        return fx_patch_input(torchvision.models.vit_b_16(weights=None))
    if kind == "swin_t":
        # swin_t's configuration (torchvision.models.swin_t fixes stochastic_depth_prob=0.2)
        return SwinTransformer(patch_size=[4, 4], embed_dim=96, depths=[2, 2, 6, 2],
                               num_heads=[3, 6, 12, 24], window_size=[7, 7], stochastic_depth_prob=0.0)
    if kind == "swins1":
        return SwinTransformer(patch_size=[4, 4], embed_dim=96, depths=[2], num_heads=[3],
                               window_size=[7, 7], stochastic_depth_prob=0.0)
    raise ValueError(kind)


def export(name, seed, out):
    import numpy as np
    import torch
    import torch.ao.quantization as tq
    from torch.ao.quantization.quantize_fx import prepare_qat_fx
    kind, opset = MODELS[name]
    torch.manual_seed(seed)
    m = build(kind)
    m.train()
    g = torch.Generator().manual_seed(seed + 1)
    example = (torch.randn(1, 3, SIZE, SIZE, generator=g),)
    qmap = tq.get_default_qat_qconfig_mapping("fbgemm", version=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = prepare_qat_fx(m, qmap, example)
    with torch.no_grad():
        for _ in range(CALIB_BATCHES):
            m(torch.randn(CALIB_BATCH, 3, SIZE, SIZE, generator=g))
    m.eval()
    m.apply(tq.disable_observer)
    x = torch.randn(1, 3, SIZE, SIZE, generator=g)
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, x, f, opset_version=opset, input_names=["input"],
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
        for n, (k, o) in MODELS.items():
            print("%-14s %-9s opset %d%s" % (n, k, o, "" if n in DEFAULT else "  (--only)"))
        return 0
    if not have_torch():
        print("torch_vit.py: SKIP: PyTorch is not installed for %s (apt-get install python3-torch "
              "python3-torchvision, or tools/setup.sh)" % sys.executable, file=sys.stderr)
        return 77
    names = [n for n in (a.only.split(",") if a.only else DEFAULT) if n]
    for n in names:
        if n not in MODELS:
            print("torch_vit.py: unknown model %r (--list)" % n, file=sys.stderr)
            return 2
    if bool(a.out) == bool(a.cache):
        print("torch_vit.py: give one of --out DIR or --cache DIR", file=sys.stderr)
        return 2
    import torch
    torch.set_num_threads(1)
    out = a.out or os.path.join(a.cache, cache_key(a.seed))
    os.makedirs(out, exist_ok=True)
    model_cache.fill("torch_vit.py", out, names, lambda n: export(n, a.seed, out), bool(a.cache))
    if a.cache:
        print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
