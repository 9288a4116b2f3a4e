#!/usr/bin/env python3
"""Load on hearth-server (or any OpenAI-compatible server): N concurrent
streaming chat clients on loopback for a bounded time. Each client sends a
request, reads its server-sent events, and sends the next until the time is
up. Reports throughput, time to first token and inter-token latency
percentiles as the clients saw them, and every error.

  bench_serve.py --url http://127.0.0.1:8080 --model ID [--api-key KEY] [--streams 64] [--seconds 30]
                 [--max-tokens 64] [--json]
  bench_serve.py --start build/dev/server/hearth-server MODEL [server flags...] -- [same options]
      starts the server on a free port first (and stops it after)

Only the standard library: the numbers are a real HTTP client's view.
"""
import argparse
import http.client
import json
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

PROMPTS = ["Write a short story about a lighthouse keeper.", "Explain how a bicycle stays upright.",
           "List some facts about the moon.", "Describe a busy market in the morning."]


def percentile(values, q):
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


class Totals:
    def __init__(self):
        self.lock = threading.Lock()
        self.ttft, self.itl, self.errors = [], [], {}
        self.requests = self.tokens = 0

    def error(self, kind):
        with self.lock:
            self.errors[kind] = self.errors.get(kind, 0) + 1


def one_request(url, args, prompt, totals):
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=300)
    body = {"model": args.model, "messages": [{"role": "user", "content": prompt}], "max_tokens": args.max_tokens,
            "temperature": 0.7, "stream": True, "stream_options": {"include_usage": True}}
    headers = {"Content-Type": "application/json"}
    if args.api_key:
        headers["Authorization"] = f"Bearer {args.api_key}"
    start = time.monotonic()
    conn.request("POST", "/v1/chat/completions", json.dumps(body), headers)
    resp = conn.getresponse()
    if resp.status != 200:
        totals.error(f"HTTP {resp.status}")
        resp.read()
        return
    first, last, gaps, tokens, done = None, None, [], 0, False
    for raw in resp:
        line = raw.decode().strip()
        if not line.startswith("data: "):
            continue
        if line == "data: [DONE]":
            done = True
            break
        event = json.loads(line[6:])
        if "error" in event:
            totals.error(event["error"].get("code") or "stream error")
            return
        if event.get("usage"):
            tokens = event["usage"]["completion_tokens"]
        if event.get("choices") and event["choices"][0].get("delta", {}).get("content"):
            now = time.monotonic()
            if first is None:
                first = now - start
            else:
                gaps.append(now - last)
            last = now
    conn.close()
    if not done:
        totals.error("stream cut before [DONE]")
        return
    with totals.lock:
        totals.requests += 1
        totals.tokens += tokens
        if first is not None:
            totals.ttft.append(first)
        totals.itl.extend(gaps)


def client(url, args, index, deadline, totals):
    n = 0
    while time.monotonic() < deadline:
        try:
            one_request(url, args, PROMPTS[(index + n) % len(PROMPTS)], totals)
        except (OSError, http.client.HTTPException, ValueError) as e:
            totals.error(type(e).__name__)
        n += 1


def start_server(cmd):
    proc = subprocess.Popen(cmd + ["--port", "0"], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if "http://" not in line:
        proc.kill()
        sys.exit(f"the server did not start: {line!r}")
    base = line.rsplit(" on ", 1)[1].strip()
    model = line.split(" serving ", 1)[1].split(" on ", 1)[0]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/health", timeout=5) as r:
                if r.status == 200:
                    return proc, base, model
        except OSError:
            time.sleep(0.05)  # polling interval while the server binds
    proc.kill()
    sys.exit("the server never answered /health")


def main():
    argv = sys.argv[1:]
    server_cmd = None
    if argv and argv[0] == "--start":
        cut = argv.index("--") if "--" in argv else len(argv)
        server_cmd, argv = argv[1:cut], argv[cut + 1:]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("--model")
    ap.add_argument("--api-key")
    ap.add_argument("--streams", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    proc = None
    if server_cmd:
        proc, args.url, started_model = start_server(server_cmd)
        args.model = args.model or started_model
    url = urllib.parse.urlparse(args.url)
    totals = Totals()
    begin = time.monotonic()
    deadline = begin + args.seconds
    threads = [threading.Thread(target=client, args=(url, args, i, deadline, totals)) for i in range(args.streams)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - begin
    if proc:
        proc.terminate()
        proc.wait(timeout=60)
    ms = lambda v: None if v is None else round(v * 1000, 1)  # noqa: E731
    report = {"streams": args.streams, "seconds": round(wall, 2), "requests": totals.requests,
              "generated_tokens": totals.tokens, "tokens_per_second": round(totals.tokens / wall, 1),
              "ttft_ms": {q: ms(percentile(totals.ttft, p)) for q, p in (("p50", .5), ("p95", .95), ("p99", .99))},
              "itl_ms": {q: ms(percentile(totals.itl, p)) for q, p in (("p50", .5), ("p95", .95), ("p99", .99))},
              "errors": totals.errors}
    if args.json:
        print(json.dumps(report))
    else:
        print(f"{args.streams} streams for {wall:.1f} s: {totals.requests} requests, {totals.tokens} tokens, "
              f"{report['tokens_per_second']} tok/s")
        print(f"TTFT ms p50/p95/p99: {report['ttft_ms']['p50']} / {report['ttft_ms']['p95']} / "
              f"{report['ttft_ms']['p99']}")
        print(f"ITL  ms p50/p95/p99: {report['itl_ms']['p50']} / {report['itl_ms']['p95']} / {report['itl_ms']['p99']}")
        print(f"errors: {totals.errors or 'none'}")
    return 1 if totals.errors else 0


if __name__ == "__main__":
    sys.exit(main())
