#!/bin/bash
# Session 9's device call: bench/gpu/merged_check.sh (gpu preset build, the gpu
# label, 8B Q4_0 decode, 16 streams), then what this session added that needs
# the GPU: the hardware-aware recommendation on the H200 (estimate --explain:
# the device's peak bandwidth, the chosen context and KV) and the estimate
# against the allocation for the 8B file. Run as `bash bench/gpu/session9_check.sh`
# with carry [".deps"].
cd "$(dirname "$0")/../.."
bash bench/gpu/merged_check.sh
C=build/gpu/cli/hearth-cli
echo "--- estimate --explain (auto) on the 8B Q4_0 file"
$C estimate /tmp/8b.gguf --explain 2>&1 | tail -12
$C estimate /tmp/8b.gguf --explain --json 2>/dev/null | tail -1 > $OUT/estimate.json
for ctx in 4096 32768; do
  est=$($C estimate /tmp/8b.gguf --device cuda --ctx $ctx --json 2>/dev/null | tail -1)
  got=$($C generate /tmp/8b.gguf --device cuda --ctx $ctx --prompt "hello" -n 4 --temp 0 --json 2>/dev/null | tail -1)
  python3 -c "
import json,sys
e=json.loads(sys.argv[1]); g=json.loads(sys.argv[2])['memory']
print('ctx $ctx: estimate %d, allocated %d, ratio %.3f (weights %d/%d kv %d/%d workspace %d/%d)' % (e['total_bytes'], g['total_bytes'], e['total_bytes']/g['total_bytes'], e['weights_bytes'], g['weights_bytes'], e['kv_bytes'], g['kv_bytes'], e['workspace_bytes'], g['workspace_bytes']))" "$est" "$got"
done
grep -E "ModelSwitchingCuda|CudaQwen2_7BShape|backend device memory|qwen2-7b" $OUT/ctest.log | head -10
