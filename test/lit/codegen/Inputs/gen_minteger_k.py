"""gen_minteger_k.py K N: a text-IR graph of dynamic_quantize -> matmul_integer with an
[K, N] int8 constant B (seeded pattern), for the GEMM prefetch test (gemm-prefetch-asm.test)."""
import sys

K, N = int(sys.argv[1]), int(sys.argv[2])
w = bytes((((i * 37 + 11) % 255) - 127) & 0xFF for i in range(K * N)).hex().upper()
print("graph @g(%%a: f32[2,%d]) -> (f32[2,%d]) {" % (K, N))
print("  %%aq, %%as, %%az = dynamic_quantize %%a : u8[2,%d], f32[], u8[]" % K)
print("  %%w = const dense<i8[%d,%d], 0x%s>" % (K, N, w))
print("  %%wz = const dense<i8[%d], [%s]>" % (N, ", ".join("0" for _ in range(N))))
print("  %%ws = const dense<f32[%d], [%s]>" % (N, ", ".join("0.5" for _ in range(N))))
print("  %%y = matmul_integer %%aq, %%w, %%az, %%wz, %%as, %%ws : f32[2,%d]" % N)
print("  return %y")
print("}")
