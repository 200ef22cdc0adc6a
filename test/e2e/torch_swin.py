#!/usr/bin/python3
"""torch_swin.py: torchvision's Swin Transformer exported by torch.onnx (float, opset 17,
random weights), imported and run by qdqc.

Swin builds its shifted-window attention mask from constants with Range, Mod, ScatterND, Sub,
Equal and Where, and every export carries Dropout(ratio=0, training_mode=True): qdqc evaluates
the mask at import and makes the Dropouts identities (docs/onnx.md). Checks:
  - the model imports and no Mod, ScatterND, Trilu, Dropout, Equal or Where is left in the IR;
  - `qdqc run --engine=ref` agrees with torch's output within --atol (float tolerance: qdqc's
    LayerNorm, Softmax, Gelu and matmul orders differ from torch's);
  - `qdqc run --engine=jit` equals the reference bit for bit.
Prints one line per check and "swin: OK" or "swin: FAILED"; exit status 0 only if all pass.
The model and arrays go to --work (keep them out of git).

  torch_swin.py --qdqc build/bin/qdqc --work /tmp/swin [--model swin_t | --model tiny]

--model tiny is a 2-stage Swin (embed 32, depths [2, 2], heads [2, 4], window 7) on a 56x56
input: the same mask builder, seconds instead of a minute. Run with Debian's /usr/bin/python3
(torch 1.13, torchvision 0.14)."""
import argparse
import os
import re
import subprocess
import sys
import warnings

import numpy as np


def build(name):
    import torch
    import torchvision
    from torchvision.models.swin_transformer import SwinTransformer
    torch.manual_seed(0)
    if name == "swin_t":
        return torchvision.models.swin_t(weights=None).eval(), (1, 3, 224, 224)
    m = SwinTransformer(patch_size=[4, 4], embed_dim=32, depths=[2, 2], num_heads=[2, 4],
                        window_size=[7, 7], num_classes=10)
    return m.eval(), (1, 3, 56, 56)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qdqc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--model", default="tiny", choices=["tiny", "swin_t"])
    ap.add_argument("--atol", type=float, default=1e-4)
    a = ap.parse_args()
    import torch
    os.makedirs(a.work, exist_ok=True)
    model, shape = build(a.model)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
    path = os.path.join(a.work, a.model + ".onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, x, path, opset_version=17, input_names=["x"],
                          output_names=["y"])
        with torch.no_grad():
            y = model(x).numpy()
    import onnx
    ops = [n.op_type for n in onnx.load(path).graph.node]
    print("%s: exported, %d nodes (Mod x%d, ScatterND x%d, Dropout x%d)" % (
        a.model, len(ops), ops.count("Mod"), ops.count("ScatterND"), ops.count("Dropout")))
    xp, yp = os.path.join(a.work, "x.npy"), os.path.join(a.work, "y_torch.npy")
    np.save(xp, x.numpy())
    np.save(yp, y)
    ok = True
    ir = subprocess.run([a.qdqc, path, "--emit=ir"], capture_output=True, text=True)
    if ir.returncode != 0:
        print("import: FAILED: " + ir.stderr.strip())
        print("swin: FAILED")
        return 1
    left = sorted(set(re.findall(r"= (mod|scatter\w*|trilu|dropout|equal|where) ", ir.stdout)))
    print("import: ok, %s left" % (", ".join(left) if left else "no mask op"))
    ok &= not left
    ref_dir, jit_dir = os.path.join(a.work, "ref"), os.path.join(a.work, "jit")
    for eng, d, exp, tol in (("ref", ref_dir, yp, a.atol),
                             ("jit", jit_dir, os.path.join(ref_dir, "y.npy"), 0)):
        r = subprocess.run([a.qdqc, "run", path, "--engine=" + eng, "--input", "x=" + xp,
                            "--output-dir", d, "--expect", "y=" + exp, "--tolerance", str(tol)],
                           capture_output=True, text=True)
        line = [l for l in r.stdout.splitlines() if "expect" in l]
        what = "torch" if eng == "ref" else "ref"
        print("%s vs %s: %s" % (eng, what, line[0].strip() if line else
                                 "FAILED: " + (r.stderr.strip() or r.stdout.strip())))
        ok &= r.returncode == 0 and bool(line) and line[0].rstrip().endswith(": ok")
        if r.returncode != 0:
            break
    print("swin: " + ("OK" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
