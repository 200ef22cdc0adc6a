// MLIR import (lib/mlir/import.c): quant.qcast/dcast and tosa.conv2d/clamp become qdqc IR.
// NHWC activations get transposes to NCHW; the OHWI constant weights are permuted to OIHW at
// import (the quantize/dequantize rebuilt around the permuted constant), and the clamp moves
// before the layout transpose, so the default pipeline makes one qconv with the clamp folded.
// RUN: qdqc %s --emit=ir --passes=dce | FileCheck %s
// CHECK-LABEL: graph @net(%arg0: f32[1,8,8,3]) -> f32[1,8,8,4]
// CHECK:      quantize %arg0, scale=0.05, zp=-3 : i8[1,8,8,3]
// CHECK:      [[X:%[^ ]+]] = transpose {{.*}}perm=[0, 3, 1, 2] : f32[1,3,8,8]
// CHECK-NEXT: [[W:%[^ ]+]] = const dense<f32[4,3,3,3],
// CHECK-NEXT: [[WQ:%[^ ]+]] = quantize [[W]], axis=0, scale=[0.1, 0.2, 0.3, 0.4], zp=[0, 0, 0, 0], range=[-127, 127] : i8[4,3,3,3]
// CHECK-NEXT: [[WD:%[^ ]+]] = dequantize [[WQ]], axis=0,
// CHECK-NEXT: [[C:%[^ ]+]] = conv [[X]], [[WD]], {{.*}}pads=[1, 1, 1, 1], strides=[1, 1], dilations=[1, 1], group=1 : f32[1,4,8,8]
// CHECK-NEXT: [[R:%[^ ]+]] = clip [[C]], min=0.0, max=6.0 : f32[1,4,8,8]
// CHECK-NEXT: transpose [[R]], perm=[0, 2, 3, 1] : f32[1,8,8,4]
// CHECK-NEXT: quantize {{.*}}scale=0.025, zp=0 : u8[1,8,8,4]
// CHECK-NOT:  transpose
// RUN: qdqc %s -o - --emit=ir | FileCheck %s --check-prefix=PIPE
// PIPE:       qconv {{.*}}group=1, clamp=[0, 240] : u8[1,4,8,8]{scale=0.025, zp=0}
// PIPE-NEXT:  transpose {{.*}}perm=[0, 2, 3, 1] : u8[1,8,8,4]{scale=0.025, zp=0}
// PIPE-NOT:   conv
// PIPE-NOT:   clip
func.func @net(%arg0: tensor<1x8x8x3xf32>) -> tensor<1x8x8x4xf32> {
  %q = quant.qcast %arg0 : tensor<1x8x8x3xf32> to tensor<1x8x8x3x!quant.uniform<i8:f32, 0.05:-3>>
  %d = quant.dcast %q : tensor<1x8x8x3x!quant.uniform<i8:f32, 0.05:-3>> to tensor<1x8x8x3xf32>
  %w = "tosa.const"() {values = dense<1.0> : tensor<4x3x3x3xf32>} : () -> tensor<4x3x3x3xf32>
  %wq = quant.qcast %w : tensor<4x3x3x3xf32> to tensor<4x3x3x3x!quant.uniform<i8<-127:127>:f32:0, {0.1, 0.2, 0.3, 0.4}>>
  %wd = quant.dcast %wq : tensor<4x3x3x3x!quant.uniform<i8<-127:127>:f32:0, {0.1, 0.2, 0.3, 0.4}>> to tensor<4x3x3x3xf32>
  %b = "tosa.const"() {values = dense<0.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %c = tosa.conv2d %d, %wd, %b, %zp, %zp {acc_type = f32, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8x4xf32>
  %r = tosa.clamp %c {min_val = 0.0 : f32, max_val = 6.0 : f32} : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  %rq = quant.qcast %r : tensor<1x8x8x4xf32> to tensor<1x8x8x4x!quant.uniform<u8:f32, 0.025:0>>
  %rd = quant.dcast %rq : tensor<1x8x8x4x!quant.uniform<u8:f32, 0.025:0>> to tensor<1x8x8x4xf32>
  return %rd : tensor<1x8x8x4xf32>
}
