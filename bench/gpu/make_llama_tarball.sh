#!/bin/bash
# Packs the llama.cpp that the newest llama-cpp-python sdist on PyPI vendors
# (or VERSION=x.y.z) as .llama/llama.tgz (git-ignored: nothing of it is
# committed), for the device scripts that build llama.cpp on the GPU
# machine (peer_table.sh, f16_default_check.sh, ...; carry `.llama`).
# Pruned to what a CUDA + CPU build of llama-bench and llama-batched-bench
# needs (docs, models, media, benches and the other backends removed), so
# it fits the device tool's carry limit. Prints the version it packed.
set -euo pipefail
cd "$(dirname "$0")/../.."
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
spec=llama-cpp-python${VERSION:+==$VERSION}
python3 -m pip download -q --no-binary :all: --no-deps -d "$T" "$spec"
tar xzf "$T"/llama_cpp_python-*.tar.gz -C "$T"
src=$(echo "$T"/llama_cpp_python-*/vendor/llama.cpp)
[ -f "$src/CMakeLists.txt" ] || { echo "no vendor/llama.cpp in the sdist" >&2; exit 1; }
rm -rf "$src"/{docs,models,media,benches}
for d in "$src"/ggml/src/ggml-*/; do
  case $(basename "$d") in ggml-cpu | ggml-cuda | ggml-blas | ggml-rpc) ;; *) rm -rf "$d" ;; esac
done
mkdir -p .llama
tar czf .llama/llama.tgz -C "$(dirname "$src")" llama.cpp
v=$(basename "$(dirname "$(dirname "$src")")")
echo "$v: vendor/llama.cpp, pruned" >.llama/SOURCE
echo "packed $v into .llama/llama.tgz ($(du -h .llama/llama.tgz | cut -f1))"
