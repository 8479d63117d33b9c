"""What the torch.save fixture scripts share: the record a test holds xsa-eval's tensors to, and
the closing step that checks torch reads every file back and writes that record."""
import json
import os

import torch


def names_and_sums(sd):
    """A state dict as [name, float64 sum] pairs, in torch's order."""
    return [[k, float(v.double().sum())] for k, v in sd.items()]


def finish(out, files, expected):
    """torch.load each of `files` (under out) back, write out/expected.json, print the size."""
    for f in files:
        torch.load(os.path.join(out, f), weights_only=False)  # torch itself reads each back
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(r, n)) for r, _, fs in os.walk(out) for n in fs)
    print("wrote %s (%d bytes)" % (out, total))
