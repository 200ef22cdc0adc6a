// tosa.rescale between quantized tensors imports as requantize: the input's scale 0.5 (from
// its !quant.uniform type) over multiplier 2^30 * 2^-31 = 0.5 gives the result scale 1.0, and
// output_zp -2 its zero point; the pipeline keeps it as an integer requantize.
// RUN: qdqc %s --emit=ir | FileCheck %s
// CHECK:      [[Q:%[^ ]+]] = quantize %arg0, scale=0.5, zp=1 : i8[1,4]{scale=0.5, zp=1}
// CHECK-NEXT: [[R:%[^ ]+]] = requantize [[Q]] : i8[1,4]{scale=1.0, zp=-2}
// CHECK-NEXT: dequantize [[R]], scale=1.0, zp=-2 : f32[1,4]
// x = -3, -0.6, 0.2, 1.7 -> q = -5, 0, 1, 4 -> (q - 1) * 0.5 rounded half to even = -3, -0, 0, 2
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.array([[-3.0, -0.6, 0.2, 1.7]], np.float32))"
// RUN: qdqc run %s --input arg0=%t/x.npy --output-dir %t/o
// RUN: %python -c "import numpy as np, glob; print(np.load(glob.glob('%t/o/*.npy')[0]).tolist())" | FileCheck %s --check-prefix=OUT
// OUT: [-3.0, 0.0, 0.0, 2.0
// Errors: an input zero point that is not the input type's; an input without quantization
// parameters (the result's scale cannot be known).
// RUN: not qdqc %S/Inputs/rescale-errors.mlir --emit=ir 2>&1 | FileCheck %s --check-prefix=ERR
// ERR: rescale-errors.mlir:8:{{[0-9]+}}: error: tosa.rescale: input_zp differs from the input type's zero point
// RUN: not qdqc %S/Inputs/rescale-noq.mlir --emit=ir 2>&1 | FileCheck %s --check-prefix=NOQ
// NOQ: rescale-noq.mlir:7:{{[0-9]+}}: error: tosa.rescale: the input must be a per-tensor !quant.uniform tensor
func.func @rq(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %q = quant.qcast %arg0 : tensor<1x4xf32> to tensor<1x4x!quant.uniform<i8:f32, 0.5:1>>
  %m = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<31> : tensor<1xi8>} : () -> tensor<1xi8>
  %izp = "tosa.const"() {values = dense<1> : tensor<1xi8>} : () -> tensor<1xi8>
  %ozp = "tosa.const"() {values = dense<-2> : tensor<1xi8>} : () -> tensor<1xi8>
  %r = tosa.rescale %q, %m, %s, %izp, %ozp {scale32 = true, rounding_mode = SINGLE_ROUND, per_channel = false, input_unsigned = false, output_unsigned = false} : (tensor<1x4x!quant.uniform<i8:f32, 0.5:1>>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x!quant.uniform<i8:f32, 1.0:-2>>
  %d = quant.dcast %r : tensor<1x4x!quant.uniform<i8:f32, 1.0:-2>> to tensor<1x4xf32>
  return %d : tensor<1x4xf32>
}
