// A zero point that does not fit 32 bits (2^32 + 5): it used to wrap to 5 (zero-point-range.test).
func.func @net(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %q = quant.qcast %arg0 : tensor<1x4xf32> to tensor<1x4x!quant.uniform<i8:f32, 0.05:4294967301>>
  %d = quant.dcast %q : tensor<1x4x!quant.uniform<i8:f32, 0.05:4294967301>> to tensor<1x4xf32>
  return %d : tensor<1x4xf32>
}
