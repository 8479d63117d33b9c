#!/usr/bin/env python3
"""lm-evaluation-harness parity fixtures: what REAL lm-eval computes on our tiny checkpoints.

Builds tiny random-weight Hugging Face checkpoints that carry a real tokenizer, runs
lm-eval's own HFLM + simple_evaluate (float32, CPU, bootstrap_iters=100000) over the
synthetic rows of tests/fixtures/data (every task, 0-shot), and records every request's
log-likelihood and is_greedy and every metric. tests/test_parity.c requires xsa-eval to
reproduce them: identical predictions per doc, log-likelihoods within 1e-4, metrics within 1e-6.

Writes tests/fixtures/parity/<run>/lm_eval.json for each run:
  gpt2_bpe         GPT-2 with the byte-level BPE fixture tokenizer; n_positions 96 so that
                   long BoolQ/HellaSwag requests are left-truncated as lm-eval does
  llama_sp_xsa     Llama (GQA 4/2, untied) with the SentencePiece-style tokenizer.json, whose
                   post-processor adds BOS (lm-eval >= 0.4.9.2 keeps it); XSA in layer 1
                   (config.json "xsa_layers": [1]), patched into the PyTorch forward
  llama_sp_sa      the same checkpoint scored with XSA off (xsa-eval --xsa none)
and the checkpoints themselves under tests/fixtures/parity/models/.

    pip install torch transformers safetensors tokenizers lm-eval datasets
    python3 tools/make_parity_fixtures.py [RUN...]   (naming runs reuses the saved checkpoints)
"""
import json
import os
import shutil
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_model_fixtures as mmf  # noqa: E402  (randomize, install_xsa: XSA in PyTorch)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "fixtures", "data")
TOKS = os.path.join(ROOT, "tests", "fixtures", "tokenizers")
OUT = os.path.join(ROOT, "tests", "fixtures", "parity")

TASKS = ["arc_easy", "arc_challenge", "boolq", "hellaswag", "lambada_openai", "openbookqa", "piqa",
         "social_iqa", "winogrande"]
SPLIT = {"arc_easy": "test", "arc_challenge": "test", "boolq": "validation", "hellaswag": "validation",
         "lambada_openai": "test", "openbookqa": "test", "piqa": "validation", "social_iqa": "validation",
         "winogrande": "validation"}


FEWSHOT = os.path.join(OUT, "fewshot_data")
STATE = {"train_dir": None}  # set: the "train" split comes from <train_dir>/<task>/train.jsonl


def write_fewshot_data():
    """A --data-dir for the few-shot run: each task's evaluated split links to the fixture rows
    and train.jsonl holds the rows lm-eval can use as examples (a row whose label is outside
    its choices makes lm-eval's few-shot builder raise IndexError)."""
    tasks_dir = os.path.join(ROOT, "tests", "fixtures", "tasks")
    for task in TASKS:
        d = os.path.join(FEWSHOT, task)
        os.makedirs(d, exist_ok=True)
        link = os.path.join(d, SPLIT[task] + ".jsonl")
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(os.path.join("..", "..", "..", "data", task, SPLIT[task] + ".jsonl"), link)
        if SPLIT[task] == "test" and task == "lambada_openai":
            continue  # few-shot examples come from the evaluated split itself
        rows = [json.loads(l) for l in open(os.path.join(DATA, task, SPLIT[task] + ".jsonl"), encoding="utf-8")]
        gold = [json.loads(l)["gold"] for l in open(os.path.join(tasks_dir, task + ".expected.jsonl"))]
        with open(os.path.join(d, "train.jsonl"), "w", encoding="utf-8") as f:
            for r, g in zip(rows, gold):
                if g >= 0:
                    f.write(json.dumps(r, ensure_ascii=False) + "\n")


def install_local_loader():
    """datasets.load_dataset(path, name) -> our local JSONL rows, whatever split is asked."""
    import datasets
    real = datasets.load_dataset
    by_path = {
        ("allenai/ai2_arc", "ARC-Easy"): "arc_easy", ("allenai/ai2_arc", "ARC-Challenge"): "arc_challenge",
        ("aps/super_glue", "boolq"): "boolq", ("super_glue", "boolq"): "boolq",
        ("Rowan/hellaswag", None): "hellaswag", ("EleutherAI/lambada_openai", "default"): "lambada_openai",
        ("allenai/openbookqa", "main"): "openbookqa", ("baber/piqa", None): "piqa",
        ("allenai/social_i_qa", None): "social_iqa", ("lighteval/siqa", None): "social_iqa",
        ("social_i_qa", None): "social_iqa",
        ("allenai/winogrande", "winogrande_xl"): "winogrande",
    }

    def fake(path=None, name=None, **kwargs):
        task = by_path.get((path, name)) or by_path.get((path, None))
        if task is None:
            raise RuntimeError("no local data for %r %r" % (path, name))
        f = os.path.join(DATA, task, SPLIT[task] + ".jsonl")
        ds = real("json", data_files={"data": f})["data"]
        train = ds
        if STATE["train_dir"] and os.path.exists(os.path.join(STATE["train_dir"], task, "train.jsonl")):
            train = real("json", data_files={"data": os.path.join(STATE["train_dir"], task, "train.jsonl")})["data"]
        return datasets.DatasetDict({"train": train, "validation": ds, "test": ds})

    datasets.load_dataset = fake


def vocab_size_of(tok_path):
    t = json.load(open(tok_path))
    ids = list(t["model"]["vocab"].values()) + [a["id"] for a in t.get("added_tokens", [])]
    return max(ids) + 1


def build_models():
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM
    models = {}
    d = os.path.join(OUT, "models", "gpt2_bpe")
    tok = os.path.join(TOKS, "gpt2", "tokenizer.json")
    cfg = GPT2Config(vocab_size=vocab_size_of(tok), n_positions=96, n_embd=32, n_layer=2, n_head=4,
                     bos_token_id=0, eos_token_id=0)
    torch.manual_seed(11)
    m = GPT2LMHeadModel(cfg)
    mmf.randomize(m, 11)
    save(m, d, tok)
    models["gpt2_bpe"] = (d, "<|endoftext|>", "<|endoftext|>")

    d = os.path.join(OUT, "models", "llama_sp_xsa")
    tok = os.path.join(TOKS, "hf_sp", "tokenizer.json")
    cfg = LlamaConfig(vocab_size=vocab_size_of(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                      rope_theta=10000.0, tie_word_embeddings=False, bos_token_id=1, eos_token_id=2)
    torch.manual_seed(12)
    m = LlamaForCausalLM(cfg)
    mmf.randomize(m, 12)
    m.config.xsa_layers = [1]
    save(m, d, tok)
    models["llama_sp"] = (d, "<s>", "</s>")
    return models


def save(model, d, tok):
    if os.path.isdir(d):
        shutil.rmtree(d)
    model.save_pretrained(d, safe_serialization=True)
    for extra in ["generation_config.json"]:
        p = os.path.join(d, extra)
        if os.path.exists(p):
            os.remove(p)
    shutil.copy(tok, os.path.join(d, "tokenizer.json"))


def run_lm_eval(ckpt, bos, eos, xsa_layers, num_fewshot=0):
    import lm_eval
    from lm_eval.models.huggingface import HFLM
    from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast
    model = AutoModelForCausalLM.from_pretrained(ckpt, dtype=torch.float32)
    model.eval()
    handles = mmf.install_xsa(model, xsa_layers)
    tok = PreTrainedTokenizerFast(tokenizer_file=os.path.join(ckpt, "tokenizer.json"), bos_token=bos, eos_token=eos)
    lm = HFLM(pretrained=model, tokenizer=tok, batch_size=4, device="cpu", dtype="float32")
    out = lm_eval.simple_evaluate(model=lm, tasks=TASKS, num_fewshot=num_fewshot, log_samples=True,
                                  bootstrap_iters=100000, random_seed=0, numpy_random_seed=1234,
                                  torch_random_seed=1234, fewshot_random_seed=1234)
    for h in handles:
        h.remove()
    rec = {"lm_eval_version": lm_eval.__version__ if hasattr(lm_eval, "__version__") else "",
           "torch": torch.__version__, "max_length": lm.max_length, "xsa_layers": xsa_layers,
           "num_fewshot": num_fewshot, "tasks": {}}
    try:
        from importlib.metadata import version
        rec["lm_eval_version"] = version("lm_eval")
        rec["transformers"] = version("transformers")
    except Exception:
        pass
    for task in TASKS:
        res = out["results"][task]
        metrics = {k.split(",")[0]: (v if not isinstance(v, str) else None)
                   for k, v in res.items() if k.endswith(",none")}
        reqs = []
        for s in sorted(out["samples"][task], key=lambda s: s["doc_id"]):
            for idx, r in enumerate(s["resps"]):
                ll, greedy = r[0]
                reqs.append({"doc_id": s["doc_id"], "idx": idx, "ll": float(ll), "greedy": bool(greedy)})
        rec["tasks"][task] = {"metrics": metrics, "requests": reqs,
                              "n_docs": len(out["samples"][task])}
    return rec


def main():
    install_local_loader()
    models = build_models() if not sys.argv[1:] else {
        "gpt2_bpe": (os.path.join(OUT, "models", "gpt2_bpe"), "<|endoftext|>", "<|endoftext|>"),
        "llama_sp": (os.path.join(OUT, "models", "llama_sp_xsa"), "<s>", "</s>")}
    # gpt2_bpe_fewshot2: two examples from the few-shot split, which the local loader serves
    # from the same rows (tests/fixtures/parity/fewshot_data links train.jsonl to them).
    runs = [("gpt2_bpe", "gpt2_bpe", [], 0), ("llama_sp_xsa", "llama_sp", [1], 0), ("llama_sp_sa", "llama_sp", [], 0),
            ("gpt2_bpe_fewshot2", "gpt2_bpe", [], 2)]
    only = sys.argv[1:]
    for run, mk, xsa, shots in runs:
        if only and run not in only:
            continue
        ckpt, bos, eos = models[mk]
        if shots:
            write_fewshot_data()
        STATE["train_dir"] = FEWSHOT if shots else None
        rec = run_lm_eval(ckpt, bos, eos, xsa, shots)
        rec["checkpoint"] = os.path.relpath(ckpt, ROOT)
        os.makedirs(os.path.join(OUT, run), exist_ok=True)
        with open(os.path.join(OUT, run, "lm_eval.json"), "w") as f:
            json.dump(rec, f, indent=1)
        print(run, {t: rec["tasks"][t]["metrics"] for t in ["arc_easy", "lambada_openai"]})


if __name__ == "__main__":
    main()
