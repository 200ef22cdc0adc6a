func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %s = tosa.sigmoid %a : (tensor<4xf32>) -> tensor<4xf32>
  %t = tosa.tanh %s : (tensor<4xf32>) -> tensor<4xf32>
  %u = tosa.sigmoid %t : (tensor<4xf32>) -> tensor<4xf32>
  return %u : tensor<4xf32>
}
