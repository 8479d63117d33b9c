#!/usr/bin/env python3
"""Builds the two tiny demo checkpoints demo/sa/ and demo/xsa/ (Llama architecture, SA and XSA in
every layer) and their shared byte-level BPE tokenizer, for `make demo` (tools/demo.sh).

    python3 tools/make_demo_checkpoints.py [--out demo] [--steps 200] [--threads 1]

What they are: a pipeline demonstration, not a benchmark. Both models are trained for a few
hundred steps, from the same initialisation and in the same data order, on
  * the short texts written for this script (DEMO_TEXT below, authored for this repository), and
  * the synthetic task rows bundled in tests/fixtures/data/<task>/<split>.jsonl, each as lm-eval
    0-shot renders it (context + the CORRECT answer only; the requests real lm-eval built from
    those rows are committed in tests/fixtures/tasks/<task>.expected.jsonl),
so they partly memorise the bundled rows and score above chance on them. The numbers say nothing about
SA vs XSA on real data. Trained rather than random weights so the demo report shows non-trivial,
differing accuracies instead of chance-level noise.

XSA is computed exactly as xsa-eval computes it (tools/make_model_fixtures.py's install_xsa hooks,
imported, not copied): per query head h on the attention output y before o_proj,
z = y - (y.v / |v|^2) v, with v the token's own value vector of kv head h // (H / Hkv).

Each output directory gets config.json (+ "xsa_layers": "none" | "all"), model.safetensors (fp32,
tied embeddings) and tokenizer.json; the script is deterministic (fixed seeds, fixed thread count).
It prints the training loss every 50 steps and the end loss of both models.
"""
import argparse
import json
import math
import os
import shutil
import sys
import time

import torch
import torch.nn.functional as F
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.utils import logging as hf_logging

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_model_fixtures import install_xsa  # noqa: E402  (the one XSA definition used by the fixtures)

REQUESTS = "tests/fixtures/tasks"
CONTEXT = 256
VOCAB = 1024
EOT = "<|endoftext|>"

# Authored for this repository (free to use with it). Plain sentences so the tokenizer and the
# models see ordinary English besides the task rows.
DEMO_TEXT = """\
This is a small demonstration model. It was trained for a few minutes on a laptop processor.
It has read a handful of questions many times and it remembers their answers.
It knows nothing else about the world, so its scores only show that the pipeline works.

A language model reads a text one token at a time and guesses the next token.
The evaluation asks the model how likely each answer is after the question.
The answer with the highest likelihood is the model's choice.
When the choice is the correct answer, the model scores a point.

Self attention lets every token look back at the tokens before it.
Exclusive self attention removes from each head's output the part that points along the token's own value.
The rest of the model is the same, so the two models can be compared fairly.

The sun rises in the east and sets in the west. Water freezes when it is cold and boils when it is hot.
Plants grow toward the light. A seed needs water, air and warmth to sprout.
The moon does not make its own light. It reflects the light of the sun.
Rain falls from clouds, runs into rivers and flows to the sea.

The cat sat by the window and watched the birds in the garden.
The dog ran across the yard and brought back the ball.
She put the cups on the shelf and the plates in the cupboard.
He tied his shoes, took his coat and walked to the station in the rain.
They planted tomatoes in the spring and picked them at the end of the summer.

Question: What do you use to cut paper?
Answer: scissors
Question: Where do fish live?
Answer: in water
Q: Alex helped a friend carry boxes up the stairs. How would the friend feel?
A: thankful
"""


TASKS = ["arc_easy", "arc_challenge", "boolq", "hellaswag", "lambada_openai", "openbookqa", "piqa",
         "social_iqa", "winogrande"]


def load_task_texts(requests_dir):
    """Per bundled row: lm-eval's own 0-shot request for the correct answer, context + continuation.
    tests/fixtures/tasks/<task>.expected.jsonl holds the requests real lm-eval builds from
    tests/fixtures/data (tools/make_task_fixtures.py); a row no choice is right for (gold -100,
    edge cases on purpose) contributes its context only."""
    texts = []
    for task in TASKS:
        with open(os.path.join(requests_dir, task + ".expected.jsonl"), encoding="utf-8") as fh:
            for line in fh:
                doc = json.loads(line)
                reqs, gold = doc["requests"], doc["gold"]
                texts.append("".join(reqs[gold]) if 0 <= gold < len(reqs) else reqs[0][0])
    return texts


def train_tokenizer(texts):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, min_frequency=2, special_tokens=[EOT],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    return tok


def make_batches(docs, steps, batch, seed):
    """Doc indices per step: successive seeded permutations of all docs (same order for both models)."""
    g = torch.Generator().manual_seed(seed)
    order = []
    while len(order) < steps * batch:
        order += torch.randperm(len(docs), generator=g).tolist()
    return [order[s * batch:(s + 1) * batch] for s in range(steps)]


def collate(docs, idx):
    T = max(len(docs[i]) for i in idx)
    x = torch.zeros(len(idx), T, dtype=torch.long)              # (B, T), right-padded with EOT id 0
    y = torch.full((len(idx), T), -100, dtype=torch.long)       # (B, T) next-token targets
    for r, i in enumerate(idx):
        d = docs[i]
        x[r, :len(d)] = torch.tensor(d)
        y[r, :len(d) - 1] = torch.tensor(d[1:])
    return x, y


def train(model, xsa, docs, batches, lr):
    handles = install_xsa(model, range(model.config.num_hidden_layers)) if xsa else []
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.01)
    steps, warm = len(batches), 20
    curve = []
    model.train()
    for s, idx in enumerate(batches):
        f = (s + 1) / warm if s < warm else 0.1 + 0.45 * (1 + math.cos(math.pi * (s - warm) / (steps - warm)))
        for gr in opt.param_groups:
            gr["lr"] = lr * f
        x, y = collate(docs, idx)
        logits = model(x).logits                                 # (B, T, V)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        curve.append(float(loss.detach()))
        if s % 50 == 0 or s == steps - 1:
            print(f"  {'xsa' if xsa else 'sa '} step {s:4d} loss {curve[-1]:.4f}", flush=True)
    for h in handles:
        h.remove()
    return curve


def save(model, tok_path, path, xsa_layers):
    shutil.rmtree(path, ignore_errors=True)
    model.save_pretrained(path, safe_serialization=True)
    gen = os.path.join(path, "generation_config.json")
    if os.path.exists(gen):
        os.remove(gen)  # not read by xsa-eval
    cfg_path = os.path.join(path, "config.json")
    with open(cfg_path) as f:
        cfg = json.load(f)
    cfg["xsa_layers"] = xsa_layers
    with open(cfg_path, "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")
    shutil.copyfile(tok_path, os.path.join(path, "tokenizer.json"))
    for f in os.listdir(path):
        os.chmod(os.path.join(path, f), 0o644)  # safetensors writes 0600


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="demo")
    ap.add_argument("--requests", default=REQUESTS)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=1, help="fixed, for bit-reproducible weights")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    hf_logging.disable_progress_bar()
    torch.use_deterministic_algorithms(True)

    paragraphs = [p.strip() for p in DEMO_TEXT.split("\n\n") if p.strip()]
    texts = paragraphs + load_task_texts(args.requests)
    tok = train_tokenizer(texts)
    os.makedirs(args.out, exist_ok=True)
    tok_path = os.path.join(args.out, ".tokenizer.json.tmp")
    tok.save(tok_path)
    docs = [tok.encode(t).ids[-CONTEXT:] for t in texts]  # keep the end, as lm-eval left-truncates
    n_tok = sum(len(d) for d in docs)
    print(f"{len(texts)} documents ({len(paragraphs)} authored, {len(texts) - len(paragraphs)} task rows), "
          f"{n_tok} tokens, vocab {tok.get_vocab_size()}, longest {max(len(d) for d in docs)}")

    cfg = LlamaConfig(vocab_size=tok.get_vocab_size(), hidden_size=64, intermediate_size=192,
                      num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=CONTEXT, rope_theta=10000.0, rms_norm_eps=1e-5,
                      tie_word_embeddings=True, bos_token_id=0, eos_token_id=0)
    torch.manual_seed(0)
    init = LlamaForCausalLM(cfg).state_dict()
    init = {k: v.clone() for k, v in init.items()}
    batches = make_batches(docs, args.steps, args.batch, seed=1)

    for name, xsa in [("sa", False), ("xsa", True)]:
        model = LlamaForCausalLM(cfg)
        model.load_state_dict(init)
        t0 = time.time()
        curve = train(model, xsa, docs, batches, args.lr)
        secs = time.time() - t0
        model.eval()
        path = os.path.join(args.out, name)
        save(model, tok_path, path, "all" if xsa else "none")
        n_params = sum(p.numel() for p in model.parameters())
        size = sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))
        end = sum(curve[-10:]) / 10
        print(f"{name}: {n_params} parameters, {size} bytes on disk, {secs:.0f} s, "
              f"loss {curve[0]:.3f} -> {end:.3f} (mean of the last 10 steps)", flush=True)
    os.remove(tok_path)


if __name__ == "__main__":
    main()
