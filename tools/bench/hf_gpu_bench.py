#!/usr/bin/env python3
"""hf_gpu_bench.py: the Hugging Face transformers path on the same GPU and the same requests as
bench/bench_cuda.c, for the speed ratio in tools/gpu-check.sh.

Builds the same random llama shape (Llama-3.2-1B: 16 layers, d_model 2048, 32/8 heads of 64,
d_ff 8192, vocab 128256, tied head; --small: bench_cuda's small shape; --tiny: a toy shape for
smoke runs) in bfloat16 on the GPU (float32 on the CPU), then scores the (context, continuation)
requests of the JSON lines written by `bench_cuda --dump FILE` (or, without --requests, random
ones) the way lm-evaluation-harness's HFLM does: every request on its own (no prefix sharing),
sorted longest first, right-padded batches, full logits, log_softmax over the vocabulary, gather
of the continuation tokens and a greedy check. Prints requests/s and request tokens/s, and
`RESULT requests_per_s=...` for the script. Needs torch + transformers.

Smoke test without a GPU (checks this script's Python; the timing means nothing):
    python3 -m tools.bench.hf_gpu_bench --device cpu --tiny
"""
import argparse
import json
import random
import sys
import time


def shape(a):
    if a.tiny:
        return dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=512)
    if a.small:
        return dict(vocab_size=32000, hidden_size=512, intermediate_size=1536, num_hidden_layers=4,
                    num_attention_heads=8, num_key_value_heads=2, head_dim=64, max_position_embeddings=2048)
    return dict(vocab_size=128256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                num_attention_heads=32, num_key_value_heads=8, head_dim=64, max_position_embeddings=4096)


def load_requests(a, vocab):
    reqs = []
    if a.requests:
        with open(a.requests) as f:
            for line in f:
                d = json.loads(line)
                for cont in d["conts"]:
                    # Ids from a larger vocabulary (a --tiny run on a real dump) fold into this one.
                    reqs.append(([t % vocab for t in d["ctx"]], [t % vocab for t in cont]))
    else:
        rng = random.Random(1)
        for _ in range(a.n_requests):
            ctx = [rng.randrange(vocab) for _ in range(rng.randint(5, 60))]
            for _ in range(rng.randint(1, 4)):
                reqs.append((ctx, [rng.randrange(vocab) for _ in range(rng.randint(1, 20))]))
    return reqs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", help="JSON lines from bench_cuda --dump (default: random requests)")
    ap.add_argument("--n-requests", type=int, default=48, help="random contexts when --requests is absent")
    ap.add_argument("--small", action="store_true", help="bench_cuda --small's model shape")
    ap.add_argument("--tiny", action="store_true", help="a toy model shape, for smoke runs")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--max-seconds", type=float, default=60.0, help="stop after this much scoring time")
    a = ap.parse_args()

    import torch
    import torch.nn.functional as F
    import transformers
    from transformers import LlamaConfig, LlamaForCausalLM

    dev = a.device
    if dev == "cuda" and not torch.cuda.is_available():
        print("hf_gpu_bench: no GPU visible to torch (use --device cpu --tiny for a smoke run)", file=sys.stderr)
        return 3
    dtype = torch.bfloat16 if dev == "cuda" else torch.float32
    cfg = LlamaConfig(tie_word_embeddings=True, **shape(a))
    torch.manual_seed(0)
    with torch.device(dev):
        model = LlamaForCausalLM(cfg).to(dtype).eval()
    n_params = sum(p.numel() for p in model.parameters())
    reqs = load_requests(a, cfg.vocab_size)
    if not reqs:
        print("hf_gpu_bench: no requests", file=sys.stderr)
        return 2
    reqs.sort(key=lambda r: -(len(r[0]) + len(r[1])))  # lm-eval's Collator: longest first

    def sync():
        if dev == "cuda":
            torch.cuda.synchronize()

    def run(batch):
        # lm-eval feeds (context + continuation)[:-1] and reads the last len(cont) positions.
        inps = [(c + k)[:-1] for c, k in batch]
        width = max(len(x) for x in inps)
        ids = torch.zeros((len(batch), width), dtype=torch.long, device=dev)
        for i, x in enumerate(inps):
            ids[i, : len(x)] = torch.tensor(x, device=dev)
        with torch.no_grad():
            logits = F.log_softmax(model(ids).logits, dim=-1)
        out = []
        for i, (c, k) in enumerate(batch):
            n = len(inps[i])
            lg = logits[i, n - len(k): n].unsqueeze(0)
            tgt = torch.tensor(k, device=dev)
            greedy = bool((lg.argmax(dim=-1) == tgt).all())
            lp = torch.gather(lg, 2, tgt.view(1, -1, 1)).squeeze(-1).sum()
            out.append((float(lp.float().cpu()), greedy))
        return out

    bs = a.batch_size
    first = run(reqs[:bs])  # warm-up (kernels, allocator)
    if a.tiny:
        # Right padding must not change a request's score: rescore a few one by one.
        worst = max(abs(run([r])[0][0] - first[i][0]) for i, r in enumerate(reqs[:min(bs, 8)]))
        tol = 1e-3 if dtype == torch.float32 else 0.5
        print(f"check    padded batch vs one request at a time: max |diff| {worst:.2e} (<= {tol:g})")
        if not worst <= tol:
            print("hf_gpu_bench: padded and unpadded scores differ", file=sys.stderr)
            return 1
    sync()
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
    sync()
    dt = time.perf_counter() - t0
    name = torch.cuda.get_device_name() if dev == "cuda" else "cpu"
    print(f"hf       transformers {transformers.__version__}, torch {torch.__version__}, {name}: "
          f"{n_params / 1e9:.3f}B parameters, {str(dtype).replace('torch.', '')}, batch {bs}")
    print(f"hf       {done} of {len(reqs)} requests ({tokens} tokens) in {dt:.2f} s: {done / dt:.1f} requests/s, "
          f"{tokens / dt:.0f} request tokens/s")
    print(f"RESULT requests_per_s={done / dt:.3f} tokens_per_s={tokens / dt:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
