#!/usr/bin/env python3
"""Edge cases of lm-eval's request tokenization, as REAL lm-eval computes them.

For each parity checkpoint (tests/fixtures/parity/models), builds lm-eval's own HFLM and
captures the (context_enc, continuation_enc) that TemplateLM.loglikelihood hands to
_loglikelihood_tokens for (context, continuation) pairs that the task fixtures never produce:
a context of only (Unicode) whitespace, an empty context whose continuation starts with the
prefix token, Unicode whitespace moved into the continuation. "lm_eval_asserts" marks pairs
that _loglikelihood_tokens rejects (`assert len(context_enc) > 0` / `len(continuation_enc) > 0`);
xsa-eval must refuse those with an error. tests/test_encode.c reads the result.

    pip install torch transformers lm-eval
    python3 tools/make_encode_fixtures.py   (from the repo root)
"""
import json
import os

import torch
from lm_eval.api.instance import Instance
from lm_eval.models.huggingface import HFLM
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "tests", "fixtures", "parity", "models")
OUT = os.path.join(ROOT, "tests", "fixtures", "encode", "lm_eval_pairs.json")
CASES = [("  ", " hello"), ("\u3000\n", "hello there"), ("", "<|endoftext|> hello"), ("", "<s> hello"),
         ("", " hello"), ("Hello\u3000", "world"), ("Hello\u00a0\n", " world"), ("Hello wor", "ld"),
         ("The cat", " sat"), ("x\u2028", " y"), ("\u2029", "<s>"), ("Hello", "")]


def main():
    out = {}
    for name, bos, eos in [("gpt2_bpe", "<|endoftext|>", "<|endoftext|>"), ("llama_sp_xsa", "<s>", "</s>")]:
        ck = os.path.join(MODELS, name)
        model = AutoModelForCausalLM.from_pretrained(ck, dtype=torch.float32)
        tok = PreTrainedTokenizerFast(tokenizer_file=os.path.join(ck, "tokenizer.json"), bos_token=bos, eos_token=eos)
        lm = HFLM(pretrained=model, tokenizer=tok, batch_size=1, device="cpu", dtype="float32")
        lm._loglikelihood_tokens = lambda reqs, disable_tqdm=False: reqs  # capture, do not score
        cases = []
        for ctx, cont in CASES:
            inst = Instance(request_type="loglikelihood", doc={}, arguments=(ctx, cont), idx=0)
            (_, ce, te), = lm.loglikelihood([inst])
            cases.append({"context": ctx, "continuation": cont, "ctx": ce, "cont": te,
                          "lm_eval_asserts": not (len(ce) > 0 and len(te) > 0)})
        out[name] = {"tokenizer": os.path.relpath(os.path.join(ck, "tokenizer.json"), ROOT),
                     "prefix_token_id": lm.prefix_token_id, "cases": cases}
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
