"""Helpers shared by the scripts that build PyTorch/transformers references: random weights
far from a trained init, XSA hooked into the real transformers modules (the one XSA
definition every reference uses), --xsa specs, and saving a checkpoint folder."""
import json
import os
import shutil

import torch


def randomize(model, seed):
    """Re-draws every parameter so logits are far from uniform and biases/norm gains matter.
    Linear weights are scaled by fan-in: (OUT, IN) for nn.Linear, (IN, OUT) for GPT-2's Conv1D."""
    conv1d = {mn + ".weight" for mn, mod in model.named_modules() if type(mod).__name__ == "Conv1D"}
    # Gemma's RMSNorms scale by (1 + weight): gains around 1 as the other families' are
    gain0 = 0.0 if getattr(model.config, "model_type", "").startswith("gemma") else 1.0
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name or ".ln_" in name or name.startswith("ln_f") or ".ln_f" in name:
                if name.endswith("weight"):
                    p.copy_(gain0 + 0.2 * torch.randn(p.shape, generator=g))
                else:
                    p.copy_(0.1 * torch.randn(p.shape, generator=g))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            elif any(k in name for k in ("wte", "wpe", "embed_tokens", "embed_in", "embed_out", "lm_head")):
                p.copy_(0.3 * torch.randn(p.shape, generator=g))
            else:
                fan_in = p.shape[0] if name in conv1d else p.shape[1]
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
    v), gpt_neox's query_key_value (q, k, v per head), else v_proj; z replaces the input of the
    output projection (c_proj, dense, o_proj; phi's dense, opt's out_proj)."""
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
    elif mt == "opt":
        blocks = model.model.decoder.layers
        H = Hkv = cfg.num_attention_heads
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
        elif mt in ("phi", "opt"):  # (their output projections: dense, out_proj)
            attn = blocks[li].self_attn
            handles.append(attn.v_proj.register_forward_hook(
                lambda mod, inp, out, store=store: store.__setitem__("v", out)))
            proj = attn.dense if mt == "phi" else attn.out_proj
        else:
            attn = blocks[li].self_attn
            # (olmo's clip_qkv clamps this very tensor in place afterwards: XSA reads the clamped
            # v, the one its attention reads)
            handles.append(attn.v_proj.register_forward_hook(
                lambda mod, inp, out, store=store: store.__setitem__("v", out)))
            proj = attn.o_proj

        def pre(mod, inp, store=store):
            return (xsa_project(inp[0], store["v"], H, Hkv),)
        handles.append(proj.register_forward_pre_hook(pre))
    return handles


def parse_xsa_spec(spec, n_layer):
    """The layers an --xsa spec names, as xsa-eval reads it: "none", "all", "last:N" or
    "i,j,..." (0-based). Raises ValueError with the reason for anything else."""
    if spec == "none":
        return []
    if spec == "all":
        return list(range(n_layer))
    if spec.startswith("last:"):
        n = spec[5:]
        if not n.isdigit() or not 1 <= int(n) <= n_layer:
            raise ValueError("--xsa %s: N must be 1..%d" % (spec, n_layer))
        return list(range(n_layer - int(n), n_layer))
    try:
        layers = sorted({int(x) for x in spec.split(",")})
    except ValueError:
        raise ValueError("--xsa %r: expected all, none, last:N or layer indices such as 0,3" % spec) from None
    if not layers or layers[0] < 0 or layers[-1] >= n_layer:
        raise ValueError("--xsa %s: layer indices must be 0..%d" % (spec, n_layer - 1))
    return layers


def vocab_size_of(tok_path):
    """Logits width a tokenizer.json needs: one past its largest id, added tokens included."""
    t = json.load(open(tok_path))
    ids = list(t["model"]["vocab"].values()) + [a["id"] for a in t.get("added_tokens", [])]
    return max(ids) + 1


def save_with_tokenizer(model, d, tok):
    """save_pretrained (safetensors) into a fresh folder d, without generation_config.json,
    with the tokenizer.json at tok copied beside it."""
    if os.path.isdir(d):
        shutil.rmtree(d)
    model.save_pretrained(d, safe_serialization=True)
    p = os.path.join(d, "generation_config.json")
    if os.path.exists(p):
        os.remove(p)
    shutil.copy(tok, os.path.join(d, "tokenizer.json"))
