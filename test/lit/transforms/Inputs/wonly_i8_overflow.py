"""wonly_i8_overflow.py OUT: a weight-only matmul whose int8-activation accumulator could leave
int32 (weight-only-i8acts-overflow.test): u8 weights 255, zero point 0, K = 66400:
127 * 255 * 66400 = 2150347200 > 2^31 - 1."""
import sys

K = 66400
with open(sys.argv[1], "w") as f:
    f.write("graph @overflow(%%x: f32[1,%d]) -> f32[1,1] {\n" % K)
    f.write("  %%w = const dense<u8[%d,1], 0x%s>\n" % (K, "FF" * K))
    f.write("  %%wd = dequantize %%w, scale=0.5, zp=0 : f32[%d,1]\n" % K)
    f.write("  %y = matmul %x, %wd : f32[1,1]\n  return %y\n}\n")
