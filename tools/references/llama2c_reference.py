#!/usr/bin/env python3
"""Reference log-probabilities for a llama2.c checkpoint (default: stories260K.bin), from an
independent PyTorch implementation of llama2.c's run.c forward pass, in float64.

    python3 -m tools.references.llama2c_reference [--model ../shared/benchdata/models/stories260K/stories260K.bin]
                                       [--out tests/fixtures/stories260K_reference.json]

File layout (run.c): 7 int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size
(negative: unshared classifier), seq_len), then fp32 token_embedding (V,C), rms_att (L,C),
wq (L,C,C), wk (L,KV,C), wv (L,KV,C), wo (L,C,C), rms_ffn (L,C), w1 (L,F,C), w2 (L,C,F),
w3 (L,F,C), rms_final (C), freq_cis_real (T,hd/2), freq_cis_imag (T,hd/2), [wcls (V,C)].
Forward: RMSNorm (eps 1e-5), RoPE on adjacent pairs (2i, 2i+1) with theta 10000, GQA (query
head h reads kv head h // (H/Hkv)), SwiGLU w2(silu(w1 x) * w3 x).
XSA (variant "all"): per query head, z = y - (y.v/|v|^2) v on the attention output before wo,
v the token's own value vector of its kv head.

As a cross-check of this implementation, the script also converts the weights to a
transformers LlamaForCausalLM (permuting wq/wk from adjacent-pair to rotate_half RoPE order)
and asserts the SA log-probabilities agree.
The output uses the `cases` format of tools/fixtures/make_model_fixtures.py.
"""
import argparse
import json
import os

import numpy as np
import torch
import transformers


def read_llama2c(path):
    raw = open(path, "rb").read()
    dim, hidden, L, H, Hkv, V, T = np.frombuffer(raw[:28], dtype="<i4").tolist()
    shared = V > 0
    V = abs(V)
    hd = dim // H
    kv = Hkv * hd
    data = np.frombuffer(raw[28:], dtype="<f4").astype(np.float64)
    pos = 0

    def take(*shape):
        nonlocal pos
        n = int(np.prod(shape))
        out = torch.from_numpy(data[pos:pos + n].copy()).view(*shape)
        pos += n
        return out

    w = {}
    w["tok_emb"] = take(V, dim)
    w["rms_att"] = take(L, dim)
    w["wq"] = take(L, dim, dim)
    w["wk"] = take(L, kv, dim)
    w["wv"] = take(L, kv, dim)
    w["wo"] = take(L, dim, dim)
    w["rms_ffn"] = take(L, dim)
    w["w1"] = take(L, hidden, dim)
    w["w2"] = take(L, dim, hidden)
    w["w3"] = take(L, hidden, dim)
    w["rms_final"] = take(dim)
    take(T, hd // 2)  # freq_cis_real (unused: recomputed from theta)
    take(T, hd // 2)  # freq_cis_imag
    w["wcls"] = w["tok_emb"] if shared else take(V, dim)
    assert pos == data.size, f"{path}: {data.size - pos} trailing floats"
    cfg = dict(dim=dim, hidden_dim=hidden, n_layers=L, n_heads=H, n_kv_heads=Hkv, vocab_size=V,
               seq_len=T, shared=shared)
    return cfg, w


def rmsnorm(x, w, eps=1e-5):
    return w * (x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps))


def rope_adjacent(x, theta=10000.0):
    """x: (T, nh, hd); rotates pairs (2i, 2i+1) by pos * theta^(-2i/hd)."""
    T, nh, hd = x.shape
    i = torch.arange(0, hd, 2, dtype=torch.float64)
    freq = 1.0 / theta ** (i / hd)                        # (hd/2)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * freq[None, :]  # (T, hd/2)
    c, s = torch.cos(ang)[:, None, :], torch.sin(ang)[:, None, :]
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = x0 * c - x1 * s
    out[..., 1::2] = x0 * s + x1 * c
    return out


def forward(cfg, w, tokens, xsa):
    """Returns logits (T, V) in float64."""
    C, H, Hkv, L = cfg["dim"], cfg["n_heads"], cfg["n_kv_heads"], cfg["n_layers"]
    hd = C // H
    grp = H // Hkv
    T = len(tokens)
    x = w["tok_emb"][torch.tensor(tokens)]               # (T, C)
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    for l in range(L):
        h = rmsnorm(x, w["rms_att"][l])
        q = (h @ w["wq"][l].T).view(T, H, hd)
        k = (h @ w["wk"][l].T).view(T, Hkv, hd)
        v = (h @ w["wv"][l].T).view(T, Hkv, hd)
        q, k = rope_adjacent(q), rope_adjacent(k)
        ys = []
        for hh in range(H):
            g = hh // grp
            att = (q[:, hh] @ k[:, g].T) / hd ** 0.5       # (T, T)
            att = att.masked_fill(mask, float("-inf")).softmax(-1)
            y = att @ v[:, g]                              # (T, hd)
            if xsa:
                vv = v[:, g]
                nn = (vv * vv).sum(-1, keepdim=True)
                coef = torch.where(nn > 0, (y * vv).sum(-1, keepdim=True) / torch.where(nn > 0, nn, 1.0), 0.0)
                y = y - coef * vv
            ys.append(y)
        x = x + torch.cat(ys, -1) @ w["wo"][l].T
        h = rmsnorm(x, w["rms_ffn"][l])
        a = h @ w["w1"][l].T
        x = x + ((a * torch.sigmoid(a)) * (h @ w["w3"][l].T)) @ w["w2"][l].T
    return rmsnorm(x, w["rms_final"]) @ w["wcls"].T


def score(cfg, w, tokens, xsa):
    logits = forward(cfg, w, tokens, xsa)
    lp = torch.log_softmax(logits, -1)
    return ([float(lp[p - 1, tokens[p]]) for p in range(1, len(tokens))],
            [bool(int(torch.argmax(logits[p - 1])) == tokens[p]) for p in range(1, len(tokens))])


def to_hf_llama(cfg, w, dtype=torch.float64):
    """The same weights as a transformers LlamaForCausalLM (rotate_half RoPE after permuting
    wq/wk from llama2.c's adjacent pairs to halves within each head)."""
    from transformers import LlamaConfig, LlamaForCausalLM
    C, H, Hkv, L = cfg["dim"], cfg["n_heads"], cfg["n_kv_heads"], cfg["n_layers"]
    hc = LlamaConfig(vocab_size=cfg["vocab_size"], hidden_size=C, intermediate_size=cfg["hidden_dim"],
                     num_hidden_layers=L, num_attention_heads=H, num_key_value_heads=Hkv,
                     max_position_embeddings=cfg["seq_len"], rms_norm_eps=1e-5, rope_theta=10000.0,
                     tie_word_embeddings=cfg["shared"], bos_token_id=1, eos_token_id=2)
    m = LlamaForCausalLM(hc).to(dtype).eval()

    def perm(t, nh):  # adjacent pairs -> halves within each head
        out, inn = t.shape
        return t.view(nh, out // nh // 2, 2, inn).transpose(1, 2).reshape(out, inn)

    with torch.no_grad():
        m.model.embed_tokens.weight.copy_(w["tok_emb"])
        for l, blk in enumerate(m.model.layers):
            blk.input_layernorm.weight.copy_(w["rms_att"][l])
            blk.post_attention_layernorm.weight.copy_(w["rms_ffn"][l])
            blk.self_attn.q_proj.weight.copy_(perm(w["wq"][l], H))
            blk.self_attn.k_proj.weight.copy_(perm(w["wk"][l], Hkv))
            blk.self_attn.v_proj.weight.copy_(w["wv"][l])
            blk.self_attn.o_proj.weight.copy_(w["wo"][l])
            blk.mlp.gate_proj.weight.copy_(w["w1"][l])
            blk.mlp.down_proj.weight.copy_(w["w2"][l])
            blk.mlp.up_proj.weight.copy_(w["w3"][l])
        m.model.norm.weight.copy_(w["rms_final"])
        m.lm_head.weight.copy_(w["wcls"])
    return m


def hf_llama_from_bin(path):
    """A llama2.c .bin as a float32 transformers LlamaForCausalLM."""
    cfg, w = read_llama2c(path)
    return to_hf_llama(cfg, w, torch.float32)


def hf_crosscheck(cfg, w, tokens, want):
    """Same weights through transformers' Llama."""
    m = to_hf_llama(cfg, w)
    with torch.no_grad():
        lp = torch.log_softmax(m(torch.tensor([tokens])).logits[0], -1)
    got = [float(lp[p - 1, tokens[p]]) for p in range(1, len(tokens))]
    err = max(abs(a - b) for a, b in zip(got, want))
    # transformers builds its RoPE cos/sin in float32, so agreement is ~1e-6, not 1e-12.
    assert err < 1e-4, f"transformers cross-check differs by {err}"
    return err


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="../shared/benchdata/models/stories260K/stories260K.bin")
    ap.add_argument("--out", default="tests/fixtures/stories260K_reference.json")
    args = ap.parse_args()
    cfg, w = read_llama2c(args.model)
    g = torch.Generator().manual_seed(260)
    V = cfg["vocab_size"]
    seqs = [[1] + torch.randint(3, V, (8,), generator=g).tolist(),
            [1] + torch.randint(3, V, (30,), generator=g).tolist()]
    greedy = [1]
    with torch.no_grad():
        while len(greedy) < 41:  # BOS + 40 greedily generated tokens
            greedy.append(int(torch.argmax(forward(cfg, w, greedy, False)[-1])))
    seqs.append(greedy)
    cases = []
    with torch.no_grad():
        for spec in ["none", "all"]:
            for toks in seqs:
                lp, gr = score(cfg, w, toks, spec == "all")
                cases.append({"xsa": spec, "tokens": toks, "logprobs": lp, "greedy": gr})
    err = max(hf_crosscheck(cfg, w, c["tokens"], c["logprobs"]) for c in cases if c["xsa"] == "none")
    n_params = sum(int(t.numel()) for k, t in w.items() if not (k == "wcls" and cfg["shared"]))
    ref = {
        "generator": "tools/references/llama2c_reference.py",
        "model": os.path.basename(args.model),
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
        "weights_dtype": "F32",
        "compute_dtype": "float64",
        "config": cfg,
        "n_params": n_params,
        "weights_sample": {
            "tok_emb": [float(x) for x in w["tok_emb"][0, :4]],
            "layer0_wq": [float(x) for x in w["wq"][0][0, :4]],
            "layer1_wk_row1": [float(x) for x in w["wk"][1][1, :4]],
            "layer0_w_gate_row3": [float(x) for x in w["w1"][0][3, :4]],
            "final_norm": [float(x) for x in w["rms_final"][:4]],
        },
        "transformers_crosscheck_max_abs_diff": err,
        "cases": cases,
    }
    with open(args.out, "w") as f:
        json.dump(ref, f, indent=1)
        f.write("\n")
    print(f"{args.out}: {os.path.getsize(args.out)} bytes, {len(cases)} cases, "
          f"n_params {n_params}, transformers cross-check max |diff| {err:.3g}")


if __name__ == "__main__":
    main()
