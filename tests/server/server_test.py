#!/usr/bin/env python3
"""hearth-server end to end on loopback: raw HTTP for the errors, limits, key
and streams, and the official `openai` package as a client.

  server_test.py HEARTH_SERVER --synth HEARTH_CLI     a tiny synthetic model: errors, limits, the key,
                                                      streams, prefix cache, seeds, concurrent clients
  server_test.py HEARTH_SERVER --model NAME --openai  the default model through the openai client, a
                                                      disconnect mid-stream freeing its blocks, 429
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_harness import KEY, Server, chat_body, error_of, expect, failures, stream_text, wait_for  # noqa: E402


def check_errors_and_limits(s):
    """Synthetic server: --ctx 256 --max-prompt-tokens 200 --max-body-bytes 65536 --max-json-depth 16."""
    m = s.model
    expect(s.request("/health", key=None) == (200, {"status": "ok"}), "/health without the key")
    status, models = s.request("/v1/models")
    expect(status == 200 and [d["id"] for d in models["data"]] == [m], f"/v1/models: {models}")
    expect(s.request(f"/v1/models/{m}")[0] == 200, "/v1/models/ID")
    error_of(s.request("/v1/models/nope"), 404, "model_not_found")
    for path, body in [("/v1/models", None), ("/metrics", None), ("/v1/chat/completions", chat_body(m, "Hi"))]:
        error_of(s.request(path, body, key=None), 401, "invalid_api_key", contains=["Missing"])
        error_of(s.request(path, body, key="wrong-key"), 401, "invalid_api_key", contains=["Incorrect"])
    error_of(s.request("/v1/chat/completions", raw=b'{"model": "x", '), 400, "invalid_json")
    error_of(s.request("/v1/chat/completions", raw=b"[1, 2]"), 400, "invalid_json", contains=["object"])
    error_of(s.request("/v1/chat/completions", chat_body(m, "Hi", temperature="hot")), 400, "invalid_type",
             "temperature")
    error_of(s.request("/v1/chat/completions", {"model": m}), 400, "missing_required_parameter", "messages")
    error_of(s.request("/v1/chat/completions", chat_body(m, "Hi", n=2)), 400, "unsupported_parameter", "n")
    error_of(s.request("/v1/completions", {"model": "gpt-4", "prompt": "Hi"}), 404, "model_not_found", "model")
    error_of(s.request("/v1/nothing-here"), 404, "unknown_url")
    big = json.dumps(chat_body(m, "x" * 70000)).encode()
    error_of(s.request("/v1/chat/completions", raw=big), 413, "request_too_large", contains=["65536"])
    deep = b'{"model": "m", "messages": ' + b"[" * 40 + b"]" * 40 + b"}"
    error_of(s.request("/v1/chat/completions", raw=deep), 400, "invalid_json", contains=["deeper", "16"])
    error_of(s.request("/v1/completions", {"model": m, "prompt": [5] * 300}), 400, "context_length_exceeded",
             "prompt", contains=["256", "300"])
    error_of(s.request("/v1/chat/completions", chat_body(m, "y" * 400)), 400, "context_length_exceeded",
             "messages", contains=["256"])
    error_of(s.request("/v1/completions", {"model": m, "prompt": [5] * 220}), 400, "prompt_too_long", "prompt",
             contains=["220", "200"])
    error_of(s.request("/v1/completions", {"model": m, "prompt": [5, 100000]}), 400, "invalid_value", "prompt[1]")
    counts = s.metrics()
    expect(counts.get('hearth_http_responses_total{route="/v1/chat/completions",status="401"}', 0) >= 2,
           "401s counted in /metrics")
    expect(counts.get('hearth_http_responses_total{route="other",status="404"}', 0) >= 1, "404s counted")


def check_streams(s):
    m = s.model
    body = {"model": m, "prompt": "Hello there", "max_tokens": 12, "temperature": 0}
    status, whole = s.request("/v1/completions", body)
    expect(status == 200 and whole["object"] == "text_completion" and whole["id"].startswith("cmpl-"), f"{whole}")
    u = whole["usage"]
    expect(u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"] and 0 < u["completion_tokens"] <= 12,
           f"usage {u}")
    expect(whole["choices"][0]["finish_reason"] in ("stop", "length"), "finish reason")
    events = s.stream("/v1/completions", body)
    expect(events and events[-1] == "[DONE]", "a completions stream ends with [DONE]")
    expect(stream_text(events, chat=False) == whole["choices"][0]["text"], "streamed text == whole text (greedy)")
    expect(events[-2]["choices"][0]["finish_reason"] == whole["choices"][0]["finish_reason"], "stream finish")
    chat = chat_body(m, "Tell me something.", max_tokens=10, temperature=0)
    status, whole = s.request("/v1/chat/completions", chat)
    expect(status == 200 and whole["object"] == "chat.completion", f"chat: {whole}")
    events = s.stream("/v1/chat/completions", dict(chat, stream_options={"include_usage": True}))
    expect(events[0]["choices"][0]["delta"].get("role") == "assistant", "the first chunk carries the role")
    expect(all(e["usage"] is None for e in events[:-2]), "usage: null on every chunk but the last")
    last = events[-2]
    expect(last["choices"] == [] and last["usage"]["completion_tokens"] == whole["usage"]["completion_tokens"],
           f"the usage chunk: {last}")
    expect(last["usage"]["prompt_tokens_details"]["cached_tokens"] > 0, "the repeated prompt hit the prefix cache")
    expect(stream_text(events) == whole["choices"][0]["message"]["content"], "chat stream == whole (greedy)")
    expect(len({e["id"] for e in events[:-1]}) == 1, "one id per stream")


def check_sampling(s):
    m = s.model
    long_prompt = "The quick brown fox jumps over the lazy dog. " * 2
    first = s.request("/v1/chat/completions", chat_body(m, long_prompt, max_tokens=4, temperature=0))[1]
    second = s.request("/v1/chat/completions", chat_body(m, long_prompt, max_tokens=4, temperature=0))[1]
    expect(second["usage"]["prompt_tokens_details"]["cached_tokens"] >= 16, f"prefix cache: {second['usage']}")
    expect(first["usage"]["prompt_tokens_details"]["cached_tokens"] <
           second["usage"]["prompt_tokens_details"]["cached_tokens"], "the second request reused more")
    seeded = {"model": m, "prompt": "Once", "max_tokens": 16, "temperature": 1.0, "seed": 7}
    a, b = s.request("/v1/completions", seeded)[1], s.request("/v1/completions", seeded)[1]
    expect(a["choices"][0]["text"] == b["choices"][0]["text"], "the same seed gives the same sample")
    capped = s.request("/v1/completions", {"model": m, "prompt": "Once", "max_tokens": 3, "temperature": 0})[1]
    c = capped["choices"][0]
    expect(capped["usage"]["completion_tokens"] <= 3 and (c["finish_reason"] == "length") ==
           (capped["usage"]["completion_tokens"] == 3), f"max_tokens: {capped}")


def greedy_texts_concurrently(s, bodies):
    """Each body's text when all run at once (half of them streamed)."""
    out = [None] * len(bodies)

    def run(i):
        if i % 2:
            out[i] = stream_text(s.stream("/v1/chat/completions", bodies[i]))
        else:
            out[i] = s.request("/v1/chat/completions", bodies[i])[1]["choices"][0]["message"]["content"]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(bodies))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def check_concurrent_clients(s, n, max_tokens):
    prompts = ["Name a colour.", "Count to five.", "Say hello in French.", "What is two plus two?"][:n]
    bodies = [chat_body(s.model, p, max_tokens=max_tokens, temperature=0) for p in prompts]
    alone = [s.request("/v1/chat/completions", b)[1]["choices"][0]["message"]["content"] for b in bodies]
    together = greedy_texts_concurrently(s, bodies)
    for p, a, t in zip(prompts, alone, together):
        expect(a == t, f"{p!r}: alone {a!r} != concurrent {t!r}")
    wait_for("all KV blocks released", lambda: s.metrics()['hearth_kv_blocks{state="used"}'] == 0)


def check_generation(s):
    check_streams(s)
    check_sampling(s)
    check_concurrent_clients(s, 4, 24)
    metrics = s.metrics()
    expect(metrics["hearth_time_to_first_token_seconds_count"] > 0, "TTFT histogram filled")
    expect(metrics["hearth_inter_token_latency_seconds_count"] > 0, "ITL histogram filled")
    expect(metrics["hearth_generation_tokens_total"] > 0 and metrics["hearth_prefix_cache_hit_rate"] > 0,
           "token counters and prefix hit rate")


def check_openai_client(s):
    import openai
    client = openai.OpenAI(base_url=s.url("/v1"), api_key=KEY, max_retries=0)
    expect(s.model in [m.id for m in client.models.list().data], "openai: models.list")
    question = [{"role": "user", "content": "What is the capital of France?"}]
    r = client.chat.completions.create(model=s.model, messages=question, temperature=0, max_tokens=12)
    text = r.choices[0].message.content
    print(f"openai chat: {text!r} {r.usage}", flush=True)
    expect("Paris" in text, f"openai: the default model answers Paris: {text!r}")
    expect(r.usage.prompt_tokens > 0 and r.usage.prompt_tokens_details.cached_tokens >= 0, "openai: usage")
    chunks = list(client.chat.completions.create(model=s.model, messages=question, temperature=0, max_tokens=12,
                                                 stream=True, stream_options={"include_usage": True}))
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    expect(streamed == text, f"openai: stream {streamed!r} == whole {text!r}")
    expect(chunks[-1].usage.completion_tokens == r.usage.completion_tokens, "openai: stream usage")
    expect(chunks[-1].usage.prompt_tokens_details.cached_tokens > 0, "openai: the repeated prompt was cached")
    if "Paris" in text:
        cut = client.chat.completions.create(model=s.model, messages=question, temperature=0, max_tokens=12,
                                             stop=["Paris"])
        expect(cut.choices[0].message.content == text[:text.index("Paris")] and
               cut.choices[0].finish_reason == "stop", f"openai: stop: {cut.choices[0]}")
    done = client.completions.create(model=s.model, prompt="The capital of France is", max_tokens=6, temperature=0)
    expect(done.choices[0].text.strip() != "" and done.choices[0].finish_reason in ("stop", "length"),
           f"openai: completions {done.choices[0]}")
    raises(lambda: client.chat.completions.create(model="nope", messages=question), openai.NotFoundError, "404")
    wrong = openai.OpenAI(base_url=s.url("/v1"), api_key="wrong", max_retries=0)
    raises(lambda: wrong.models.list(), openai.AuthenticationError, "401")
    raises(lambda: client.chat.completions.create(model=s.model, messages=question, n=2), openai.BadRequestError,
           "n=2")
    long = [{"role": "user", "content": "word " * 1200}]
    e = raises(lambda: client.chat.completions.create(model=s.model, messages=long), openai.BadRequestError,
               "prompt over the context")
    expect(e is not None and e.code == "context_length_exceeded" and "1024" in str(e), f"context error: {e}")


def raises(call, kind, what):
    try:
        call()
    except kind as e:
        return e
    except Exception as e:  # noqa: BLE001: report what came instead
        expect(False, f"openai {what}: {type(e).__name__} instead of {kind.__name__}: {e}")
        return None
    expect(False, f"openai {what}: no error")
    return None


def open_stream(s, body):
    """A raw socket streaming a chat completion, read until its first token arrived."""
    sock = socket.create_connection((s.host, s.port), timeout=120)
    payload = json.dumps(dict(body, stream=True)).encode()
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                 b"Authorization: Bearer " + KEY.encode() + b"\r\nContent-Length: " +
                 str(len(payload)).encode() + b"\r\n\r\n" + payload)
    seen = b""
    while seen.count(b"data: ") < 2:  # the role chunk, then the first piece of text
        chunk = sock.recv(65536)
        if not chunk:
            break
        seen += chunk
    expect(b" 200 OK" in seen and seen.count(b"data: ") >= 2, f"stream did not start: {seen[:200]!r}")
    return sock


def check_whole_request_disconnect(s, body):
    """A non-streamed request whose client hangs up while it decodes is cancelled too."""
    before = s.metrics()["hearth_client_disconnects_total"]
    sock = socket.create_connection((s.host, s.port), timeout=120)
    payload = json.dumps(dict(body, stream=False)).encode()
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                 b"Authorization: Bearer " + KEY.encode() + b"\r\nContent-Length: " +
                 str(len(payload)).encode() + b"\r\n\r\n" + payload)
    wait_for("the whole request running", lambda: s.metrics()["hearth_requests_running"] >= 1 and
             s.metrics()['hearth_kv_blocks{state="used"}'] > 0)
    sock.close()
    wait_for("the hung-up whole request cancelled", lambda: (
        s.metrics()["hearth_client_disconnects_total"] == before + 1 and
        s.metrics()['hearth_kv_blocks{state="used"}'] == 0), seconds=10)


def check_disconnect_and_overload(s):
    """--max-concurrent 3: three long streams fill the slots, a fourth gets 429; the clients
    then hang up and the engine drops their sequences and frees their KV blocks at once."""
    before = s.metrics()
    long_story = chat_body(s.model, "Write a very long story about a dragon and a knight.", max_tokens=800,
                           temperature=0)
    socks = [open_stream(s, dict(long_story, seed=i)) for i in range(3)]
    busy = s.metrics()
    expect(busy["hearth_http_active_requests"] == 3 and busy['hearth_kv_blocks{state="used"}'] > 0,
           f"three streams running: {busy['hearth_http_active_requests']}")
    error_of(s.request("/v1/chat/completions", chat_body(s.model, "Hi", max_tokens=1)), 429,
             "too_many_concurrent_requests")
    hung_up = time.monotonic()
    for sock in socks:
        sock.close()

    def freed():
        m = s.metrics()
        return (m['hearth_kv_blocks{state="used"}'] == 0 and m["hearth_requests_running"] == 0 and
                m["hearth_requests_waiting"] == 0 and m["hearth_http_active_requests"] == 0 and
                m["hearth_client_disconnects_total"] == before["hearth_client_disconnects_total"] + 3)

    if wait_for("the disconnected streams' blocks freed", freed, seconds=10):
        elapsed = time.monotonic() - hung_up
        print(f"disconnect -> blocks freed in {elapsed * 1000:.0f} ms", flush=True)
        expect(elapsed < 2.0, f"freeing took {elapsed:.2f} s")
    after = s.metrics()
    expect(after["hearth_generation_tokens_total"] == before["hearth_generation_tokens_total"],
           "cancelled streams count no finished tokens")
    check_whole_request_disconnect(s, long_story)
    status, ok = s.request("/v1/chat/completions", chat_body(s.model, "Hi", max_tokens=2, temperature=0))
    expect(status == 200, f"a slot is free again: {status} {ok}")
    check_concurrent_clients(s, 3, 8)


def check_kv_overload(s):
    """A KV pool of 4 blocks (64 tokens): a prompt that cannot fit it even alone is refused with
    503 (OpenAI's overloaded shape, the cause named); one that fits is served."""
    long_prompt = " ".join(["alpha beta gamma delta"] * 6)  # ~140 tokens of the synthetic vocabulary: over 64, under 256
    error_of(s.request("/v1/completions", {"model": s.model, "prompt": long_prompt, "max_tokens": 4}), 503,
             "overloaded", contains=("out of KV cache memory",))
    status, ok = s.request("/v1/completions", {"model": s.model, "prompt": "Hi", "max_tokens": 4, "temperature": 0})
    expect(status == 200, f"a prompt that fits the pool is served: {status} {ok}")
    # Streamed, the status line went out before the engine refused: the refusal is the stream's last event.
    events = s.stream("/v1/chat/completions", chat_body(s.model, long_prompt, max_tokens=4))
    errors = [e["error"] for e in events if isinstance(e, dict) and "error" in e]
    expect(len(errors) == 1 and errors[0].get("code") == "overloaded", f"a streamed refusal event: {events}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("server")
    ap.add_argument("--synth", metavar="HEARTH_CLI", help="run on a tiny synthetic model made with hearth-cli")
    ap.add_argument("--model", help="a model path or catalog name (with --openai)")
    ap.add_argument("--openai", action="store_true")
    args = ap.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        if args.synth:
            model = os.path.join(tmp, "tiny.gguf")
            subprocess.run([args.synth, "synth", "--shape", "custom", "--embd", "128", "--layers", "2", "--heads", "2",
                            "--kv-heads", "1", "--ffn", "256", "--vocab", "600", "--ctx", "4096", "--quant", "Q8_0",
                            "-o", model], check=True, capture_output=True)
            runs.append((model, ["--ctx", "256", "--max-prompt-tokens", "200", "--max-body-bytes", "65536",
                                 "--max-concurrent", "4", "--max-json-depth", "16"],
                         [check_errors_and_limits, check_generation]))
            # 8 KiB KV blocks (2 layers x 1 KV head x 64 x K,V x f16 x 16 tokens): 4 of them.
            runs.append((model, ["--ctx", "256", "--kv-budget-mib", "0.03125"], [check_kv_overload]))
        if args.model and args.openai:
            runs.append((args.model, ["--ctx", "1024", "--max-concurrent", "3"],
                         [check_openai_client, check_disconnect_and_overload]))
        for model, flags, checks in runs:
            server = Server(args.server, model, flags)
            try:
                for check in checks:
                    count = len(failures)
                    check(server)
                    print(f"{check.__name__}: {'ok' if len(failures) == count else 'FAILED'}", flush=True)
            finally:
                server.stop()
                if failures:
                    print(server.stderr())
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
