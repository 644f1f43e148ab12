#!/usr/bin/env bash
# Device capture for issue 9: Nsight Compute profiles of KernelBench level-1
# references (and fixture kernels) as parser fixtures and for the states check.
#   bash bench/device/issue9_ncu.sh refs|fixtures|cli
# Writes NAME.ncu-rep, NAME.raw.csv and NAME.details.csv per program into
# $OUT/ncu (default bench/results/issue9/ncu).
set -uo pipefail
OUT=${OUT:-bench/results/issue9}
mkdir -p "$OUT/ncu"
KB=.devcarry/kernelbench
export TMPDIR=/dev/shm TORCH_EXTENSIONS_DIR=/dev/shm/torch-ext MAX_JOBS=16 PYTHONPATH=$PWD/harness
# The sections behind KernelProfile: speed of light, launch, occupancy, warp
# stalls, memory workload (L2 and DRAM throughput).
SECTIONS=(--section SpeedOfLight --section LaunchStats --section Occupancy
          --section WarpStateStats --section MemoryWorkloadAnalysis)
L1=(1_Square_matrix_multiplication_ 12_Matmul_with_diagonal_matrices_ 19_ReLU 23_Softmax
    40_LayerNorm 42_Max_Pooling_2D 47_Sum_reduction_over_a_dimension 50_conv_standard_2D__square_input__square_kernel
    88_MinGPTNewGelu 95_CrossEntropyLoss)

profile() {  # name kforge_harness.profile-arguments...
  local name=$1; shift
  echo "== $name $(date +%T)" >&2
  timeout 240 ncu --clock-control none --profile-from-start off "${SECTIONS[@]}" \
      -f -o "$OUT/ncu/$name" python3 -m kforge_harness.profile "$@" >"$OUT/ncu/$name.log" 2>&1 \
    || { echo "ncu failed for $name" >&2; tail -5 "$OUT/ncu/$name.log" >&2; return; }
  ncu --import "$OUT/ncu/$name.ncu-rep" --csv --page raw >"$OUT/ncu/$name.raw.csv"
  ncu --import "$OUT/ncu/$name.ncu-rep" --csv --page details >"$OUT/ncu/$name.details.csv"
}

case "${1:-refs}" in
  refs)
    ncu --version | tee "$OUT/ncu/ncu_version.txt"
    for t in "${L1[@]}"; do profile "l1_$t" --task "$KB/level1/$t.py"; done ;;
  fixtures)
    F=tests/gpu/fixtures
    for c in default_stream side_stream; do profile "fixture_$c" --task $F/relu_task.py --candidate $F/$c.py; done ;;
  cli)  # kforge profile itself: a reference, and a candidate in its sandbox
    K=${KFORGE:-.devcarry/kforge}
    F=tests/gpu/fixtures
    echo "== kforge profile 19_ReLU $(date +%T)" >&2
    $K profile --task "$KB/level1/19_ReLU.py" --json >"$OUT/cli_19_relu.json" 2>"$OUT/cli_19_relu.err"; echo "rc $?" >&2
    echo "== kforge profile candidate default_stream $(date +%T)" >&2
    $K profile --task $F/relu_task.py --candidate $F/default_stream.py --json \
        >"$OUT/cli_default_stream.json" 2>"$OUT/cli_default_stream.err"; echo "rc $?" >&2
    echo "== kforge profile 1_Square_matrix_multiplication_ $(date +%T)" >&2
    $K profile --task "$KB/level1/1_Square_matrix_multiplication_.py" --json \
        >"$OUT/cli_1_matmul.json" 2>"$OUT/cli_1_matmul.err"; echo "rc $?" >&2
    ;;
esac
