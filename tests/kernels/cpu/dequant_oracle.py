"""Dequantization oracle: random blocks of every supported type, dequantized by
the python `gguf` package (gguf.quants, an independent implementation of the
ggml formats) and by the kernels (through kernels_cpu_dequant_tool); the two
must agree bit for bit.

Usage: dequant_oracle.py PATH_TO_kernels_cpu_dequant_tool
"""
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf.quants import dequantize
from gguf.constants import GGML_QUANT_SIZES

# Byte offsets of the f16 scale fields in each block type (see quant_blocks.h).
SCALE_OFFSETS = {
    T.Q4_0: [0], T.Q4_1: [0, 2], T.Q5_0: [0], T.Q5_1: [0, 2], T.Q8_0: [0],
    T.Q4_K: [0, 2], T.Q5_K: [0, 2], T.Q6_K: [208],
}
FLOAT_TYPES = {T.F32: np.float32, T.F16: np.float16}


def random_f16(rng, n):
    """Finite halves spread over many binades, including subnormals and zero."""
    mag = rng.uniform(-24.0, 4.0, n)
    vals = (np.sign(rng.uniform(-1, 1, n)) * 2.0 ** mag).astype(np.float16)
    vals[rng.integers(0, n, max(1, n // 50))] = 0.0
    return vals


def random_blocks(rng, qtype, n_blocks):
    block_elems, block_bytes = GGML_QUANT_SIZES[qtype]
    if qtype in FLOAT_TYPES:
        vals = rng.standard_normal(n_blocks) * 10.0 ** rng.uniform(-3, 3, n_blocks)
        return vals.astype(FLOAT_TYPES[qtype]).view(np.uint8).reshape(n_blocks, -1)
    if qtype == T.BF16:
        bits = rng.integers(0, 1 << 16, n_blocks, dtype=np.uint32).astype(np.uint16)
        exp = (bits >> 7) & 0xFF
        bits[exp == 0xFF] &= 0xBFFF  # no inf / NaN: clear an exponent bit
        return bits.view(np.uint8).reshape(n_blocks, -1)
    blocks = rng.integers(0, 256, (n_blocks, block_bytes), dtype=np.uint8)
    for off in SCALE_OFFSETS[qtype]:
        blocks[:, off:off + 2] = random_f16(rng, n_blocks).view(np.uint8).reshape(n_blocks, 2)
    return blocks


def check(tool, qtype, rng, workdir):
    block_elems, _ = GGML_QUANT_SIZES[qtype]
    n_blocks = int(rng.integers(1, 400))
    blocks = random_blocks(rng, qtype, n_blocks)
    n = n_blocks * block_elems
    expect = dequantize(blocks.reshape(-1), qtype).astype(np.float32).reshape(-1)
    src, dst = workdir / "in.bin", workdir / "out.bin"
    src.write_bytes(blocks.tobytes())
    subprocess.run([tool, str(int(qtype)), str(n), str(src), str(dst)], check=True)
    got = np.fromfile(dst, dtype=np.float32)
    if got.shape != expect.shape or not np.array_equal(got.view(np.uint32), expect.view(np.uint32)):
        bad = np.flatnonzero(got.view(np.uint32) != expect.view(np.uint32))
        i = int(bad[0]) if bad.size else -1
        print(f"FAIL {qtype.name}: {bad.size} of {n} differ; first at {i}: kernels {got[i]!r} gguf {expect[i]!r}")
        return False
    return True


def main():
    tool = sys.argv[1]
    rng = np.random.default_rng(2024)
    types = [T.F32, T.F16, T.BF16, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0, T.Q4_K, T.Q5_K, T.Q6_K]
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for qtype in types:
            for _ in range(5):
                ok = check(tool, qtype, rng, Path(tmp)) and ok
            print(f"{qtype.name}: {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
