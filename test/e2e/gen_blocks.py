#!/usr/bin/python3
"""gen_blocks.py: writes graphs/nhwc_blocks_*.qir, convs whose im2col A exceeds 256 KiB, so the
codegen gathers A per block of GEMM rows into a stack buffer right before the GEMM of that block
(cg_nhwc_block_rows, lib/codegen/lower/qconv_nhwc.c), and whose K = C*KH*KW is padded to a
multiple of 4 with zero-point bytes (cg_nhwc_lda). Edge shapes: a partial last block, blocks
that straddle the batch boundary, 7x7 stride 2 on 3 channels (K 147 -> 148), 3x3 on 16 and 20
channels (N = 20: a tail panel), a residual add fused into a blocked conv, dilation 2 (taps
gathered one by one), i8 activations (K 45 -> 48, packed A with the sign flip), a graph output
in NCHW (staging + transpose). Deterministic; run_all.py compares each graph jit vs ref."""
import os

from gen_nhwc import G, OUT


def blocks_a():
    g = G("nhwc_blocks_a", (2, 3, 61, 61), "u8")
    c1 = g.conv("%x", 16, 7, stride=2, pad=3, clamp=(128, 255))  # 2x31x31 = 1922 rows x 148
    c2 = g.conv(c1, 20, 3, pad=1)                                # K 144, 20 channels
    c3 = g.conv(c2, 20, 3, pad=1)
    r = g.add(c3, c2)                                            # fused into c3's epilogue
    c4 = g.conv(r, 13, 3, pad=2, dil=2)                          # dilation: per-tap copies
    return g.text([c4])


def blocks_b():
    g = G("nhwc_blocks_b", (1, 5, 80, 80), "i8")
    c1 = g.conv("%x", 24, 3, pad=1)                              # 6400 rows x 48 (K 45)
    c2 = g.conv(c1, 17, 5, stride=2, pad=2, yt="u8")             # 1600 rows x 600
    return g.text([c2])


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, f in (("nhwc_blocks_a", blocks_a), ("nhwc_blocks_b", blocks_b)):
        with open(os.path.join(OUT, name + ".qir"), "w") as fh:
            fh.write(f())


if __name__ == "__main__":
    main()
