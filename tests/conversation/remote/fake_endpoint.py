"""A hostile OpenAI-compatible endpoint for the remote tests, in-process on a
free loopback port. Each behaviour lives under its own base path
(http://127.0.0.1:PORT/MODE/v1): GET /models lists one model (two for
"multi"), POST /chat/completions answers as MODE says:

  ok         three chunks, finish_reason, usage, [DONE] (chunked HTTP/1.1)
  multi      as ok, for the model the request named ("a" or "b")
  cut        two chunks, then the connection closes mid-chunk (no final chunk, no [DONE])
  malformed  one chunk, then `data: {not json`
  hugeline   one chunk, then a 2 MiB data line without an end
  status429  HTTP 429 with OpenAI's error body
  chat401    /models fine, chat refused with 401

Every request body received is kept (bodies[MODE]) so a test can check what
the client sent.
"""
import http.server
import json
import threading

CHUNKS = ["Hello", " from", " the fake"]


def chunk(text=None, finish=None, usage=None):
    c = {"id": "c1", "object": "chat.completion.chunk", "model": "fake",
         "choices": [{"index": 0, "delta": {} if text is None else {"content": text}, "finish_reason": finish}]}
    if usage is not None:
        c = {"id": "c1", "object": "chat.completion.chunk", "choices": [], "usage": usage}
    return ("data: " + json.dumps(c) + "\n\n").encode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def mode(self):
        parts = self.path.strip("/").split("/")
        return parts[0] if parts else ""

    def send_json(self, status, doc):
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.endswith("/v1/models"):
            ids = ["a", "b"] if self.mode() == "multi" else ["fake"]
            return self.send_json(200, {"object": "list", "data": [{"id": i, "object": "model"} for i in ids]})
        self.send_json(404, {"error": {"message": "no route", "type": "not_found", "param": None, "code": None}})

    def piece(self, data):
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def do_POST(self):
        mode = self.mode()
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        self.server.bodies.setdefault(mode, []).append(json.loads(body or b"{}"))
        if mode == "status429":
            return self.send_json(429, {"error": {"message": "Rate limit reached", "type": "rate_limit_error",
                                                  "param": None, "code": "rate_limit_exceeded"}})
        if mode == "chat401":
            return self.send_json(401, {"error": {"message": "Invalid API key", "type": "invalid_request_error",
                                                  "param": None, "code": "invalid_api_key"}})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        if mode in ("ok", "multi"):
            model = self.server.bodies[mode][-1].get("model", "")
            for t in CHUNKS + [" " + model]:
                self.piece(chunk(t))
            self.piece(chunk(finish="stop"))
            self.piece(chunk(usage={"prompt_tokens": 9, "completion_tokens": 4}))
            self.piece(b"data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
        elif mode == "cut":
            self.piece(chunk(CHUNKS[0]) + chunk(CHUNKS[1]))
            # Half of the next HTTP chunk, then the connection goes away.
            data = chunk(CHUNKS[2])
            self.wfile.write(f"{len(data):x}\r\n".encode() + data[: len(data) // 2])
            self.wfile.flush()
        elif mode == "malformed":
            self.piece(chunk(CHUNKS[0]))
            self.piece(b"data: {not json\n\n")
            self.piece(chunk(CHUNKS[1]))
            self.wfile.write(b"0\r\n\r\n")
        elif mode == "hugeline":
            self.piece(chunk(CHUNKS[0]))
            block = b"x" * 65536
            try:
                self.piece(b"data: " + block)
                for _ in range(32):  # 2 MiB without a line end
                    self.piece(block)
                self.wfile.write(b"0\r\n\r\n")
            except OSError:
                pass  # the client hung up once it had seen enough: that is the point
        self.close_connection = True


class FakeEndpoint:
    def __init__(self):
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.bodies = {}
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, mode):
        return f"http://127.0.0.1:{self.port}/{mode}/v1"

    def bodies(self, mode):
        return self.server.bodies.get(mode, [])

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
