func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %s = tosa.sigmoid %a : (tensor<4xf32>) -> tensor<4xf32>
  %t = tosa.nosuchop %s : (tensor<4xf32>) -> tensor<4xf32>
  return %t : tensor<4xf32>
}
