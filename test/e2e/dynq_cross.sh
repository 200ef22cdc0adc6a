#!/bin/sh
# dynq_cross.sh QDQC: dynamic quantization on the cross targets (ctest e2e.dynq-cross): the
# quantize_dynamic-style models of dynq_models.py and the matmul_integer / dynamic_quantize
# graphs (test/e2e/graphs/matmul_integer.qir, test/lit/codegen/minteger-ir.qir) and the int8-
# activation weight-only matmuls (test/e2e/graphs/wmatmul_i8acts.qir) compiled for
# aarch64-linux-gnu (i8mm, dotprod, neon, cortex-a76) and run under qemu-aarch64, and for the
# x86-64 AVX-VNNI path, by test/e2e/cross.py (every configuration and variant: --all), outputs
# compared byte for byte with the reference interpreter. Exit 0 iff both pass; 77 (skip) when
# cross.py skips both (no qemu-user / cross toolchain / AVX-VNNI-capable host).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
/usr/bin/python3 "$here/dynq_models.py" --write "$tmp" || exit 1
models="$tmp/lin_s8_pt.onnx $tmp/lin_u8_pc.onnx $tmp/qkv_shared.onnx $tmp/mlp.onnx $tmp/bert_layer.onnx $here/graphs/matmul_integer.qir $here/graphs/wmatmul_i8acts.qir $root/test/lit/codegen/minteger-ir.qir"
skipped=0
for arch in aarch64 avxvnni; do
    # shellcheck disable=SC2086
    /usr/bin/python3 "$here/cross.py" "$1" --arch "$arch" --all -j 2 $models
    rc=$?
    if [ "$rc" = 77 ]; then
        skipped=$((skipped + 1))
    elif [ "$rc" != 0 ]; then
        exit 1
    fi
done
[ "$skipped" = 2 ] && exit 77
exit 0
