"""Checks the hearth-cli Python tests share: run a command, record a failed
check with the command's output, read its JSON, expect a clear error."""
import json
import subprocess

failures = []


def run(args, preexec=None, timeout=60):
    return subprocess.run(args, capture_output=True, timeout=timeout, preexec_fn=preexec)


def check(cond, what, proc=None, shown=600):
    if not cond:
        detail = ""
        if proc is not None:
            detail = f"\n  rc={proc.returncode}\n  stdout={proc.stdout[:shown]!r}\n  stderr={proc.stderr[:shown]!r}"
        failures.append(what + detail)
        print("FAIL:", what + detail)


def ok_json(proc, what):
    check(proc.returncode == 0, what + ": exit 0", proc)
    try:
        return json.loads(proc.stdout)
    except ValueError:
        check(False, what + ": stdout is JSON", proc)
        return {}


def expect_error(proc, part, what, kind=None, first_line=True):
    """A non-zero exit whose stderr names `part`; first_line: stderr starts with
    the "hearth-cli: " line (else it may follow the engine's log lines); kind:
    the --json error object's kind on stdout."""
    err = proc.stderr.decode(errors="replace")
    check(proc.returncode > 0, what + ": non-zero exit (not a signal)", proc)
    if first_line:
        check(err.startswith("hearth-cli: "), what + ": stderr starts with 'hearth-cli: '", proc)
    else:
        check("hearth-cli: " in err, what + ": a 'hearth-cli: ' line on stderr", proc)
    check(part in err, f"{what}: stderr names {part!r}", proc)
    if kind is not None:  # only for commands run with --json
        try:
            doc = json.loads(proc.stdout.decode().strip().splitlines()[-1])
            check(doc.get("kind") == kind, f"{what}: --json error kind {kind}", proc)
        except (ValueError, IndexError):
            check(False, what + ": --json error object on stdout", proc)
