#!/usr/bin/env bash
# Device checks for issue 2 (kforge eval on an H100). Run from the repo root on
# the device machine with the KernelBench problems copied to .devcarry/kernelbench.
#   bash bench/device/issue2_eval.sh env|refs1|refs2|refs3|fixtures|failures|some LEVEL NAME...
#   bash bench/device/issue2_eval.sh pin_ab ROUNDS LEVEL NAME   (eval.timing.pin_cpus off/on, alternating)
# Writes JSON lines to $OUT (or bench/results/issue2 when OUT is unset).
# EVAL_SET adds settings, e.g. EVAL_SET="--set eval.timing.compile=false"
# (reference-as-candidate runs use the evaluator's defaults otherwise).
set -uo pipefail
OUT=${OUT:-bench/results/issue2}
mkdir -p "$OUT"
KB=.devcarry/kernelbench
export TMPDIR=/dev/shm KFORGE_CACHE_DIR=/dev/shm/kforge-cache TORCH_EXTENSIONS_DIR=/dev/shm/torch-ext
export PYTHONUNBUFFERED=1 MAX_JOBS=16
K=${KFORGE:-.devcarry/kforge}
L1=(1_Square_matrix_multiplication_ 7_Matmul_with_small_K_dimension_ 9_Tall_skinny_matrix_multiplication_
    12_Matmul_with_diagonal_matrices_ 40_LayerNorm 50_conv_standard_2D__square_input__square_kernel
    54_conv_standard_3D__square_input__square_kernel 66_conv_standard_3D__asymmetric_input__asymmetric_kernel
    88_MinGPTNewGelu 95_CrossEntropyLoss)
L2=(12_Gemm_Multiply_LeakyReLU 14_Gemm_Divide_Sum_Scaling 18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp
    4_Conv2d_Mish_Mish 29_Matmul_Mish_Mish)
# (L2 23_Conv3d_GroupNorm_Mean was in this list: issue 3's scan found it
# degenerate, its output the same for every input, so kforge times no
# candidate for it; 4_Conv2d_Mish_Mish took its place.)

ref_as_candidate() {  # level name
  local task=$KB/$1/$2.py cand=/dev/shm/cands/$1_$2.py
  mkdir -p /dev/shm/cands
  sed -E 's/\bModel\b/ModelNew/g' "$task" > "$cand"
  echo "== $1/$2" >&2
  $K eval --task "$task" --candidate "$cand" --device cuda --policy any --json \
      ${EVAL_SET:-} 2>>"$OUT/stderr.log" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)))' >> "$OUT/ref_as_candidate.jsonl" \
    || echo "{\"task\": \"$1/$2\", \"failed\": true}" >> "$OUT/ref_as_candidate.jsonl"
}

case "${1:-env}" in
  env)
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/env.txt"
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' | tee -a "$OUT/env.txt"
    nvcc --version | tail -2 | tee -a "$OUT/env.txt"
    ldd $K | tee -a "$OUT/env.txt"
    $K --version | tee -a "$OUT/env.txt"
    ;;
  refs1) for t in "${L1[@]:0:5}"; do ref_as_candidate level1 "$t"; done ;;
  refs2) for t in "${L1[@]:5:5}"; do ref_as_candidate level1 "$t"; done ;;
  refs3) for t in "${L2[@]}"; do ref_as_candidate level2 "$t"; done ;;
  pin_ab) rounds=$2 level=$3 name=$4
    for ((i = 0; i < rounds; i++)); do
      for pin in false true; do
        EVAL_SET="--set eval.timing.pin_cpus=$pin" ref_as_candidate "$level" "$name"
      done
    done ;;
  some) level=$2; shift 2; for t in "$@"; do ref_as_candidate "$level" "$t"; done ;;
  rest) for t in "${L1[@]:1:2}" "${L1[@]:5:5}"; do ref_as_candidate level1 "$t"; done
        for t in "${L2[@]}"; do ref_as_candidate level2 "$t"; done ;;
  fixtures|failures)
    F=tests/gpu/fixtures
    cases=(default_stream side_stream out_of_bounds hang segfault default_stream)
    [ "$1" = failures ] && cases=(out_of_bounds hang segfault default_stream)
    for c in "${cases[@]}"; do
      echo "== fixture $c $(date +%T)" >&2
      $K eval --task $F/relu_task.py --candidate $F/$c.py --device cuda --policy any --json \
        --set eval.timing.max_seconds=6 --set eval.sandbox.run_timeout_floor_s=20 \
        2>>"$OUT/stderr.log" | python3 -c 'import json,sys; d=json.load(sys.stdin); d["fixture"]=sys.argv[1]; print(json.dumps(d))' "$c" >> "$OUT/fixtures.jsonl"
    done
    ;;
esac
