#!/usr/bin/env python3
"""Oracle test: `hearth-cli inspect --json` agrees with the Python gguf reader.

Every metadata key (in order), its type and value (arrays: element type, count,
a digest of the whole array in the canonical form of cli/gguf_json.h, and the
first items), and every tensor's name, type, shape, absolute offset and byte
size must be equal.

Usage: inspect_oracle.py HEARTH_CLI MODEL [--synth SYNTH-ARGS...]
MODEL is a path or a catalog name (the Python side reads the file the CLI
resolved); with --synth the CLI first writes a synthetic model and that is checked.
"""
import hashlib
import json
import struct
import subprocess
import sys

import gguf
import numpy as np

SCALAR_NAMES = {
    gguf.GGUFValueType.UINT8: "u8", gguf.GGUFValueType.INT8: "i8", gguf.GGUFValueType.UINT16: "u16",
    gguf.GGUFValueType.INT16: "i16", gguf.GGUFValueType.UINT32: "u32", gguf.GGUFValueType.INT32: "i32",
    gguf.GGUFValueType.FLOAT32: "f32", gguf.GGUFValueType.BOOL: "bool", gguf.GGUFValueType.STRING: "string",
    gguf.GGUFValueType.ARRAY: "array", gguf.GGUFValueType.UINT64: "u64", gguf.GGUFValueType.INT64: "i64",
    gguf.GGUFValueType.FLOAT64: "f64",
}
NUMPY = {
    gguf.GGUFValueType.UINT8: np.uint8, gguf.GGUFValueType.INT8: np.int8, gguf.GGUFValueType.UINT16: np.uint16,
    gguf.GGUFValueType.INT16: np.int16, gguf.GGUFValueType.UINT32: np.uint32, gguf.GGUFValueType.INT32: np.int32,
    gguf.GGUFValueType.FLOAT32: np.float32, gguf.GGUFValueType.BOOL: np.uint8, gguf.GGUFValueType.UINT64: np.uint64,
    gguf.GGUFValueType.INT64: np.int64, gguf.GGUFValueType.FLOAT64: np.float64,
}


def scalar(value, vtype):
    if vtype == gguf.GGUFValueType.BOOL:
        return bool(value)
    if vtype in (gguf.GGUFValueType.FLOAT32, gguf.GGUFValueType.FLOAT64):
        return float(value)
    if vtype == gguf.GGUFValueType.STRING:
        return value
    return int(value)


def expected_value(field, max_items=16):
    if field.types[0] != gguf.GGUFValueType.ARRAY:
        return scalar(field.contents(), field.types[0])
    if len(field.types) == 1:  # gguf-py records no element type for an empty array
        return {"element_type": None, "count": 0, "sha256": hashlib.sha256().hexdigest(), "items": [],
                "truncated": False}
    if len(field.types) > 2:
        raise SystemExit(f"oracle: nested array in {field.name} is not compared by this script")
    etype = field.types[1]
    items = field.contents()
    h = hashlib.sha256()
    if etype == gguf.GGUFValueType.STRING:
        for s in items:
            b = s.encode("utf-8")
            h.update(struct.pack("<Q", len(b)) + b)
    else:
        h.update(np.asarray(items, dtype=NUMPY[etype]).tobytes())
    shown = [scalar(x, etype) for x in items[:max_items]]
    return {"element_type": SCALAR_NAMES[etype], "count": len(items), "sha256": h.hexdigest(),
            "items": shown, "truncated": len(items) > max_items}


def main():
    cli, model = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 3:  # --synth ARGS...: check a synthetic model written by the CLI first
        import os
        import tempfile
        assert sys.argv[3] == "--synth"
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "synthetic.gguf")
            subprocess.run([cli, "synth", *sys.argv[4:], "-o", path], check=True)
            check(cli, path)
        return
    check(cli, model)


def check(cli, model):
    out = subprocess.run([cli, "inspect", "--json", model], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"hearth-cli inspect failed ({out.returncode}): {out.stderr.strip()}")
    got = json.loads(out.stdout)
    model = got["path"]
    reader = gguf.GGUFReader(model)
    failures = []

    fields = [f for name, f in reader.fields.items() if not name.startswith("GGUF.")]
    if [m["key"] for m in got["metadata"]] != [f.name for f in fields]:
        failures.append("metadata keys differ in names or order")
    for f, m in zip(fields, got["metadata"]):
        if m["type"] != SCALAR_NAMES[f.types[0]]:
            failures.append(f"{f.name}: type {m['type']} != {SCALAR_NAMES[f.types[0]]}")
        want = expected_value(f)
        if isinstance(want, dict) and want["element_type"] is None:
            want["element_type"] = m["value"].get("element_type")
        if m["value"] != want:
            failures.append(f"{f.name}: value {str(m['value'])[:200]} != {str(want)[:200]}")
    if got["version"] != int(reader.fields["GGUF.version"].contents()):
        failures.append("version differs")

    if len(got["tensors"]) != len(reader.tensors):
        failures.append(f"tensor count {len(got['tensors'])} != {len(reader.tensors)}")
    for t, r in zip(got["tensors"], reader.tensors):
        want = {"name": r.name, "type": r.tensor_type.name, "shape": [int(x) for x in r.shape],
                "offset": int(r.data_offset), "bytes": int(r.n_bytes)}
        if t != want:
            failures.append(f"tensor {r.name}: {t} != {want}")
    if got["totals"]["tensor_bytes"] != sum(int(r.n_bytes) for r in reader.tensors):
        failures.append("total tensor bytes differ")

    checked = len(fields) + len(reader.tensors)
    if failures:
        print("\n".join(failures[:50]))
        print(f"0 passed, {len(failures)} failed (of {checked} keys and tensors)")
        sys.exit(1)
    print(f"inspect oracle: {len(fields)} keys and {len(reader.tensors)} tensors of {model} agree with gguf-py")


if __name__ == "__main__":
    main()
