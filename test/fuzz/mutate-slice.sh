#!/bin/sh
# mutate-slice.sh QDQC_FUZZ [ARGS...]: the CI slice of qdqc-fuzz's mutation mode
# (docs/testing.md, "Mutation mode"): 2400 byte and protobuf-field mutants of 12 fixture
# models (QDQ and QOperator styles, conv, conv-transpose, gemm, matmul, add, concat, pools,
# softmax, sigmoid, TensorRT style), 2 jobs; each accepted mutant runs on the reference and
# the JIT, bit for bit. Any crash, hang, JIT != reference, one engine failing alone or an
# error without a message fails it (exit 1). The accepted mutants are then judged by
# onnx.checker (check_accepted.py, python3-onnx required): one the checker rejects that qdqc
# accepted without a warning (a silent acceptance) fails it too. Extra ARGS go to qdqc-fuzz
# (e.g. --seed 7, --allow-known, --count 500). The mutants that fail are written to
# $MUTATE_OUT (default: mutate-failures/ in the current directory), the accepted ones to
# $MUTATE_OUT/accepted.
set -eu
fuzz=$1
shift
src=$(cd "$(dirname "$0")/../.." && pwd)
f=$src/test/models/fixtures
out=${MUTATE_OUT:-mutate-failures}
py=${PYTHON:-/usr/bin/python3}
mkdir -p "$out"
rm -rf "$out/accepted"
if ! "$py" -c 'import onnx' 2>/dev/null; then
  echo "mutate-slice.sh: $py cannot import onnx (python3-onnx), needed to judge accepted mutants" >&2
  exit 1
fi
status=0
"$fuzz" --mutate --count 2400 --seed 1 --jobs 2 --timeout 120 --max-fail 50 --out "$out" \
  --save-accepted "$out/accepted" "$@" \
  "$f/conv3x3_pc_u8.onnx" "$f/torch_conv3x3_pc_i8.onnx" "$f/maxpool_u8.onnx" \
  "$f/gemm_pc_i8.onnx" "$f/add_u8.onnx" "$f/concat_i8.onnx" "$f/torch_convtranspose_pc_i8.onnx" \
  "$f/style_ort_qs.onnx" "$f/style_trt.onnx" "$f/matmul_pc_u8.onnx" "$f/softmax_i8.onnx" \
  "$f/torch_sigmoid_u8.onnx" || status=$?
"$py" "$src/test/fuzz/check_accepted.py" -q "$out/accepted" || status=1
exit $status
