#!/usr/bin/env python3
"""Damaged parameter-golf artifacts for tests/test_pgolf_errors.sh (bad-input paths only; the
references of good ones come from tools/pgolf_reference.py). Source: the committed random
checkpoint tests/fixtures/pgolf/xsa_record/final_model.pt, quantized per row as
int8_clean_per_row_v1 / int6 lay it out, then one thing broken per file.

  python tools/make_pgolf_bad_fixtures.py   # writes tests/fixtures/pgolf_bad/
"""
import io
import json
import os
import shutil
import zlib

import torch
import zstandard

SRC = "tests/fixtures/pgolf/xsa_record"
OUT = "tests/fixtures/pgolf_bad"


def int8_v1(sd, fmt="int8_clean_per_row_v1"):
    q, s, dt, pt = {}, {}, {}, {}
    for k, v in sd.items():
        if v.ndim == 2:
            t = v.float()
            sc = (t.abs().amax(dim=1) / 127).clamp_min(1 / 127)
            q[k] = torch.clamp(torch.round(t / sc[:, None]), -127, 127).to(torch.int8)
            s[k] = sc.to(torch.float16)
            dt[k] = str(v.dtype).removeprefix("torch.")
        else:
            pt[k] = v
    return {"__quant_format__": fmt, "quantized": q, "scales": s, "dtypes": dt, "passthrough": pt}


def int6(sd):
    w, m = {}, {}
    for k, v in sd.items():
        if v.ndim == 2:
            t = v.float()
            sc = (t.abs().amax(dim=1) / 31).clamp_min(1 / 31).to(torch.float16)
            w[k + ".q"] = torch.clamp(torch.round(t / sc.float()[:, None]), -32, 31).to(torch.int8)
            w[k + ".scale"] = sc
            m[k] = {"type": "int6"}
        else:
            w[k] = v
            m[k] = "passthrough"
    return {"w": w, "m": m}


def save(obj, name, compress=zlib.compress):
    buf = io.BytesIO()
    torch.save(obj, buf)
    open(os.path.join(OUT, name), "wb").write(compress(buf.getvalue()))


def main():
    os.makedirs(OUT, exist_ok=True)
    shutil.copy(os.path.join(SRC, "xsa_eval.json"), os.path.join(OUT, "xsa_eval.json"))
    sd = torch.load(os.path.join(SRC, "final_model.pt"), weights_only=True)
    save(int8_v1(sd, "int4_magic_v9"), "unknown_format.int8.ptz")
    o = int8_v1(sd)
    o["scales"]["blocks.1.attn.c_q.weight"][3] = 0
    save(o, "scale_zero.int8.ptz")
    o = int8_v1(sd)
    o["scales"]["blocks.0.mlp.fc.weight"][0] = float("nan")
    save(o, "scale_nan.int8.ptz")
    o = int6(sd)
    o["w"]["blocks.2.mlp.proj.weight.q"][1, 2] = 40
    save(o, "out_of_range.int6.ptz", zstandard.ZstdCompressor(level=3).compress)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
