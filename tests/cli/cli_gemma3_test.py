#!/usr/bin/env python3
"""hearth-cli on Gemma 3 270M (a base model: its GGUF has no chat template),
end to end:
- `template` renders the documented gemma-turns fallback (exactly, as
  engine/chat/chat_format.h describes it) and names it on stderr instead of
  refusing;
- `generate --chat` names that fallback in its banner and its JSON;
- a copy of the file cut short (an interrupted download): `generate` refuses
  it with "incomplete file: N of M bytes present (the tensor data ends at
  byte M)", `inspect` still shows its metadata, marked incomplete.

Usage: cli_gemma3_test.py HEARTH_CLI MODEL
"""
import json
import os
import subprocess
import sys
import tempfile

FALLBACK = "fallback gemma-turns (the model has no chat template)"


def run(args):
    return subprocess.run(args, capture_output=True)


def expect(cond, what):
    if not cond:
        sys.exit(f"FAIL: {what}")


def check_template(cli, model, tmp):
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi!"},
            {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "2+2?"}]
    path = os.path.join(tmp, "m.json")
    with open(path, "w") as f:
        json.dump(msgs, f)
    out = run([cli, "template", model, "--messages", path])
    expect(out.returncode == 0, f"template refused: {out.stderr.decode()!r}")
    want = ("<bos><start_of_turn>user\nBe brief.\n\nHi!<end_of_turn>\n<start_of_turn>model\nHello.<end_of_turn>\n"
            "<start_of_turn>user\n2+2?<end_of_turn>\n<start_of_turn>model\n")
    expect(out.stdout.decode() == want, f"template output {out.stdout.decode()!r}")
    expect(FALLBACK.encode() in out.stderr, f"template did not name the fallback: {out.stderr.decode()!r}")


def check_chat(cli, model):
    out = run([cli, "generate", model, "--chat", "--json", "--temp", "0", "-n", "3", "--threads", "2",
               "--prompt", "Hi"])
    expect(out.returncode == 0, f"generate --chat failed: {out.stderr.decode()!r}")
    expect(f"chat format: {FALLBACK}".encode() in out.stderr, f"banner: {out.stderr.decode()!r}")
    doc = json.loads(out.stdout.decode().strip().splitlines()[-1])
    expect(doc["chat_format"] == FALLBACK, f"JSON chat_format {doc.get('chat_format')!r}")
    expect(doc["weight_format"] == "Q4_K_M", f"JSON weight_format {doc.get('weight_format')!r}")
    # <bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n: BOS once, the turn tokens as specials.
    ids = doc["prompt_token_ids"]
    expect(ids[0] == 2 and ids.count(2) == 1 and ids[1] == 105 and 106 in ids, f"chat prompt ids {ids}")


def check_incomplete(cli, model, tmp):
    cut = os.path.join(tmp, "cut.gguf")
    size = os.path.getsize(model)
    with open(model, "rb") as src, open(cut, "wb") as dst:
        dst.write(src.read(40_000_000))
    out = run([cli, "generate", cut, "--prompt", "x", "-n", "1"])
    want = f"incomplete file: 40000000 of {size} bytes present (the tensor data ends at byte {size})"
    expect(out.returncode != 0 and want.encode() in out.stderr, f"generate on a cut file: {out.stderr.decode()!r}")
    out = run([cli, "inspect", "--json", cut])
    expect(out.returncode == 0, f"inspect of a cut file failed: {out.stderr.decode()!r}")
    doc = json.loads(out.stdout)
    expect(doc["incomplete"] is True and doc["file_size_needed"] == size and doc["architecture"] == "gemma3",
           "inspect JSON of a cut file")
    expect(len(doc["tensors"]) == 236, f"inspect lists {len(doc['tensors'])} tensors")
    out = run([cli, "inspect", cut])
    expect(b"INCOMPLETE" in out.stdout, "inspect text does not say INCOMPLETE")


def main():
    cli, model = sys.argv[1], sys.argv[2]
    listed = run([cli, "models", "--json"])  # resolve the catalog name through the CLI itself
    expect(listed.returncode == 0, f"models --json: {listed.stderr.decode()!r}")
    entry = next((m for m in json.loads(listed.stdout)["models"] if m.get("catalog_name") == model), None)
    file = entry["path"] if entry else model
    with tempfile.TemporaryDirectory() as tmp:
        check_template(cli, model, tmp)
        check_chat(cli, model)
        check_incomplete(cli, file, tmp)
    print("hearth-cli on gemma3: template fallback, --chat, incomplete file: all checks passed")


if __name__ == "__main__":
    main()
