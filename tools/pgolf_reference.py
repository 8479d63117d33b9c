#!/usr/bin/env python3
"""Per-token log-probabilities of a parameter-golf checkpoint, computed by its authors' code.

Imports the training script of the fork the checkpoint came from (a path you give: fetch the
fork, never copy its code here), builds its GPT class with the architecture of an xsa_eval.json
(the family's hyperparameter names), loads the artifact with the script's own dequantization
(dequantize_state_dict_int8 for final_model.int8.ptz, dequantize_mixed_int6 for .int6.ptz,
torch.load for final_model.pt), and scores fixed texts in float32 on the CPU. The output is the
reference format of tests/test_model_exact.c ({"model", "arch", "cases": [{"xsa", "tokens",
"logprobs", "greedy"}]}).

  python tools/pgolf_reference.py --script FORK/train_gpt.py --artifact final_model.int8.ptz \
      --arch xsa_eval.json --tokenizer fineweb_1024_bpe.model --out reference.json

  --rms-norm-dump OUT: instead, F.rms_norm(x, (d,)) without eps (what the family's RMSNorm calls)
  on rows of small and ordinary scale, so a test can pin the eps PyTorch picks for float32.

  --make-random DIR: instead, writes a random-weight checkpoint of the script's architecture in
  all three formats (final_model.pt, final_model.int8.ptz with the int8 quantizer of --int8-script,
  final_model.int6.ptz with the script's own int6 quantizer when it has one) and its references.

  --gated-xsa (with --make-random): the XSA layers get modded-nanogpt's gated XSA instead
  (records/track_1_short/2026-05-07_XSAGatedLayers: y - tanh(alpha) (y.v / max(|v|^2, 1e-8)) v,
  its train_gpt.py's four lines, per query head; alpha saved as blocks.N.attn.xsa_alpha).

Flash-attention imports are served by torch's SDPA (the same math); nothing else is replaced.
A fused `mlp.gate_up.weight` (an artifact of DigitalSword99's fork written by a script version it
never published) is split [gate; up] into the gate/fc pair its published script has.
"""
import argparse
import copy
import importlib.util
import inspect
import io
import json
import math
import os
import sys
import types
import zlib

import torch
import torch.nn.functional as F

TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "In 1998, the company announced that it would expand its operations to Europe and Asia, hiring more than two thousand new employees.",
    "Question: What is the boiling point of water at sea level? Answer: 100 degrees Celsius.",
    "She opened the door slowly, looked around the empty room, and wondered where everyone had gone.",
]

ARCH_TO_KWARG = {
    "VOCAB_SIZE": "vocab_size", "NUM_LAYERS": "num_layers", "MODEL_DIM": "model_dim", "NUM_HEADS": "num_heads",
    "NUM_KV_HEADS": "num_kv_heads", "MLP_MULT": "mlp_mult", "TIE_EMBEDDINGS": "tie_embeddings",
    "LOGIT_SOFTCAP": "logit_softcap", "ROPE_BASE": "rope_base", "QK_GAIN_INIT": "qk_gain_init",
    "SHARED_CYCLE_LEN": "shared_cycle_len", "NUM_RECURRENCE_PASSES": "num_recurrence_passes",
    "USE_SWIGLU": "use_swiglu", "BIGRAM_VOCAB_SIZE": "bigram_vocab_size", "BIGRAM_DIM": "bigram_dim",
    "XSA_LAST_N": "xsa_last_n",
}
DEFAULTS = {"vocab_size": 1024, "num_layers": 9, "model_dim": 512, "num_heads": 8, "num_kv_heads": 4, "mlp_mult": 2,
            "tie_embeddings": True, "tied_embed_init_std": 0.005, "logit_softcap": 30.0, "rope_base": 10000.0,
            "qk_gain_init": 1.5, "mtp_num_heads": 0, "xsa_last_n": 0, "bigram_vocab_size": 0}


def sdpa_flash(q, k, v, causal=True, **_):
    """flash_attn_func's (B, T, H, D) interface over torch SDPA, GQA as flash-attention groups heads."""
    y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=causal,
                                       enable_gqa=k.size(2) != q.size(2))
    return y.transpose(1, 2)


def import_script(path):
    for name in ("flash_attn_interface", "flash_attn"):
        fake = types.ModuleType(name)
        fake.flash_attn_func = sdpa_flash
        fake.flash_attn_varlen_func = None
        sys.modules.setdefault(name, fake)
    spec = importlib.util.spec_from_file_location("pgolf_train_gpt", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def build_model(mod, arch):
    kw = dict(DEFAULTS)
    for k, v in arch.items():
        if k in ARCH_TO_KWARG:
            kw[ARCH_TO_KWARG[k]] = v
    params = inspect.signature(mod.GPT.__init__).parameters
    kw = {k: v for k, v in kw.items() if k in params}
    for k in ("tie_embeddings", "use_swiglu"):
        if k in kw:
            kw[k] = bool(kw[k])
    return mod.GPT(**kw)


def export_dtypes(mod, model):
    """The model as main() exports it: bfloat16, CastedLinear and low-dim parameters back to fp32."""
    model = model.bfloat16()
    for m in model.modules():
        if isinstance(m, mod.CastedLinear):
            m.float()
    mod.restore_low_dim_params_to_fp32(model)
    return model


def decompress(blob):
    if blob[:4] == b"\x28\xb5\x2f\xfd":
        import zstandard
        return zstandard.ZstdDecompressor().decompress(blob)
    return zlib.decompress(blob)


def split_fused(sd, model):
    names = set(model.state_dict())
    out = {}
    for k, v in sd.items():
        if k.endswith("mlp.gate_up.weight") and k not in names:
            p = k[: -len("gate_up.weight")]
            out[p + "gate.weight"], out[p + "fc.weight"] = v.chunk(2, dim=0)
        else:
            out[k] = v
    return out


def load_state(mod, model, artifact):
    blob = open(artifact, "rb").read()
    if artifact.endswith(".pt"):
        return torch.load(io.BytesIO(blob), map_location="cpu", weights_only=True)
    obj = torch.load(io.BytesIO(decompress(blob)), map_location="cpu", weights_only=True)
    if "__quant_format__" in obj:
        return mod.dequantize_state_dict_int8(obj)
    template = {k: v.detach().cpu() for k, v in export_dtypes(mod, copy.deepcopy(model)).state_dict().items()}
    return mod.dequantize_mixed_int6(obj["w"], obj["m"], template)


class Capture:
    """torch.nn.functional with cross_entropy recording its logits (the model's forward returns a loss)."""
    def __init__(self):
        self.logits = None

    def __getattr__(self, name):
        return getattr(F, name)

    def cross_entropy(self, logits, targets, **kw):
        self.logits = logits
        return F.cross_entropy(logits, targets, **kw)


def score(mod, model, ids):
    cap = Capture()
    mod.F = cap
    try:
        with torch.no_grad():
            x = torch.tensor([ids[:-1]])
            if hasattr(model, "forward_logits"):
                logits = model.forward_logits(x).reshape(-1, model.tok_emb.weight.shape[0])
            else:
                model(x, torch.tensor([ids[1:]]))
                logits = cap.logits
    finally:
        mod.F = F
    lp = torch.log_softmax(logits.float(), dim=-1)
    tgt = torch.tensor(ids[1:])
    return lp[torch.arange(len(tgt)), tgt].tolist(), (logits.argmax(dim=-1) == tgt).tolist()


def xsa_spec(arch):
    n = int(arch.get("XSA_LAST_N", 0))
    return "last:%d" % n if n else "none"


def references(mod, model, sp, arch, model_name, arch_name):
    cases = []
    for text in TEXTS:
        ids = [sp.bos_id()] + sp.encode(text)  # each document starts with BOS, as the family trains
        lps, greedy = score(mod, model, ids)
        cases.append({"xsa": xsa_spec(arch), "text": text, "tokens": ids, "logprobs": lps, "greedy": greedy})
    return {"model": model_name, "arch": arch_name, "weights_dtype": "F32", "cases": cases}


def gate_xsa(model):
    """modded-nanogpt's gated XSA (train_gpt.py, CausalSelfAttention.forward) on the XSA blocks,
    with the query heads of a kv head grouped as flash-attention groups them."""
    for blk in model.blocks:
        attn = blk.attn
        if not attn.use_xsa:
            continue
        attn.xsa_alpha = torch.nn.Parameter(torch.zeros(attn.num_heads))

        def gated(y, v, attn=attn):
            B, T, H, D = y.shape
            v = v.repeat_interleave(H // v.size(-2), dim=-2)
            dot = (y * v).sum(-1, keepdim=True)
            denom = v.square().sum(-1, keepdim=True).clamp_min(1e-8)
            alpha = torch.tanh(attn.xsa_alpha).type_as(y).view(1, 1, H, 1)
            return y - alpha * (dot / denom) * v
        attn._xsa_efficient = gated


def make_random(mod, int8_mod, arch, outdir, sp, seed, formats, gated=False):
    torch.manual_seed(seed)
    model = build_model(mod, arch)
    if gated:
        gate_xsa(model)
    with torch.no_grad():  # every parameter random (zero-initialised projections would hide terms)
        for name, p in model.named_parameters():
            if p.ndim >= 2:
                p.normal_(0, 0.5 / math.sqrt(p.shape[1]))
            else:
                p.copy_(1.0 + 0.3 * torch.randn_like(p)) if "gate" not in name else p.normal_(0, 1.0)
    model = export_dtypes(mod, model)
    sd = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items() if "mtp_heads" not in k}
    os.makedirs(outdir, exist_ok=True)
    files = []
    if "pt" in formats:
        torch.save(sd, os.path.join(outdir, "final_model.pt"))
        files.append("final_model.pt")
    if "int8" in formats:
        q, _ = int8_mod.quantize_state_dict_int8(sd)
        buf = io.BytesIO()
        torch.save(q, buf)
        open(os.path.join(outdir, "final_model.int8.ptz"), "wb").write(zlib.compress(buf.getvalue(), 9))
        files.append("final_model.int8.ptz")
    if "int6" in formats and hasattr(mod, "mixed_quantize_int6"):
        import zstandard
        w, m = mod.mixed_quantize_int6(sd, {"mlp", "attn"})
        buf = io.BytesIO()
        torch.save({"w": w, "m": m}, buf)
        open(os.path.join(outdir, "final_model.int6.ptz"), "wb").write(zstandard.ZstdCompressor(level=22).compress(buf.getvalue()))
        files.append("final_model.int6.ptz")
    json.dump(arch, open(os.path.join(outdir, "xsa_eval.json"), "w"), indent=1)
    for f in files:
        fresh = build_model(mod, arch).float()
        if gated:
            gate_xsa(fresh)
        sd_f = load_state(int8_mod if f.endswith("int8.ptz") else mod, fresh, os.path.join(outdir, f))
        fresh.load_state_dict({k: v.float() for k, v in sd_f.items()}, strict=True)
        ref = references(mod, fresh.float().eval(), sp, arch, f, "xsa_eval.json")
        json.dump(ref, open(os.path.join(outdir, "reference_%s.json" % f), "w"))
        print("wrote", os.path.join(outdir, "reference_%s.json" % f))


def rms_norm_dump(out):
    g = torch.Generator().manual_seed(7)
    rows = [torch.randn(16, generator=g) * scale for scale in (1e-5, 1e-4, 3e-4, 1e-3, 1.0, 30.0)]
    x = torch.stack(rows)
    y = F.rms_norm(x, (16,))
    json.dump({"eps_picked": torch.finfo(torch.float32).eps, "x": x.tolist(), "y": y.tolist()}, open(out, "w"))
    print("wrote", out)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--rms-norm-dump":
        return rms_norm_dump(sys.argv[2])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--script", required=True, help="the fork's train_gpt.py")
    ap.add_argument("--int8-script", help="train_gpt.py whose quantize_state_dict_int8 writes .int8.ptz (default: --script)")
    ap.add_argument("--artifact")
    ap.add_argument("--arch", required=True, help="xsa_eval.json: the family's hyperparameter names")
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--out")
    ap.add_argument("--model-name", help="what the reference's 'model' says (default: the artifact's path)")
    ap.add_argument("--make-random", metavar="DIR")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--gated-xsa", action="store_true", help="with --make-random: modded-nanogpt's gated XSA in the XSA layers")
    ap.add_argument("--formats", default="pt,int8,int6", help="with --make-random: which of pt, int8, int6 to write")
    a = ap.parse_args()
    import sentencepiece as spm
    torch.set_num_threads(1)
    sp = spm.SentencePieceProcessor(model_file=a.tokenizer)
    arch = json.load(open(a.arch))
    mod = import_script(a.script)
    if a.make_random:
        int8_mod = import_script(a.int8_script) if a.int8_script else mod
        make_random(mod, int8_mod, arch, a.make_random, sp, a.seed, a.formats.split(","), a.gated_xsa)
        return
    model = build_model(mod, arch).float()
    sd = split_fused(load_state(mod, model, a.artifact), model)
    model.load_state_dict({k: v.float() for k, v in sd.items()}, strict=True)
    ref = references(mod, model.eval(), sp, arch, a.model_name or a.artifact, os.path.basename(a.arch))
    json.dump(ref, open(a.out, "w"))
    print("wrote", a.out)


if __name__ == "__main__":
    main()
