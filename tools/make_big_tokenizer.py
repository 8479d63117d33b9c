#!/usr/bin/env python3
"""Writes a large byte-level BPE tokenizer.json for load-time and throughput measurements
(bench/bench_tokenizer_stress.c). Not a fixture: write it under build/ or /tmp.

It takes the Llama 3 fixture's pipeline (Split regex + ByteLevel, ignore_merges) and the GPT-2
one when --gpt2, trains a BPE with the `tokenizers` library on the text of ../shared/benchdata
(or tests/fixtures/tokenizers/corpus.txt) and, when the text runs out of pairs before --vocab,
adds random merges of existing tokens until vocab and merges reach their targets. The file is
then loaded back with `tokenizers` and timed, so its load time can be set beside ours.

Usage: python3 tools/make_big_tokenizer.py OUT.json [--vocab 128000] [--merges N] [--gpt2]
"""
import argparse
import glob
import json
import os
import random
import sys
import time

from tokenizers import Tokenizer, models, pre_tokenizers, trainers

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def texts():
    files = sorted(glob.glob(os.path.join(ROOT, "..", "shared", "benchdata", "*", "*.jsonl")))
    if not files:
        files = [os.path.join(ROOT, "tests", "fixtures", "tokenizers", "corpus.txt")]
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                yield line


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--vocab", type=int, default=128000)
    ap.add_argument("--merges", type=int, default=0, help="total merges (default: vocab - 256 - added)")
    ap.add_argument("--gpt2", action="store_true", help="GPT-2 pipeline instead of Llama 3's")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    base = json.load(open(os.path.join(ROOT, "tests", "fixtures", "tokenizers", "gpt2" if a.gpt2 else "llama3", "tokenizer.json"), encoding="utf-8"))

    t0 = time.time()
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=a.vocab, min_frequency=1, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts(), trainer)
    m = json.loads(tok.to_str())["model"]
    vocab, merges = m["vocab"], [tuple(x.split(" ", 1)) if isinstance(x, str) else tuple(x) for x in m["merges"]]
    print("trained: %d tokens, %d merges in %.1f s" % (len(vocab), len(merges), time.time() - t0), file=sys.stderr)

    # Pad with random merges of existing tokens (short ones preferred) up to --vocab tokens, then
    # with further merges that rebuild existing tokens from another split, up to the merge target.
    rng = random.Random(a.seed)
    want_merges = a.merges or a.vocab - 256
    toks = sorted(vocab, key=lambda s: vocab[s])
    seen = set(merges)
    short = [s for s in toks if len(s) <= 4]
    tries = 0
    while len(vocab) < a.vocab and len(merges) < want_merges and tries < 100 * a.vocab:
        tries += 1
        x = rng.choice(short if rng.random() < 0.7 else toks)
        y = rng.choice(short)
        if (x, y) in seen or len(x) + len(y) > 24 or x + y in vocab:
            continue
        seen.add((x, y))
        merges.append((x, y))
        vocab[x + y] = len(vocab)
        toks.append(x + y)
        if len(x + y) <= 4:
            short.append(x + y)
    tries = 0
    while len(merges) < want_merges and tries < 100 * want_merges:
        tries += 1
        z = rng.choice(toks)
        if len(z) < 2:
            continue
        k = rng.randint(1, len(z) - 1)
        x, y = z[:k], z[k:]
        if x in vocab and y in vocab and (x, y) not in seen:
            seen.add((x, y))
            merges.append((x, y))
    n_added = len(base["added_tokens"])
    for k, at in enumerate(base["added_tokens"]):  # specials after the model vocabulary
        at["id"] = len(vocab) + k
    base["model"]["vocab"] = vocab
    as_str = isinstance(base["model"]["merges"][0], str)  # keep the fixture's merge format
    base["model"]["merges"] = [" ".join(p) if as_str else list(p) for p in merges]
    # Point the post-processor's special ids at the renumbered added tokens.
    ids = {at["content"]: at["id"] for at in base["added_tokens"]}
    def fix(o):
        if isinstance(o, dict):
            if "ids" in o and "tokens" in o:
                o["ids"] = [ids.get(tk, i) for tk, i in zip(o["tokens"], o["ids"])]
            for v in o.values():
                fix(v)
        elif isinstance(o, list):
            for v in o:
                fix(v)
    fix(base["post_processor"])
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(base, f, ensure_ascii=False)
    print("wrote %s: %d tokens + %d added, %d merges, %.1f MB" % (a.out, len(vocab), n_added, len(merges),
                                                                  os.path.getsize(a.out) / 1e6), file=sys.stderr)
    t0 = time.time()
    Tokenizer.from_file(a.out)
    print("tokenizers %s: Tokenizer.from_file %.3f s" % (__import__("tokenizers").__version__, time.time() - t0))


if __name__ == "__main__":
    main()
