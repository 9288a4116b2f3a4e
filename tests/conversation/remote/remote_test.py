#!/usr/bin/env python3
"""Remote OpenAI-compatible endpoints as hearth's backend (issue 18), through
`hearth-cli send --endpoint` and the conversation database, against servers
this test starts on loopback:

  --fake                       a hostile fake endpoint (fake_endpoint.py): a stream cut
                               mid-way (its error recorded), malformed data, a 2 MiB line,
                               429, 401 on chat, an unreachable port, a choice between two
                               models, rerun --endpoint (sibling answers on two endpoints)
  --hearth-server BIN NAME     hearth-server on the default model: a conversation stored
                               like a local one (the same greedy text as the local engine),
                               continue_final_message, a prompt version, a wrong key (401)
  --llama-cpp NAME             llama.cpp's server (python -m llama_cpp.server): a
                               conversation of two turns stored with the endpoint;
                               exit 77 (skipped) when llama-cpp-python[server] is absent

Usage: remote_test.py HEARTH_CLI (--fake | --hearth-server BIN MODEL | --llama-cpp MODEL)
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "cli"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "server"))
import cli_checks  # noqa: E402
from cli_checks import failures, ok_json  # noqa: E402
from fake_endpoint import CHUNKS, FakeEndpoint  # noqa: E402


def check(cond, what, proc=None):
    cli_checks.check(cond, what, proc, shown=1200)


def expect_error(proc, part, what):
    cli_checks.expect_error(proc, part, what, first_line=False)


class Cli:
    def __init__(self, cli, db):
        self.cli, self.db = cli, db

    def send(self, url, *args, key=None):
        cmd = [self.cli, "send", "--endpoint", url, "--database", self.db, "--json", *args]
        if key:
            cmd += ["--api-key", key]
        return cli_checks.run(cmd, timeout=180)

    def rerun(self, message_id, url, *args):
        return cli_checks.run([self.cli, "rerun", str(message_id), "--endpoint", url, "--database", self.db, "--json",
                               *args], timeout=180)

    def send_local(self, model, *args):
        return cli_checks.run([self.cli, "send", model, "--database", self.db, "--device", "cpu", "--threads", "2",
                               "--json", *args], timeout=180)

    def export(self, conversation_id=None):
        args = [self.cli, "export", "--format", "json", "-o", "-", "--database", self.db]
        if conversation_id:
            args += ["--conversation", str(conversation_id)]
        p = cli_checks.run(args)
        check(p.returncode == 0, "export", p)
        try:
            return json.loads(p.stdout)
        except ValueError:
            return {}

    def conversations(self):
        return self.export().get("conversations", [])

    def store(self, *args):
        return cli_checks.run([self.cli, *args, "--database", self.db, "--json"])


def messages_of(doc):
    convs = doc.get("conversations", [])
    return convs[0].get("messages", []) if convs else []


def last_answer(c, before):
    """The assistant message of the one conversation created since `before` conversations."""
    convs = c.conversations()
    check(len(convs) == before + 1, f"one new conversation stored ({before} -> {len(convs)})")
    if len(convs) != before + 1:
        return {}
    answers = [m for m in convs[-1].get("messages", []) if m.get("role") == "assistant"]
    return answers[-1] if answers else {}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- the hostile fake --------------------------------------------------------

def test_fake(c):
    fake = FakeEndpoint()
    try:
        ok = ok_json(c.send(fake.url("ok"), "--new", "--message", "Hi", "-n", "8", "--temp", "0", "--top-k", "0",
                            "--min-p", "0"), "fake ok")
        check(ok.get("text") == "".join(CHUNKS) + " fake", f"fake ok: the streamed text {ok.get('text')!r}")
        g = ok.get("generation", {})
        check(g.get("device") == fake.url("ok"), f"the record names the endpoint: {g.get('device')!r}")
        check(g.get("model") == "fake", f"the record names the remote model: {g.get('model')!r}")
        check(g.get("prompt_tokens") == 9 and g.get("generated_tokens") == 4, f"usage as the server said: {g}")
        check(g.get("finish_reason") == "stop", f"finish_reason stop: {g}")
        check(g.get("ttft_ms", 0) > 0 and g.get("itl_p50_ms", -1) >= 0, f"client-side timings: {g}")
        sent = fake.bodies("ok")[-1]
        check(sent.get("stream") is True and sent.get("stream_options") == {"include_usage": True},
              f"a streamed request with usage: {sent}")
        check(sent.get("messages") == [{"role": "user", "content": "Hi"}], f"the messages sent: {sent}")
        check(sent.get("max_tokens") == 8 and sent.get("temperature") == 0, f"the sampling sent: {sent}")
        check("top_k" not in sent and "min_p" not in sent, f"off sampling extensions are not sent: {sent}")
        check(isinstance(sent.get("seed"), int) and (sent["seed"] & (2**64 - 1)) == g.get("sampling", {}).get("seed"),
              f"the recorded seed is the one sent: {sent.get('seed')} / {g.get('sampling')}")

        check(g.get("error") == "", f"a finished answer records no error: {g.get('error')!r}")

        # rerun MESSAGE_ID --endpoint: a sibling answer, recorded with the endpoint that gave it.
        user_id, first_id = ok.get("user_message_id"), ok.get("assistant_message_id")
        again = ok_json(c.rerun(user_id, fake.url("ok")), "rerun --endpoint")
        ag = again.get("generation", {})
        check(again.get("user_message_id") == user_id and again.get("assistant_message_id") not in (None, first_id),
              f"rerun answers the same message with a new one: {again}")
        check(ag.get("device") == fake.url("ok") and ag.get("model") == "fake", f"rerun's record names the endpoint: {ag}")
        check(ag.get("sampling", {}).get("seed") == g.get("sampling", {}).get("seed"), "rerun repeats the seed")
        check((again.get("previous") or {}).get("assistant_message_id") == first_id, f"previous: {again.get('previous')}")
        check(fake.bodies("ok")[-1].get("messages") == [{"role": "user", "content": "Hi"}],
              f"rerun sends the context up to the message: {fake.bodies('ok')[-1]}")
        other = ok_json(c.rerun(user_id, fake.url("multi"), "--remote-model", "a"), "rerun on another endpoint")
        changed = other.get("comparison", {}).get("changed", {})
        check(changed.get("device", {}).get("after") == fake.url("multi") and
              changed.get("model", {}).get("after") == "a", f"the comparison names the other endpoint: {changed}")
        answers = [m for m in messages_of(c.export(ok.get("conversation_id"))) if m.get("role") == "assistant"]
        check([m.get("id") for m in answers] ==
              [first_id, again.get("assistant_message_id"), other.get("assistant_message_id")] and
              all(m.get("parent_id") == user_id for m in answers), f"three sibling answers stored: {answers}")

        n = len(c.conversations())
        p = c.send(fake.url("cut"), "--new", "--message", "Tell me")
        expect_error(p, "was cut before the answer finished", "a stream cut mid-way")
        a = last_answer(c, n)
        check(a.get("content") == CHUNKS[0] + CHUNKS[1], f"the partial answer is kept: {a.get('content')!r}")
        check(a.get("state") == "interrupted", f"and marked interrupted: {a.get('state')!r}")
        check((a.get("generation") or {}).get("finish_reason") == "error", f"finish_reason error: {a}")
        check((a.get("generation") or {}).get("device") == fake.url("cut"), "the cut answer names its endpoint")
        # The record keeps why, naming the endpoint: in the export and in history --json.
        why = (a.get("generation") or {}).get("error") or ""
        check("was cut before the answer finished" in why and fake.url("cut") in why, f"the error is stored: {why!r}")
        latest = ok_json(c.store("history", "--limit", "1"), "history after the cut").get("entries", [{}])[0]
        check(latest.get("text") == "Tell me" and latest.get("error") == why,
              f"history --json shows the error: {latest.get('error')!r}")

        n = len(c.conversations())
        p = c.send(fake.url("malformed"), "--new", "--message", "Hi")
        expect_error(p, "malformed data from " + fake.url("malformed"), "malformed SSE")
        expect_error(p, "is not JSON", "malformed SSE names the cause")
        a = last_answer(c, n)
        check(a.get("content") == CHUNKS[0] and a.get("state") == "interrupted", f"malformed: partial kept: {a}")

        n = len(c.conversations())
        p = c.send(fake.url("hugeline"), "--new", "--message", "Hi")
        expect_error(p, "longer than 1048576 bytes", "a 2 MiB line")
        a = last_answer(c, n)
        check(a.get("content") == CHUNKS[0], f"hugeline: partial kept: {a.get('content')!r}")

        n = len(c.conversations())
        p = c.send(fake.url("status429"), "--new", "--message", "Hi")
        expect_error(p, "rate-limiting or overloaded (HTTP 429: Rate limit reached)", "429")
        a = last_answer(c, n)
        check(a.get("content") == "" and a.get("state") == "interrupted", f"429: an empty answer marked: {a}")

        n = len(c.conversations())
        p = c.send(fake.url("chat401"), "--new", "--message", "Hi")
        expect_error(p, "refused the API key (HTTP 401: Invalid API key)", "401 on the chat request")
        last_answer(c, n)

        n = len(c.conversations())
        dead = f"http://127.0.0.1:{free_port()}/v1"
        p = c.send(dead, "--new", "--message", "Hi")
        expect_error(p, "cannot reach " + dead, "an unreachable endpoint")
        check(len(c.conversations()) == n, "an unreachable endpoint stores nothing")

        p = c.send(fake.url("multi"), "--new", "--message", "Hi")
        expect_error(p, "serves 2 models (a, b): name one", "two models and none named")
        p = c.send(fake.url("multi"), "--new", "--message", "Hi", "--remote-model", "c")
        expect_error(p, "does not serve a model 'c' (it serves: a, b)", "an unknown remote model")
        b = ok_json(c.send(fake.url("multi"), "--new", "--message", "Hi", "--remote-model", "b"), "--remote-model b")
        check(fake.bodies("multi")[-1].get("model") == "b", "the request names the chosen model")
        check(b.get("generation", {}).get("model") == "b", "the record names the chosen model")

        p = c.send("ftp://x/v1", "--new", "--message", "Hi")
        expect_error(p, "the scheme must be http or https", "a bad URL")
        p = cli_checks.run([c.cli, "send", "some.gguf", "--endpoint", fake.url("ok"), "--new", "--message", "x",
                            "--database", c.db])
        check(p.returncode != 0 and b"excludes" in p.stderr, "MODEL and --endpoint together are refused", p)
    finally:
        fake.stop()


# --- hearth-server -------------------------------------------------------------

def test_hearth_server(c, binary, model):
    import server_harness
    server = server_harness.Server(binary, model, [])  # it adds --threads 2 and the key
    key = server_harness.KEY
    base = f"http://{server.host}:{server.port}"
    try:
        greedy = ["--temp", "0", "--top-k", "0", "--min-p", "0", "-n", "16"]
        question = "What is the capital of France?"
        first = ok_json(c.send(base, "--new", "--message", question, *greedy, key=key), "hearth-server turn 1")
        g = first.get("generation", {})
        check(g.get("device") == base + "/v1", f"the record names the endpoint: {g.get('device')!r}")
        check(g.get("model") == server.model, f"the record names the served model: {g.get('model')!r}")
        check(g.get("prompt_tokens", 0) > 0 and g.get("generated_tokens", 0) > 0, f"usage from the server: {g}")
        check(first.get("text"), "a non-empty answer")
        # The same engine locally: the same greedy text (same template, same weights).
        local = ok_json(c.send_local(model, "--new", "--message", question, *greedy), "local turn")
        check(local.get("text") == first.get("text"),
              f"remote and local greedy answers agree: {first.get('text')!r} vs {local.get('text')!r}")
        # Continue (vLLM's continue_final_message, which hearth-server honours): the first 8 greedy tokens,
        # continued by 8 more, are the 16-token answer.
        body = {"model": server.model, "messages": [{"role": "user", "content": question}], "temperature": 0,
                "max_tokens": 8}
        status, head = server.request("/v1/chat/completions", body)
        check(status == 200, f"an 8-token answer: {status} {head}")
        if status == 200:
            part = head["choices"][0]["message"]["content"]
            more = dict(body, messages=body["messages"] + [{"role": "assistant", "content": part}],
                        continue_final_message=True, add_generation_prompt=False)
            status, tail = server.request("/v1/chat/completions", more)
            check(status == 200, f"a continued answer: {status} {tail}")
            if status == 200:
                rest = tail["choices"][0]["message"]["content"]
                check(part + rest == first.get("text"),
                      f"continued greedy text is the whole answer: {part!r} + {rest!r} vs {first.get('text')!r}")
                check(tail["usage"]["prompt_tokens"] > head["usage"]["prompt_tokens"],
                      f"the partial answer is in the prompt: {tail['usage']} vs {head['usage']}")
        cid = first.get("conversation_id")
        second = ok_json(c.send(base, "--conversation", str(cid), "--message", "And of Italy?", *greedy, key=key),
                         "hearth-server turn 2")
        check(second.get("conversation_id") == cid, "the second turn continues the conversation")
        check(second.get("generation", {}).get("prompt_tokens", 0) > g.get("prompt_tokens", 0),
              "the second turn's prompt holds the first turn")
        msgs = messages_of(c.export(cid))
        check([m.get("role") for m in msgs] == ["user", "assistant", "user", "assistant"],
              f"a stored conversation of four messages: {[m.get('role') for m in msgs]}")
        check(all(m.get("state") == "complete" for m in msgs), "all complete")
        check(msgs and msgs[-1].get("content") == second.get("text"), "the stored answer is the streamed one")
        # A prompt version applies to a remote turn as to a local one.
        ok_json(c.store("prompts", "add", "terse", "--text", "Answer in at most five words."), "prompts add")
        third = ok_json(c.send(base, "--new", "--message", question, "--prompt", "terse", *greedy, key=key),
                        "a prompt version remotely")
        tg = third.get("generation", {})
        check(tg.get("system_text") == "Answer in at most five words." and
              (tg.get("prompt_version") or {}).get("name") == "terse", f"the prompt version is recorded: {tg}")
        history = ok_json(c.store("history", "--limit", "10"), "history")
        entries = history.get("entries", [])
        check(any(question == e.get("text") for e in entries), "remote turns are in the history")
        # A wrong key: a clear 401, nothing stored.
        n = len(c.conversations())
        p = c.send(base, "--new", "--message", "Hi", key="wrong-key")
        expect_error(p, "refused the API key (HTTP 401", "hearth-server with a wrong key")
        check(len(c.conversations()) == n, "a refused key stores nothing")
    finally:
        server.stop()


# --- llama.cpp's server ---------------------------------------------------------

def test_llama_cpp(c, model):
    probe = subprocess.run([sys.executable, "-c", "import llama_cpp.server.app"], capture_output=True)
    if probe.returncode != 0:
        print("SKIP: llama-cpp-python[server] is not installed (scripts/requirements-test.txt):",
              probe.stderr.decode(errors="replace").strip().splitlines()[-1:])
        sys.exit(77)
    listed = ok_json(cli_checks.run([c.cli, "models", "--json"]), "models --json")
    paths = [m["path"] for m in listed.get("models", []) if m.get("catalog_name") == model]
    check(paths, f"the catalog model {model} is installed: {listed}")
    if not paths:
        return
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", paths[0], "--host", "127.0.0.1",
                             "--port", str(port), "--n_ctx", "512", "--n_threads", "2", "--model_alias",
                             "smollm2-llama", "--verbose", "False"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    log = []
    ready = threading.Event()

    def read_log():  # also keeps the pipe drained for the server's whole life
        for line in proc.stderr:
            log.append(line)
            if "Uvicorn running on" in line:
                ready.set()

    threading.Thread(target=read_log, daemon=True).start()
    try:
        # Readiness: uvicorn's "Uvicorn running on" line (waited for, not slept on).
        check(ready.wait(timeout=120) and proc.poll() is None, "llama_cpp.server started: " + "".join(log[-20:]))
        if not ready.is_set():
            return
        base = f"http://127.0.0.1:{port}/v1"
        question = "Name a colour."
        first = ok_json(c.send(base, "--new", "--message", question, "--temp", "0", "-n", "8"), "llama.cpp turn 1")
        g = first.get("generation", {})
        check(g.get("device") == base and g.get("model") == "smollm2-llama", f"the record: {g}")
        check(first.get("text") and g.get("generated_tokens", 0) > 0, f"an answer: {first}")
        # (Not compared with a second answer of its own: llama-cpp-python reuses the previous
        # prompt's KV state, and SmolLM2's near-ties then part greedy answers after a few words.)
        check(g.get("ttft_ms", 0) > 0 and g.get("finish_reason") in ("stop", "length"), f"timings, finish: {g}")
        cid = first.get("conversation_id")
        second = ok_json(c.send(base, "--conversation", str(cid), "--message", "Another one.", "--temp", "0", "-n",
                                "8"), "llama.cpp turn 2")
        msgs = messages_of(c.export(cid))
        check([m.get("role") for m in msgs] == ["user", "assistant", "user", "assistant"],
              f"a stored conversation: {[m.get('role') for m in msgs]}")
        check(msgs and msgs[-1].get("content") == second.get("text") and
              (msgs[-1].get("generation") or {}).get("device") == base, "turn 2 stored with its endpoint")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    cli, mode = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        c = Cli(cli, os.path.join(tmp, "hearth.db"))
        if mode == "--fake":
            test_fake(c)
        elif mode == "--hearth-server":
            test_hearth_server(c, sys.argv[3], sys.argv[4])
        elif mode == "--llama-cpp":
            test_llama_cpp(c, sys.argv[3])
        else:
            print(__doc__)
            return 2
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
