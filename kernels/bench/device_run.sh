#!/usr/bin/env bash
# device_run.sh — one pass on a GPU machine: the GPU tests, the kernel benchmarks, and a whole
# 2^20-constraint proof on the CPU and CUDA backends (setup timed too), logs under $1.
# Expects the binaries in $BIN (default .device/bin) and their shared libraries in .device/lib.
# Usage: kernels/bench/device_run.sh OUT_DIR [tests] [bench] [proof]   (default: all three)
set -uo pipefail
out=${1:?usage: device_run.sh OUT_DIR [tests] [bench] [proof]}
shift
steps=${*:-tests bench proof}
bin=${BIN:-.device/bin}
export LD_LIBRARY_PATH=$PWD/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv | tee "$out/device.txt"
nproc | tee -a "$out/device.txt"

if [[ $steps == *tests* ]]; then
  for t in gpu_ntt_tests gpu_msm_tests gpu_prover_tests; do
    timeout ${TEST_TIMEOUT:-300} "$bin/$t" 2>&1 | grep -v "^\[ RUN      \]" | tee -a "$out/gpu_tests.log"
  done
fi
if [[ $steps == *bench* ]]; then
  timeout ${BENCH_TIMEOUT:-300} "$bin/bench_kernels" ${BENCH_ARGS:-} --csv "$out/bench.csv" 2>&1 | tee "$out/bench.log"
fi
if [[ $steps == *proof* ]]; then
  keys=/tmp/zkpipe-keys-2e20
  {
    /usr/bin/time -v "$bin/zkpipe" setup --circuit dense --constraints ${PROOF_CONSTRAINTS:-1000000} --out-dir $keys 2>&1 \
      | grep -v "^\s*\(Average\|Exit\|Swaps\|File\|Socket\|Signals\|Page size\|Voluntary\|Involuntary\|Major\|Minor\|Percent\|System time\|User time\)"
    "$bin/zkpipe" prove --key $keys/proving.key --backend cpu --proof /tmp/cpu_proof.json --public /tmp/cpu_public.json
    "$bin/zkpipe" prove --key $keys/proving.key --backend cuda --proof "$out/proof.json" --public "$out/public.json"
    "$bin/zkpipe" prove --key $keys/proving.key --backend cuda --proof "$out/proof.json" --public "$out/public.json"
    cp $keys/verification_key.json "$out/"
    "$bin/zkpipe" verify --vk "$out/verification_key.json" --proof "$out/proof.json" --public "$out/public.json"
  } 2>&1 | tee "$out/proof.log"
fi
