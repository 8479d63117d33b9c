#!/usr/bin/env python3
"""Builds the tiny random-weight Hugging Face checkpoints under tests/fixtures/models/ and
their PyTorch reference log-probabilities (SA and XSA), for the loader and forward tests.

    python3 tools/make_model_fixtures.py [--out tests/fixtures/models]

Each model directory gets config.json + model.safetensors (or shards + index) written by
transformers' save_pretrained(safe_serialization=True), and reference.json:

    {"generator", "versions", "weights_dtype", "compute_dtype", "n_params",
     "weights_sample": {"tok_emb": [4 floats], "layer0_wq": [4 floats], ...},
     "cases": [{"xsa": "none"|"all"|"0,2", "tokens": [...],
                "logprobs": [n-1 floats], "greedy": [n-1 bools]}]}

logprobs[p-1] = log_softmax(logits[p-1])[tokens[p]] and greedy[p-1] = argmax(logits[p-1]) ==
tokens[p] (ties: lowest id, as torch.argmax), for p >= 1. weights_sample values are taken in
nn.Linear (OUT, IN) layout, i.e. after transposing GPT-2's Conv1D weights and splitting c_attn.

XSA is applied with hooks around the real transformers modules: the layer's value projection
output is captured, and the input of the output projection (per-head attention output y, before
o_proj / c_proj) is replaced by z = y - (y.v / |v|^2) v per query head h, with v the token's own
value vector of kv head h // (H / Hkv) (z = y where |v| = 0).
"""
import argparse
import json
import os
import shutil

import safetensors
import safetensors.torch
import torch
import transformers
from transformers import (GPT2Config, GPT2LMHeadModel, GPTNeoXConfig, GPTNeoXForCausalLM, LlamaConfig,
                          LlamaForCausalLM, MistralConfig, MistralForCausalLM, Olmo2Config, Olmo2ForCausalLM,
                          Phi3Config, Phi3ForCausalLM, Qwen2Config, Qwen2ForCausalLM, Qwen3Config, Qwen3ForCausalLM)


def randomize(model, seed):
    """Re-draws every parameter so logits are far from uniform and biases/norm gains matter."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name or ".ln_" in name or name.startswith("ln_f") or ".ln_f" in name:
                if name.endswith("weight"):
                    p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=g))
                else:
                    p.copy_(0.1 * torch.randn(p.shape, generator=g))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            elif any(k in name for k in ("wte", "wpe", "embed_tokens", "embed_in", "embed_out", "lm_head")):
                p.copy_(0.3 * torch.randn(p.shape, generator=g))
            else:
                # Linear (OUT, IN) or Conv1D (IN, OUT): scale by fan-in so activations stay O(1).
                fan_in = p.shape[0] if "transformer" in name or name.startswith("h.") else p.shape[1]
                p.copy_(torch.randn(p.shape, generator=g) * (1.5 / fan_in ** 0.5))


def xsa_project(y, v, n_head, n_kv_head):
    """y: (B, T, H*hd) attention output; v: (B, T, Hkv*hd). Returns z of y's shape."""
    B, T, _ = y.shape
    hd = y.shape[-1] // n_head
    yh = y.view(B, T, n_kv_head, n_head // n_kv_head, hd)      # consecutive query heads per kv head
    vh = v.view(B, T, n_kv_head, 1, hd)
    dot = (yh * vh).sum(-1, keepdim=True)
    nn = (vh * vh).sum(-1, keepdim=True)
    coef = torch.where(nn > 0, dot / torch.where(nn > 0, nn, torch.ones_like(nn)), torch.zeros_like(dot))
    return (yh - coef * vh).reshape(B, T, n_head * hd)


def install_xsa(model, layers):
    """Hooks XSA into the given layer indices; returns the hook handles. The value vectors are
    taken where each family's attention computes them: GPT-2's c_attn, phi3's qkv_proj (q | k |
    v), gpt_neox's query_key_value (q, k, v per head), else v_proj."""
    handles = []
    cfg = model.config
    mt = cfg.model_type
    if mt == "gpt2":
        blocks = model.transformer.h
        H = Hkv = cfg.n_head
        C = cfg.n_embd
    elif mt == "gpt_neox":
        blocks = model.gpt_neox.layers
        H = Hkv = cfg.num_attention_heads
        hd = cfg.hidden_size // H
    else:
        blocks = model.model.layers
        H = cfg.num_attention_heads
        Hkv = cfg.num_key_value_heads
        hd = getattr(cfg, "head_dim", None) or cfg.hidden_size // H
    for li in layers:
        store = {}
        if mt == "gpt2":
            attn = blocks[li].attn
            handles.append(attn.c_attn.register_forward_hook(
                lambda mod, inp, out, store=store: store.__setitem__("v", out[..., 2 * C:3 * C])))
            proj = attn.c_proj
        elif mt == "gpt_neox":
            attn = blocks[li].attention

            def neox_v(mod, inp, out, store=store):
                B, T, _ = out.shape
                store["v"] = out.view(B, T, H, 3 * hd)[..., 2 * hd:].reshape(B, T, H * hd)
            handles.append(attn.query_key_value.register_forward_hook(neox_v))
            proj = attn.dense
        elif mt == "phi3":
            attn = blocks[li].self_attn
            handles.append(attn.qkv_proj.register_forward_hook(
                lambda mod, inp, out, store=store: store.__setitem__("v", out[..., (H + Hkv) * hd:])))
            proj = attn.o_proj
        else:
            attn = blocks[li].self_attn
            handles.append(attn.v_proj.register_forward_hook(
                lambda mod, inp, out, store=store: store.__setitem__("v", out)))
            proj = attn.o_proj

        def pre(mod, inp, store=store):
            return (xsa_project(inp[0], store["v"], H, Hkv),)
        handles.append(proj.register_forward_pre_hook(pre))
    return handles


def xsa_layers(spec, n_layer):
    if spec == "none":
        return []
    if spec == "all":
        return list(range(n_layer))
    return [int(x) for x in spec.split(",")]


@torch.no_grad()
def score(model, tokens, spec):
    n_layer = model.config.num_hidden_layers
    handles = install_xsa(model, xsa_layers(spec, n_layer))
    try:
        dtype = next(model.parameters()).dtype
        logits = model(torch.tensor([tokens])).logits[0].to(dtype)  # (T, V)
    finally:
        for h in handles:
            h.remove()
    lp = torch.log_softmax(logits, dim=-1)
    out_lp, out_greedy = [], []
    for p in range(1, len(tokens)):
        out_lp.append(float(lp[p - 1, tokens[p]]))
        out_greedy.append(bool(int(torch.argmax(logits[p - 1])) == tokens[p]))
    return out_lp, out_greedy


@torch.no_grad()
def greedy_sequence(model, first, n):
    toks = [first]
    while len(toks) < n:
        logits = model(torch.tensor([toks])).logits[0, -1]
        toks.append(int(torch.argmax(logits)))
    return toks


def linear_weights_sample(model):
    """First values of a few weights in nn.Linear (OUT, IN) layout, as the C loader stores them."""
    cfg = model.config
    sd = {k: v.float() for k, v in model.state_dict().items()}
    s = {}
    if cfg.model_type == "gpt2":
        C = cfg.n_embd
        s["tok_emb"] = sd["transformer.wte.weight"][0, :4]
        w = sd["transformer.h.0.attn.c_attn.weight"].t()  # Conv1D (C, 3C) -> (3C, C)
        s["layer0_wq"] = w[0:C][0, :4]
        s["layer0_wk_row1"] = w[C:2 * C][1, :4]
        s["layer0_wv_row2"] = w[2 * C:3 * C][2, :4]
        s["layer0_bv"] = sd["transformer.h.0.attn.c_attn.bias"][2 * C:2 * C + 4]
        s["layer0_w_up_row3"] = sd["transformer.h.0.mlp.c_fc.weight"].t()[3, :4]
        s["pos_emb_row5"] = sd["transformer.wpe.weight"][5, :4]
    elif cfg.model_type == "gpt_neox":  # query_key_value rows: (head, q|k|v, hd)
        hd = cfg.hidden_size // cfg.num_attention_heads
        w = sd["gpt_neox.layers.0.attention.query_key_value.weight"]
        s["tok_emb"] = sd["gpt_neox.embed_in.weight"][0, :4]
        s["layer0_wq"] = w[0, :4]
        s["layer0_wk_row1"] = w[hd + 1, :4]
        s["layer0_wv_row2"] = w[2 * hd + 2, :4]
        s["layer0_wq_row_h1"] = w[3 * hd, :4]  # head 1's first q row: row hd of the split wq
        s["final_norm"] = sd["gpt_neox.final_layer_norm.weight"][:4]
        s["lm_head_row7"] = sd["lm_head.weight"][7, :4]  # embed_out in the file
    elif cfg.model_type == "phi3":  # qkv_proj rows q | k | v; gate_up_proj rows gate | up
        hd = cfg.hidden_size // cfg.num_attention_heads
        Q, KV, F = cfg.num_attention_heads * hd, cfg.num_key_value_heads * hd, cfg.intermediate_size
        w = sd["model.layers.0.self_attn.qkv_proj.weight"]
        gu = sd["model.layers.0.mlp.gate_up_proj.weight"]
        s["tok_emb"] = sd["model.embed_tokens.weight"][0, :4]
        s["layer0_wq"] = w[0, :4]
        s["layer0_wk_row1"] = w[Q + 1, :4]
        s["layer0_wv_row2"] = w[Q + KV + 2, :4]
        s["layer0_w_gate_row3"] = gu[3, :4]
        s["layer0_w_up_row3"] = gu[F + 3, :4]
        s["final_norm"] = sd["model.norm.weight"][:4]
        s["lm_head_row7"] = sd["lm_head.weight"][7, :4]
    else:
        s["tok_emb"] = sd["model.embed_tokens.weight"][0, :4]
        s["layer0_wq"] = sd["model.layers.0.self_attn.q_proj.weight"][0, :4]
        s["layer0_wk_row1"] = sd["model.layers.0.self_attn.k_proj.weight"][1, :4]
        s["layer0_w_gate_row3"] = sd["model.layers.0.mlp.gate_proj.weight"][3, :4]
        s["final_norm"] = sd["model.norm.weight"][:4]
        if not cfg.tie_word_embeddings:
            s["lm_head_row7"] = sd["lm_head.weight"][7, :4]
    return {k: [float(x) for x in v] for k, v in s.items()}


def token_sequences(model, vocab, seed):
    g = torch.Generator().manual_seed(seed)
    a = torch.randint(0, vocab, (5,), generator=g).tolist()
    c = torch.randint(0, vocab, (60,), generator=g).tolist()
    b = greedy_sequence(model, int(torch.randint(0, vocab, (1,), generator=g)), 20)
    return [a, b, c]


def write_reference(out_dir, name, model_cls, weights_dtype, compute_dtype, subset, seed):
    path = os.path.join(out_dir, name)
    load_dtype = torch.bfloat16 if weights_dtype == "BF16" else torch.float32
    model = model_cls.from_pretrained(path, dtype=load_dtype, attn_implementation="eager")
    model.eval()
    model = model.double() if compute_dtype == "float64" else model.float()
    n_params = sum(p.numel() for p in model.parameters())  # tied weights counted once
    seqs = token_sequences(model, model.config.vocab_size, seed)
    cases = []
    for spec in ["none", "all", subset]:
        for toks in seqs:
            lp, gr = score(model, toks, spec)
            cases.append({"xsa": spec, "tokens": toks, "logprobs": lp, "greedy": gr})
    ref = {
        "generator": "tools/make_model_fixtures.py",
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                     "safetensors": safetensors.__version__},
        "weights_dtype": weights_dtype,
        "compute_dtype": compute_dtype,
        "n_params": n_params,
        "weights_sample": linear_weights_sample(model),
        "cases": cases,
    }
    with open(os.path.join(path, "reference.json"), "w") as f:
        json.dump(ref, f, indent=1)
        f.write("\n")
    return ref


def save(model, out_dir, name, **kw):
    path = os.path.join(out_dir, name)
    shutil.rmtree(path, ignore_errors=True)
    model.save_pretrained(path, safe_serialization=True, **kw)
    for extra in ["generation_config.json"]:  # not needed by xsa-eval
        p = os.path.join(path, extra)
        if os.path.exists(p):
            os.remove(p)
    for f in os.listdir(path):
        os.chmod(os.path.join(path, f), 0o644)
    return path


def strip_transformer_prefix(path):
    """Rewrites a sharded GPT-2 checkpoint with the Hub's names (no `transformer.` prefix, as
    openai-community/gpt2 ships), so the loader's handling of both spellings is tested."""
    index_path = os.path.join(path, "model.safetensors.index.json")
    with open(index_path) as f:
        index = json.load(f)
    strip = lambda k: k[len("transformer."):] if k.startswith("transformer.") else k
    for shard in sorted(set(index["weight_map"].values())):
        fp = os.path.join(path, shard)
        tensors = safetensors.torch.load_file(fp)
        safetensors.torch.save_file({strip(k): v for k, v in tensors.items()}, fp, metadata={"format": "pt"})
    index["weight_map"] = {strip(k): v for k, v in index["weight_map"].items()}
    with open(index_path, "w") as f:
        json.dump(index, f, indent=2, sort_keys=True)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="tests/fixtures/models")
    ap.add_argument("--only", help="comma-separated model names: build just those (the others stay as committed)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    only = set(args.only.split(",")) if args.only else None

    def want(name):
        return only is None or name in only

    # (a) gpt2_tiny, fp32, tied head; plus a sharded copy of the same weights.
    if want("gpt2_tiny"):
        build_gpt2_tiny(args)

    # (b)-(d): llama_gqa, llama_bf16, gpt2_gelu.
    for name, build in (("llama_gqa", build_llama_gqa), ("llama_bf16", build_llama_bf16), ("gpt2_gelu", build_gpt2_gelu),
                        ("llama_rope_linear", build_llama_rope_linear), ("llama_rope_llama3", build_llama_rope_llama3),
                        ("llama_rope_dynamic", build_llama_rope_dynamic), ("llama_rope_yarn", build_llama_rope_yarn),
                        ("mistral_swa", build_mistral_swa), ("qwen2_bin", build_qwen2_bin), ("qwen3_sharded", build_qwen3_sharded),
                        ("olmo2_bf16", build_olmo2_bf16), ("pythia", build_pythia), ("pythia_sequential", build_pythia_sequential),
                        ("phi3_sharded_bin", build_phi3_sharded_bin)):
        if want(name):
            build(args)

    for name in sorted(os.listdir(args.out)):
        d = os.path.join(args.out, name)
        for f in os.listdir(d):
            os.chmod(os.path.join(d, f), 0o644)  # safetensors writes 0600
        total = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
        print(f"{name}: {total} bytes ({', '.join(sorted(os.listdir(d)))})")


def build_gpt2_tiny(args):
    cfg = GPT2Config(vocab_size=300, n_positions=64, n_embd=32, n_layer=2, n_head=4,
                     bos_token_id=0, eos_token_id=0)
    m = GPT2LMHeadModel(cfg)
    randomize(m, 1)
    save(m, args.out, "gpt2_tiny")
    strip_transformer_prefix(save(m, args.out, "gpt2_tiny_sharded", max_shard_size="60KB"))
    ref = write_reference(args.out, "gpt2_tiny", GPT2LMHeadModel, "F32", "float64", "1", 11)
    ref["note"] = ("same weights as gpt2_tiny, saved in shards with the Hub's tensor names (no "
                   "`transformer.` prefix); this file is a copy of gpt2_tiny's reference")
    with open(os.path.join(args.out, "gpt2_tiny_sharded", "reference.json"), "w") as f:
        json.dump(ref, f, indent=1)
        f.write("\n")



def build_llama_gqa(args):
    """llama_gqa, fp32, GQA 4:2, untied head."""
    cfg = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                      rope_theta=10000.0, rms_norm_eps=1e-5, tie_word_embeddings=False,
                      bos_token_id=1, eos_token_id=2)
    m = LlamaForCausalLM(cfg)
    randomize(m, 2)
    save(m, args.out, "llama_gqa")
    write_reference(args.out, "llama_gqa", LlamaForCausalLM, "F32", "float64", "0,2", 12)



def build_llama_bf16(args):
    """llama_bf16: llama_gqa's shape, tied embeddings, stored in bfloat16."""
    cfg = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                      rope_theta=10000.0, rms_norm_eps=1e-5, tie_word_embeddings=True,
                      bos_token_id=1, eos_token_id=2)
    m = LlamaForCausalLM(cfg)
    randomize(m, 3)
    m = m.to(torch.bfloat16)
    save(m, args.out, "llama_bf16")
    write_reference(args.out, "llama_bf16", LlamaForCausalLM, "BF16", "float32", "1", 13)



def build_gpt2_gelu(args):
    """gpt2_gelu: gpt2_tiny's shape with the exact erf GELU (activation_function "gelu"), as
    nanoGPT checkpoints (nn.GELU) convert; untied head."""
    cfg = GPT2Config(vocab_size=300, n_positions=64, n_embd=32, n_layer=2, n_head=4,
                     activation_function="gelu", tie_word_embeddings=False, bos_token_id=0, eos_token_id=0)
    m = GPT2LMHeadModel(cfg)
    randomize(m, 4)
    save(m, args.out, "gpt2_gelu")
    write_reference(args.out, "gpt2_gelu", GPT2LMHeadModel, "F32", "float64", "0", 14)


def build_llama_rope(args, name, rope, seed):
    """llama_gqa's shape with scaled RoPE, on contexts long enough that every kind of frequency
    (kept, divided, smoothed) is in play."""
    cfg = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=256,
                      rope_theta=10000.0, rms_norm_eps=1e-5, tie_word_embeddings=True,
                      rope_scaling=rope, bos_token_id=1, eos_token_id=2)
    m = LlamaForCausalLM(cfg)
    randomize(m, seed)
    save(m, args.out, name)
    write_reference(args.out, name, LlamaForCausalLM, "F32", "float64", "1", seed + 10)


def build_llama_rope_linear(args):
    build_llama_rope(args, "llama_rope_linear", {"rope_type": "linear", "factor": 4.0}, 5)


def build_llama_rope_llama3(args):
    # Llama 3.1's constants but a 32-token original context, so wavelengths of 8..32 (smoothed)
    # and above (divided) occur at head_dim 16.
    build_llama_rope(args, "llama_rope_llama3", {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                                 "high_freq_factor": 4.0, "original_max_position_embeddings": 32}, 6)


def build_llama_rope_dynamic(args):
    # Dynamic NTK changes the base only past max_position_embeddings; lm-eval's truncation keeps
    # rows below it, and xsa-eval refuses positions past it, so the fixture checks the in-context
    # frequencies (the default ones) are what transformers uses.
    build_llama_rope(args, "llama_rope_dynamic", {"rope_type": "dynamic", "factor": 4.0}, 7)


def build_llama_rope_yarn(args):
    # A 16-token original context, so the ramp between extrapolated and interpolated frequencies
    # falls inside head_dim 16, and attention_factor (0.1 ln 4 + 1) scales cos and sin.
    build_llama_rope(args, "llama_rope_yarn", {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16,
                                               "beta_fast": 8.0, "beta_slow": 1.0}, 8)


def save_bin(model, out_dir, name, shards=1):
    """config.json + pytorch_model.bin (torch.save of the state dict, tied weights sharing one
    storage as transformers' old writer left them), or `shards` shards with the index
    transformers reads."""
    path = os.path.join(out_dir, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    model.config.save_pretrained(path)
    sd = model.state_dict()
    if shards == 1:
        torch.save(sd, os.path.join(path, "pytorch_model.bin"))
    else:
        keys = list(sd)
        per = (len(keys) + shards - 1) // shards
        weight_map = {}
        for i in range(shards):
            fn = "pytorch_model-%05d-of-%05d.bin" % (i + 1, shards)
            part = keys[i * per:(i + 1) * per]
            torch.save({k: sd[k] for k in part}, os.path.join(path, fn))
            weight_map.update({k: fn for k in part})
        total = sum(v.numel() * v.element_size() for v in sd.values())
        with open(os.path.join(path, "pytorch_model.bin.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2, sort_keys=True)
            f.write("\n")
    return path


# The families: small shapes (vocab 96, width 32, two layers) so each fixture is tens of KB, and
# token sequences of 5, 20 and 60 tokens so sliding windows of 6 and 7 cut the longer ones.
SMALL = dict(vocab_size=96, hidden_size=32, intermediate_size=40, num_hidden_layers=2, max_position_embeddings=128,
             bos_token_id=1, eos_token_id=2)


def build_family(args, name, model_cls, cfg, seed, subset="1", saver=save, dtype=None, **kw):
    m = model_cls(cfg)
    randomize(m, seed)
    if dtype is not None:
        m = m.to(dtype)
    saver(m, args.out, name, **kw)
    write_reference(args.out, name, model_cls, "BF16" if dtype == torch.bfloat16 else "F32",
                    "float32" if dtype == torch.bfloat16 else "float64", subset, seed + 10)


def build_mistral_swa(args):
    """mistral: GQA 4:2, a 7-key sliding window on every layer."""
    cfg = MistralConfig(**SMALL, num_attention_heads=4, num_key_value_heads=2, sliding_window=7, rms_norm_eps=1e-5,
                        tie_word_embeddings=False)
    build_family(args, "mistral_swa", MistralForCausalLM, cfg, 21, subset="0")


def build_qwen2_bin(args):
    """qwen2 as pytorch_model.bin: q/k/v biases, tied head, a 6-key window on layer 1 only
    (use_sliding_window, max_window_layers 1)."""
    cfg = Qwen2Config(**SMALL, num_attention_heads=4, num_key_value_heads=2, use_sliding_window=True, sliding_window=6,
                      max_window_layers=1, tie_word_embeddings=True, rms_norm_eps=1e-6)
    build_family(args, "qwen2_bin", Qwen2ForCausalLM, cfg, 22, subset="1", saver=save_bin)


def build_qwen3_sharded(args):
    """qwen3 in safetensors shards: per-head q/k RMSNorm, head_dim 16 set apart from the width."""
    cfg = Qwen3Config(**SMALL, num_attention_heads=4, num_key_value_heads=2, head_dim=16, rms_norm_eps=1e-6,
                      tie_word_embeddings=False, attention_bias=False)
    build_family(args, "qwen3_sharded", Qwen3ForCausalLM, cfg, 23, subset="0", max_shard_size="20KB")


def build_olmo2_bf16(args):
    """olmo2 stored in bfloat16: full-width q/k RMSNorm, norms after attention and MLP."""
    cfg = Olmo2Config(**SMALL, num_attention_heads=4, num_key_value_heads=4, rms_norm_eps=1e-5, tie_word_embeddings=False)
    build_family(args, "olmo2_bf16", Olmo2ForCausalLM, cfg, 24, subset="1", dtype=torch.bfloat16)


def neox_config(parallel):
    return GPTNeoXConfig(vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                         max_position_embeddings=128, rotary_pct=0.25, rotary_emb_base=10000, layer_norm_eps=1e-5,
                         use_parallel_residual=parallel, hidden_act="gelu", tie_word_embeddings=False,
                         bos_token_id=0, eos_token_id=0)


def build_pythia(args):
    """gpt_neox as Pythia: fused per-head q|k|v, a quarter of each 16-dim head rotated,
    LayerNorm, exact GELU, parallel residual, untied embed_out."""
    build_family(args, "pythia", GPTNeoXForCausalLM, neox_config(True), 25, subset="1")


def build_pythia_sequential(args):
    """gpt_neox with use_parallel_residual false (attention, then the MLP)."""
    build_family(args, "pythia_sequential", GPTNeoXForCausalLM, neox_config(False), 26, subset="0")


def build_phi3_sharded_bin(args):
    """phi3 as two pytorch_model.bin shards: fused qkv_proj and gate_up_proj, half of each head
    rotated (partial_rotary_factor 0.5)."""
    cfg = Phi3Config(**SMALL, num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-5, tie_word_embeddings=False,
                     partial_rotary_factor=0.5, pad_token_id=0, original_max_position_embeddings=128)
    build_family(args, "phi3_sharded_bin", Phi3ForCausalLM, cfg, 27, subset="0", saver=save_bin, shards=2)


if __name__ == "__main__":
    main()
