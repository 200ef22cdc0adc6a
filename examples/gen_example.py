#!/usr/bin/python3
"""Write the bundled example model and its input:

    examples/mobilenetv2_qdq.onnx   MobileNetV2 1.0 (torchvision's topology: 1x3x224x224 -> 1000
                                    logits, 17 inverted residual blocks, 52 convs) with random
                                    weights, ONNX Runtime quantize_static layout: uint8
                                    activations with zero points, int8 per-channel weights
                                    (3.5 M), int32 bias, Relu6 folded into Q; 3.9 MB
    examples/input.npy              a deterministic float32 input of shape (1, 3, 224, 224)

Run with Debian's python (python3-onnx, python3-numpy):  /usr/bin/python3 examples/gen_example.py
The model comes from test/models/gen_fixtures.py (example_model); output is byte-identical on rerun.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "test", "models"))
import gen_fixtures  # noqa: E402


def main():
    model, x = gen_fixtures.example_model()
    gen_fixtures.save(model, os.path.join(HERE, "mobilenetv2_qdq.onnx"))
    with open(os.path.join(HERE, "input.npy"), "wb") as f:
        np.save(f, np.ascontiguousarray(x.astype(np.float32)), allow_pickle=False)
    print("wrote examples/mobilenetv2_qdq.onnx and examples/input.npy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
