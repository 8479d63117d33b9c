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
             MUDD gates, 2026-04-22 MuddFormer's dense connections).
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
            "mnanogpt/xsa_gated", "mnanogpt/sign_trick", "mnanogpt/mudd_0611", "mnanogpt/mudd_0524", "mnanogpt/gates", "mnanogpt/gates_v1",
            "mnanogpt/muddformer_0422", "mnanogpt/bad"):
    d = os.path.join(proot, sub)
    side_path = os.path.join(d, "xsa_eval.json")
    side = open(side_path, "rb").read() if os.path.exists(side_path) else \
        b'{"FAMILY": "modded-nanogpt"}' if sub.startswith("mnanogpt") else b"{}"
    for fn in sorted(os.listdir(d)):
        if fn.endswith(".pt") or fn.endswith(".ptz"):
            with open(os.path.join(out, "pgolf", sub.replace("/", "_") + "_" + fn), "wb") as f:
                f.write(struct.pack("<I", len(side)) + side + open(os.path.join(d, fn), "rb").read())

# tasks/: one byte choosing the task (registry order), then a file of it: the canonical rows of
# tests/fixtures/data/<task>, the original files of tests/fixtures/data/original/<dir> (with the
# labels file after "\n--LST--\n"), the first lines only (inputs stay small).
TASKS = ["arc_easy", "arc_challenge", "boolq", "hellaswag", "lambada_openai", "openbookqa", "piqa", "social_iqa",
         "winogrande"]
ORIG = {"arc_easy": ("arc_easy", "ARC-Easy-Test.jsonl", None), "arc_challenge": ("arc_challenge", "ARC-Challenge-Test.jsonl", None),
        "boolq": ("boolq_superglue", "val.jsonl", None), "hellaswag": ("hellaswag", "hellaswag_val.jsonl", None),
        "lambada_openai": ("lambada_openai", "lambada_test.jsonl", None), "openbookqa": ("openbookqa", "test.jsonl", None),
        "piqa": ("piqa", "valid.jsonl", "valid-labels.lst"), "social_iqa": ("siqa", "dev.jsonl", "dev-labels.lst"),
        "winogrande": ("winogrande", "dev.jsonl", "dev-labels.lst")}
droot = os.path.join(os.path.dirname(__file__), "..", "fixtures", "data")
os.makedirs(os.path.join(out, "tasks"), exist_ok=True)
def head(path, n=3):
    return b"".join(open(path, "rb").readlines()[:n])
for i, t in enumerate(TASKS):
    d = os.path.join(droot, t)
    if os.path.isdir(d):
        for fn in sorted(os.listdir(d)):
            open(os.path.join(out, "tasks", t + "_" + fn), "wb").write(bytes([i]) + head(os.path.join(d, fn)))
    sub, main, labels = ORIG[t]
    p = os.path.join(droot, "original", sub, main)
    if os.path.exists(p):
        body = head(p)
        if labels:
            body += b"\n--LST--\n" + head(os.path.join(droot, "original", sub, labels))
        open(os.path.join(out, "tasks", "orig_" + t), "wb").write(bytes([i]) + body)
open(os.path.join(out, "tasks", "orig_boolq_google"), "wb").write(bytes([2 | 0x80]) + head(os.path.join(droot, "original", "boolq", "dev.jsonl")))
open(os.path.join(out, "tasks", "orig_hellaswag_bz2"), "wb").write(
    bytes([3]) + open(os.path.join(droot, "original", "hellaswag_text", "hellaswag_val_full.txt.bz2"), "rb").read())

# reqstore/: a store of three records after the harness's header (flag 1), the same shared (3),
# one with a torn tail, and a whole file with another scope's header (flag 0).
import math
def fnv(b):
    h = 2166136261
    for x in b:
        h = ((h ^ x) * 16777619) & 0xffffffff
    return h
def rec(k, lp, g):
    r = bytes([k]) * 16 + struct.pack("<d", lp) + bytes([g, 0, 0, 0])
    return r + struct.pack("<I", fnv(r))
os.makedirs(os.path.join(out, "reqstore"), exist_ok=True)
recs = rec(1, -0.5, 1) + rec(2, -3.25, 0) + rec(3, -1e-9, 1)
open(os.path.join(out, "reqstore", "three"), "wb").write(b"\x01" + recs)
open(os.path.join(out, "reqstore", "three_shared"), "wb").write(b"\x03" + recs)
open(os.path.join(out, "reqstore", "torn"), "wb").write(b"\x01" + recs + rec(4, -2.0, 0)[:20])
h = b"XSAREQS1" + b"f" * 64
open(os.path.join(out, "reqstore", "other_scope"), "wb").write(b"\x00" + h + struct.pack("<I", fnv(h)) + b"\0" * 4 + recs)
