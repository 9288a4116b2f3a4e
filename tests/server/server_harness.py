"""The harness of server_test.py: hearth-server started on a free loopback
port, requests over raw HTTP (urllib, http.client), /metrics parsed, SSE
streams read, and failures collected rather than raised (so one run reports
them all). Readiness is polled with a deadline, never slept for.
"""
import http.client
import json
import select
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

KEY = "test-key-123"
POLL = 0.02  # seconds between two looks at a condition polled with a deadline
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


class Server:
    """hearth-server on a free loopback port (--port 0; the port is read from its stdout)."""

    def __init__(self, binary, model, extra):
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([binary, model, "--port", "0", "--api-key", KEY, "--threads", "2"] + extra,
                                     stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self._read_line(deadline=time.monotonic() + 120)
        if "http://" not in line:
            self.stop()
            raise RuntimeError(f"hearth-server did not start: {line!r}\n{self.stderr()}")
        self.model = line.split(" serving ", 1)[1].split(" on ", 1)[0]
        self.host, port = line.rsplit("http://", 1)[1].strip().split(":")
        self.port = int(port)
        deadline = time.monotonic() + 30
        while self.status("/health") != 200:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("/health never answered 200\n" + self.stderr())
            time.sleep(POLL)

    def _read_line(self, deadline):
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if ready:
                return self.proc.stdout.readline()
        return ""

    def stderr(self):
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-4000:]

    def stop(self):
        self.proc.terminate()
        try:
            code = self.proc.wait(timeout=30)
            expect(code == 0, f"hearth-server exited with {code} on SIGTERM")
        except subprocess.TimeoutExpired:
            self.proc.kill()
            expect(False, "hearth-server did not stop within 30 s of SIGTERM")

    def url(self, path):
        return f"http://{self.host}:{self.port}{path}"

    def request(self, path, body=None, key=KEY, raw=None, headers=None):
        """(status, parsed JSON or text) of one request; body: a dict (JSON) or raw bytes."""
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(self.url(path), data=data, headers=dict(headers or {}))
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if key:
            req.add_header("Authorization", f"Bearer {key}")
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                status, text = r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read().decode()
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text

    def status(self, path):
        try:
            return self.request(path, key=None)[0]
        except OSError:
            return None

    def metrics(self):
        status, text = self.request("/metrics")
        assert status == 200, text
        out = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                out[name] = float(value)
        return out

    def stream(self, path, body):
        """Every data payload of a streamed request (parsed JSON; "[DONE]" as the string)."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
        conn.request("POST", path, json.dumps(dict(body, stream=True)),
                     {"Content-Type": "application/json", "Authorization": f"Bearer {KEY}"})
        resp = conn.getresponse()
        expect(resp.status == 200, f"stream {path}: status {resp.status}")
        expect(resp.getheader("Content-Type", "").startswith("text/event-stream"), "stream content type")
        events = []
        for raw in resp:
            line = raw.decode().rstrip("\n")
            if line.startswith("data: "):
                payload = line[6:]
                events.append(payload if payload == "[DONE]" else json.loads(payload))
        conn.close()
        return events


def wait_for(what, predicate, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(POLL)
    expect(False, f"timed out waiting for {what}")
    return None


def error_of(status_body, status, code=None, param=None, contains=()):
    got_status, body = status_body
    ok = got_status == status and isinstance(body, dict) and set(body.get("error", {})) >= {
        "message", "type", "param", "code"}
    detail = f"wanted {status}/{code}/{param}, got {got_status}: {body}"
    if ok and code is not None:
        ok = body["error"]["code"] == code
    if ok and param is not None:
        ok = body["error"]["param"] == param
    for word in contains:
        ok = ok and word in body["error"]["message"]
    expect(ok, detail)


def chat_body(model, text, **kw):
    return dict({"model": model, "messages": [{"role": "user", "content": text}]}, **kw)


def stream_text(events, chat=True):
    pieces = []
    for e in events:
        if e == "[DONE]" or not e.get("choices"):
            continue
        c = e["choices"][0]
        pieces.append((c.get("delta", {}).get("content") or "") if chat else c.get("text", ""))
    return "".join(pieces)
