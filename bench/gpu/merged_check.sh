#!/bin/bash
# One device call over the whole tree: gpu preset build, the gpu label, an 8B Q4_0 decode through
# hearth-cli and 16 streams through hearth-bench. Needs PCRE2 unpacked in .deps/pcre2 (git-ignored;
# apt-get download libpcre2-dev libpcre2-8-0 libpcre2-16-0 libpcre2-32-0 libpcre2-posix3, dpkg -x each)
# and the call carrying [".deps"]: run it as `bash bench/gpu/merged_check.sh`.
cd "$(dirname "$0")/../.."
D=$PWD/.deps/pcre2
export PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_PATH=$D/usr/lib/x86_64-linux-gnu/pkgconfig LD_LIBRARY_PATH=$D/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
t0=$(date +%s)
cmake --preset gpu > $OUT/cfg.log 2>&1 || { tail -30 $OUT/cfg.log; exit 1; }
cmake --build build/gpu -j16 > $OUT/build.log 2>&1 || { grep -m5 -A8 error $OUT/build.log; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"
(build/gpu/cli/hearth-cli synth --shape llama-8b --quant Q4_0 -o /tmp/8b.gguf > $OUT/synth.log 2>&1) &
SYN=$!
ctest --test-dir build/gpu -L gpu -LE gpu-bench -j3 --output-on-failure --timeout 240 > $OUT/ctest.log 2>&1
echo "ctest done at $(( $(date +%s) - t0 )) s"; grep -E "tests passed|tests failed|\*\*\*Failed|Not Run" $OUT/ctest.log | head -30
wait $SYN
for r in 1 2; do build/gpu/cli/hearth-cli generate /tmp/8b.gguf --device cuda --prompt "hello world" --temp 0 -n 128 --json 2>$OUT/gen_err.log | tail -1 >> $OUT/gen.log; done
python3 -c "
import json
for l in open('$OUT/gen.log'):
    j=json.loads(l); print('8B Q4_0 decode_tps %.1f prefill_tps %.1f device %s kv %s weights %s' % (j['decode_tps'], j['prefill_tps'], j.get('device'), j.get('kv_precision'), j.get('weight_format')))"
timeout 120 build/gpu/bench/engine/hearth-bench concurrent /tmp/8b.gguf --streams 16 --tokens 64 --json > $OUT/conc.json 2>$OUT/conc.err; echo "bench rc=$?"; tail -c 600 $OUT/conc.json
echo "all done at $(( $(date +%s) - t0 )) s"
