// tosa.rescale of a plain i8 tensor (test/lit/mlir/import-rescale.mlir).
func.func @rq(%arg0: tensor<4xi8>) -> tensor<4xi8> {
  %m = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<31> : tensor<1xi8>} : () -> tensor<1xi8>
  %izp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %ozp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %r = tosa.rescale %arg0, %m, %s, %izp, %ozp {scale32 = true, rounding_mode = SINGLE_ROUND, per_channel = false, input_unsigned = false, output_unsigned = false} : (tensor<4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<4xi8>
  return %r : tensor<4xi8>
}
