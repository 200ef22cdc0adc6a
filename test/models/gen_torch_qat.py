#!/usr/bin/python3
"""gen_torch_qat.py [OUT_DIR]: a small real PyTorch QAT export (Debian's torch 1.13).

test/models/torch_qat/conv_bn_fc.onnx: QuantStub -> Conv2d+BatchNorm2d+ReLU (fused for QAT) ->
depthwise Conv2d+ReLU -> AdaptiveAvgPool2d(1) -> flatten -> Linear -> DeQuantStub, prepared with
torch.ao.quantization.prepare_qat (u8 per-tensor activations, i8 per-channel symmetric weights;
FakeQuantize, since torch.onnx cannot export the fused observer of the default QAT qconfig),
run on 4 seeded random batches, then exported by torch.onnx.export (opset 13). What such an
export leaves around the integer ops is what real models have: the QAT conv-bn's
Div -> Add -> BatchNormalization in float, a per-channel DequantizeLinear of the Linear's
weight, a float global average pool and a float Gemm. Deterministic (seeded, no timestamps)."""
import os
import sys

import torch
import torch.ao.quantization as tq
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.dq = tq.QuantStub(), tq.DeQuantStub()
        self.conv, self.bn, self.relu = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU()
        self.conv2, self.relu2 = nn.Conv2d(8, 8, 3, padding=1, groups=8), nn.ReLU()
        self.pool, self.fc = nn.AdaptiveAvgPool2d(1), nn.Linear(8, 5)

    def forward(self, x):
        x = self.relu(self.bn(self.conv(self.q(x))))
        x = self.pool(self.relu2(self.conv2(x)))
        return self.dq(self.fc(torch.flatten(x, 1)))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "torch_qat")
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    m = Net().train()
    m.qconfig = tq.QConfig(
        activation=tq.FakeQuantize.with_args(observer=tq.MovingAverageMinMaxObserver,
                                             quant_min=0, quant_max=255, reduce_range=False),
        weight=tq.FakeQuantize.with_args(observer=tq.MovingAveragePerChannelMinMaxObserver,
                                         quant_min=-128, quant_max=127, dtype=torch.qint8,
                                         qscheme=torch.per_channel_symmetric))
    tq.fuse_modules_qat(m, [["conv", "bn", "relu"], ["conv2", "relu2"]], inplace=True)
    tq.prepare_qat(m, inplace=True)
    with torch.no_grad():
        for _ in range(4):
            m(torch.randn(2, 3, 16, 16))
    m.eval()
    m.apply(tq.disable_observer)
    torch.onnx.export(m, torch.randn(1, 3, 16, 16), os.path.join(out, "conv_bn_fc.onnx"),
                      opset_version=13, input_names=["x"], output_names=["y"])


if __name__ == "__main__":
    main()
