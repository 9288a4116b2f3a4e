#!/usr/bin/env python3
"""Chat-template parity oracle: Python jinja2 configured as HF transformers
renders chat templates, against the engine's interpreter.

transformers compiles chat templates with
  ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                extensions=[AssistantTracker, jinja2.ext.loopcontrols])
(AssistantTracker adds `{% generation %}`), with a `tojson` filter replaced by json.dumps(ensure_ascii=False, indent,
separators, sort_keys), and the globals raise_exception (raises TemplateError
with the message) and strftime_now (datetime.now().strftime). It renders with
messages, tools and documents (None when absent), add_generation_prompt and
the tokenizer's special tokens.

Usage:
  render_oracle.py render TEMPLATE INPUTS          print the Python rendering
  render_oracle.py check RENDER_EXE TEMPLATES_DIR INPUTS_DIR
      renders every template with every input on both sides; the outputs must
      be byte-for-byte equal, or both sides must fail (with the same message
      when the template called raise_exception).
  render_oracle.py check-model RENDER_EXE GGUF_FILE_NAME INPUTS_DIR
      the same with the template stored in the default model's GGUF (found as
      models/catalog.cpp finds it); fails when the model file is missing.
"""

import json
import os
import pathlib
import tempfile
import subprocess
import sys
from datetime import datetime

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment


class TemplateRaised(Exception):
    """What raise_exception() raises: the template's own message."""


class GenerationTag(jinja2.ext.Extension):
    """`{% generation %}...{% endgeneration %}` as transformers' AssistantTracker
    renders it when no assistant mask is requested: the body, unchanged."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render_body"), [], [], body).set_lineno(lineno)

    def _render_body(self, caller):
        return caller()


def make_environment():
    def raise_exception(message):
        raise TemplateRaised(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return datetime.now().strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[GenerationTag, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def variables_of(inputs):
    variables = dict(inputs)
    variables.setdefault("messages", [])
    variables.setdefault("tools", None)
    variables.setdefault("documents", None)
    variables.setdefault("add_generation_prompt", False)
    variables.setdefault("bos_token", "")
    variables.setdefault("eos_token", "")
    return variables


def python_render(template_text, inputs):
    """Returns ("ok", text), ("raised", message) or ("error", description)."""
    try:
        template = make_environment().from_string(template_text)
        return "ok", template.render(**variables_of(inputs))
    except TemplateRaised as e:
        return "raised", str(e)
    except Exception as e:  # any other jinja2 or Python error
        return "error", f"{type(e).__name__}: {e}"


def engine_render(exe, template_path, inputs_path):
    proc = subprocess.run([exe, str(template_path), str(inputs_path)], capture_output=True, timeout=60)
    if proc.returncode == 0:
        return "ok", proc.stdout
    if proc.returncode == 3:
        return "failed", proc.stderr.decode("utf-8", "replace").rstrip("\n")
    raise RuntimeError(f"{exe} exited with {proc.returncode}: {proc.stderr.decode('utf-8', 'replace')}")


def first_difference(a, b):
    n = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
    return f"first difference at byte {n}: python {a[max(0, n - 30):n + 30]!r} engine {b[max(0, n - 30):n + 30]!r}"


def check_pair(exe, template_path, inputs_path):
    """Returns (problem or None, python outcome kind)."""
    template_text = template_path.read_text(encoding="utf-8")
    inputs = json.loads(inputs_path.read_text(encoding="utf-8"))
    kind, value = python_render(template_text, inputs)
    ekind, evalue = engine_render(exe, template_path, inputs_path)
    if kind == "ok":
        expected = value.encode("utf-8")
        if ekind != "ok":
            return f"python rendered, engine failed: {evalue}", kind
        if evalue != expected:
            return first_difference(expected, evalue), kind
        return None, kind
    if ekind == "ok":
        return f"python failed ({value}), engine rendered {evalue[:200]!r}", kind
    if kind == "raised" and evalue != value:
        return f"raise_exception message differs: python {value!r} engine {evalue!r}", kind
    return None, kind


def check(exe, templates_dir, inputs_dir):
    templates = sorted(pathlib.Path(templates_dir).glob("*.jinja"))
    inputs = sorted(pathlib.Path(inputs_dir).glob("*.json"))
    if not templates or not inputs:
        print("no fixtures found", file=sys.stderr)
        return 1
    failures = 0
    counts = {"ok": 0, "raised": 0, "error": 0}
    for t in templates:
        for i in inputs:
            problem, kind = check_pair(exe, t, i)
            counts[kind] += 1
            if problem:
                failures += 1
                print(f"MISMATCH {t.name} x {i.name}: {problem}")
    total = len(templates) * len(inputs)
    print(f"{total - failures}/{total} template x input pairs agree "
          f"(python rendered {counts['ok']}, raised {counts['raised']}, failed otherwise {counts['error']})")
    return 1 if failures else 0


def models_dir():
    """The directory models/catalog.cpp resolves models in."""
    if os.environ.get("HEARTH_MODELS_DIR"):
        return pathlib.Path(os.environ["HEARTH_MODELS_DIR"])
    if os.environ.get("XDG_DATA_HOME"):
        return pathlib.Path(os.environ["XDG_DATA_HOME"]) / "hearth" / "models"
    return pathlib.Path.home() / ".local" / "share" / "hearth" / "models"


def check_model(exe, file_name, inputs_dir):
    import gguf

    path = models_dir() / file_name
    if not path.exists():
        print(f"model file missing: {path}", file=sys.stderr)
        return 1
    field = gguf.GGUFReader(str(path)).fields["tokenizer.chat_template"]
    with tempfile.TemporaryDirectory() as tmp:
        (pathlib.Path(tmp) / "model.jinja").write_text(field.contents(), encoding="utf-8")
        return check(exe, tmp, inputs_dir)


def main(argv):
    if len(argv) == 4 and argv[1] == "render":
        kind, value = python_render(pathlib.Path(argv[2]).read_text(encoding="utf-8"),
                                    json.loads(pathlib.Path(argv[3]).read_text(encoding="utf-8")))
        if kind != "ok":
            print(f"{kind}: {value}", file=sys.stderr)
            return 3
        sys.stdout.buffer.write(value.encode("utf-8"))
        return 0
    if len(argv) == 5 and argv[1] == "check":
        return check(argv[2], argv[3], argv[4])
    if len(argv) == 5 and argv[1] == "check-model":
        return check_model(argv[2], argv[3], argv[4])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
