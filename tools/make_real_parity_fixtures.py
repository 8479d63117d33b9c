#!/usr/bin/env python3
"""lm-evaluation-harness parity on the REAL benchmark files of ../shared/benchdata.

stories260K (llama2.c) is converted to a Hugging Face Llama (adjacent-pair RoPE permuted to
rotate_half), its tok512.bin tokenizer is wrapped as a transformers tokenizer through an
independent Python port of llama2.c's encoder (tools/llama2c_tokenizer_reference.py), and real
lm-eval (HFLM, float32) scores the first LIMIT docs of eight tasks. The rows lm-eval reads are
made here from the original-author files, independently of xsa-eval's C adapters.
HellaSwag is left out: ../shared/benchdata only holds a third-party text dump of it, which
lm-eval's process_docs cannot read.

Writes tests/fixtures/parity/stories260K_real/lm_eval.json (per request ll and is_greedy,
metrics); tests/test_parity_real.c compares `xsa-eval run --data-dir ../shared/benchdata`.

    pip install torch transformers lm-eval datasets
    python3 tools/make_real_parity_fixtures.py [--shared ../shared] [--limit 40]
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llama2c_reference as l2c  # noqa: E402
import llama2c_tokenizer_reference as l2t  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "parity", "stories260K_real")
TASKS = ["arc_easy", "arc_challenge", "boolq", "lambada_openai", "openbookqa", "piqa", "social_iqa", "winogrande"]


def jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(l) for l in f if l.strip()]


def lines(path):
    with open(path, encoding="utf-8") as f:
        return [l.strip() for l in f if l.strip()]


def rows_for(task, bd):
    """Hugging Face schema rows from the original-author files (docs/lm-eval-semantics.md §3.3)."""
    def qa(path, stem_key):
        out = []
        for r in jsonl(path):
            ch = r["question"]["choices"]
            out.append({"id": r["id"], stem_key: r["question"]["stem"],
                        "choices": {"text": [c["text"] for c in ch], "label": [c["label"] for c in ch]},
                        "answerKey": r["answerKey"]})
        return out
    if task == "arc_easy":
        return qa(os.path.join(bd, "arc_easy", "ARC-Easy-Test.jsonl"), "question")
    if task == "arc_challenge":
        return qa(os.path.join(bd, "arc_challenge", "ARC-Challenge-Test.jsonl"), "question")
    if task == "openbookqa":
        return qa(os.path.join(bd, "openbookqa", "test.jsonl"), "question_stem")
    if task == "boolq":
        return [{"question": r["question"], "passage": r["title"] + " -- " + r["passage"], "idx": i,
                 "label": int(bool(r["answer"]))} for i, r in enumerate(jsonl(os.path.join(bd, "boolq", "dev.jsonl")))]
    if task == "lambada_openai":
        return [{"text": r["text"]} for r in jsonl(os.path.join(bd, "lambada_openai", "lambada_test.jsonl"))]
    if task == "piqa":
        labels = lines(os.path.join(bd, "piqa", "valid-labels.lst"))
        return [{"goal": r["goal"], "sol1": r["sol1"], "sol2": r["sol2"], "label": int(l)}
                for r, l in zip(jsonl(os.path.join(bd, "piqa", "valid.jsonl")), labels)]
    if task == "social_iqa":
        labels = lines(os.path.join(bd, "siqa", "dev-labels.lst"))
        return [{k: r[k] for k in ["context", "question", "answerA", "answerB", "answerC"]} | {"label": l}
                for r, l in zip(jsonl(os.path.join(bd, "siqa", "dev.jsonl")), labels)]
    if task == "winogrande":
        return [{k: r[k] for k in ["sentence", "option1", "option2", "answer"]}
                for r in jsonl(os.path.join(bd, "winogrande", "dev.jsonl"))]
    raise KeyError(task)


def install_loader(bd):
    import datasets
    by_path = {("allenai/ai2_arc", "ARC-Easy"): "arc_easy", ("allenai/ai2_arc", "ARC-Challenge"): "arc_challenge",
               ("aps/super_glue", "boolq"): "boolq", ("EleutherAI/lambada_openai", "default"): "lambada_openai",
               ("allenai/openbookqa", "main"): "openbookqa", ("baber/piqa", None): "piqa",
               ("allenai/social_i_qa", None): "social_iqa", ("lighteval/siqa", None): "social_iqa",
               ("allenai/winogrande", "winogrande_xl"): "winogrande"}

    def fake(path=None, name=None, **kwargs):
        task = by_path.get((path, name)) or by_path.get((path, None))
        ds = datasets.Dataset.from_list(rows_for(task, bd))
        return datasets.DatasetDict({"train": ds, "validation": ds, "test": ds})
    datasets.load_dataset = fake


def make_tokenizer(path):
    from transformers import PreTrainedTokenizer
    ref = l2t.load(path)

    class Llama2cTokenizer(PreTrainedTokenizer):
        """llama2.c's encoder as a transformers tokenizer: tokens are id strings."""
        def __init__(self, **kw):
            self.ref = ref
            super().__init__(**kw)

        @property
        def vocab_size(self):
            return len(self.ref.vocab)

        def get_vocab(self):
            return {str(i): i for i in range(len(self.ref.vocab))}

        def _tokenize(self, text, **kw):
            return [str(i) for i in l2t.encode(self.ref, text.encode("utf-8"), bos=False)]

        def _convert_token_to_id(self, token):
            return int(token) if token.isdigit() else {"<s>": 1, "</s>": 2, "<unk>": 0}.get(token, 0)

        def _convert_id_to_token(self, i):
            return {0: "<unk>", 1: "<s>", 2: "</s>"}.get(i, str(i))

        def convert_tokens_to_string(self, tokens):
            out = b""
            for t in tokens:
                out += l2t.decode(self.ref, -1, int(t)) if t.isdigit() else t.encode()
            return out.decode("utf-8", errors="replace")

        def build_inputs_with_special_tokens(self, a, b=None):
            return [1] + a + ([] if b is None else b)

    return Llama2cTokenizer(bos_token="<s>", eos_token="</s>", unk_token="<unk>")


def convert_model(path):
    cfg, w = l2c.read_llama2c(path)
    return l2c.to_hf_llama(cfg, w, torch.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared"))
    ap.add_argument("--limit", type=int, default=40)
    a = ap.parse_args()
    bd = os.path.join(a.shared, "benchdata")
    install_loader(bd)
    import lm_eval
    from importlib.metadata import version
    from lm_eval.models.huggingface import HFLM
    model = convert_model(os.path.join(bd, "models", "stories260K", "stories260K.bin"))
    tok = make_tokenizer(os.path.join(bd, "models", "stories260K", "tok512.bin"))
    lm = HFLM(pretrained=model, tokenizer=tok, batch_size=8, device="cpu", dtype="float32")
    out = lm_eval.simple_evaluate(model=lm, tasks=TASKS, num_fewshot=0, limit=a.limit, log_samples=True,
                                  bootstrap_iters=100000)
    rec = {"lm_eval_version": version("lm_eval"), "transformers": version("transformers"), "torch": torch.__version__,
           "limit": a.limit, "max_length": lm.max_length, "tasks": {}}
    for task in TASKS:
        res = out["results"][task]
        metrics = {k.split(",")[0]: v for k, v in res.items() if k.endswith(",none") and not isinstance(v, str)}
        reqs = []
        for s in sorted(out["samples"][task], key=lambda s: s["doc_id"]):
            for idx, r in enumerate(s["resps"]):
                ll, greedy = r[0]
                reqs.append({"doc_id": s["doc_id"], "idx": idx, "ll": float(ll), "greedy": bool(greedy)})
        rec["tasks"][task] = {"metrics": metrics, "requests": reqs, "n_docs": len(out["samples"][task])}
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "lm_eval.json"), "w") as f:
        json.dump(rec, f, indent=1)
    print({t: rec["tasks"][t]["metrics"] for t in TASKS})


if __name__ == "__main__":
    main()
