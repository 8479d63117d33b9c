#!/usr/bin/env python3
"""End-to-end lm-evaluation-harness parity of the olmo, ministral, Gemma, phi, opt, stablelm, smollm3 and granite families: tiny random
transformers checkpoints with a fixture tokenizer, scored by real lm-eval (HFLM from the folder,
so AutoTokenizer picks the tokenizer class as it would for a Hub model; float32, batch size 8)
and by `xsa-eval run` on the same rows (tests/fixtures/data, --limit 10); prints each task's
metrics from both and the largest per-request |log-likelihood difference|. Nothing is written
into the repository: the checkpoints and results go to a temporary folder (--keep DIR keeps them).

  olmo       OlmoForCausalLM (weightless LayerNorms, GQA 4/2, clip_qkv 0.7) with the GPT-2
             byte-level BPE fixture (no tokenizer_class: AutoTokenizer takes GPTNeoXTokenizer)
  ministral  MinistralForCausalLM (layer_types sliding/full/sliding, sliding_window 6, head_dim 8)
             with the SentencePiece-style tokenizer.json and a tokenizer_config.json naming <s>, </s>
  gemma      GemmaForCausalLM (head_dim 16, GQA 4/2, tied head) with Gemma's tokenizer layout
             (tests/fixtures/tokenizers/class/gemma_layout: GemmaTokenizer, <bos> added)
  gemma3     Gemma3ForCausalLM (gemma3_text: layer_types sliding/full/sliding, sliding_window 6,
             query_pre_attn_scalar 24, final_logit_softcapping 5) with the same tokenizer, chosen by
             model_type (no tokenizer_config.json)
  gemma2     Gemma2ForCausalLM (sliding/full/sliding, window 6, query_pre_attn_scalar 24,
             attn_logit_softcapping 3, final_logit_softcapping 5) with the same tokenizer by model_type
  phi        PhiForCausalLM (partial_rotary_factor 0.4 of 16-dim heads, GQA 4/2, qk_layernorm, head
             bias) with the GPT-2 byte-level fixture under CodeGenTokenizer, as phi-1/phi-2 name it
  opt        OPTForCausalLM (pre-LN, learned positions, ReLU, tied head) with the GPT-2 fixture as an
             OPT tokenizer: </s> added, tokenizer_config.json as facebook/opt-*'s (add_bos_token
             true, bos/eos/unk </s>), tokenizer.json's post-processor prepending </s> as transformers
             saves it; lm-eval's HFLM (add_bos_token None) then encodes with </s> first
  opt350     the same with opt-350m's layout: do_layer_norm_before false, word_embed_proj_dim 16
  stablelm   StableLmForCausalLM as stablelm-2-1_6b (q/k/v biases, a quarter of each head rotated)
             with stablelm-2's tokenizer layout (class/stablelm2_gpt2_class: GPT2TokenizerFast named)
  stablelm_qk  StableLmForCausalLM with qk_layernorm and use_parallel_residual (GQA 4/2) with
             stablelm-3b's (class/stablelm3b_neox_class: GPTNeoXTokenizer named over GPT-2's file)
  smollm3    SmolLM3ForCausalLM (layer 1 NoPE with a 6-key window) with SmolLM3's layout
             (class/smollm3_backend_class)
  granite    GraniteForCausalLM (embedding 4, attention 0.2, residual 0.5, logits / 2.5) with
             granite-3's (class/granite_gpt2_class: GPT2Tokenizer, <|end_of_text|>)

Exit 1 when a request differs by more than 1e-4 or a greedy flag or an accuracy differs.

    pip install torch transformers "lm-eval[hf]" datasets
    make && python3 -m tools.references.check_family_parity [--keep DIR] [--only phi,opt]
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import tempfile

import torch

from tools.pylib.cli import help_flag
from tools.pylib.hf_models import randomize, save_with_tokenizer, vocab_size_of
from tools.pylib.lm_eval_local import install_local_datasets, json_dataset, task_of_dataset
from tools.pylib.paths import ROOT

DATA = os.path.join(ROOT, "tests", "fixtures", "data")
TOKS = os.path.join(ROOT, "tests", "fixtures", "tokenizers")
SPLIT = {"arc_easy": "test", "piqa": "validation", "lambada_openai": "test"}
LIMIT = 10


def build_small_baseline(which, d):
    """stablelm (stablelm-2-1_6b's layout, and stablelm-2-12b's qk_layernorm + parallel residual),
    smollm3 (NoPE layers, a window on them) and granite (its four multipliers), each with a
    tokenizer folder of its family's layout (tests/fixtures/tokenizers/class)."""
    from transformers import (AutoTokenizer, GraniteConfig, GraniteForCausalLM, SmolLM3Config, SmolLM3ForCausalLM,
                              StableLmConfig, StableLmForCausalLM)
    kdir = os.path.join(TOKS, "class", {"stablelm": "stablelm2_gpt2_class", "stablelm_qk": "stablelm3b_neox_class",
                                        "smollm3": "smollm3_backend_class", "granite": "granite_gpt2_class"}[which])
    small = dict(vocab_size=len(AutoTokenizer.from_pretrained(kdir)), hidden_size=32, intermediate_size=64,
                 num_hidden_layers=3, max_position_embeddings=256, bos_token_id=0, eos_token_id=0, pad_token_id=0)
    torch.manual_seed(10)
    if which == "stablelm":
        m = StableLmForCausalLM(StableLmConfig(**small, num_attention_heads=2, num_key_value_heads=2, use_qkv_bias=True,
                                               partial_rotary_factor=0.25, tie_word_embeddings=False))
    elif which == "stablelm_qk":
        m = StableLmForCausalLM(StableLmConfig(**small, num_attention_heads=4, num_key_value_heads=2, qk_layernorm=True,
                                               use_parallel_residual=True, partial_rotary_factor=0.5))
    elif which == "smollm3":
        m = SmolLM3ForCausalLM(SmolLM3Config(**small, num_attention_heads=4, num_key_value_heads=2,
                                             no_rope_layers=[1, 0, 1], use_sliding_window=True, sliding_window=6))
    else:
        m = GraniteForCausalLM(GraniteConfig(**small, num_attention_heads=4, num_key_value_heads=2, embedding_multiplier=4.0,
                                             attention_multiplier=0.2, residual_multiplier=0.5, logits_scaling=2.5,
                                             tie_word_embeddings=True))
    randomize(m, 11)
    save_with_tokenizer(m, d, os.path.join(kdir, "tokenizer.json"))
    if os.path.exists(os.path.join(kdir, "tokenizer_config.json")):
        shutil.copy(os.path.join(kdir, "tokenizer_config.json"), d)


def build(which, d):
    if which in ("stablelm", "stablelm_qk", "smollm3", "granite"):
        return build_small_baseline(which, d)
    from transformers import (Gemma2Config, Gemma2ForCausalLM, Gemma3ForCausalLM, Gemma3TextConfig, GemmaConfig, GemmaForCausalLM, MinistralConfig,
                              MinistralForCausalLM, OlmoConfig, OlmoForCausalLM)
    if which.startswith("gemma"):
        gdir = os.path.join(TOKS, "class", "gemma_layout")
        tok = os.path.join(gdir, "tokenizer.json")
        small = dict(vocab_size=vocab_size_of(tok), hidden_size=32, intermediate_size=64, num_attention_heads=4,
                     num_key_value_heads=2, head_dim=16, max_position_embeddings=256, bos_token_id=2, eos_token_id=1,
                     pad_token_id=0)
        torch.manual_seed(8)
        if which == "gemma":
            m = GemmaForCausalLM(GemmaConfig(**small, num_hidden_layers=2))
        elif which == "gemma2":
            m = Gemma2ForCausalLM(Gemma2Config(**small, num_hidden_layers=3, sliding_window=6, query_pre_attn_scalar=24,
                                               attn_logit_softcapping=3.0, final_logit_softcapping=5.0))
        else:
            m = Gemma3ForCausalLM(Gemma3TextConfig(**small, num_hidden_layers=3, sliding_window=6, query_pre_attn_scalar=24,
                                                   layer_types=["sliding_attention", "full_attention", "sliding_attention"],
                                                   final_logit_softcapping=5.0))
        randomize(m, 9)
        save_with_tokenizer(m, d, tok)
        if which == "gemma":  # (as Gemma's own; gemma2 and gemma3 pick GemmaTokenizer by model_type)
            shutil.copy(os.path.join(gdir, "tokenizer_config.json"), d)
        return
    if which == "phi":
        from transformers import PhiConfig, PhiForCausalLM
        tok = os.path.join(TOKS, "gpt2", "tokenizer.json")
        cfg = PhiConfig(vocab_size=vocab_size_of(tok), hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                        num_attention_heads=4, num_key_value_heads=2, partial_rotary_factor=0.4, qk_layernorm=True,
                        max_position_embeddings=256, bos_token_id=0, eos_token_id=0)
        torch.manual_seed(10)
        m = PhiForCausalLM(cfg)
        randomize(m, 11)
        save_with_tokenizer(m, d, tok)
        with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
            json.dump({"tokenizer_class": "CodeGenTokenizer", "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>",
                       "unk_token": "<|endoftext|>", "add_prefix_space": False}, f)
        return
    if which.startswith("opt"):
        from tokenizers import Tokenizer, processors
        from transformers import OPTConfig, OPTForCausalLM
        t = Tokenizer.from_file(os.path.join(TOKS, "gpt2", "tokenizer.json"))
        t.add_special_tokens(["</s>"])
        eos = t.token_to_id("</s>")
        t.post_processor = processors.TemplateProcessing(single="</s> $A", pair="</s> $A </s> $B", special_tokens=[("</s>", eos)])
        tok = os.path.join(os.path.dirname(d), which + "_tokenizer.json")
        os.makedirs(os.path.dirname(d), exist_ok=True)
        t.save(tok)
        extra = dict(do_layer_norm_before=False, word_embed_proj_dim=16) if which == "opt350" else {}
        cfg = OPTConfig(vocab_size=vocab_size_of(tok), hidden_size=32, ffn_dim=64, num_hidden_layers=2, num_attention_heads=4,
                        max_position_embeddings=256, bos_token_id=eos, eos_token_id=eos, pad_token_id=1, **extra)
        torch.manual_seed(12)
        m = OPTForCausalLM(cfg)
        randomize(m, 13)
        save_with_tokenizer(m, d, tok)
        with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
            json.dump({"tokenizer_class": "GPT2Tokenizer", "add_bos_token": True, "bos_token": "</s>", "eos_token": "</s>",
                       "unk_token": "</s>", "errors": "replace", "add_prefix_space": False}, f)
        return
    if which == "olmo":
        tok = os.path.join(TOKS, "gpt2", "tokenizer.json")
        cfg = OlmoConfig(vocab_size=vocab_size_of(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256, clip_qkv=0.7,
                         tie_word_embeddings=False, bos_token_id=0, eos_token_id=0, pad_token_id=0)
        torch.manual_seed(5)
        m = OlmoForCausalLM(cfg)
    else:
        tok = os.path.join(TOKS, "hf_sp", "tokenizer.json")
        cfg = MinistralConfig(vocab_size=vocab_size_of(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                              num_attention_heads=4, num_key_value_heads=2, head_dim=8, max_position_embeddings=256,
                              sliding_window=6, layer_types=["sliding_attention", "full_attention", "sliding_attention"],
                              tie_word_embeddings=False, bos_token_id=1, eos_token_id=2)
        torch.manual_seed(6)
        m = MinistralForCausalLM(cfg)
    randomize(m, 7)
    save_with_tokenizer(m, d, tok)
    if which == "ministral":  # (without it AutoTokenizer has no BOS, which lm-eval's HFLM needs)
        with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
            json.dump({"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}, f)


def lm_eval_requests(d):
    import lm_eval
    from lm_eval.models.huggingface import HFLM
    lm = HFLM(pretrained=d, batch_size=8, device="cpu", dtype="float32")
    print("%s: lm-eval encodes \"The cat\" as %s (prefix token %d)" % (os.path.basename(d), lm.tok_encode("The cat"),
                                                                       lm.prefix_token_id))
    out = lm_eval.simple_evaluate(model=lm, tasks=list(SPLIT), limit=LIMIT, log_samples=True, bootstrap_iters=0,
                                  random_seed=0, numpy_random_seed=1234, torch_random_seed=1234, fewshot_random_seed=1234)
    rec = {}
    for t in SPLIT:
        reqs = {(s["doc_id"], i): (float(r[0][0]), bool(r[0][1]))
                for s in out["samples"][t] for i, r in enumerate(s["resps"])}
        rec[t] = ({k: v for k, v in out["results"][t].items() if k.startswith("acc") and not k.startswith("acc_stderr")
                   and not k.startswith("acc_norm_stderr")}, reqs)
    return rec


def xsa_eval_requests(d, out):
    subprocess.run([os.path.join(ROOT, "xsa-eval"), "run", "--model", d, "--tasks", ",".join(SPLIT), "--data-dir", DATA,
                    "--offline", "--allow-data-change", "--limit", str(LIMIT), "--log-samples", "--device", "cpu",
                    "--quiet", "-o", out], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    folder = glob.glob(os.path.join(out, "*", ""))[0]
    res = json.load(open(glob.glob(folder + "results_*.json")[0]))["results"]
    rec = {}
    for t in SPLIT:
        reqs = {}
        for line in open(glob.glob(folder + "samples_%s_*.jsonl" % t)[0]):
            r = json.loads(line)
            for i, q in enumerate(r["requests"]):
                reqs[(r["doc_id"], i)] = (q["logprob"], q["greedy"])
        rec[t] = ({k: v for k, v in res[t].items() if k in ("acc,none", "acc_norm,none")}, reqs)
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keep", help="folder for the checkpoints and results (default: a temporary one, removed)")
    ap.add_argument("--only", help="comma-separated families (default: all)")
    args = ap.parse_args()

    def splits(path, name):
        t = task_of_dataset(path, name)
        ds = json_dataset(os.path.join(DATA, t, SPLIT[t] + ".jsonl"))
        return {"train": ds, "validation": ds, "test": ds}
    install_local_datasets(splits)
    tmp = None if args.keep else tempfile.TemporaryDirectory()
    base = args.keep or tmp.name
    bad = 0
    families = ("olmo", "ministral", "gemma", "gemma2", "gemma3", "phi", "opt", "opt350", "stablelm", "stablelm_qk", "smollm3",
                "granite")
    for which in args.only.split(",") if args.only else families:
        d = os.path.join(base, which)
        build(which, d)
        ref, got = lm_eval_requests(d), xsa_eval_requests(d, os.path.join(base, "out_" + which))
        worst, n, greedy = 0.0, 0, 0
        for t in SPLIT:
            for k, (ll, g) in ref[t][1].items():
                ll2, g2 = got[t][1][k]
                worst, n, greedy = max(worst, abs(ll - ll2)), n + 1, greedy + (g != g2)
            same = all(abs(ref[t][0][k] - got[t][0].get(k, -1)) < 1e-9 for k in ref[t][0])
            print("%s %s: lm-eval %s xsa-eval %s%s" % (which, t, ref[t][0], got[t][0], "" if same else "  DIFFER"))
            bad += not same
        print("%s: %d requests, max |d ll| %.3g, greedy flags differing %d" % (which, n, worst, greedy))
        bad += worst > 1e-4 or greedy > 0
    raise SystemExit(1 if bad else 0)


if __name__ == "__main__":
    help_flag(__doc__)  # before anything is written
    main()
