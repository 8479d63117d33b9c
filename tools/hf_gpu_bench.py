#!/usr/bin/env python3
"""hf_gpu_bench.py: the Hugging Face transformers path on the same GPU and the same requests as
bench/bench_cuda.c, for the speed ratio in tools/gpu-check.sh.

Builds the same random llama shape (Llama-3.2-1B: 16 layers, d_model 2048, 32/8 heads of 64,
d_ff 8192, vocab 128256, tied head; --small: bench_cuda's small shape) in bfloat16 on the GPU,
then scores the (context, continuation) requests of the JSON lines written by
`bench_cuda --dump FILE` the way lm-evaluation-harness's HFLM does: every request on its own
(no prefix sharing), sorted longest first, right-padded batches, full logits, log_softmax over
the vocabulary, gather of the continuation tokens and a greedy check. Prints requests/s and
request tokens/s, and `RESULT requests_per_s=...` for the script. Needs torch + transformers.
"""
import argparse
import json
import random
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", required=True, help="JSON lines from bench_cuda --dump")
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--max-seconds", type=float, default=60.0, help="stop after this much scoring time")
    a = ap.parse_args()

    import torch
    import torch.nn.functional as F
    from transformers import LlamaConfig, LlamaForCausalLM

    if not torch.cuda.is_available():
        print("hf_gpu_bench: no GPU visible to torch", file=sys.stderr)
        return 3
    if a.small:
        cfg = LlamaConfig(vocab_size=32000, hidden_size=512, intermediate_size=1536, num_hidden_layers=4,
                          num_attention_heads=8, num_key_value_heads=2, head_dim=64, max_position_embeddings=2048,
                          tie_word_embeddings=True)
    else:
        cfg = LlamaConfig(vocab_size=128256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                          num_attention_heads=32, num_key_value_heads=8, head_dim=64, max_position_embeddings=4096,
                          tie_word_embeddings=True)
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = LlamaForCausalLM(cfg).to(torch.bfloat16).eval()
    n_params = sum(p.numel() for p in model.parameters())

    reqs = []
    with open(a.requests) as f:
        for line in f:
            d = json.loads(line)
            for cont in d["conts"]:
                reqs.append((d["ctx"], cont))
    reqs.sort(key=lambda r: -(len(r[0]) + len(r[1])))  # lm-eval's Collator: longest first

    def run(batch):
        # lm-eval feeds (context + continuation)[:-1] and reads the last len(cont) positions.
        inps = [(c + k)[:-1] for c, k in batch]
        width = max(len(x) for x in inps)
        ids = torch.zeros((len(batch), width), dtype=torch.long, device="cuda")
        for i, x in enumerate(inps):
            ids[i, : len(x)] = torch.tensor(x, device="cuda")
        with torch.no_grad():
            logits = F.log_softmax(model(ids).logits, dim=-1)
        out = []
        for i, (c, k) in enumerate(batch):
            n = len(inps[i])
            lg = logits[i, n - len(k): n].unsqueeze(0)
            greedy = bool((lg.argmax(dim=-1) == torch.tensor(k, device="cuda")).all())
            lp = torch.gather(lg, 2, torch.tensor(k, device="cuda").view(1, -1, 1)).squeeze(-1).sum()
            out.append((float(lp.cpu()), greedy))
        return out

    bs = a.batch_size
    run(reqs[:bs])  # warm-up (kernels, allocator)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    done = tokens = 0
    # Batches in a seeded random order: when --max-seconds stops early, the sample still spans
    # every length (the longest-first order alone would sample only the longest requests).
    starts = list(range(0, len(reqs), bs))
    random.Random(0).shuffle(starts)
    for i in starts:
        batch = reqs[i: i + bs]
        run(batch)
        done += len(batch)
        tokens += sum(len(c) + len(k) for c, k in batch)
        if time.perf_counter() - t0 > a.max_seconds:
            break
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    print(f"hf       transformers {__import__('transformers').__version__}, torch {torch.__version__}, "
          f"{torch.cuda.get_device_name()}: {n_params / 1e9:.3f}B parameters, bf16, batch {bs}")
    print(f"hf       {done} of {len(reqs)} requests ({tokens} tokens) in {dt:.2f} s: {done / dt:.1f} requests/s, "
          f"{tokens / dt:.0f} request tokens/s")
    print(f"RESULT requests_per_s={done / dt:.3f} tokens_per_s={tokens / dt:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
