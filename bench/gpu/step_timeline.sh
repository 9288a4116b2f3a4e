#!/bin/bash
# Issue 20: a decode step's timeline (nsys, graph nodes traced one by one),
# Hearth on the 8B Q4_0 and 135M-shape Q4_1 files, and llama.cpp on the same
# files where /tmp/llama/b is built (bench/gpu/peer_table.sh builds it):
# per kernel the marginal wall time (step_timeline.py). On a warm machine
# after a call that built Hearth in /tmp/bgpu (bench/gpu/verify_defaults.sh).
cd "$(dirname "$0")/../.."
source bench/gpu/device_env.sh
NSYS=$(command -v nsys || ls -d /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys /usr/local/cuda/nsight-systems*/bin/nsys 2>/dev/null | head -1)
[ -n "$NSYS" ] || { note "no nsys on this machine"; exit 1; }
note "nsys: $NSYS"
[ -x $CLI ] || build_engine hearth-cli || exit 1
[ -f $M/smol.gguf ] || $CLI synth --shape smollm2-135m --quant Q4_1 -o $M/smol.gguf >$W/synth.log 2>&1
[ -f $M/8b.gguf ] || $CLI synth --shape llama-8b --quant Q4_0 -o $M/8b.gguf >>$W/synth.log 2>&1
trace() { # NAME LAST-KERNEL COMMAND...
  local n=$1 k=$2
  shift 2
  timeout 150 $NSYS profile -t cuda --cuda-graph-trace=node -f true -o $W/$n "$@" >$W/$n.log 2>&1
  timeout 120 $NSYS export --type sqlite -f true -o $W/$n.sqlite $W/$n.nsys-rep >>$W/$n.log 2>&1
  python3 bench/gpu/step_timeline.py $W/$n.sqlite "$k" >$OUT/timeline_$n.txt 2>&1
  note "$n rc $?"
  head -24 $OUT/timeline_$n.txt | tee -a "$S"
}
python3 -c "print('hello world ' * 341 + 'hel')" >$W/long.txt # 4,096 tokens (the synthetic tokenizer)
for f in 8b smol; do
  trace hearth_$f argmax $CLI generate $M/$f.gguf --device cuda --temp 0 --prompt "hello world" -n 48
done
trace hearth_8b_4k argmax $CLI generate $M/8b.gguf --device cuda --temp 0 --prompt-file $W/long.txt -n 32 --ctx 4352
if [ -x /tmp/llama/b/bin/llama-bench ]; then
  export LD_LIBRARY_PATH=/tmp/llama/b/bin:$LD_LIBRARY_PATH
  for f in 8b smol; do
    trace llama_$f ^get_rows /tmp/llama/b/bin/llama-bench -m $M/$f.gguf -ngl 99 -fa 1 -p 0 -n 48 -r 1
  done
  trace llama_8b_4k ^get_rows /tmp/llama/b/bin/llama-bench -m $M/8b.gguf -ngl 99 -fa 1 -p 0 -n 32 -d 4096 -r 1
fi
note done
