// MLIR import of depthwise_conv2d (multiplier 1), max_pool2d, avg_pool2d, matmul and concat
// between quant.qcast/dcast: after the default pipeline every op computes in integers.
// The depthwise weights [KH, KW, C, 1] are permuted at import to [C, 1, KH, KW] with the
// per-axis quantization axis renumbered 2 -> 0 (no weight transpose or reshape is left); the
// constant (little-endian f32 hex) is channel 0's 3x3 window 0.5, 0.125, -1, 0.25, ... then channel 1's.
// RUN: qdqc %s --emit=ir --passes=dce | FileCheck %s --check-prefix=IMPORT
// IMPORT:      [[W:%[^ ]+]] = const dense<f32[2,1,3,3], 0x0000003F0000003E000080BF0000803E0000803F0000003F000000BE0000803E0000803F000080BE0000803F0000403F0000003F000000BF0000803E0000003F000080BF0000003E>
// IMPORT-NEXT: [[WQ:%[^ ]+]] = quantize [[W]], axis=0, scale=[0.0078125, 0.0078125], zp=[0, 0], range=[-127, 127] : i8[2,1,3,3]
// IMPORT-NEXT: [[WD:%[^ ]+]] = dequantize [[WQ]], axis=0,
// IMPORT-NEXT: conv %{{[^ ]+}}, [[WD]], %{{[^ ]+}}, pads=[1, 1, 1, 1], strides=[1, 1], dilations=[1, 1], group=2 : f32[1,2,4,4]
// IMPORT:      maxpool {{.*}}pads=[0, 0, 0, 0], strides=[2, 2], kernel_shape=[2, 2] : f32[1,2,2,2]
// IMPORT:      avgpool {{.*}}kernel_shape=[2, 2], count_include_pad=0 : f32[1,2,2,2]
// IMPORT:      matmul {{.*}} : f32[1,2,4]
// IMPORT:      concat {{.*}}axis=3 : f32[1,4,4,4]
// RUN: qdqc %s --emit=ir | FileCheck %s
// CHECK:     qmatmul {{.*}} : i8[1,2,4]{scale=0.01, zp=3}
// CHECK:     qconv {{.*}}group=2 : i8[1,2,4,4]{scale=0.2, zp=-1}
// CHECK:     qavgpool {{.*}} : i8[1,2,2,2]{scale=0.05, zp=0}
// CHECK:     concat {{.*}}axis=3 : i8[1,4,4,4]{scale=0.2, zp=-1}
// RUN: qdqc %s --emit=ir | FileCheck %s --check-prefix=NOFLOAT
// NOFLOAT-NOT: = conv
// NOFLOAT-NOT: = matmul
// NOFLOAT-NOT: = avgpool
// NOFLOAT:     return
// RUN: qdqc %s --report | FileCheck %s --check-prefix=REPORT
// REPORT: maxpool on int8 (moves values)
// REPORT: totals: 4 integer ops, 0 float ops
// The integer graph runs the same in the JIT and in the reference interpreter.
// RUN: rm -rf %t && qdqc run %s --random-inputs 5 --engine=ref --output-dir %t/ref
// RUN: qdqc run %s --random-inputs 5 --engine=jit --output-dir %t/jit
// RUN: %python %S/Inputs/npy_compare.py %t/ref %t/jit | FileCheck %s --check-prefix=SAME
// SAME: 5 outputs identical
func.func @ops(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<1x2x3xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x4xf32>, tensor<1x4x4x4xf32>) {
  %q = quant.qcast %arg0 : tensor<1x4x4x2xf32> to tensor<1x4x4x2x!quant.uniform<i8:f32, 0.1:2>>
  %x = quant.dcast %q : tensor<1x4x4x2x!quant.uniform<i8:f32, 0.1:2>> to tensor<1x4x4x2xf32>
  %zf = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  // depthwise 3x3, multiplier 1, weights per channel (axis 2 = C)
  %w = "tosa.const"() {values = dense<[[[[0.5], [-0.25]], [[0.125], [1.0]], [[-1.0], [0.75]]], [[[0.25], [0.5]], [[1.0], [-0.5]], [[0.5], [0.25]]], [[[-0.125], [0.5]], [[0.25], [-1.0]], [[1.0], [0.125]]]]> : tensor<3x3x2x1xf32>} : () -> tensor<3x3x2x1xf32>
  %wq = quant.qcast %w : tensor<3x3x2x1xf32> to tensor<3x3x2x1x!quant.uniform<i8<-127:127>:f32:2, {0.0078125, 0.0078125}>>
  %wd = quant.dcast %wq : tensor<3x3x2x1x!quant.uniform<i8<-127:127>:f32:2, {0.0078125, 0.0078125}>> to tensor<3x3x2x1xf32>
  %b = "tosa.const"() {values = dense<[0.1, -0.2]> : tensor<2xf32>} : () -> tensor<2xf32>
  %dw = tosa.depthwise_conv2d %x, %wd, %b, %zf, %zf {acc_type = f32, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x4x4x2xf32>, tensor<3x3x2x1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4x2xf32>
  %dwq = quant.qcast %dw : tensor<1x4x4x2xf32> to tensor<1x4x4x2x!quant.uniform<i8:f32, 0.2:-1>>
  %dwd = quant.dcast %dwq : tensor<1x4x4x2x!quant.uniform<i8:f32, 0.2:-1>> to tensor<1x4x4x2xf32>
  // pooling
  %mp = tosa.max_pool2d %x {kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32>
  %mpq = quant.qcast %mp : tensor<1x2x2x2xf32> to tensor<1x2x2x2x!quant.uniform<i8:f32, 0.1:2>>
  %mpd = quant.dcast %mpq : tensor<1x2x2x2x!quant.uniform<i8:f32, 0.1:2>> to tensor<1x2x2x2xf32>
  %ap = tosa.avg_pool2d %x, %zf, %zf {acc_type = f32, kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x4x4x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x2x2xf32>
  %apq = quant.qcast %ap : tensor<1x2x2x2xf32> to tensor<1x2x2x2x!quant.uniform<i8:f32, 0.05:0>>
  %apd = quant.dcast %apq : tensor<1x2x2x2x!quant.uniform<i8:f32, 0.05:0>> to tensor<1x2x2x2xf32>
  // matmul with a constant, per-tensor weights
  %aq = quant.qcast %arg1 : tensor<1x2x3xf32> to tensor<1x2x3x!quant.uniform<i8:f32, 0.02:0>>
  %a = quant.dcast %aq : tensor<1x2x3x!quant.uniform<i8:f32, 0.02:0>> to tensor<1x2x3xf32>
  %m = "tosa.const"() {values = dense<[[[0.5, -0.5, 0.25, 1.0], [0.125, 0.75, -1.0, 0.5], [1.0, 0.25, 0.5, -0.25]]]> : tensor<1x3x4xf32>} : () -> tensor<1x3x4xf32>
  %mq = quant.qcast %m : tensor<1x3x4xf32> to tensor<1x3x4x!quant.uniform<i8<-127:127>:f32, 0.0078125>>
  %md = quant.dcast %mq : tensor<1x3x4x!quant.uniform<i8<-127:127>:f32, 0.0078125>> to tensor<1x3x4xf32>
  %mm = tosa.matmul %a, %md, %zf, %zf : (tensor<1x2x3xf32>, tensor<1x3x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x4xf32>
  %mmq = quant.qcast %mm : tensor<1x2x4xf32> to tensor<1x2x4x!quant.uniform<i8:f32, 0.01:3>>
  %mmd = quant.dcast %mmq : tensor<1x2x4x!quant.uniform<i8:f32, 0.01:3>> to tensor<1x2x4xf32>
  // concat of the input with the depthwise result (channels), requantized to one scale
  %cat = tosa.concat %x, %dwd {axis = 3 : i32} : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x4xf32>
  %catq = quant.qcast %cat : tensor<1x4x4x4xf32> to tensor<1x4x4x4x!quant.uniform<i8:f32, 0.2:-1>>
  %catd = quant.dcast %catq : tensor<1x4x4x4x!quant.uniform<i8:f32, 0.2:-1>> to tensor<1x4x4x4xf32>
  return %dwd, %mpd, %apd, %mmd, %catd : tensor<1x4x4x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x4xf32>, tensor<1x4x4x4xf32>
}
