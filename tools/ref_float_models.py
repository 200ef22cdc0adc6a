#!/usr/bin/python3
"""ref_float_models.py DIR: small float ONNX graphs whose conv, conv_transpose, matmul, gemm and
pooling results are graph outputs, with random float weights (seeded). With
tools/ref-identity.py --extra DIR/*.onnx they check the reference's float paths byte for byte.
The *_cancel models make the f32 result depend on the order of each f64 sum (cancelling()), so a
change of that order shows; in a quantized model or a plain f32 conv the final rounding to f32
(or the quantization) hides it almost always. Needs numpy and onnx."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


BIG = 2.0 ** 35


def cancelling(x, axis, inits, nodes):
    """x' = concat(1, x, 1) along axis, the ones a constant: the caller weighs the first by +BIG and
    the last by -BIG, so each f64 sum passes through +-BIG and cancels it at the end. The rounding
    of the terms added in between (f64 ulp 2^-17 at 2^35) then shows in the f32 result, which makes
    the result depend on the order of the sum."""
    shape = list(x)
    shape[axis] = 1
    inits.append(numpy_helper.from_array(np.ones(shape, np.float32), 'ones'))
    nodes.append(helper.make_node('Concat', ['ones', 'x', 'ones'], ['xc'], axis=axis))
    return 'xc'


def conv(name, x, wshape, group=1, bias=True, cancel=False, **attrs):
    rng = np.random.default_rng(sum(map(ord, name)))
    w = rng.standard_normal(wshape).astype(np.float32)
    inits, nodes, xin = [], [], 'x'
    if cancel:  # group 1: two more input channels, weighed +BIG and -BIG at tap 0
        xin = cancelling(x, 1, inits, nodes)
        big = np.zeros([wshape[0], 1] + wshape[2:], np.float32)
        big.reshape(wshape[0], -1)[:, 0] = BIG
        w = np.concatenate([big, w, -big], axis=1)
    inits.append(numpy_helper.from_array(w, 'w'))
    ins = [xin, 'w']
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(wshape[0]).astype(np.float32), 'b'))
        ins.append('b')
    nodes.append(helper.make_node('Conv', ins, ['y'], group=group, **attrs))
    return name, nodes, x, inits


def model(name, nodes, xshape, inits, op_inputs=None):
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info('x', TensorProto.FLOAT, xshape)],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', OPSET)])
    return name, m


def cases():
    rng = np.random.default_rng(7)
    out = []
    for name, nodes, x, inits in [
        conv('conv3x3', [1, 5, 9, 11], [6, 5, 3, 3], pads=[1, 1, 1, 1]),
        conv('conv3x3_s2_nobias', [2, 4, 10, 9], [3, 4, 3, 3], bias=False, strides=[2, 2], pads=[1, 1, 1, 1]),
        conv('conv5x5_dil_asym', [1, 3, 13, 12], [4, 3, 5, 5], dilations=[2, 1], pads=[3, 0, 1, 4]),
        conv('conv1x1', [1, 16, 7, 7], [8, 16, 1, 1]),
        conv('conv1x1_s2', [1, 8, 9, 9], [4, 8, 1, 1], strides=[2, 2]),
        conv('conv_grp', [1, 6, 8, 8], [9, 2, 3, 3], group=3, pads=[1, 1, 1, 1]),
        conv('conv_dw', [1, 7, 12, 10], [7, 1, 3, 3], group=7, pads=[1, 1, 1, 1], strides=[2, 1]),
        conv('conv_dw_mult', [1, 4, 8, 8], [8, 1, 5, 5], group=4, pads=[2, 2, 2, 2]),
        conv('conv_bigpad', [1, 2, 3, 3], [3, 2, 3, 3], pads=[4, 3, 2, 5], strides=[2, 3]),
        conv('conv1d', [1, 4, 20], [5, 4, 3], pads=[2, 1], strides=[2]),
        conv('conv3d', [1, 3, 5, 6, 7], [4, 3, 3, 2, 3], pads=[1, 0, 1, 1, 1, 1]),
        conv('conv7x7_s2', [1, 3, 32, 32], [8, 3, 7, 7], strides=[2, 2], pads=[3, 3, 3, 3]),
        conv('conv3x3_cancel', [1, 5, 9, 11], [6, 5, 3, 3], cancel=True, pads=[1, 1, 1, 1]),
        conv('conv3x3_s2_cancel', [1, 4, 10, 9], [3, 4, 3, 3], bias=False, cancel=True, strides=[2, 2]),
        conv('conv1x1_cancel', [1, 16, 7, 7], [8, 16, 1, 1], cancel=True),
        conv('conv5x5_dil_cancel', [1, 3, 13, 12], [4, 3, 5, 5], cancel=True, dilations=[2, 1],
             pads=[3, 0, 1, 4]),
        conv('conv3d_cancel', [1, 3, 5, 6, 7], [4, 3, 3, 2, 3], cancel=True, pads=[1, 0, 1, 1, 1, 1]),
    ]:
        out.append(model(name, nodes, x, inits))
    for name, a, b in [('matmul2d', [13, 17], [17, 9]), ('matmul_bcast', [2, 3, 5, 17], [3, 17, 6]),
                       ('matmul_vec', [17], [17, 5]), ('matmul_bvec', [4, 17], [17])]:
        w = numpy_helper.from_array(rng.standard_normal(b).astype(np.float32), 'w')
        out.append(model(name, [helper.make_node('MatMul', ['x', 'w'], ['y'])], a, [w]))
    for name, a, b in [('matmul2d_cancel', [13, 17], [17, 9]), ('matmul_bcast_cancel', [2, 3, 5, 17], [3, 17, 6])]:
        inits, nodes = [], []
        xin = cancelling(a, len(a) - 1, inits, nodes)
        w = rng.standard_normal(b).astype(np.float32)
        big = np.full(b[:-2] + [1, b[-1]], BIG, np.float32)
        inits.append(numpy_helper.from_array(np.concatenate([big, w, -big], axis=-2), 'w'))
        nodes.append(helper.make_node('MatMul', [xin, 'w'], ['y']))
        out.append(model(name, nodes, a, inits))
    for name, ta, tb, cshape in [('gemm', 0, 0, [9]), ('gemm_tb', 0, 1, [7, 9]), ('gemm_ta', 1, 0, None)]:
        a = [17, 7] if ta else [7, 17]
        b = [9, 17] if tb else [17, 9]
        inits = [numpy_helper.from_array(rng.standard_normal(b).astype(np.float32), 'w')]
        ins = ['x', 'w']
        if cshape:
            inits.append(numpy_helper.from_array(rng.standard_normal(cshape).astype(np.float32), 'c'))
            ins.append('c')
        n = helper.make_node('Gemm', ins, ['y'], transA=ta, transB=tb, alpha=0.7, beta=1.3)
        out.append(model(name, [n], a, inits))
    w = numpy_helper.from_array(rng.standard_normal([4, 3, 3, 3]).astype(np.float32), 'w')
    out.append(model('convt', [helper.make_node('ConvTranspose', ['x', 'w'], ['y'], strides=[2, 2],
                                                pads=[1, 1, 0, 0])], [1, 4, 5, 6], [w]))
    for name, op, attrs, x in [
        ('avgpool3', 'AveragePool', dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), [1, 3, 11, 10]),
        ('avgpool3_incl', 'AveragePool', dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1), [1, 3, 9, 9]),
        ('avgpool_ceil', 'AveragePool', dict(kernel_shape=[2, 3], strides=[2, 2], ceil_mode=1), [1, 2, 9, 10]),
        ('avgpool1d', 'AveragePool', dict(kernel_shape=[4], strides=[3], pads=[1, 2]), [2, 3, 17]),
        ('maxpool3', 'MaxPool', dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), [1, 3, 11, 10]),
        ('maxpool_dil', 'MaxPool', dict(kernel_shape=[2, 2], dilations=[2, 2], ceil_mode=1), [1, 2, 9, 9]),
        ('maxpool3d', 'MaxPool', dict(kernel_shape=[2, 2, 2], strides=[2, 2, 2]), [1, 2, 5, 6, 7]),
        ('gap', 'GlobalAveragePool', {}, [2, 5, 7, 9]),
        ('gap1d', 'GlobalAveragePool', {}, [1, 5, 33]),
    ]:
        out.append(model(name, [helper.make_node(op, ['x'], ['y'], **attrs)], x, []))
    # maxpool with indices (second output)
    g = helper.make_graph([helper.make_node('MaxPool', ['x'], ['y', 'i'], kernel_shape=[3, 3], strides=[2, 2],
                                            pads=[1, 1, 1, 1], storage_order=1)], 'maxpool_idx',
                          [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 3, 8, 7])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, None),
                           helper.make_tensor_value_info('i', TensorProto.INT64, None)])
    out.append(('maxpool_idx', helper.make_model(g, opset_imports=[helper.make_opsetid('', OPSET)])))
    return out


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    for name, m in cases():
        onnx.save(m, os.path.join(d, f'float_{name}.onnx'))
    print(f'ref_float_models: {len(cases())} models in {d}')


if __name__ == '__main__':
    main()
