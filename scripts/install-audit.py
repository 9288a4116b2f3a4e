#!/usr/bin/env python3
"""Install audit: the set-up must install every package the build and the tests use.

Debian: lists the files from outside the tree that a build really used (the CMake
package configuration files it found, the headers in the compiler's dependency
records, the libraries on its link lines and those its programs load, the
compilers and build tools), maps each file to its Debian package with `dpkg -S`,
and fails, naming package and file, for every package that is not in the
dependency closure (`apt-cache depends --recurse`) of scripts/apt-packages.txt or
of the packages every Debian system has (Essential or Priority: required).
Files that belong to no package (the CUDA toolkit in /usr/local) are listed,
not failed: they are optional.

Python: every module that the test and benchmark scripts import, other than the
standard library's and the tree's own, must come from a distribution listed in
scripts/requirements-test.txt.

Usage: install-audit.py [--build DIR] [--apt-list FILE] [--requirements FILE] [--python PY]
Exit 0 when nothing is missing, 1 otherwise.
"""
import argparse
import ast
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def shown(path):
    """A path as the user would type it: relative inside the tree, absolute outside."""
    rel = os.path.relpath(path, ROOT)
    return path if rel.startswith("..") else rel


def listed(path, pattern=r"^([A-Za-z0-9][A-Za-z0-9+._-]*)"):
    names = []
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        m = re.match(pattern, line)
        if m:
            names.append(m.group(1))
    return names


# --- Debian ------------------------------------------------------------------

def apt_closure(packages):
    """The packages apt installs for `packages`, without recommends and suggests."""
    out = subprocess.run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
                          "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances"] + packages,
                         capture_output=True, text=True, check=False).stdout
    names = set(packages)
    for line in out.splitlines():
        # A package's own line is unindented; its needs are "  Depends: name" or
        # "  PreDepends: name"; a virtual need's providers follow, indented deeper.
        m = re.match(r"^\s*(?:\|?(?:Pre)?Depends:\s*)?<?([a-z0-9][a-z0-9+.-]*)(?::[a-z0-9]+)?>?\s*$", line)
        if m:
            names.add(m.group(1))
    return names


def base_system():
    """Packages every Debian installation has (a debootstrap minbase holds them)."""
    out = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Essential} ${Priority}\n"],
                         capture_output=True, text=True, check=False).stdout
    base = [p for p, essential, prio in (l.split() for l in out.splitlines() if len(l.split()) == 3)
            if essential == "yes" or prio == "required"]
    return apt_closure(base) if base else set()


def outside(path, build):
    real = os.path.realpath(path)
    return not (real.startswith(ROOT + os.sep) or real.startswith(os.path.realpath(build) + os.sep))


def used_files(build):
    files = set()
    cache = os.path.join(build, "CMakeCache.txt")
    text = open(cache, errors="replace").read()
    # CMake package configs: each FOO_DIR the configure found.
    for d in re.findall(r"^\w+_DIR:PATH=(/\S+)$", text, re.M):
        if os.path.isdir(d):
            files.update(os.path.join(d, n) for n in os.listdir(d) if n.endswith(("Config.cmake", "-config.cmake")))
    # Compilers and build programs named in the cache.
    for tool in re.findall(r"^CMAKE_(?:CXX|C|CUDA)_COMPILER:\w+=(/\S+)$", text, re.M):
        files.add(tool)
    for prog in ("cmake", "ninja", "pkg-config"):
        if shutil.which(prog):
            files.add(shutil.which(prog))
    # Headers: the compiler's dependency records, as ninja keeps them.
    deps = subprocess.run(["ninja", "-C", build, "-t", "deps"], capture_output=True, text=True, check=False).stdout
    files.update(l.strip() for l in deps.splitlines() if l.startswith("    /"))
    # Libraries on the link lines (absolute paths and -lNAME).
    ninja = open(os.path.join(build, "build.ninja"), errors="replace").read()
    for line in re.findall(r"^\s*LINK_LIBRARIES = (.*)$", ninja, re.M):
        for word in line.split():
            if word.startswith("/") and re.search(r"\.(so(\.\d+)*|a)$", word):
                files.add(word)
            elif word.startswith("-l") and len(word) > 2:
                found = subprocess.run(["cc", f"-print-file-name=lib{word[2:]}.so"], capture_output=True,
                                       text=True, check=False).stdout.strip()
                if found.startswith("/"):
                    files.add(found)
    # What the built programs load at run time.
    for d, _, names in os.walk(build):
        for n in names:
            p = os.path.join(d, n)
            if os.access(p, os.X_OK) and not n.endswith((".so", ".sh", ".py")) and os.path.isfile(p):
                with open(p, "rb") as f:
                    if f.read(4) != b"\x7fELF":
                        continue
                ldd = subprocess.run(["ldd", p], capture_output=True, text=True, check=False).stdout
                files.update(re.findall(r"=> (/\S+)", ldd))
    return {f for f in files if os.path.exists(f) and outside(f, build)}


def owners(files):
    """{file: {package}} for the files some package owns (dpkg -S by path and by real path)."""
    asked = {}
    for f in files:
        asked[f] = {f, os.path.realpath(f)}
        # /lib is a link to /usr/lib on Debian 12; dpkg knows many files under the /lib spelling.
        for p in list(asked[f]):
            if p.startswith("/usr/lib/"):
                asked[f].add(p[4:])
    paths = sorted(set().union(*asked.values())) if asked else []
    owner_of = {}
    for i in range(0, len(paths), 300):
        out = subprocess.run(["dpkg", "-S"] + paths[i:i + 300], capture_output=True, text=True, check=False).stdout
        for line in out.splitlines():
            if ": " in line and not line.startswith("diversion"):
                pkgs, path = line.split(": ", 1)
                owner_of.setdefault(path.strip(), set()).update(p.split(":")[0] for p in pkgs.split(", "))
    return {f: set().union(*(owner_of.get(p, set()) for p in ps)) for f, ps in asked.items()}


def audit_debian(build, apt_list):
    have = apt_closure(listed(apt_list)) | base_system()
    files = used_files(build)
    by_file = owners(files)
    missing, unowned = {}, sorted(f for f, p in by_file.items() if not p)
    for f, pkgs in by_file.items():
        if pkgs and not pkgs & have:
            for p in pkgs:
                missing.setdefault(p, []).append(f)
    n_pkgs = len(set().union(*by_file.values())) if by_file else 0
    print(f"install audit (Debian): the build in {build} used {len(files)} files from outside the tree, "
          f"owned by {n_pkgs} packages")
    if unowned:
        roots = sorted({"/".join(f.split("/")[:4]) for f in unowned})
        print(f"  {len(unowned)} files belong to no Debian package (optional, not audited): {', '.join(roots[:6])}")
    for p, fs in sorted(missing.items()):
        print(f"  MISSING: package {p} is used (e.g. {sorted(fs)[0]}) but {shown(apt_list)} "
              f"does not bring it in")
    return not missing


# --- Python ------------------------------------------------------------------

def imported_modules():
    """Top-level modules imported by the Python files of tests/, bench/, fuzz/ and scripts/."""
    found = {}
    for top in ("tests", "bench", "fuzz", "scripts"):
        for d, _, names in os.walk(os.path.join(ROOT, top)):
            for n in names:
                if not n.endswith(".py"):
                    continue
                path = os.path.join(d, n)
                try:
                    tree = ast.parse(open(path, encoding="utf-8").read(), path)
                except SyntaxError as e:
                    print(f"  cannot parse {path}: {e}")
                    continue
                for node in ast.walk(tree):
                    if isinstance(node, ast.Import):
                        mods = [a.name for a in node.names]
                    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                        mods = [node.module]
                    else:
                        continue
                    for m in mods:
                        found.setdefault(m.split(".")[0], os.path.relpath(path, ROOT))
    return found


def local_modules():
    names = set()
    for d, _, files in os.walk(ROOT):
        if "/.venv" in d or "/build" in d or "/.git" in d:
            continue
        names.update(f[:-3] for f in files if f.endswith(".py"))
    return names


def audit_python(requirements, python):
    want = {re.sub(r"[-_.]+", "-", n).lower() for n in listed(requirements)}
    mods = imported_modules()
    local = local_modules()
    # Ask the test environment's interpreter which distribution provides each module.
    probe = ("import importlib.metadata as m, importlib.util as u, json, sys\n"
             "dists = m.packages_distributions()\n"
             "out = {}\n"
             "for name in sys.argv[1:]:\n"
             "    if name in sys.stdlib_module_names: out[name] = 'stdlib'; continue\n"
             "    out[name] = dists.get(name, [None])[0] if u.find_spec(name) else 'MISSING'\n"
             "print(json.dumps(out))\n")
    names = sorted(n for n in mods if n not in local)
    res = subprocess.run([python, "-c", probe] + names, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        print(f"install audit (Python): cannot run {python}: {res.stderr.strip()}")
        return False
    import json
    where = json.loads(res.stdout)
    bad = []
    for name in names:
        dist = where[name]
        if dist == "stdlib":
            continue
        if dist in ("MISSING", None):
            bad.append(f"module {name} (imported by {mods[name]}) is not installed in the test environment")
        elif re.sub(r"[-_.]+", "-", dist).lower() not in want:
            bad.append(f"module {name} (imported by {mods[name]}) comes from {dist}, which "
                       f"{shown(requirements)} does not list")
    third = [n for n in names if where[n] != "stdlib"]
    print(f"install audit (Python): {len(mods)} modules imported by the tree's scripts, "
          f"{len(third)} from the test environment")
    for b in bad:
        print(f"  MISSING: {b}")
    return not bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "dev"))
    ap.add_argument("--apt-list", default=os.path.join(ROOT, "scripts", "apt-packages.txt"))
    ap.add_argument("--requirements", default=os.path.join(ROOT, "scripts", "requirements-test.txt"))
    ap.add_argument("--python", default=os.path.join(ROOT, ".venv", "bin", "python"))
    args = ap.parse_args()
    if not os.path.isfile(os.path.join(args.build, "build.ninja")):
        sys.exit(f"install audit: {args.build} holds no configured build (run the set-up first)")
    ok_deb = audit_debian(args.build, args.apt_list)
    ok_py = audit_python(args.requirements, args.python)
    print("install audit: " + ("passed" if ok_deb and ok_py else "FAILED: add what is missing to the lists above"))
    sys.exit(0 if ok_deb and ok_py else 1)


if __name__ == "__main__":
    main()
