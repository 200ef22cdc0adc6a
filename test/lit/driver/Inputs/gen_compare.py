"""gen_compare.py DIR: a float model and its QDQ form for `qdqc compare`, with data that make
the errors exact (scales powers of two, inputs multiples of 0.25, identity weights).

  float:  x[1,8] -> MatMul(mm1, I) -> h -> Relu(relu) -> r -> MatMul(mm2, I) -> y
  QDQ:    ONNX Runtime's naming (T_QuantizeLinear_Output, T_DequantizeLinear_Output, the graph
          output's producer writes y_QuantizeLinear_Input); int8 identity weights, scale 1:
            x  i8 scale 0.25   exact on the input
            h  i8 scale 0.5    odd quarters round to even: max 0.5 steps
            r  i8 scale 0.001  deliberately 10x too small (covers [-0.128, 0.127]): clips
            y  i8 scale 0.25
  DIR/x.npy: [0.25, 0.5, 0.75, 1, -0.25, -0.5, -0.75, -1]
  DIR/map.txt: an explicit map for DIR/qdq_renamed.onnx, the QDQ graph with its tensors
  renamed (torch-style numbers), which no suffix rule matches."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
I = np.eye(8, dtype=np.float32)


def model(nodes, inits, name):
    g = h.make_graph(nodes, name, [h.make_tensor_value_info("x", TP.FLOAT, [1, 8])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [1, 8])], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], producer_name="gen_compare")
    m.ir_version = 7
    return m


f = model([h.make_node("MatMul", ["x", "w1"], ["h"], name="mm1"),
           h.make_node("Relu", ["h"], ["r"], name="relu"),
           h.make_node("MatMul", ["r", "w2"], ["y"], name="mm2")],
          [nh.from_array(I, "w1"), nh.from_array(I, "w2")], "float_net")
onnx.save(f, os.path.join(out, "float.onnx"))
# y = x: `qdqc run --random-inputs S` writes the input it generated for seed S
onnx.save(model([h.make_node("Identity", ["x"], ["y"], name="id")], [], "ident"),
          os.path.join(out, "ident.onnx"))


def qdq(t, src, dst, s):
    return [h.make_node("QuantizeLinear", [src, t + "_scale", t + "_zero_point"],
                        [t + "_QuantizeLinear_Output"], name=t + "_QuantizeLinear"),
            h.make_node("DequantizeLinear", [t + "_QuantizeLinear_Output", t + "_scale",
                                             t + "_zero_point"], [dst], name=t + "_DequantizeLinear")]


def params(t, s):
    return [nh.from_array(np.array(s, np.float32), t + "_scale"),
            nh.from_array(np.array(0, np.int8), t + "_zero_point")]


def wq(name):
    return [nh.from_array(I.astype(np.int8), name + "_quantized"),
            nh.from_array(np.array(1.0, np.float32), name + "_scale"),
            nh.from_array(np.array(0, np.int8), name + "_zero_point")]


D = "_DequantizeLinear_Output"
nodes = (qdq("x", "x", "x" + D, 0.25)
         + [h.make_node("DequantizeLinear", ["w1_quantized", "w1_scale", "w1_zero_point"], ["w1" + D],
                        name="w1_DequantizeLinear"),
            h.make_node("MatMul", ["x" + D, "w1" + D], ["h"], name="mm1")]
         + qdq("h", "h", "h" + D, 0.5)
         + [h.make_node("Relu", ["h" + D], ["r"], name="relu")]
         + qdq("r", "r", "r" + D, 0.001)
         + [h.make_node("DequantizeLinear", ["w2_quantized", "w2_scale", "w2_zero_point"], ["w2" + D],
                        name="w2_DequantizeLinear"),
            h.make_node("MatMul", ["r" + D, "w2" + D], ["y_QuantizeLinear_Input"], name="mm2")]
         + qdq("y", "y_QuantizeLinear_Input", "y", 0.25))
inits = params("x", 0.25) + params("h", 0.5) + params("r", 0.001) + params("y", 0.25) + wq("w1") + wq("w2")
q = model(nodes, inits, "qdq_net")
onnx.save(q, os.path.join(out, "qdq.onnx"))

# the same graph with numbered tensors: only --map can match them
ren = {"h": "11", "r": "12", "y_QuantizeLinear_Input": "13", "x" + D: "20", "h" + D: "21",
       "r" + D: "22", "x_QuantizeLinear_Output": "30", "h_QuantizeLinear_Output": "31",
       "r_QuantizeLinear_Output": "32", "y_QuantizeLinear_Output": "33"}
for n in q.graph.node:
    n.input[:] = [ren.get(v, v) for v in n.input]
    n.output[:] = [ren.get(v, v) for v in n.output]
onnx.save(q, os.path.join(out, "qdq_renamed.onnx"))
with open(os.path.join(out, "map.txt"), "w") as fp:
    fp.write("# float tensor, QDQ tensor (the quantize's input)\nh 11\nr 12\ny 13\n")

np.save(os.path.join(out, "x.npy"), np.array([[0.25, 0.5, 0.75, 1, -0.25, -0.5, -0.75, -1]], np.float32))
