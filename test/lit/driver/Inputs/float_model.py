"""float_model.py OUT.onnx: a float-only ONNX model (Conv + Relu, no QuantizeLinear or
DequantizeLinear), for the no-integer-op warning."""
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

w = nh.from_array(np.ones((2, 1, 3, 3), dtype=np.float32), "w")
g = h.make_graph(
    [h.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
     h.make_node("Relu", ["c"], ["y"], name="relu")],
    "float_net",
    [h.make_tensor_value_info("x", TP.FLOAT, [1, 1, 4, 4])],
    [h.make_tensor_value_info("y", TP.FLOAT, [1, 2, 4, 4])],
    initializer=[w])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], producer_name="float_model")
m.ir_version = 7
onnx.save(m, sys.argv[1])
