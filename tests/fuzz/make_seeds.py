#!/usr/bin/env python3
"""Seeds for the fuzz harnesses that need a composed input (tests/fuzz/run.sh calls this).

checkpoint/: u32 LE length of config.json, config.json, then model.safetensors, per fixture.
llama2c/:    tiny llama2.c legacy checkpoints (shared and unshared classifier).
unpickle/:   the data.pkl of every torch.save fixture (tests/fixtures/torch).
pgolf/:      u32 LE length of xsa_eval.json, xsa_eval.json, then a parameter-golf artifact
             (tests/fixtures/pgolf, tests/fixtures/pgolf_bad, tests/fixtures/pgolf_brotli/tiny; the tiny_*
             fixtures of the 2026-03-31 recurrence and the 2026-04-27 gates fit -max_len; the
             per-group PGRP containers of pgolf/pgrp_0427 and tests/fixtures/pgolf_pgrp_bad; the
             2026-03-21 non-record's RecurrentGPT, .pt and its ZSTD-tagged export), and
             modded-nanogpt state_step files under their sidecars (tests/fixtures/mnanogpt: the
             gated-XSA record, the sign trick, MUDD with its paired layers in the saved code, the
             MUDD gates).
"""
import os
import struct
import sys
import zipfile

out = sys.argv[1]
root = os.path.join(os.path.dirname(__file__), "..", "fixtures", "models")
os.makedirs(os.path.join(out, "checkpoint"), exist_ok=True)
for name in sorted(os.listdir(root)):
    d = os.path.join(root, name)
    st = os.path.join(d, "model.safetensors")
    if not os.path.exists(st):
        continue
    cfg = open(os.path.join(d, "config.json"), "rb").read()
    with open(os.path.join(out, "checkpoint", name), "wb") as f:
        f.write(struct.pack("<I", len(cfg)) + cfg + open(st, "rb").read())

os.makedirs(os.path.join(out, "llama2c"), exist_ok=True)
for vocab in (16, -16):
    C, F, L, H, KV, V, T = 8, 16, 1, 2, 1, abs(vocab), 4
    hd = C // H
    n = V * C + L * (C + C * C + 2 * KV * hd * C + C * C + C + 3 * F * C) + C + 2 * T * (hd // 2)
    if vocab < 0:
        n += V * C
    body = struct.pack("<7i", C, F, L, H, KV, vocab, T) + struct.pack("<%df" % n, *[0.01 * (i % 13) for i in range(n)])
    open(os.path.join(out, "llama2c", "tiny%d.bin" % (vocab < 0)), "wb").write(body)

os.makedirs(os.path.join(out, "unpickle"), exist_ok=True)
troot = os.path.join(os.path.dirname(__file__), "..", "fixtures", "torch")
for d, _, files in os.walk(troot):
    for fn in sorted(files):
        p = os.path.join(d, fn)
        if not zipfile.is_zipfile(p):
            continue
        with zipfile.ZipFile(p) as z:
            for m in z.namelist():
                if m.endswith("/data.pkl"):
                    with open(os.path.join(out, "unpickle", os.path.relpath(p, troot).replace("/", "_")), "wb") as f:
                        f.write(z.read(m))

os.makedirs(os.path.join(out, "pgolf"), exist_ok=True)
proot = os.path.join(os.path.dirname(__file__), "..", "fixtures")
for sub in ("pgolf/xsa_record", "pgolf/xsa_record_quant", "pgolf/xsa_all_0325", "pgolf_bad", "pgolf_brotli/tiny",
            "pgolf/tiny_recur_0331", "pgolf/tiny_gates_0427", "pgolf/tiny_split_0404", "pgolf/pgrp_0427", "pgolf_pgrp_bad",
            "pgolf/recurrent_0321_rank0", "pgolf/recurrent_0321_quant",
            "mnanogpt/xsa_gated", "mnanogpt/sign_trick", "mnanogpt/mudd_0611", "mnanogpt/gates", "mnanogpt/bad"):
    d = os.path.join(proot, sub)
    side_path = os.path.join(d, "xsa_eval.json")
    side = open(side_path, "rb").read() if os.path.exists(side_path) else \
        b'{"FAMILY": "modded-nanogpt"}' if sub.startswith("mnanogpt") else b"{}"
    for fn in sorted(os.listdir(d)):
        if fn.endswith(".pt") or fn.endswith(".ptz"):
            with open(os.path.join(out, "pgolf", sub.replace("/", "_") + "_" + fn), "wb") as f:
                f.write(struct.pack("<I", len(side)) + side + open(os.path.join(d, fn), "rb").read())
