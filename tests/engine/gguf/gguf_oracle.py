#!/usr/bin/env python3
"""Test oracle for engine/gguf: reads a GGUF with the Python `gguf` package and
compares every key (name, type, value), every tensor (name, type, shape,
absolute data offset, byte size), the version, alignment and data offset with
what the C++ reader prints through the gguf_dump helper.

  gguf_oracle.py dump FILE                       print the oracle's JSON
  gguf_oracle.py compare --dump EXE --model M    M: a path or a catalog name ("default")
  gguf_oracle.py compare --dump EXE --writer-sample --workdir DIR
  gguf_oracle.py compare --dump EXE --python-written --workdir DIR
  gguf_oracle.py types --dump EXE                GGML type ids / block sizes
"""
import argparse
import json
import math
import os
import subprocess
import sys

import numpy as np
from gguf import GGUFReader, GGUFWriter, GGUFValueType, GGMLQuantizationType
from gguf.constants import GGML_QUANT_SIZES

TYPE_NAMES = {
    GGUFValueType.UINT8: "u8", GGUFValueType.INT8: "i8", GGUFValueType.UINT16: "u16",
    GGUFValueType.INT16: "i16", GGUFValueType.UINT32: "u32", GGUFValueType.INT32: "i32",
    GGUFValueType.FLOAT32: "f32", GGUFValueType.BOOL: "bool", GGUFValueType.STRING: "string",
    GGUFValueType.ARRAY: "array", GGUFValueType.UINT64: "u64", GGUFValueType.INT64: "i64",
    GGUFValueType.FLOAT64: "f64",
}


def scalar_json(vtype, x):
    if vtype in (GGUFValueType.FLOAT32, GGUFValueType.FLOAT64):
        f = float(x)
        if math.isnan(f):
            return "nan"
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return f
    if vtype == GGUFValueType.BOOL:
        return bool(x)
    return int(x)


def decode(parts, i, vtype):
    """Decodes one value of `vtype` starting at parts[i]; returns (json, next i).
    The reader flattens nested arrays, so the tree is rebuilt from its parts."""
    if vtype == GGUFValueType.STRING:
        return bytes(parts[i + 1]).decode("utf-8"), i + 2
    if vtype == GGUFValueType.ARRAY:
        etype = GGUFValueType(int(parts[i][0]))
        count = int(parts[i + 1][0])
        i += 2
        items = []
        for _ in range(count):
            item, i = decode(parts, i, etype)
            items.append(item)
        return {"element_type": TYPE_NAMES[etype], "items": items}, i
    return scalar_json(vtype, parts[i][0]), i + 1


def oracle_dump(path):
    r = GGUFReader(path)
    fields = list(r.fields.values())
    assert [f.name for f in fields[:3]] == ["GGUF.version", "GGUF.tensor_count", "GGUF.kv_count"]
    kvs = []
    for f in fields[3:]:
        vtype = GGUFValueType(int(f.parts[2][0]))
        value, end = decode(f.parts, 3, vtype)
        assert end == len(f.parts), f"{f.name}: {len(f.parts) - end} parts left over"
        kvs.append({"key": f.name, "type": TYPE_NAMES[vtype], "value": value})
    tensors = []
    for t in r.tensors:
        tensors.append({"name": t.name, "type": GGMLQuantizationType(t.tensor_type).name,
                        "shape": [int(d) for d in t.field.parts[3]],
                        "offset": int(t.data_offset), "n_bytes": int(t.n_bytes)})
    return {"version": int(fields[0].parts[0][0]), "alignment": int(r.alignment),
            "data_offset": int(r.data_offset), "kvs": kvs, "tensors": tensors}


def diff(a, b, where, out, limit=25):
    if len(out) >= limit:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{where}.{k}: only in {'C++' if k in a else 'oracle'}")
            else:
                diff(a[k], b[k], f"{where}.{k}", out, limit)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{where}: length C++ {len(a)} != oracle {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{where}[{i}]", out, limit)
    elif type(a) is not type(b) or a != b:
        out.append(f"{where}: C++ {a!r} != oracle {b!r}")


def run_dump(exe, arg):
    p = subprocess.run([exe, arg], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAIL: gguf_dump {arg} exited {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def write_python_sample(path):
    """A file made by the gguf package's own writer: every scalar type, arrays,
    and tensors of plain and quantized types (raw bytes)."""
    w = GGUFWriter(path, arch="oracle")
    w.add_uint8("p.u8", 200)
    w.add_int8("p.i8", -7)
    w.add_uint16("p.u16", 60000)
    w.add_int16("p.i16", -300)
    w.add_uint32("p.u32", 123456789)
    w.add_int32("p.i32", -123456789)
    w.add_float32("p.f32", 0.3)
    w.add_uint64("p.u64", 2**64 - 1)
    w.add_int64("p.i64", -(2**63))
    w.add_float64("p.f64", 2.5e-300)
    w.add_bool("p.bool", True)
    w.add_string("p.string", "snow \u2744 \U0001F600")
    w.add_array("p.strings", ["x", "", "\u0120y"])
    w.add_array("p.ints", [1, -2, 3])
    w.add_array("p.floats", [0.5, -1.25])
    rng = np.random.default_rng(1234)
    w.add_tensor("plain.f32", rng.standard_normal((3, 5)).astype(np.float32))
    w.add_tensor("plain.f16", rng.standard_normal((2, 8)).astype(np.float16))
    q = rng.integers(0, 256, size=(4, 2 * 34), dtype=np.uint8)  # 4 rows of 64 Q8_0 elements
    w.add_tensor("quant.q8_0", q, raw_dtype=GGMLQuantizationType.Q8_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def cmd_compare(args):
    if args.model:
        cpp = run_dump(args.dump, args.model)
        path = cpp.pop("path")
    else:
        os.makedirs(args.workdir, exist_ok=True)
        if args.writer_sample:
            path = os.path.join(args.workdir, "oracle_writer_sample.gguf")
            p = subprocess.run([args.dump, "--write-sample", path], capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit(f"FAIL: gguf_dump --write-sample: {p.stderr.strip()}")
        else:
            path = os.path.join(args.workdir, "oracle_python_written.gguf")
            write_python_sample(path)
        cpp = run_dump(args.dump, path)
        cpp.pop("path")
    ref = oracle_dump(path)
    problems = []
    diff(cpp, ref, "file", problems)
    if problems:
        print(f"FAIL: C++ reader and gguf package disagree on {path}:")
        print("\n".join(problems))
        return 1
    print(f"OK: {path}: version {ref['version']}, {len(ref['kvs'])} keys, {len(ref['tensors'])} tensors agree")
    return 0


# Where the Python package's table is known to differ from ggml's C structs, the
# C struct (what llama.cpp reads and writes) wins: block_q8_1 holds two halves
# (d, s) and 32 int8 quants, 36 bytes (static_assert in ggml-common.h); the
# Python table still says 4 + 4 + 32 from when d and s were floats.
C_STRUCT_SIZES = {"Q8_1": (32, 36)}


def cmd_types(args):
    p = subprocess.run([args.dump, "--types"], capture_output=True, text=True, check=True)
    ours = {t["id"]: t for t in json.loads(p.stdout)}
    problems = []
    for qt, (block_elems, block_bytes) in GGML_QUANT_SIZES.items():
        block_elems, block_bytes = C_STRUCT_SIZES.get(qt.name, (block_elems, block_bytes))
        t = ours.get(int(qt))
        if t is None:
            problems.append(f"{qt.name} ({int(qt)}) missing from the C++ table")
        elif (t["name"], t["block_elems"], t["block_bytes"]) != (qt.name, block_elems, block_bytes):
            problems.append(f"{qt.name}: C++ {t} != gguf ({block_elems}, {block_bytes})")
    known = {int(qt) for qt in GGML_QUANT_SIZES}
    problems += [f"C++ type {t['name']} ({i}) unknown to gguf" for i, t in ours.items() if i not in known]
    if problems:
        print("FAIL:\n" + "\n".join(problems))
        return 1
    print(f"OK: {len(ours)} GGML types agree with gguf.GGML_QUANT_SIZES")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("file")
    c = sub.add_parser("compare")
    c.add_argument("--dump", required=True)
    src = c.add_mutually_exclusive_group(required=True)
    src.add_argument("--model")
    src.add_argument("--writer-sample", action="store_true")
    src.add_argument("--python-written", action="store_true")
    c.add_argument("--workdir", default=".")
    t = sub.add_parser("types")
    t.add_argument("--dump", required=True)
    args = ap.parse_args()
    if args.cmd == "dump":
        json.dump(oracle_dump(args.file), sys.stdout)
        print()
        return 0
    return cmd_compare(args) if args.cmd == "compare" else cmd_types(args)


if __name__ == "__main__":
    sys.exit(main())
