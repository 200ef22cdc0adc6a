"""compare_cnn_check.py DIR: the checks of compare-cnn.test on the JSON that qdqc compare wrote into DIR."""
import json
import os
import sys

d = sys.argv[1]
base, kf, bad = (json.load(open(os.path.join(d, n + ".json"))) for n in ("base", "kf", "bad"))
t = base["tensors"]
print("matched %d of %d" % (sum(x["float_tensor"] is not None for x in t), len(t)))
print("fused away: " + " ".join(x["float_tensor"] for x in t if not x["compiled"]))
print("relu ranges start at 0: " + " ".join(x["float_tensor"] for x in t
                                             if x["float_tensor"] in ("r1", "r2", "r3") and x["covered"][0] == 0))
print("float -> QDQ above 30 dB:", all(x["float_to_qdq"]["sqnr_db"] > 30 for x in t))
qc = [x["qdq_to_compiled"] for x in t if x["qdq_to_compiled"]]
print("QDQ -> compiled exact on every tensor: %s (%d compared)" % (
    all(q["max_steps"] == 0 and q["sqnr_db"] is None for q in qc), len(qc)))
r1 = next(x for x in kf["tensors"] if x["float_tensor"] == "r1")
print("conv1 float: r1 float_in_compiled %s, every compiled tensor exact: %s" % (
    r1["float_in_compiled"],
    all(x["qdq_to_compiled"]["max_steps"] == 0 and x["qdq_to_compiled"]["sqnr_db"] is None
        for x in kf["tensors"] if x["qdq_to_compiled"])))
print("badly calibrated input clipped:", bad["tensors"][0]["clipped_share"] > 0.5)
