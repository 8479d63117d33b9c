#!/usr/bin/env python3
"""xsa-eval on an llm.c GPT-2 checkpoint of GPT-2 124M's real shape, against llm.c's own GPT.

  git clone https://github.com/karpathy/llm.c /tmp/llm.c   # never commit its code
  python3 -m tools.references.check_llmc_gpt2 --train-gpt2 /tmp/llm.c/train_gpt2.py [--dtype bfloat16]

Builds llm.c's GPT (its train_gpt2.py class, its own init) at GPT-2 124M's shape (12 layers, 12
heads, 768 wide, 1024 positions, 50,257 tokens, which llm.c's pad_vocab pads to 50,304), writes it
with llm.c's write_model (/tmp/llmc_gpt2_124M.bin, ~500 MB in float32), runs `xsa-eval logprobs`
on fixed token sequences and compares each log-probability and greedy flag with llm.c's GPT in
float64 (the bfloat16 file: weights rounded to bfloat16 first). The committed fixtures
(tests/fixtures/llmc) are tiny; this checks the real shape and llm.c's real padding. Prints the
worst difference, beside that of llm.c's GPT run in float32 (the same float64 reference); exit 1
above 1e-4 or on a greedy mismatch. Needs torch and ./xsa-eval.
"""
import argparse
import importlib.util
import subprocess

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train-gpt2", required=True)
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    ap.add_argument("--out", default="/tmp/llmc_gpt2_124M.bin")
    ap.add_argument("--xsa-eval", default="./xsa-eval")
    a = ap.parse_args()
    spec = importlib.util.spec_from_file_location("llmc_train_gpt2", a.train_gpt2)
    llmc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(llmc)
    torch.manual_seed(0)
    model = llmc.GPT(llmc.GPTConfig(block_size=1024, vocab_size=50257, n_layer=12, n_head=12, n_embd=768))
    with torch.no_grad():  # llm.c's init leaves LayerNorms at 1/0 and biases 0: draw them too
        for name, p in model.named_parameters():
            if name.endswith(".bias") or ".ln_" in name:
                p.copy_((1.0 if name.endswith("weight") else 0.0) + 0.1 * torch.randn_like(p))
            else:
                p.mul_(2.0)
    llmc.write_model(model, a.out, a.dtype)
    if a.dtype == "bfloat16":
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(p.to(torch.bfloat16).to(torch.float32))
    f32 = model.eval()
    ref = llmc.GPT(model.config)
    ref.load_state_dict(model.state_dict())
    ref = ref.double().eval()
    g = torch.Generator().manual_seed(3)
    worst, worst32, mism, n = 0.0, 0.0, 0, 0
    for length in (16, 300, 1024):
        toks = torch.randint(0, 50257, (length,), generator=g).tolist()
        toks[length // 2] = 50256  # <|endoftext|>, the last real row
        with torch.no_grad():
            logits, _ = ref(torch.tensor([toks]), targets=torch.tensor([toks]))
        lp = torch.log_softmax(logits[0], dim=-1)
        with torch.no_grad():
            logits32, _ = f32(torch.tensor([toks]), targets=torch.tensor([toks]))
        lp32 = torch.log_softmax(logits32[0].double(), dim=-1)
        out = subprocess.run([a.xsa_eval, "logprobs", "--model", a.out, "--tokens", ",".join(map(str, toks)),
                              "--device", "cpu"], check=True, capture_output=True, text=True).stdout.splitlines()
        rows = [line.split() for line in out[1:]]
        for p in range(length - 1):
            got, greedy = float(rows[p][2]), rows[p][3]
            want = lp[p, toks[p + 1]].item()
            worst = max(worst, abs(got - want))
            worst32 = max(worst32, abs(lp32[p, toks[p + 1]].item() - want))
            mism += (greedy == "1") != (lp[p].argmax().item() == toks[p + 1])
            n += 1
    print(f"llm.c GPT-2 124M shape, {a.dtype}: {n} positions, max |xsa-eval - llm.c GPT (float64)| = {worst:.3g}, "
          f"greedy mismatches {mism}; llm.c's GPT in float32: {worst32:.3g} from its float64")
    raise SystemExit(0 if worst <= 1e-4 and mism == 0 else 1)


if __name__ == "__main__":
    main()
