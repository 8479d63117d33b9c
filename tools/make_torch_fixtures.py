#!/usr/bin/env python3
"""Builds the torch.save fixtures of tests/fixtures/torch/ from the committed safetensors
fixtures of tests/fixtures/models/ (same weights, so a .bin folder must give exactly the
logprobs of its safetensors twin), with the real torch.save.

    python3 tools/make_torch_fixtures.py [--out tests/fixtures/torch]

Needs torch, safetensors and numpy (pip install torch safetensors numpy). Writes:
  gpt2_bin/           gpt2_tiny as pytorch_model.bin, lm_head.weight saved tied (one storage)
  gpt2_sharded_bin/   gpt2_tiny_sharded as two pytorch_model-0000N-of-00002.bin + index
  gpt2_deflated_bin/  gpt2_bin re-zipped with deflated members
  gpt2_f16_bin/       gpt2_tiny's weights rounded to F16
  misc/int8.pt        an int8 tensor and a transposed uint8 one (bytes in expected.json)
  llama_bf16_bin/     llama_bf16 (BF16 storages)
  llama_views_bin/    llama_gqa with views: q_proj a transposed (non-contiguous) view, k_proj and
                      v_proj slices of one storage (the second at a storage offset)
  nanogpt/ckpt.pt     gpt2_gelu's weights, head tied, as nanoGPT's train.py saves them (model_args,
                      model with _orig_mod. prefixes and Linear (out, in) weights, optimizer,
                      iter_num...); nanogpt_nobias/ the same with bias=False and no biases;
                      *_converted/ what tools/convert_nanogpt.py makes of each (the cross-check)
  bare/model.pt       llama_gqa's state dict as one file (pickle protocol 4), its config.json beside it
  bad/*.pt            refused inputs: globals os.system (posix.system), builtins.eval,
                      numpy.core.multiarray._reconstruct; a storage key not in the zip; nanoGPT files with an untied head or n_layer 0; a tensor
                      past its storage; a truncated storage; the legacy format; a dcp folder
  expected.json       per fixture tensor: shape, dtype and float64 sum, computed by torch
"""
import argparse
import collections
import io
import json
import os
import pickle
import shutil
import subprocess
import sys
import warnings
import zipfile

import numpy as np
import safetensors.torch
import torch

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "models")
CONVERT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "convert_nanogpt.py")
PWNED = "/tmp/xsa_pwned_torch_fixture"  # what the malicious pickles would create


def load_sd(name):
    src = os.path.join(MODELS, name)
    sd = {}
    for f in sorted(os.listdir(src)):
        if f.endswith(".safetensors"):
            sd.update(safetensors.torch.load_file(os.path.join(src, f)))
    return sd


def folder(out, name, src):
    d = os.path.join(out, name)
    os.makedirs(d)
    shutil.copyfile(os.path.join(MODELS, src, "config.json"), os.path.join(d, "config.json"))
    return d


def rezip(src, dst, keep=lambda n, b: b, method=zipfile.ZIP_STORED):
    """Copies the archive src to dst member by member; keep(name, bytes) -> bytes or None (drop)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", method) as zout:
        for info in zin.infolist():
            b = keep(info.filename, zin.read(info.filename))
            if b is not None:
                zout.writestr(info.filename, b, compress_type=method)


class FakeStorage:
    """A persistent id as torch.save writes it, for hand-made pickles."""

    def __init__(self, key, stype, numel):
        self.pid = ("storage", stype, key, "cpu", numel)


def torch_like_archive(path, obj, storages):
    """A zip laid out as torch.save's, its data.pkl pickled by the standard pickler (protocol 2)
    with torch's persistent ids; storages: {key: bytes}."""
    buf = io.BytesIO()
    p = pickle.Pickler(buf, protocol=2)
    p.persistent_id = lambda o: o.pid if isinstance(o, FakeStorage) else None
    p.dump(obj)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", buf.getvalue())
        z.writestr("archive/byteorder", "little")
        for k, b in storages.items():
            z.writestr("archive/data/" + k, b)
        z.writestr("archive/version", "3\n")


class Rebuild:
    def __init__(self, storage, offset, size, stride):
        self.args = (storage, offset, size, stride, False, collections.OrderedDict())

    def __reduce__(self):
        return (torch._utils._rebuild_tensor_v2, self.args)


class Evil:
    def __init__(self, fn, arg):
        self.fn, self.arg = fn, arg

    def __reduce__(self):
        return (self.fn, (self.arg,))


def record(expected, name, sd):
    expected[name] = {k: {"shape": list(v.shape), "dtype": str(v.dtype).replace("torch.", ""),
                          "sum": float(v.double().sum())} for k, v in sd.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(MODELS, "..", "torch"))
    a = ap.parse_args()
    out = os.path.abspath(a.out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    expected = {}

    sd = load_sd("gpt2_tiny")
    sd["lm_head.weight"] = sd["transformer.wte.weight"]  # tied: one storage under two names
    d = folder(out, "gpt2_bin", "gpt2_tiny")
    torch.save(sd, os.path.join(d, "pytorch_model.bin"))
    record(expected, "gpt2_bin", sd)

    d2 = folder(out, "gpt2_deflated_bin", "gpt2_tiny")
    rezip(os.path.join(d, "pytorch_model.bin"), os.path.join(d2, "pytorch_model.bin"), method=zipfile.ZIP_DEFLATED)

    sd = load_sd("gpt2_tiny_sharded")
    d = folder(out, "gpt2_sharded_bin", "gpt2_tiny_sharded")
    names = sorted(sd)
    half = len(names) // 2
    wm = {}
    for i, part in enumerate((names[:half], names[half:])):
        fn = "pytorch_model-%05d-of-00002.bin" % (i + 1)
        torch.save({k: sd[k] for k in part}, os.path.join(d, fn))
        wm.update({k: fn for k in part})
    with open(os.path.join(d, "pytorch_model.bin.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": sum(v.numel() * v.element_size() for v in sd.values())}, "weight_map": wm}, f, indent=1)
    record(expected, "gpt2_sharded_bin", sd)

    sd = {k: v.half() for k, v in load_sd("gpt2_tiny").items()}
    d = folder(out, "gpt2_f16_bin", "gpt2_tiny")
    torch.save(sd, os.path.join(d, "pytorch_model.bin"))
    record(expected, "gpt2_f16_bin", sd)

    ints = {"q": torch.tensor([-128, -3, 0, 7, 127], dtype=torch.int8),
            "u": torch.arange(6, dtype=torch.uint8).reshape(2, 3).t()}  # transposed: copied out
    os.makedirs(os.path.join(out, "misc"))
    torch.save(ints, os.path.join(out, "misc", "int8.pt"))
    expected["int8"] = {k: {"shape": list(v.shape), "dtype": str(v.dtype).replace("torch.", ""),
                            "bytes": list(v.contiguous().numpy().tobytes())} for k, v in ints.items()}

    sd = load_sd("llama_bf16")
    assert all(v.dtype == torch.bfloat16 for v in sd.values())
    d = folder(out, "llama_bf16_bin", "llama_bf16")
    torch.save(sd, os.path.join(d, "pytorch_model.bin"))
    record(expected, "llama_bf16_bin", sd)

    sd = load_sd("llama_gqa")
    views = dict(sd)
    for k in [k for k in sd if k.endswith("q_proj.weight")]:
        views[k] = sd[k].t().contiguous().t()  # same values, column-major strides
        assert not views[k].is_contiguous()
    for k in [k for k in sd if k.endswith("k_proj.weight")]:
        v = k.replace("k_proj", "v_proj")
        kv = torch.cat([sd[k], sd[v]])
        views[k], views[v] = kv[: sd[k].shape[0]], kv[sd[k].shape[0]:]  # one storage, offset
        assert views[v].storage_offset() > 0
    d = folder(out, "llama_views_bin", "llama_gqa")
    torch.save(views, os.path.join(d, "pytorch_model.bin"))
    record(expected, "llama_views_bin", views)

    # nanoGPT: gpt2_gelu's weights under nanoGPT's names, Linear (out, in), torch.compile prefix.
    src = load_sd("gpt2_gelu")
    L = 2
    model = collections.OrderedDict()
    pre = "_orig_mod."
    for k, v in src.items():
        if k.startswith("lm_head"):
            continue
        name = k if k.startswith("transformer.") else "transformer." + k
        if any(s in name for s in ("c_attn.weight", "c_proj.weight", "c_fc.weight")):
            v = v.t().contiguous()
        model[pre + name] = v
    model[pre + "lm_head.weight"] = model[pre + "transformer.wte.weight"]
    cfg = json.load(open(os.path.join(MODELS, "gpt2_gelu", "config.json")))
    margs = dict(n_layer=cfg["n_layer"], n_head=cfg["n_head"], n_embd=cfg["n_embd"], block_size=cfg["n_positions"],
                 bias=True, vocab_size=cfg["vocab_size"], dropout=0.0)
    assert margs["n_layer"] == L
    params = [torch.nn.Parameter(v.clone()) for k, v in model.items() if "wte" in k or "ln_f" in k]
    opt = torch.optim.AdamW(params, lr=1e-3, betas=(0.9, 0.95))
    sum(p.sum() for p in params).backward()
    opt.step()
    ck = {"model": model, "optimizer": opt.state_dict(), "model_args": margs, "iter_num": 5,
          "best_val_loss": torch.tensor(3.25), "config": {"dataset": "openwebtext", "learning_rate": 6e-4, "compile": True}}
    nobias = collections.OrderedDict((k, v) for k, v in model.items() if not k.endswith(".bias"))
    ck_nb = dict(ck, model=nobias, model_args=dict(margs, bias=False))
    for name, c in (("nanogpt", ck), ("nanogpt_nobias", ck_nb)):
        os.makedirs(os.path.join(out, name))
        torch.save(c, os.path.join(out, name, "ckpt.pt"))
        record(expected, name, c["model"])
        # the cross-check: the converter's folder must give the direct load's logprobs
        subprocess.run([sys.executable, CONVERT, os.path.join(out, name, "ckpt.pt"), os.path.join(out, name + "_converted")], check=True)

    d = os.path.join(out, "bare")  # a state dict file with its config.json beside it
    os.makedirs(d)
    shutil.copyfile(os.path.join(MODELS, "llama_gqa", "config.json"), os.path.join(d, "config.json"))
    torch.save(load_sd("llama_gqa"), os.path.join(d, "model.pt"), pickle_protocol=4)  # FRAME, MEMOIZE, STACK_GLOBAL

    bad = os.path.join(out, "bad")
    os.makedirs(bad)
    torch.save({"w": torch.zeros(2), "x": Evil(os.system, "touch " + PWNED)}, os.path.join(bad, "os_system.pt"))
    torch.save({"x": Evil(eval, "__import__('os').system('touch %s')" % PWNED)}, os.path.join(bad, "builtins_eval.pt"))
    torch.save({"x": np.zeros(3, dtype=np.float32)}, os.path.join(bad, "numpy_array.pt"))
    s = FakeStorage("0", torch.FloatStorage, 4)
    torch_like_archive(os.path.join(bad, "past_storage.pt"), {"w": Rebuild(s, 2, (4,), (1,))}, {"0": bytes(16)})
    torch_like_archive(os.path.join(bad, "missing_key.pt"), {"w": Rebuild(FakeStorage("7", torch.FloatStorage, 4), 0, (4,), (1,))}, {"0": bytes(16)})
    torch_like_archive(os.path.join(bad, "short_storage.pt"), {"w": Rebuild(s, 0, (4,), (1,))}, {"0": bytes(12)})
    torch_like_archive(os.path.join(bad, "good_small.pt"), {"w": Rebuild(s, 1, (2,), (1,))},
                       {"0": np.arange(4, dtype=np.float32).tobytes()})
    with warnings.catch_warnings():  # zipfile warns about the duplicate, which is the point
        warnings.simplefilter("ignore")
        rezip(os.path.join(bad, "good_small.pt"), os.path.join(bad, "duplicate_member.pt"))
        with zipfile.ZipFile(os.path.join(bad, "duplicate_member.pt"), "a") as z:
            z.writestr("archive/data/0", bytes(16))
    # numpy.core.multiarray._reconstruct spelled as numpy < 2 writes it
    with zipfile.ZipFile(os.path.join(bad, "numpy_reconstruct.pt"), "w") as z:
        z.writestr("archive/data.pkl", b"\x80\x02}q\x00X\x01\x00\x00\x00xq\x01cnumpy.core.multiarray\n_reconstruct\nq\x02"
                   b"cnumpy\nndarray\nq\x03K\x00\x85q\x04C\x01bq\x05\x87q\x06Rq\x07s.")
        z.writestr("archive/byteorder", "little")
    torch.save({"w": torch.ones(3)}, os.path.join(bad, "legacy.pt"), _use_new_zipfile_serialization=False)
    tiny = dict(n_layer=1, n_head=1, n_embd=4, block_size=4, bias=True, vocab_size=8, dropout=0.0)
    g = torch.Generator().manual_seed(3)
    shapes = {"transformer.wte.weight": (8, 4), "transformer.wpe.weight": (4, 4), "transformer.ln_f.weight": (4,),
              "transformer.ln_f.bias": (4,), "lm_head.weight": (8, 4)}
    for n, shp in (("ln_1", (4,)), ("ln_2", (4,)), ("attn.c_attn", (12, 4)), ("attn.c_proj", (4, 4)),
                   ("mlp.c_fc", (16, 4)), ("mlp.c_proj", (4, 16))):
        shapes["transformer.h.0.%s.weight" % n] = shp
        shapes["transformer.h.0.%s.bias" % n] = (shp[0],)
    untied = {k: torch.randn(shp, generator=g) for k, shp in shapes.items()}  # lm_head != wte
    torch.save({"model_args": tiny, "model": untied}, os.path.join(bad, "nanogpt_untied.pt"))
    torch.save({"model_args": dict(tiny, n_layer=0), "model": untied}, os.path.join(bad, "nanogpt_args.pt"))
    dcp = os.path.join(bad, "dcp")
    try:
        import torch.distributed.checkpoint as dist_cp
        dist_cp.save({"w": torch.ones(3)}, checkpoint_id=dcp, no_dist=True)
    except Exception as e:  # no distributed support in this build: the layout by hand
        print("dcp save unavailable (%s): writing .metadata by hand" % e)
        os.makedirs(dcp, exist_ok=True)
        open(os.path.join(dcp, ".metadata"), "wb").write(b"\x80\x04.")
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(r, n)) for r, _, fs in os.walk(out) for n in fs)
    print("wrote %s (%d bytes)" % (out, total))


if __name__ == "__main__":
    main()
