#!/usr/bin/env bash
# device_run.sh — one pass on a GPU machine: the GPU tests, the kernel benchmarks, and a whole
# 2^20-constraint proof on the CPU and CUDA backends (setup timed too), logs under $1. Two more
# steps on request: `sppark`, sppark's NTT and MSMs beside the kernel benchmarks, timed by a driver
# built outside the repository (its path in $SPPARK_BENCH; neither the driver nor a script that
# builds it is committed; skipped where none was carried), and `prover24`, the GPU stage alone of
# 8 partitions of each built-in circuit at 2^24 over fixed-base tables, traced (about 4 minutes;
# where $BIN_B names another folder, its zkpipe too on the same keys, each run's folder suffixed
# with its binary's folder name), and `pageable24`, the job in which kernels wait for another
# worker's pageable copy (poseidon-merkle 2^24, 16 partitions, 16 threads, 2 workers, pageable
# staging: checks24-h200-20261203's), twice with $BIN's zkpipe and, where $BIN_B names another
# folder, twice with its zkpipe, interleaved, each trace's waiting kernels counted by `zkpipe
# calibrate` (about 3 minutes with two binaries).
# Expects the binaries in $BIN (default .device/bin) and their shared libraries in .device/lib.
# Usage: kernels/bench/device_run.sh OUT_DIR [tests] [bench] [proof] [sppark] [prover24] [pageable24]
#        (default: tests bench proof)
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
  # Every GPU suite; the fault suite's tests each in a process of their own, as CTest runs them
  # (a sticky CUDA error ends its process's context).
  for t in "$bin"/gpu_*_tests; do
    if [[ $t == *fault* ]]; then
      for test in $("$t" --gtest_list_tests | awk '/^[^ ]/{suite=$1} /^  /{print suite $1}'); do
        timeout ${TEST_TIMEOUT:-300} "$t" --gtest_filter="$test" 2>&1 | grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) *\]" | tee -a "$out/gpu_tests.log"
      done
    else
      timeout ${TEST_TIMEOUT:-300} "$t" 2>&1 | grep -v "^\[ RUN      \]" | tee -a "$out/gpu_tests.log"
    fi
  done
fi
if [[ $steps == *bench* ]]; then
  timeout ${BENCH_TIMEOUT:-300} "$bin/bench_kernels" ${BENCH_ARGS:-} --csv "$out/bench.csv" 2>&1 | tee "$out/bench.log"
fi
if [[ $steps == *sppark* ]]; then
  if [ -x "${SPPARK_BENCH:-}" ]; then
    # the sizes and the median rule of BENCH_ARGS, e.g. --ntt 20:24 --msm 20:24 --g2-max 24 --repeats 5
    timeout ${BENCH_TIMEOUT:-300} "$SPPARK_BENCH" ${SPPARK_ARGS:-} --csv "$out/sppark.csv" 2>&1 | tee "$out/sppark.log"
  else
    echo "sppark: no driver carried (SPPARK_BENCH unset or not executable): skipped" | tee "$out/sppark.log"
  fi
fi
if [[ $steps == *prover24* ]]; then
  for circuit in poseidon-merkle dense; do
    keys=/tmp/zkpipe-keys-2e24-$circuit
    "$bin/zkpipe" setup --circuit $circuit --constraints 16773120 --backend cuda --out-dir $keys 2>&1 | tee "$out/setup-$circuit.log"
    for b in "$bin" ${BIN_B:-}; do
      run="$out/prover24-$circuit${BIN_B:+-$(basename "$b")}"
      "$b/zkpipe" prove --key $keys/proving.key --backend cuda --stage-alone gpu --workers 2 --synthesis-threads 2 \
        --pool-slabs 6 --partitions 8 --fixed-bases on --trace-dir "$run" 2>&1 | tee "$run.log"
    done
    rm -rf $keys
  done
fi
if [[ $steps == *pageable24* ]]; then
  keys=/tmp/zkpipe-keys-2e24-pageable
  "$bin/zkpipe" setup --circuit poseidon-merkle --constraints 16773120 --backend cuda --out-dir $keys 2>&1 | tee "$out/setup-pageable24.log"
  for round in 1 2; do
    for b in "$bin" ${BIN_B:-}; do
      run="$out/pageable24/$(basename "$b")-r$round"
      "$b/zkpipe" prove --key $keys/proving.key --backend cuda --partitions 16 --synthesis-threads 16 --workers 2 \
        --staging pageable --trace-dir "$run" 2>&1 | tail -3 | tee -a "$out/pageable24.log"
      "$b/zkpipe" calibrate "$run/trace.csv" -o "$run/calibration.toml" 2>&1 | grep -o "gpu_phase_cost.[a-z_0-9]* .*left out[^)]*" \
        | sed "s|^|$(basename "$b")-r$round: |" | tee -a "$out/pageable24.log"
    done
  done
  rm -rf $keys
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
