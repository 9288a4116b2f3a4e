#!/bin/bash
# Issue 20: where a decode step's GPU time goes, Hearth against llama.cpp, per
# kernel (ncu, gpu__time_duration.sum, kernels serialized, caches and clocks
# left alone), on the 135M-shape Q4_1 and 8B Q4_0 files. On a warm machine
# after bench/gpu/peer_table.sh (Hearth in /tmp/bgpu, llama.cpp in
# /tmp/llama/b, the files in /tmp/synth). kernel_profile.py sums the CSVs.
cd "$(dirname "$0")/../.."
source bench/gpu/device_env.sh
CLI=$B/cli/hearth-cli
LB=/tmp/llama/b/bin
export LD_LIBRARY_PATH=$LB:$LD_LIBRARY_PATH
NCU="ncu --metrics gpu__time_duration.sum --csv --cache-control none --clock-control none"
for f in smol 8b; do
  # Hearth: the prompt, then 8 decode steps (graph nodes profiled one by one).
  timeout 150 $NCU --launch-count 4000 $CLI generate $M/$f.gguf --device cuda --temp 0 --prompt "hello world" -n 8 \
    >$OUT/ncu_hearth_$f.csv 2>$W/ncu_h_$f.err
  note "hearth $f rc $?"
  python3 bench/gpu/kernel_profile.py $OUT/ncu_hearth_$f.csv argmax >$OUT/prof_hearth_$f.txt 2>&1
  head -30 $OUT/prof_hearth_$f.txt | tee -a "$S"
  # llama.cpp: llama-bench's warm-up and one repetition of 8 tokens.
  timeout 150 $NCU --launch-count 6000 $LB/llama-bench -m $M/$f.gguf -ngl 99 -fa 1 -p 0 -n 8 -r 1 \
    >$OUT/ncu_llama_$f.csv 2>$W/ncu_l_$f.err
  note "llama $f rc $?"
  python3 bench/gpu/kernel_profile.py $OUT/ncu_llama_$f.csv get_rows >$OUT/prof_llama_$f.txt 2>&1
  head -40 $OUT/prof_llama_$f.txt | tee -a "$S"
done
note done
