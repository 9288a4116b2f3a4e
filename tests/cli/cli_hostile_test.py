#!/usr/bin/env python3
"""hearth-cli on hostile input (issue 14), with a synthetic model only.

JSON nested 100,000 deep (detokenize, template --messages) is refused with a
clear error instead of a stack overflow; --prompt-file DIR says it is a
directory; errors of --json commands also reach stdout as {"error", "kind"};
CLI11 parse errors carry the "hearth-cli:" prefix; --threads 1000 is capped
with a warning; models --verify says a file is not in the catalog (with its
checksum) rather than CHECKSUM MISMATCH; a hostile chat template ends with an
error naming the limit.

Usage: cli_hostile_test.py HEARTH_CLI
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

failures = []


def run(args, stdin=b"", env=None, timeout=120):
    return subprocess.run(args, input=stdin, capture_output=True, env=env, timeout=timeout)


def check(cond, what, proc=None):
    if not cond:
        detail = ""
        if proc is not None:
            detail = f"\n  rc={proc.returncode}\n  stdout={proc.stdout[:400]!r}\n  stderr={proc.stderr[:400]!r}"
        failures.append(what + detail)
        print("FAIL:", what + detail)


def expect_error(proc, part, what):
    err = proc.stderr.decode(errors="replace")
    check(proc.returncode not in (0,) and proc.returncode > 0, what + ": non-zero exit (not a signal)", proc)
    check(err.startswith("hearth-cli: "), what + ": stderr starts with 'hearth-cli: '", proc)
    check(part in err, f"{what}: stderr mentions {part!r}", proc)


def main():
    cli = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "tiny.gguf")
        p = run([cli, "synth", "--shape", "custom", "--embd", "64", "--layers", "1", "--heads", "2", "--kv-heads", "2",
                 "--ffn", "128", "--vocab", "300", "--ctx", "128", "-o", model])
        check(p.returncode == 0, "synth writes a tiny model", p)
        deep = b"[" * 100000 + b"]" * 100000

        p = run([cli, "detokenize", model], stdin=deep)
        expect_error(p, "nested deeper than", "detokenize of JSON nested 100,000 deep")

        messages = os.path.join(tmp, "deep.json")
        with open(messages, "wb") as f:
            f.write(b'{"messages": ' + deep + b"}")
        tpl = os.path.join(tmp, "t.jinja")
        with open(tpl, "w") as f:
            f.write("{{ messages }}")
        p = run([cli, "template", "--template", tpl, "--messages", messages])
        expect_error(p, "nested deeper than", "template --messages nested 100,000 deep")

        p = run([cli, "generate", model, "--prompt-file", tmp])
        expect_error(p, "is a directory", "--prompt-file DIR")

        p = run([cli, "generate", model, "--prompt-file", tmp, "--json"])
        expect_error(p, "is a directory", "--prompt-file DIR --json")
        try:
            doc = json.loads(p.stdout.decode().strip().splitlines()[-1])
            check("is a directory" in doc.get("error", "") and doc.get("kind") == "invalid_argument",
                  "--json error object on stdout", p)
        except (ValueError, IndexError):
            check(False, "--json error: stdout holds a JSON object", p)

        p = run([cli, "inspect", os.path.join(tmp, "missing.gguf"), "--json"])
        try:
            doc = json.loads(p.stdout.decode().strip().splitlines()[-1])
            check(doc.get("error") and doc.get("kind"), "inspect --json error object has error and kind", p)
        except (ValueError, IndexError):
            check(False, "inspect --json error: stdout holds a JSON object", p)

        p = run([cli, "generate", model, "--prompt", "x", "--no-such-flag"])
        expect_error(p, "no-such-flag", "CLI11 parse error")
        p = run([cli, "generate", "--no-such-flag", "--json"])
        check(b'"kind":"usage"' in p.stdout, "CLI11 parse error with --json: kind usage on stdout", p)

        p = run([cli, "generate", model, "--prompt", "hi", "-n", "1", "--threads", "1000"])
        err = p.stderr.decode(errors="replace")
        check(p.returncode == 0, "--threads 1000 still runs", p)
        check("1000 CPU threads requested" in err, "--threads 1000 warns that it is capped", p)

        # A model folder holding a file the catalog does not list.
        models_dir = os.path.join(tmp, "models")
        os.makedirs(models_dir)
        stray = os.path.join(models_dir, "stray.gguf")
        with open(model, "rb") as src, open(stray, "wb") as dst:
            data = src.read()
            dst.write(data)
        env = dict(os.environ, HEARTH_MODELS_DIR=models_dir)
        p = run([cli, "models", "--verify"], env=env)
        out = p.stdout.decode()
        check(p.returncode == 0, "models --verify runs", p)
        check("not in the catalog" in out and "MISMATCH" not in out, "models --verify: not in the catalog", p)
        check(hashlib.sha256(data).hexdigest() in out, "models --verify shows the stray file's checksum", p)
        p = run([cli, "models", "--verify", "--json"], env=env)
        doc = json.loads(p.stdout.decode())
        check(doc["models"][0]["in_catalog"] is False, "models --verify --json: in_catalog false", p)

        # A runaway chat template ends with the limit's error, not a hang.
        hostile = os.path.join(tmp, "hostile.jinja")
        with open(hostile, "w") as f:
            f.write("{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(60) }}")
        msgs = os.path.join(tmp, "msgs.json")
        with open(msgs, "w") as f:
            json.dump([{"role": "user", "content": "hi"}], f)
        p = run([cli, "template", "--template", hostile, "--messages", msgs], timeout=60)
        expect_error(p, "exceeded the limit", "runaway template")
        with open(hostile, "w") as f:
            f.write("{{ (-9223372036854775807-1) // -1 }}")
        p = run([cli, "template", "--template", hostile, "--messages", msgs])
        expect_error(p, "integer overflow", "INT64_MIN // -1")

    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("all hostile CLI cases passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
