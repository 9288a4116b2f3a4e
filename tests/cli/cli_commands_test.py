#!/usr/bin/env python3
"""hearth-cli tokenize / detokenize / template / errors / chat /stats, end to end.

tokenize --json must give HF tokenizers' ids (the oracle of the tokenizer
tests, built from the model's own vocabulary and merges), detokenize must
invert it byte for byte, template must render exactly what Python jinja2 renders
(configured as transformers does), and bad input must end with one line on
stderr and a non-zero exit code.

Usage: cli_commands_test.py HEARTH_CLI MODEL_NAME
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "engine", "tokenizer"))
sys.path.insert(0, os.path.join(HERE, "..", "engine", "chat"))
import render_oracle  # noqa: E402
import tokenizer_corpus  # noqa: E402
import tokenizer_oracle  # noqa: E402

failures = []


def run(args, stdin=b""):
    return subprocess.run(args, input=stdin, capture_output=True)


def expect(cond, what):
    if not cond:
        failures.append(what)


def check_tokenize(cli, model, path):
    hf, _ = tokenizer_oracle.hf_tokenizer(path)
    docs = tokenizer_corpus.snippets()[:40] + ["<|im_start|>user\nHi<|im_end|>\n", "Dates: 2024-11-29, 3.14159"]
    for doc in docs:
        out = run([cli, "tokenize", model, "--json"], doc.encode())
        expect(out.returncode == 0, f"tokenize failed on {doc[:40]!r}: {out.stderr.decode()}")
        ids = json.loads(out.stdout)
        want = hf.encode(doc, add_special_tokens=False).ids
        expect(ids == want, f"tokenize {doc[:40]!r}: {ids[:12]} != HF {want[:12]}")
        back = run([cli, "detokenize", model], json.dumps(ids).encode())
        expect(back.returncode == 0 and back.stdout == doc.encode(), f"detokenize(tokenize({doc[:40]!r})) differs")
    plain = run([cli, "tokenize", model, "--json", "--no-special"], b"<|im_start|>")
    expect(1 not in json.loads(plain.stdout), "--no-special still matched <|im_start|>")


def check_template(cli, model, path):
    import gguf
    source = gguf.GGUFReader(path).fields["tokenizer.chat_template"].contents()
    cases = [
        [{"role": "user", "content": "What is 2+2?"}],
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
         {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "Bye\n{{ not code }}"}],
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for i, messages in enumerate(cases):
            for gen in (True, False):
                f = os.path.join(tmp, f"m{i}.json")
                with open(f, "w") as fh:
                    json.dump(messages, fh)
                args = [cli, "template", model, "--messages", f] + ([] if gen else ["--no-generation-prompt"])
                out = run(args)
                status, want = render_oracle.python_render(source, {"messages": messages, "add_generation_prompt": gen,
                                                                    "bos_token": "<|im_start|>",
                                                                    "eos_token": "<|im_end|>"})
                expect(status == "ok" and out.returncode == 0 and out.stdout.decode() == want,
                       f"template case {i} gen={gen} differs")
        bad = os.path.join(tmp, "bad.jinja")
        with open(bad, "w") as fh:
            fh.write("{% for m in messages %}{{ m.content }")
        out = run([cli, "template", "--template", bad, "--messages", os.path.join(tmp, "m0.json")])
        expect(out.returncode != 0 and b"line 1" in out.stderr, f"malformed template: {out.stderr.decode()!r}")


def check_errors(cli):
    with tempfile.TemporaryDirectory() as tmp:
        corrupt = os.path.join(tmp, "corrupt.gguf")
        with open(corrupt, "wb") as fh:
            fh.write(b"GGUF\x03\x00\x00\x00" + b"\xff" * 24)
        for args in ([cli, "inspect", corrupt], [cli, "inspect", "no-such-model"],
                     [cli, "tokenize", os.path.join(tmp, "missing.gguf")]):
            out = run(args)
            lines = out.stderr.decode().strip().splitlines()
            expect(out.returncode != 0 and len(lines) == 1 and lines[0].startswith("hearth-cli: "),
                   f"{args[1:]}: rc={out.returncode} stderr={out.stderr.decode()!r}")


def check_chat_stats(cli, model, path):
    """Two turns of `chat` on the CPU, then /stats: the second turn reuses the
    first's KV blocks, and the memory line reports the weights the file holds
    (every tensor's bytes, from gguf-py) and one time per layer."""
    import re
    import gguf
    reader = gguf.GGUFReader(path)
    tensor_mib = sum(int(t.n_bytes) for t in reader.tensors) / 2**20
    n_layer = int(reader.fields["llama.block_count"].contents())
    out = run([cli, "chat", model, "--device", "cpu", "-n", "8", "--temp", "0"],
              b"Name a colour.\nAnd another one?\n/stats\n/quit\n")
    text = out.stdout.decode()
    expect(out.returncode == 0, f"chat failed: {out.stderr.decode()}")
    last = re.search(r"last answer: (\d+) prompt tokens \((\d+) cached\)", text)
    expect(last is not None and int(last.group(2)) > 0 and int(last.group(2)) < int(last.group(1)),
           f"the second turn reused no KV blocks: {text[-600:]!r}")
    mem = re.search(r"memory: weights ([0-9.]+) MiB, KV pool ([0-9.]+) MiB", text)
    expect(mem is not None and abs(float(mem.group(1)) - tensor_mib) < 0.05 * tensor_mib and float(mem.group(2)) > 0,
           f"/stats memory line {mem.group(0) if mem else None!r}; the file's tensors hold {tensor_mib:.1f} MiB")
    step = re.search(r"forward ([0-9.]+) ms \(layers ([0-9.]+) ms, (\d+) layers\)", text)
    expect(step is not None and int(step.group(3)) == n_layer and float(step.group(2)) <= float(step.group(1)) + 0.01,
           f"/stats step line {step.group(0) if step else None!r} ({n_layer} layers)")


def main():
    cli, model = sys.argv[1], sys.argv[2]
    path = json.loads(run([cli, "inspect", "--json", model]).stdout)["path"]
    check_tokenize(cli, model, path)
    check_template(cli, model, path)
    check_errors(cli)
    check_chat_stats(cli, model, path)
    if failures:
        print("\n".join(failures))
        print(f"0 passed, {len(failures)} failed")
        sys.exit(1)
    print("hearth-cli tokenize/detokenize/template/errors: all checks passed")


if __name__ == "__main__":
    main()
