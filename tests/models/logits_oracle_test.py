#!/usr/bin/env python3
"""Logits of Hearth's CPU forward pass against the numpy reference (llama_oracle.py).

For each prompt, every position's logits from Hearth's decode path (one token
per step, K/V read back from the paged cache) are compared with the float64
reference by relative L2 error: the mean over positions must be within
TOLERANCE and the worst within 5 x TOLERANCE (8-bit rounding occasionally
lands badly on one position); the arg-max must agree unless the
reference's top two are within NEAR_TIE (then it is reported, not failed). The
prefill path (whole prompt in one step) must give the decode path's last
logits.

Tolerances, and why:
- Float weights (F32/F16/BF16): activations enter the products unrounded, so
  only the f16 KV cache separates Hearth from the reference: 2e-3.
- Quantized weights: the activations entering each integer dot product are
  rounded to 8 bits per block (Q8_0/Q8_1 per 32 elements, Q8_K per 256 for the
  K-types, as llama.cpp does), about 0.5% per element (more for Q8_K); through a
  few random layers that grows to a mean of 1-3% of the logits (measured; a numpy
  emulation of the rounding shows the same spread against the exact
  reference): 3e-2 on synthetic models, 5e-2 for the K-types.
- The real SmolLM2 file: its hidden states carry massive outlier channels (one
  value up to ~900x the median of its 32-element block), so plain 8-bit block
  rounding (--q8-activations, what llama.cpp does) wipes out the other values
  of such blocks: measured 0.7-11% per position, mean 2.68%: 5e-2. Hearth's
  default refines blocks whose scale exceeds 4x their row's median block
  scale with a second 8-bit block of the residual (kernels/cpu/
  outlier_refine.h): measured mean 1.40%, worst 5.7% (AVX-512 and AVX2 give
  the same bits; scalar 1.29%, 4.5%; an earlier summation order gave 1.50%,
  9.1%): 2.5e-2, which the plain rounding fails. With exact f32
  products the same code agrees with the reference to 1e-4, which shows the
  gap is the rounding alone. Token-level agreement with llama.cpp is checked
  separately (greedy parity, in llama.cpp's arithmetic).

Usage: logits_oracle_test.py LOGITS_TOOL MODEL_NAME_OR_PATH --tolerance T
       logits_oracle_test.py LOGITS_TOOL --synth HEARTH_CLI --tolerance T SYNTH-ARGS...
"""
import os
import subprocess
import sys
import tempfile

import gguf
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llama_oracle  # noqa: E402

NEAR_TIE = 0.5  # logits
TOOL_FLAGS = []  # ["--q8-activations"]: plain 8-bit activation blocks
PROMPTS = [
    "<|im_start|> user Ċ What Ġis Ġthe Ġcapital Ġof ĠFrance ? <|im_end|> Ċ <|im_start|> ass istant Ċ",
    "The Ġquick Ġbrown Ġfox Ġjumps Ġover Ġthe Ġlazy Ġdog . ĠThe Ġdog",
    "def Ġfib ( n ): Ċ ĠĠĠ Ġreturn",
    "1 2 3 4 5 6 7 8 9 1 0 1 1 1 2 1 3 1 4 1 5 1 6 1 7 1 8 1 9",  # crosses a 16-token block
]


def resolve(model):
    """A path, or a catalog name resolved as scripts/fetch_model.py installs it."""
    if os.path.isfile(model):
        return model
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    sys.path.insert(0, os.path.join(root, "scripts"))
    import fetch_model
    import json
    with open(os.path.join(root, "models", "catalog.json")) as f:
        entry = next(m for m in json.load(f)["models"] if m["name"] == model)
    return os.path.join(fetch_model.models_dir(), entry["file"])


def main():
    global TOOL_FLAGS
    if "--q8-activations" in sys.argv:
        sys.argv.remove("--q8-activations")
        TOOL_FLAGS = ["--q8-activations"]
    tool = sys.argv[1]
    if sys.argv[2] != "--synth":
        assert sys.argv[3] == "--tolerance"
        model = resolve(sys.argv[2])
        reader = gguf.GGUFReader(model)
        vocab = {t: i for i, t in enumerate(reader.fields["tokenizer.ggml.tokens"].contents())}
        check(tool, model, [[vocab[p] for p in text.split(" ")] for text in PROMPTS], float(sys.argv[4]))
        return
    assert sys.argv[4] == "--tolerance"
    tolerance = float(sys.argv[5])
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "synthetic.gguf")
        subprocess.run([sys.argv[3], "synth", *sys.argv[6:], "-o", model], check=True, stderr=subprocess.DEVNULL)
        n_vocab = len(gguf.GGUFReader(model).fields["tokenizer.ggml.tokens"].contents())
        rng = np.random.default_rng(1)
        prompts = [list(rng.integers(0, n_vocab, size=n)) for n in (5, 23, 40)]
        check(tool, model, prompts, tolerance)


def check(tool, model, prompts, tolerance):
    n_vocab = len(gguf.GGUFReader(model).fields["tokenizer.ggml.tokens"].contents())
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "hearth.bin")
        subprocess.run([tool, *TOOL_FLAGS, model, out, "2"] + [",".join(map(str, p)) for p in prompts], check=True)
        got = np.fromfile(out, dtype=np.float32)
    weights = llama_oracle.Weights(model)
    offset, failures, ties, errors = 0, [], 0, []
    for pi, p in enumerate(prompts):
        ref = llama_oracle.forward(weights, p)
        dec = got[offset: offset + len(p) * n_vocab].reshape(len(p), n_vocab)
        pre = got[offset + len(p) * n_vocab: offset + (len(p) + 1) * n_vocab]
        offset += (len(p) + 1) * n_vocab
        for i in range(len(p)):
            err = np.linalg.norm(dec[i] - ref[i]) / np.linalg.norm(ref[i])
            errors.append(err)
            if err > 5 * tolerance:
                failures.append(f"prompt {pi} position {i}: relative error {err:.4f} > {5 * tolerance}")
            if dec[i].argmax() != ref[i].argmax():
                top2 = np.sort(ref[i])[-2:]
                if top2[1] - top2[0] < NEAR_TIE:
                    ties += 1
                    print(f"near-tie at prompt {pi} position {i}: reference margin {top2[1] - top2[0]:.3f}")
                else:
                    failures.append(f"prompt {pi} position {i}: arg-max {dec[i].argmax()} != {ref[i].argmax()}")
        perr = np.linalg.norm(pre - dec[-1]) / np.linalg.norm(dec[-1])
        if perr > 1e-5:
            failures.append(f"prompt {pi}: prefill and decode last logits differ by {perr:.2e}")
    mean = float(np.mean(errors))
    if mean > tolerance:
        failures.append(f"mean relative error {mean:.4f} > {tolerance}")
    print(f"logits oracle ({os.path.basename(model)}): {len(errors)} positions, relative error mean {mean:.4f}, "
          f"worst {max(errors):.4f}, {ties} near-ties")
    if failures:
        print("\n".join(failures))
        print(f"0 passed, {len(failures)} failed")
        sys.exit(1)


if __name__ == "__main__":
    main()
