"""batch_dynamic.py IN.onnx OUT.onnx [NAME]: the model with axis 0 of every graph input and
output made the symbolic dimension NAME (default N), intermediate shapes dropped, as
torch.onnx.export(dynamic_axes={...: {0: NAME}}) writes it."""
import sys

import onnx

m = onnx.load(sys.argv[1])
name = sys.argv[3] if len(sys.argv) > 3 else "N"
inits = {i.name for i in m.graph.initializer}
for v in list(m.graph.input) + list(m.graph.output):
    if v.name in inits or not v.type.tensor_type.shape.dim:
        continue  # an initializer, or a scalar: no batch axis
    d = v.type.tensor_type.shape.dim[0]
    d.ClearField("dim_value")
    d.dim_param = name
del m.graph.value_info[:]
onnx.save(m, sys.argv[2])
