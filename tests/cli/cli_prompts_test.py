#!/usr/bin/env python3
"""hearth-cli's database commands (issue 15): prompts add|edit|show|versions|
diff|label|unlabel|list|archive|revert, history with each filter, export and
import, each with --json, and their errors: unknown prompt / version / label,
a missing database folder, a read-only database, a database another Hearth is
writing, bad options. Answers to review are seeded by importing a document.

Usage: cli_prompts_test.py HEARTH_CLI
"""
import fcntl
import json
import os
import subprocess
import sys
import tempfile

from cli_checks import check, expect_error, failures, ok_json
from cli_checks import run as run_checked


def run(args, preexec=None):
    return run_checked(args, preexec, timeout=60)


def generation(version_id, model, quant, finish, ttft, label=""):
    return {"prompt_version_id": version_id, "model_path": f"/m/{model}.gguf", "model_sha256": "00", "model_name": model,
            "quantization": quant, "kv_precision": "f16", "device": "cpu",
            "sampling": {"temperature": 0.7, "top_k": 40, "top_p": 0.95, "min_p": 0.05, "repeat_penalty": 1.0,
                         "frequency_penalty": 0.0, "presence_penalty": 0.0, "penalty_last_n": 64, "seed": 42},
            "max_tokens": 128, "stop": [], "system_text": "Arr.", "variables": {"name": "Jim"}, "prompt_label": label,
            "prompt_tokens": 10, "cached_tokens": 4, "generated_tokens": 20, "ttft_ms": ttft, "prefill_tok_s": 100.0,
            "decode_tok_s": 50.0, "itl_p50_ms": 20.0, "itl_p95_ms": 30.0, "itl_p99_ms": 35.0,
            "peak_memory_bytes": 1000, "finish_reason": finish, "started_ms": 0, "finished_ms": 1}


def seed_document():
    """Two prompts and two conversations with four answered prompts (times 1..4 days after 2026-01-01)."""
    day = 86_400_000
    t0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z
    config = {"temperature": None, "top_p": None, "top_k": None, "min_p": None, "max_tokens": None, "stop": None}
    prompts = [
        {"id": 1, "name": "pirate", "created_ms": t0, "archived": False,
         "versions": [{"id": 1, "version": 1, "text": "Arr.", "note": "", "created_ms": t0, "source_version_id": None,
                       "config": config},
                      {"id": 2, "version": 2, "text": "Arr!", "note": "", "created_ms": t0 + 1,
                       "source_version_id": None, "config": config}],
         "labels": [{"label": "latest", "version_id": 2, "updated_ms": t0 + 1},
                    {"label": "production", "version_id": 1, "updated_ms": t0 + 2}]},
        {"id": 2, "name": "helper", "created_ms": t0, "archived": False,
         "versions": [{"id": 3, "version": 1, "text": "Help.", "note": "", "created_ms": t0, "source_version_id": None,
                       "config": config}],
         "labels": [{"label": "latest", "version_id": 3, "updated_ms": t0}]},
    ]
    turns = [  # (conversation, text, version, model, quant, finish, ttft, rating)
        (1, "hoist the sails", 1, "smol", "Q4_1", "stop", 30.0, "up"),
        (1, "where is the treasure", 2, "smol", "Q4_K_M", "length", 10.0, "down"),
        (2, "bake bread", 3, "gemma", "Q4_K_M", "stop", 20.0, None),
        (2, "bake a treasure cake", None, "gemma", "Q4_1", "stop", 40.0, None),
    ]
    conversations = {1: [], 2: []}
    mid = 1
    for i, (conv, text, version, model, quant, finish, ttft, rating) in enumerate(turns):
        t = t0 + (i + 1) * day
        parent = conversations[conv][-1]["id"] if conversations[conv] else None
        conversations[conv].append({"id": mid, "parent_id": parent, "role": "user", "content": text,
                                    "state": "complete", "created_ms": t, "updated_ms": t, "rating": None,
                                    "generation": None})
        conversations[conv].append({"id": mid + 1, "parent_id": mid, "role": "assistant", "content": "answer " + text,
                                    "state": "complete", "created_ms": t + 1, "updated_ms": t + 1,
                                    "rating": {"value": rating, "updated_ms": t + 2} if rating else None,
                                    "generation": generation(version, model, quant, finish, ttft,
                                                             "production" if version == 1 else "")})
        mid += 2
    convs = []
    for cid, title in ((1, "Sailing"), (2, "Cooking")):
        msgs = conversations[cid]
        convs.append({"id": cid, "title": title, "created_ms": t0, "updated_ms": msgs[-1]["updated_ms"],
                      "archived": False, "deleted_ms": None, "current_leaf_id": msgs[-1]["id"],
                      "prompt_version_id": None, "label_prompt_id": 1 if cid == 1 else None,
                      "prompt_label": "production" if cid == 1 else None, "messages": msgs})
    return {"format": "hearth-export", "version": 1, "prompts": prompts, "conversations": convs, "experiments": []}


def test_prompts(cli, db, tmp):
    d = ["--database", db]
    p = run([cli, "prompts", "add", "sys", "--text", "You are a pirate.", "--note", "first", "--temperature", "0.3",
             "--stop", "END", "--json"] + d)
    v1 = ok_json(p, "prompts add")
    check(v1.get("version") == 1 and v1.get("note") == "first" and v1.get("text") == "You are a pirate.",
          "add: version 1 with its text and note", p)
    check(v1.get("config", {}).get("temperature") == 0.3 and v1["config"].get("stop") == ["END"]
          and v1["config"].get("top_k") is None, "add: the configuration, unset fields null", p)
    check("created" in v1 and v1.get("labels") == ["latest"], "add: created and the latest label", p)

    text_file = os.path.join(tmp, "v2.txt")
    with open(text_file, "w") as f:
        f.write("You are a polite pirate.")
    v2 = ok_json(run([cli, "prompts", "edit", "sys", "--file", text_file, "--top-k", "20", "--json"] + d), "edit")
    check(v2.get("version") == 2 and v2.get("text") == "You are a polite pirate.", "edit: version 2 from the file")
    check(v2.get("config", {}).get("temperature") == 0.3 and v2["config"].get("top_k") == 20,
          "edit keeps the latest configuration and adds the options given")
    ok_json(run([cli, "prompts", "edit", "sys", "--text", "You are a very polite pirate.", "--no-stop", "--json"] + d),
            "edit 3")

    lab = ok_json(run([cli, "prompts", "label", "sys", "2", "production", "--json"] + d), "label")
    check(lab.get("labels") == {"latest": 3, "production": 2}, "label: production -> 2, latest -> 3")
    shown = ok_json(run([cli, "prompts", "show", "sys@production", "--json"] + d), "show @label")
    check(shown.get("version") == 2 and shown.get("label") == "production", "show NAME@LABEL")
    check(ok_json(run([cli, "prompts", "show", "sys@1", "--json"] + d), "show @1").get("text") == "You are a pirate.",
          "show NAME@VERSION")
    latest = ok_json(run([cli, "prompts", "show", "sys", "--json"] + d), "show NAME")
    check(latest.get("version") == 3 and latest["config"].get("stop") == [], "show NAME is the latest")
    p = run([cli, "prompts", "show", "sys@1"] + d)
    check(p.returncode == 0 and b"You are a pirate." in p.stdout and b"temperature=0.3" in p.stdout,
          "show without --json prints the text and configuration", p)

    vs = ok_json(run([cli, "prompts", "versions", "sys", "--json"] + d), "versions")
    check([v["version"] for v in vs.get("versions", [])] == [1, 2, 3], "versions: 1, 2, 3")
    check(all(v.get("metrics", {}).get("answers") == 0 for v in vs.get("versions", [])), "versions: metrics")

    diff = ok_json(run([cli, "prompts", "diff", "sys", "1", "3", "--json"] + d), "diff")
    check(diff.get("ops") == [{"op": "equal", "text": "You are a "}, {"op": "insert", "text": "very polite "},
                              {"op": "equal", "text": "pirate."}], f"diff 1 3: word ops {diff.get('ops')}")
    p = run([cli, "prompts", "diff", "sys", "production", "latest"] + d)
    check(p.returncode == 0 and b"{+very +}" in p.stdout, "diff by labels, wdiff notation", p)

    rev = ok_json(run([cli, "prompts", "revert", "sys", "1", "--json"] + d), "revert")
    check(rev.get("version") == 4 and rev.get("text") == "You are a pirate." and rev.get("source_version_id") == 1
          and rev.get("config", {}).get("stop") == ["END"], "revert: version 4 equal to version 1")
    ok_json(run([cli, "prompts", "unlabel", "sys", "production", "--json"] + d), "unlabel")
    lst = ok_json(run([cli, "prompts", "list", "--json"] + d), "list")
    check([x["name"] for x in lst.get("prompts", [])] == ["sys"] and lst["prompts"][0]["latest_version"] == 4
          and lst["prompts"][0]["labels"] == {"latest": 4}, "list: sys at version 4, only latest")
    ok_json(run([cli, "prompts", "archive", "sys", "--json"] + d), "archive")
    check(ok_json(run([cli, "prompts", "list", "--json"] + d), "list")["prompts"] == [], "archived: hidden")
    arch = ok_json(run([cli, "prompts", "list", "--archived", "--json"] + d), "list --archived")
    check(len(arch.get("prompts", [])) == 1 and arch["prompts"][0]["archived"], "list --archived shows it")
    check(ok_json(run([cli, "prompts", "show", "sys@2", "--json"] + d), "show archived")["version"] == 2,
          "an archived prompt's versions stay readable")
    ok_json(run([cli, "prompts", "archive", "sys", "--undo", "--json"] + d), "archive --undo")

    # Bad input: each error names what is wrong.
    expect_error(run([cli, "prompts", "show", "nope", "--json"] + d), 'no prompt named "nope"', "unknown prompt",
                 "not_found")
    expect_error(run([cli, "prompts", "show", "sys@9"] + d), "has no version 9", "unknown version")
    expect_error(run([cli, "prompts", "show", "sys@staging"] + d), 'no label "staging"', "unknown label")
    expect_error(run([cli, "prompts", "diff", "sys", "1", "8"] + d), "has no version 8", "diff: unknown version")
    expect_error(run([cli, "prompts", "label", "sys", "7", "beta"] + d), "has no version 7", "label: unknown version")
    expect_error(run([cli, "prompts", "label", "sys", "1", "latest"] + d), "cannot be set", "label latest")
    expect_error(run([cli, "prompts", "label", "sys", "1", "12"] + d), "is a number", "numeric label")
    expect_error(run([cli, "prompts", "unlabel", "sys", "gone"] + d), 'no label "gone"', "unlabel unknown")
    expect_error(run([cli, "prompts", "edit", "nope", "--text", "x"] + d), 'no prompt named "nope"', "edit unknown")
    expect_error(run([cli, "prompts", "add", "sys", "--text", "x"] + d), '"sys" exists', "add a taken name")
    expect_error(run([cli, "prompts", "add", "new"] + d), "--text", "add without text")
    expect_error(run([cli, "prompts", "add", "new", "--text", "a", "--file", text_file] + d), "not both", "two texts")
    expect_error(run([cli, "prompts", "add", "new", "--file", os.path.join(tmp, "missing.txt")] + d), "missing.txt",
                 "missing --file")
    expect_error(run([cli, "prompts", "revert", "sys", "99"] + d), "has no version 99", "revert unknown version")
    expect_error(run([cli, "prompts", "add", "t", "--text", "x", "--top-p", "2"] + d), "top-p", "out-of-range option")


def test_history(cli, db, tmp):
    d = ["--database", db]
    doc_path = os.path.join(tmp, "seed.json")
    with open(doc_path, "w") as f:
        json.dump(seed_document(), f)
    imp = ok_json(run([cli, "import", doc_path, "--json"] + d), "import the seed")
    check(imp.get("conversations") == 2 and imp.get("messages") == 8 and imp.get("generations") == 4
          and imp.get("ratings") == 2 and imp.get("prompts") == 2, f"import summary {imp}")

    def texts(*args):
        h = ok_json(run([cli, "history", "--json"] + list(args) + d), "history " + " ".join(args))
        check(h.get("total") == len(h.get("entries", [])), "history: total matches without --limit")
        return [e["text"] for e in h.get("entries", [])]

    everything = ["bake a treasure cake", "bake bread", "where is the treasure", "hoist the sails"]
    check(texts() == everything, f"history: newest first {texts()}")
    h = ok_json(run([cli, "history", "--json", "--limit", "1", "--offset", "2"] + d), "history page")
    e = h["entries"][0] if h.get("entries") else {}
    check(h.get("total") == 4 and e.get("text") == "where is the treasure", "limit/offset page, total of all")
    for key, want in (("conversation_title", "Sailing"), ("model", "smol"), ("quantization", "Q4_K_M"),
                      ("kv_precision", "f16"), ("device", "cpu"), ("finish_reason", "length"), ("ttft_ms", 10.0),
                      ("decode_tps", 50.0), ("prompt_tokens", 10), ("cached_tokens", 4), ("generated_tokens", 20),
                      ("rating", "down"), ("system_text", "Arr."), ("variables", {"name": "Jim"})):
        check(e.get(key) == want, f"history entry {key} == {want!r} (got {e.get(key)!r})")
    check(e.get("prompt_version") == {"name": "pirate", "version": 2, "id": 2}, "entry prompt_version")
    check(isinstance(e.get("message_id"), int) and isinstance(e.get("conversation_id"), int)
          and e.get("sampling", {}).get("seed") == 42 and e.get("time", "").startswith("2026-01-03"),
          "entry ids, sampling and time")

    check(texts("--search", "treasure") == ["bake a treasure cake", "where is the treasure"], "--search")
    check(texts("--search", "trea bake") == ["bake a treasure cake"], "--search: all words, prefixes")
    check(texts("--prompt", "pirate") == ["where is the treasure", "hoist the sails"], "--prompt NAME")
    check(texts("--prompt", "pirate@1") == ["hoist the sails"], "--prompt NAME@VERSION")
    check(texts("--prompt", "pirate@production") == ["hoist the sails"], "--prompt NAME@LABEL")
    check(texts("--model", "gemma") == ["bake a treasure cake", "bake bread"], "--model")
    check(texts("--quantization", "Q4_1") == ["bake a treasure cake", "hoist the sails"], "--quantization")
    check(texts("--finish", "length") == ["where is the treasure"], "--finish")
    check(texts("--rating", "up") == ["hoist the sails"], "--rating up")
    check(texts("--rating", "none") == ["bake a treasure cake", "bake bread"], "--rating none")
    check(texts("--since", "2026-01-03") == everything[:3], "--since DATE")
    check(texts("--until", "2026-01-03") == everything[2:], "--until DATE includes that day")
    check(texts("--since", "2026-01-03T00:00:00Z", "--until", "2026-01-04") == everything[1:3], "--since/--until")
    check(texts("--sort", "ttft", "--asc") == ["where is the treasure", "bake bread", "hoist the sails",
                                               "bake a treasure cake"], "--sort ttft --asc")
    check(texts("--model", "nothing") == [], "a filter matching nothing")
    p = run([cli, "history"] + d)
    check(p.returncode == 0 and b"where is the treasure" in p.stdout and b"pirate@2" in p.stdout, "history table", p)
    expect_error(run([cli, "history", "--prompt", "pirate@7"] + d), "has no version 7", "history unknown version")
    expect_error(run([cli, "history", "--prompt", "ghost"] + d), 'no prompt named "ghost"', "history unknown prompt")
    expect_error(run([cli, "history", "--since", "yesterday", "--json"] + d), "--since yesterday", "bad date",
                 "invalid_argument")
    expect_error(run([cli, "history", "--sort", "colour"] + d), "colour", "bad sort column")
    versions = ok_json(run([cli, "prompts", "versions", "pirate", "--json"] + d), "versions with answers")
    m = versions["versions"][0]["metrics"]
    check(m.get("answers") == 1 and m.get("median_ttft_ms") == 30.0 and m.get("rated_up") == 1
          and m.get("finish_reasons") == {"stop": 1}, f"per-version metrics {m}")


def test_export_import(cli, db, tmp):
    d = ["--database", db]
    out = os.path.join(tmp, "all.json")
    ok_json(run([cli, "export", "--format", "json", "-o", out, "--json"] + d), "export")
    copy = os.path.join(tmp, "copy.db")
    ok_json(run([cli, "import", out, "--database", copy, "--json"]), "import into an empty database")
    again = os.path.join(tmp, "again.json")
    ok_json(run([cli, "export", "--format", "json", "-o", again, "--database", copy, "--json"]), "export the copy")
    with open(out) as a, open(again) as b:
        check(a.read() == b.read(), "export(import(export(db))) == export(db)")
    r = ok_json(run([cli, "import", out, "--json"] + d), "import into itself")
    check(r.get("ids_remapped") is True and r.get("renamed_prompts") == {} and r.get("prompts") == 0
          and r.get("prompts_reused", 0) >= 1,
          f"import into itself remaps ids and reuses the prompts it already has {r}")
    names = [p["name"] for p in ok_json(run([cli, "prompts", "list", "--json"] + d), "list")["prompts"]]
    check(not any("imported" in n for n in names), f"no prompt copied by a second import {names}")

    md = os.path.join(tmp, "one.md")
    ok_json(run([cli, "export", "--conversation", "1", "--format", "markdown", "-o", md, "--json"] + d), "markdown")
    with open(md) as f:
        text = f.read()
    check(text.startswith("# Sailing") and "## User\n\nhoist the sails" in text and "pirate@1" in text,
          "markdown of one conversation")
    p = run([cli, "export", "--conversation", "1", "--format", "json", "-o", "-"] + d)
    doc = ok_json(p, "export one conversation to stdout")
    check(len(doc.get("conversations", [])) == 1 and [x["name"] for x in doc.get("prompts", [])] == ["pirate"],
          "one conversation brings only its prompts")

    expect_error(run([cli, "export", "--format", "markdown", "-o", md] + d), "--conversation", "markdown of all")
    expect_error(run([cli, "export", "--conversation", "99", "--format", "json", "-o", md] + d), "no conversation 99",
                 "export unknown conversation")
    expect_error(run([cli, "export", "--format", "json", "-o", os.path.join(tmp, "no", "x.json")] + d), "no folder",
                 "export into a missing folder")
    expect_error(run([cli, "export", "--format", "yaml", "-o", md] + d), "yaml", "unknown format")
    bad = os.path.join(tmp, "bad.json")
    with open(bad, "w") as f:
        f.write('{"format": "hearth-export", "version": 1, "prompts": [{"id": 1, "versions": [], "labels": []}], '
                '"conversations": []}')
    expect_error(run([cli, "import", bad, "--json"] + d), "prompts[0].name", "malformed import", "invalid_argument")
    with open(bad, "w") as f:
        f.write("{not json")
    expect_error(run([cli, "import", bad] + d), "not valid JSON", "import of non-JSON")
    expect_error(run([cli, "import", os.path.join(tmp, "none.json")] + d), "no such file", "import of a missing file")


def drop_privileges():
    if os.getuid() == 0:
        os.setgid(65534)
        os.setuid(65534)


def test_database_errors(cli, db, tmp):
    expect_error(run([cli, "prompts", "list", "--database", os.path.join(tmp, "no", "such", "h.db"), "--json"]),
                 "database folder", "missing database folder", "not_found")
    expect_error(run([cli, "prompts", "add", "x", "--text", "y", "--database", os.path.join(tmp, "no", "h.db")]),
                 "does not exist", "missing folder on write")
    expect_error(run([cli, "history", "--database", os.path.join(tmp, "fresh.db")]), "no database at",
                 "reading a database that does not exist")
    check(not os.path.exists(os.path.join(tmp, "fresh.db")), "a read creates no database")
    expect_error(run([cli, "history", "--database", tmp]), "is a directory", "a folder as the database")

    # Another Hearth holds the writer lock: reads work, writes say who.
    with open(db + ".lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        expect_error(run([cli, "prompts", "add", "z", "--text", "y", "--database", db, "--json"]), "another Hearth",
                     "write while another process writes", "io")
        check(run([cli, "prompts", "list", "--database", db]).returncode == 0, "read while another process writes")
        fcntl.flock(lock, fcntl.LOCK_UN)

    # A write-protected database in a write-protected folder (root ignores
    # modes, so the child drops to nobody).
    ro_dir = os.path.join(tmp, "ro")
    os.mkdir(ro_dir)
    ro = os.path.join(ro_dir, "h.db")
    ok_json(run([cli, "prompts", "add", "keep", "--text", "kept", "--database", ro, "--json"]), "seed ro")
    os.chmod(tmp, 0o755)
    os.chmod(ro, 0o444)
    os.chmod(ro_dir, 0o555)
    try:
        p = run([cli, "prompts", "add", "w", "--text", "y", "--database", ro], preexec=drop_privileges)
        expect_error(p, "read-only", "write to a read-only database")
        p = run([cli, "prompts", "show", "keep", "--database", ro, "--json"], preexec=drop_privileges)
        check(p.returncode == 0 and b"kept" in p.stdout, "read a read-only database", p)
    finally:
        os.chmod(ro_dir, 0o755)
        os.chmod(ro, 0o644)


def main():
    cli = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        test_prompts(cli, os.path.join(tmp, "p.db"), tmp)
        db = os.path.join(tmp, "h.db")
        test_history(cli, db, tmp)
        test_export_import(cli, db, tmp)
        test_database_errors(cli, os.path.join(tmp, "p.db"), tmp)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
