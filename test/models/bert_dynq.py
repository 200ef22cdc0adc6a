#!/usr/bin/env python3
"""bert_dynq.py: a whole BERT-base as ONNX Runtime's quantize_dynamic writes it, deterministic.

Run with the peer environment's interpreter (transformers, torch 2.x, ONNX Runtime 1.30):

    .peer-venv/bin/python test/models/bert_dynq.py --out DIR     # DIR/<model>.onnx + DIR/<model>/*.npy
    .peer-venv/bin/python test/models/bert_dynq.py --cache ROOT  # ROOT/<key>/..., skipped when present;
                                                                 # prints the directory
    .peer-venv/bin/python test/models/bert_dynq.py --list

Models (nothing downloaded: transformers' BertModel built from a BertConfig, random weights
drawn by torch.manual_seed(SEED)):
  bert_base_dynq  BertConfig() (bert-base-uncased's shape: 12 layers, hidden 768, 12 heads, FFN
                  3072, vocabulary 30522), eager attention, sequence 128, batch 1
  bert_small_dynq the same with 2 layers, hidden 256, 4 heads, FFN 1024 (the quick check)
Graph inputs input_ids and attention_mask (int64 [1, SEQ]); token_type_ids (zeros) and the
position ids are constants of the export. Outputs last_hidden_state [1, SEQ, H] and
pooler_output [1, H]. torch.onnx.export (TorchScript exporter, opset 17, constant folding) writes
the float model; onnxruntime.quantization.quantize_dynamic(weight_type=QInt8, its defaults
otherwise) quantizes it: each linear becomes DynamicQuantizeLinear -> MatMulInteger -> Cast ->
Mul -> Add; the attention products, Softmax, GELU (Erf), LayerNorm and embeddings stay f32.

Inputs written beside each model (DIR/<model>/input_ids.npy, attention_mask.npy and
inputs.npz with both): token ids from numpy's default_rng(SEED) below the vocabulary, the
first id 101 and the last unmasked one 102 (BERT's [CLS] / [SEP]), the last SEQ/8 positions
padded (mask 0, id 0), so the mask path computes something.

Deterministic: one intra-op thread, seeded; the cache key is a hash of this script, the seed and
the torch / transformers / onnxruntime versions.
"""
import argparse
import hashlib
import io
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_cache  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

SEQ = 128
SEED = 0
# name: BertConfig arguments (hidden, layers, heads, ffn)
MODELS = {
    "bert_base_dynq": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                           intermediate_size=3072),
    "bert_small_dynq": dict(hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                            intermediate_size=1024),
}
DEFAULT = ["bert_base_dynq", "bert_small_dynq"]


def inputs(vocab, seed):
    import numpy as np
    rng = np.random.default_rng(seed)
    ids = rng.integers(1000, vocab, size=(1, SEQ), dtype=np.int64)
    mask = np.ones((1, SEQ), dtype=np.int64)
    pad = SEQ // 8
    mask[0, SEQ - pad:] = 0
    ids[0, SEQ - pad:] = 0
    ids[0, 0] = 101
    ids[0, SEQ - pad - 1] = 102
    return ids, mask


def export_float(name, seed):
    """the float ONNX model's bytes"""
    import torch
    from transformers import BertConfig, BertModel
    torch.manual_seed(seed)
    cfg = BertConfig(attn_implementation="eager", **MODELS[name])
    bert = BertModel(cfg).eval()

    class Wrap(torch.nn.Module):
        def __init__(self, b):
            super().__init__()
            self.b = b
            self.register_buffer("pos", torch.arange(SEQ, dtype=torch.int64)[None])
            self.register_buffer("tt", torch.zeros((1, SEQ), dtype=torch.int64))

        def forward(self, input_ids, attention_mask):
            o = self.b(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=self.tt,
                       position_ids=self.pos)
            return o.last_hidden_state, o.pooler_output

    ids, mask = inputs(cfg.vocab_size, seed)
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Wrap(bert).eval(), (torch.from_numpy(ids), torch.from_numpy(mask)), f,
                          input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state", "pooler_output"], opset_version=17,
                          do_constant_folding=True, dynamo=False)
    return f.getvalue(), cfg.vocab_size


def export(name, seed, out):
    import numpy as np
    from onnxruntime.quantization import QuantType, quantize_dynamic
    data, vocab = export_float(name, seed)
    fp = os.path.join(out, name + ".float.onnx")
    with open(fp, "wb") as fh:
        fh.write(data)
    tmp = os.path.join(out, name + ".onnx.tmp")
    quantize_dynamic(fp, tmp, weight_type=QuantType.QInt8)
    os.replace(tmp, os.path.join(out, name + ".onnx"))
    os.remove(fp)
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    ids, mask = inputs(vocab, seed)
    np.save(os.path.join(d, "input_ids.npy"), ids)
    np.save(os.path.join(d, "attention_mask.npy"), mask)
    np.savez(os.path.join(d, "inputs.npz"), input_ids=ids, attention_mask=mask)


def cache_key(seed):
    import onnxruntime
    import torch
    import transformers
    h = hashlib.sha256()
    with open(os.path.abspath(__file__), "rb") as f:
        h.update(f.read())
    h.update(("%d %s %s %s" % (seed, torch.__version__, transformers.__version__,
                               onnxruntime.__version__)).encode())
    return h.hexdigest()[:16]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="write the models into this directory")
    ap.add_argument("--cache", help="write them into CACHE/<key>/ unless already there; print that directory")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        for n, c in MODELS.items():
            print("%-16s layers %d hidden %d heads %d ffn %d" % (n, c["num_hidden_layers"], c["hidden_size"],
                                                                c["num_attention_heads"], c["intermediate_size"]))
        return 0
    names = [n for n in (a.only.split(",") if a.only else DEFAULT) if n]
    for n in names:
        if n not in MODELS:
            print("bert_dynq.py: unknown model %r (--list)" % n, file=sys.stderr)
            return 2
    if bool(a.out) == bool(a.cache):
        print("bert_dynq.py: give one of --out DIR or --cache DIR", file=sys.stderr)
        return 2
    import torch
    torch.set_num_threads(1)
    out = a.out or os.path.join(a.cache, cache_key(a.seed))
    os.makedirs(out, exist_ok=True)
    model_cache.fill("bert_dynq.py", out, names, lambda n: export(n, a.seed, out), bool(a.cache))
    if a.cache:
        print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
