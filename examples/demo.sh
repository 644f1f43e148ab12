#!/usr/bin/env bash
# make demo: until the optimize loop lands (issue 5) the demo evaluates the
# bundled example task's hand-written candidate and prints the verdict.
set -euo pipefail
cd "$(dirname "$0")/.."
device=cpu
if python3 -c "import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  device=cuda
fi
echo "kforge demo: evaluating examples/candidates/fused_bias_relu6_scale_cpp.py on $device"
echo "(the optimize loop with a scripted LLM session replaces this when issue 5 lands)"
if [ "$device" = cpu ]; then
  build/kforge eval --task examples/tasks/fused_bias_relu6_scale.py \
    --candidate examples/candidates/fused_bias_relu6_scale_cpp.py --device cpu
else
  build/kforge eval --task examples/tasks/fused_bias_relu6_scale.py \
    --candidate examples/candidates/fused_bias_relu6_scale_reference.py --device cuda --policy any
fi
