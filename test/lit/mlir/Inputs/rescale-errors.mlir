// tosa.rescale import errors (test/lit/mlir/import-rescale.mlir).
func.func @rq(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %q = quant.qcast %arg0 : tensor<1x4xf32> to tensor<1x4x!quant.uniform<i8:f32, 0.5:1>>
  %m = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<31> : tensor<1xi8>} : () -> tensor<1xi8>
  %izp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %ozp = "tosa.const"() {values = dense<-2> : tensor<1xi8>} : () -> tensor<1xi8>
  %r = tosa.rescale %q, %m, %s, %izp, %ozp {scale32 = true, rounding_mode = SINGLE_ROUND, per_channel = false, input_unsigned = false, output_unsigned = false} : (tensor<1x4x!quant.uniform<i8:f32, 0.5:1>>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x!quant.uniform<i8:f32, 1.0:-2>>
  %d = quant.dcast %r : tensor<1x4x!quant.uniform<i8:f32, 1.0:-2>> to tensor<1x4xf32>
  return %d : tensor<1x4xf32>
}
