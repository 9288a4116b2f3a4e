#!/usr/bin/env python3
"""hearth-cli send and rerun (issue 15) on a tiny synthetic model: one turn
stored as the app stores it, the prompt version / label / variables it applied
recorded, the pin kept for the next turn, a re-run as a sibling answer with
its comparison; the defaults a send takes when no option sets them (the
conversation's own settings, else settings.json's, as in the app); and bad input: unknown prompt, version, label, variable,
conversation and message, contradictory options, a missing database folder,
a read-only database, a database another Hearth is writing.

Usage: cli_send_test.py HEARTH_CLI
"""
import fcntl
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

import cli_checks
from cli_checks import failures, ok_json


def run(args, preexec=None):
    return cli_checks.run(args, preexec, timeout=120)


def check(cond, what, proc=None):
    cli_checks.check(cond, what, proc, shown=800)


def expect_error(proc, part, what, kind=None):
    # send and rerun print the engine's log lines before the error
    cli_checks.expect_error(proc, part, what, kind, first_line=False)


def drop_privileges():
    if os.getuid() == 0:  # root ignores file modes: the child runs as nobody
        os.setgid(65534)
        os.setuid(65534)


class Cli:
    def __init__(self, cli, model, db):
        self.cli, self.model, self.db = cli, model, db

    def send(self, *args, json_out=True, db=None, preexec=None):
        cmd = [self.cli, "send", self.model, "--database", db or self.db, "--device", "cpu", "--threads", "1",
               "--temp", "0", "--seed", "3", "-n", "8", *args]
        return run(cmd + (["--json"] if json_out else []), preexec)

    def send_bare(self, *args):  # no sampling options: the defaults decide
        return run([self.cli, "send", self.model, "--database", self.db, "--device", "cpu", "--threads", "1",
                    "--json", *args])

    def rerun(self, message_id, *args):
        return run([self.cli, "rerun", str(message_id), "--model", self.model, "--database", self.db, "--device",
                    "cpu", "--threads", "1", "--json", *args])

    def store(self, *args):
        return run([self.cli, *args, "--database", self.db, "--json"])


def test_send(c):
    ok_json(c.store("prompts", "add", "helper", "--text", "You help {{who}}."), "prompts add")
    ok_json(c.store("prompts", "edit", "helper", "--text", "You help {{who}} briefly."), "prompts edit")
    first = ok_json(c.send("--new", "--prompt", "helper@1", "--var", "who=Ada", "--message", "Hello there"), "send")
    for key in ("conversation_id", "user_message_id", "assistant_message_id", "text", "generation"):
        check(key in first, f"send --json has {key}")
    g = first.get("generation", {})
    check(g.get("prompt_version", {}).get("name") == "helper" and g["prompt_version"].get("version") == 1,
          f"the generation records helper version 1: {g.get('prompt_version')}")
    check(g.get("system_text") == "You help Ada.", f"the rendered system text is recorded: {g.get('system_text')!r}")
    check(g.get("variables") == {"who": "Ada"}, f"the variables are recorded: {g.get('variables')}")
    check(g.get("quantization") == "Q8_0" and g.get("device") == "cpu" and g.get("kv_precision") == "f16",
          "quantization, device and KV precision are recorded")
    check(os.path.isabs(g.get("model_path", "")) and len(g.get("model_sha256", "")) == 64, "model path and sha256")
    check(g.get("sampling", {}).get("seed") == 3 and g["sampling"].get("temperature") == 0, "sampling and seed")
    for key in ("model", "cached_tokens", "ttft_ms", "decode_tps", "itl_p99_ms", "generated_tokens", "finish_reason"):
        check(key in g, f"the generation has {key}")
    check(g.get("max_tokens") == 8 and g.get("generated_tokens", 99) <= 8, "max tokens applied and recorded")

    # The pin and the variables carry over to the next turn of the conversation.
    conv = first.get("conversation_id")
    second = ok_json(c.send("--conversation", str(conv), "--message", "And more"), "send --conversation")
    g2 = second.get("generation", {})
    check(g2.get("prompt_version", {}).get("version") == 1, "the pinned version applies to the next turn")
    check(g2.get("system_text") == "You help Ada.", "the variables are remembered for the next turn")

    # A label pinned resolves at each send: move it and the next turn follows.
    ok_json(c.store("prompts", "label", "helper", "1", "production"), "prompts label")
    third = ok_json(c.send("--new", "--prompt", "helper@production", "--var", "who=Bo", "--message", "Hi"),
                    "send with a label")
    check(third.get("generation", {}).get("prompt_label") == "production", "the label is recorded")
    ok_json(c.store("prompts", "label", "helper", "2", "production"), "prompts label (moved)")
    fourth = ok_json(c.send("--conversation", str(third.get("conversation_id")), "--message", "Again"), "send again")
    check(fourth.get("generation", {}).get("prompt_version", {}).get("version") == 2,
          "the moved label resolves to version 2 at send time")
    check(fourth.get("generation", {}).get("system_text") == "You help Bo briefly.", "version 2's text, rendered")

    # Without --json: the answer on stdout, a summary on stderr; stored like any other.
    p = c.send("--new", "--message", "Plain", json_out=False)
    check(p.returncode == 0 and b"answered by" in p.stderr, "send without --json prints a summary", p)
    history = ok_json(c.store("history", "--limit", "10"), "history")
    texts = [e.get("text") for e in history.get("entries", history if isinstance(history, list) else [])]
    check("Plain" in texts and "Hello there" in texts, f"the turns are in the history: {texts}")
    return first


def test_rerun(c, first):
    user, old = first.get("user_message_id"), first.get("assistant_message_id")
    same = ok_json(c.rerun(user), "rerun")
    check(same.get("assistant_message_id") not in (None, old), "rerun makes a new answer")
    check(same.get("previous", {}).get("assistant_message_id") == old, "rerun compares with the earlier answer")
    check(same.get("generation", {}).get("prompt_version", {}).get("version") == 1, "rerun keeps the version")
    check(same.get("generation", {}).get("sampling", {}).get("seed") == 3, "rerun keeps the seed")
    check(same.get("text") == first.get("text"), "greedy with the same seed: the same answer")
    comparison = same.get("comparison", {})
    check(all(op.get("op") == "equal" for op in comparison.get("word_diff", [{}])), "an all-equal word diff")
    check("ttft_ms" in comparison.get("measurements", {}), "the comparison has the measurements")

    other = ok_json(c.rerun(user, "--prompt", "helper@2", "--temp", "0.7"), "rerun with version 2")
    changed = other.get("comparison", {}).get("changed", {})
    check("prompt_version" in changed and "system_text" in changed and "sampling" in changed,
          f"the comparison says what changed: {sorted(changed)}")
    check(other.get("generation", {}).get("system_text") == "You help Ada briefly.", "version 2 rendered with Ada")
    history = ok_json(c.store("history", "--limit", "50"), "history after reruns")
    entries = history.get("entries", history if isinstance(history, list) else [])
    check(sum(1 for e in entries if e.get("message_id") == user) == 1, "a rerun adds no user message")


def test_defaults(c, config_dir):
    """What no option sets comes from the conversation's own settings, else settings.json."""
    os.makedirs(os.path.join(config_dir, "hearth"), exist_ok=True)
    settings = os.path.join(config_dir, "hearth", "settings.json")
    with open(settings, "w") as f:
        json.dump({"version": 1, "sampling": {"temperature": 0.5, "top_k": 7}, "max_tokens": 5,
                   "system_prompt": "Be terse."}, f)
    first = ok_json(c.send_bare("--new", "--message", "Defaults?"), "send with settings.json defaults")
    g = first.get("generation", {})
    check(g.get("sampling", {}).get("temperature") == 0.5 and g["sampling"].get("top_k") == 7,
          f"settings.json's sampling applies: {g.get('sampling')}")
    check(g.get("max_tokens") == 5 and g.get("generated_tokens", 99) <= 5, f"its max_tokens: {g.get('max_tokens')}")
    check(g.get("system_text") == "Be terse.", f"its system prompt: {g.get('system_text')!r}")
    check(g.get("sampling", {}).get("seed", 0) != 0, "a fresh seed is chosen and recorded")
    given = ok_json(c.send_bare("--new", "-n", "3", "--temp", "0", "--message", "Given"), "send with options")
    g = given.get("generation", {})
    check(g.get("max_tokens") == 3 and g.get("sampling", {}).get("temperature") == 0 and
          g["sampling"].get("top_k") == 7, f"options given win, the rest stays settings.json's: {g}")

    # The conversation's own settings (the app's Generation panel writes them) win over settings.json.
    conv = first.get("conversation_id")
    db = sqlite3.connect(c.db)
    db.execute("INSERT INTO conversation_settings (conversation_id, temperature, top_k, top_p, min_p, repeat_penalty, "
               "frequency_penalty, presence_penalty, penalty_last_n, seed, max_tokens, system_prompt, updated_ms) "
               "VALUES (?, 0.25, 3, 0.9, 0.0, 1.1, 0, 0, 64, 0, 4, 'Own rules.', 0)", (conv,))
    db.commit()
    db.close()
    own = ok_json(c.send_bare("--conversation", str(conv), "--message", "Own?"), "send with the conversation's settings")
    g = own.get("generation", {})
    check(g.get("sampling", {}).get("temperature") == 0.25 and g["sampling"].get("top_k") == 3 and
          g["sampling"].get("repeat_penalty") == 1.1, f"the conversation's sampling applies: {g.get('sampling')}")
    check(g.get("max_tokens") == 4 and g.get("system_text") == "Own rules.",
          f"the conversation's max tokens and system prompt: {g.get('max_tokens')}, {g.get('system_text')!r}")

    # A bad value warns, naming the key, and its default applies.
    with open(settings, "w") as f:
        json.dump({"version": 1, "max_tokens": -4}, f)
    p = c.send_bare("--new", "--message", "Bad settings")
    check(p.returncode == 0 and b"max_tokens" in p.stderr, "a bad settings value warns, naming the key", p)
    if p.returncode == 0:
        g = json.loads(p.stdout).get("generation", {})
        check(g.get("max_tokens") == 1024, f"and the default applies: {g.get('max_tokens')}")
    os.remove(settings)


def test_bad_input(c, tmp):
    expect_error(c.send("--new", "--prompt", "nobody", "--message", "x"), "nobody", "unknown prompt", "not_found")
    expect_error(c.send("--new", "--prompt", "helper@9", "--message", "x"), "9", "unknown version", "not_found")
    expect_error(c.send("--new", "--prompt", "helper@staging", "--message", "x"), "staging", "unknown label",
                 "not_found")
    expect_error(c.send("--new", "--prompt", "helper@1", "--message", "x"), '"who"', "missing variable",
                 "invalid_argument")
    expect_error(c.send("--new", "--var", "bad key=1", "--message", "x"), "bad key", "bad --var", "invalid_argument")
    expect_error(c.send("--conversation", "999", "--message", "x"), "999", "unknown conversation", "not_found")
    expect_error(c.send("--message", "x"), "--new", "neither --new nor --conversation")
    expect_error(c.send("--new", "--conversation", "1", "--message", "x"), "--new", "both --new and --conversation")
    expect_error(c.rerun(999), "999", "rerun of an unknown message", "not_found")
    expect_error(c.rerun(2), "not a user message", "rerun of an answer", "invalid_argument")
    missing = os.path.join(tmp, "no", "such", "h.db")
    expect_error(c.send("--new", "--message", "x", db=missing), "does not exist", "missing database folder",
                 "not_found")
    check(not os.path.exists(os.path.dirname(missing)), "no folder is created for --database")

    with open(c.db + ".lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        expect_error(c.send("--new", "--message", "x"), "another Hearth", "database held by another writer", "io")
        fcntl.flock(lock, fcntl.LOCK_UN)

    ro_dir = os.path.join(tmp, "ro")
    os.mkdir(ro_dir)
    ro = os.path.join(ro_dir, "h.db")
    ok_json(c.send("--new", "--message", "kept", db=ro), "seed a database to write-protect")
    os.chmod(ro, 0o444)
    os.chmod(ro_dir, 0o555)
    try:
        p = c.send("--new", "--message", "x", db=ro, preexec=drop_privileges)
        expect_error(p, "read-only", "send to a read-only database", "io")
    finally:
        os.chmod(ro_dir, 0o755)
        os.chmod(ro, 0o644)


def main():
    cli = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)  # the read-only check runs as nobody, who must reach the model
        model = os.path.join(tmp, "tiny.gguf")
        p = run([cli, "synth", "--shape", "custom", "--embd", "128", "--layers", "2", "--heads", "4", "--kv-heads",
                 "2", "--ffn", "256", "--vocab", "300", "--ctx", "512", "--quant", "Q8_0", "-o", model])
        check(p.returncode == 0, "synth", p)
        os.chmod(model, 0o644)
        config_dir = os.path.join(tmp, "config")  # settings.json: this test's own, never the user's
        os.environ["XDG_CONFIG_HOME"] = config_dir
        c = Cli(cli, model, os.path.join(tmp, "h.db"))
        first = test_send(c)
        test_rerun(c, first)
        test_defaults(c, config_dir)
        test_bad_input(c, tmp)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all send/rerun checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
