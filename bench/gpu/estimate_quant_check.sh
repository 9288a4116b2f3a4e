#!/bin/bash
# One device call: bench/gpu/merged_check.sh (gpu preset build, gpu label, 8B decode, 16 streams), then
# hearth-cli estimate against the allocation on CUDA (llama-1b Q8_0, two contexts), --quant Q4_0 on CUDA
# against the file as stored, and a CUDA profile summary. Run from the root with carry [".deps"].
bash bench/gpu/merged_check.sh 2>&1 | tail -25
C=build/gpu/cli/hearth-cli
$C synth --shape llama-1b --quant Q8_0 -o /tmp/1b8.gguf >/dev/null
P=$(python3 -c "print('hello there ' * 30)")
for ctx in 2048 8192; do
  $C estimate /tmp/1b8.gguf --device cuda --ctx $ctx --json 2>/dev/null | python3 -c "import json,sys; j=json.load(sys.stdin); print('estimate ctx', $ctx, {k: j[k] for k in ['weights_bytes','kv_bytes','workspace_bytes','total_bytes','device']})"
  $C generate /tmp/1b8.gguf --device cuda --ctx $ctx --prompt "$P" -n 4 --temp 0 --json 2>/dev/null | tail -1 | python3 -c "import json,sys; j=json.load(sys.stdin); print('actual   ctx', $ctx, j['memory'], j['device'])"
done
$C generate /tmp/1b8.gguf --device cuda --quant Q4_0 --prompt "hello" -n 32 --temp 0 --json 2>/dev/null | tail -1 | python3 -c "import json,sys; j=json.load(sys.stdin); print('quant Q4_0 on cuda', j['weight_format'], j['weights_converted_from'], 'conv ms', round(j['conversion_ms']), 'decode', round(j['decode_tps'],1), j['memory'])"
$C generate /tmp/1b8.gguf --device cuda --prompt "hello" -n 32 --temp 0 --json 2>/dev/null | tail -1 | python3 -c "import json,sys; j=json.load(sys.stdin); print('as stored Q8_0 on cuda decode', round(j['decode_tps'],1))"
$C profile /tmp/1b8.gguf --device cuda -n 8 --json 2>/dev/null | tail -1 | python3 -c "import json,sys; j=json.load(sys.stdin); print('profile cuda: kernels', j['kernels'], 'forward_us', round(j['forward_us']), 'host_wait', round(j['host_wait_us']), 'gpu_idle', round(j['gpu_idle_us']), 'steps', j['steps'] if isinstance(j['steps'], int) else len(j['steps']))"
