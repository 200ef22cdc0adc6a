"""batch_dynamic.py IN.onnx OUT.onnx [NAME]: the model with axis 0 of every graph input and
output made the symbolic dimension NAME (default N), intermediate shapes dropped, as
torch.onnx.export(dynamic_axes={...: {0: NAME}}) writes it. Used by the run-time batch tests
(lit e2e/dynamic-batch*.test, python-bindings/tests) and bench/run_bench.py --dynamic, which
also uses set_batch(..., value=n) for a static file of batch n."""
import sys

import onnx


def set_batch(src, dst, name="N", value=None):
    """src with axis 0 of every graph input and output (not initializers, not scalars) the
    symbol `name` (value None) or the size `value`; written to dst (a path), or returned as
    bytes when dst is None."""
    m = onnx.load(src)
    inits = {i.name for i in m.graph.initializer}
    for v in list(m.graph.input) + list(m.graph.output):
        if v.name in inits or not v.type.tensor_type.shape.dim:
            continue  # an initializer, or a scalar: no batch axis
        d = v.type.tensor_type.shape.dim[0]
        d.ClearField("dim_param")
        d.ClearField("dim_value")
        if value is None:
            d.dim_param = name
        else:
            d.dim_value = value
    del m.graph.value_info[:]
    if dst is None:
        return m.SerializeToString()
    onnx.save(m, dst)
    return None


if __name__ == "__main__":
    set_batch(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "N")
