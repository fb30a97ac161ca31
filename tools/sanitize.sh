#!/usr/bin/env bash
# Builds the engine's, the policy's and their runtimes' tests under a sanitizer and runs them:
#
#   tools/sanitize.sh asan [all|pipeline|engine]   AddressSanitizer + UndefinedBehaviorSanitizer (leaks too), in build-asan/
#   tools/sanitize.sh tsan [all|pipeline|engine]   ThreadSanitizer, in build-tsan/
#
# GCC, CUDA off (no GPU code is sanitized), -O1 -g with assertions on, and the portable field
# multiplication (the BMI2/ADX assembly needs more registers than an instrumented frame leaves).
# The suites (all, the default): tests/util, policy, runtime, properties and engine
# (ZKPIPE_TEST_PARTS), with the zkpipe command that the engine's kill-and-resume and staging tests
# run. `pipeline` (what CI runs: the full set takes over an hour on 2 cores) is tests/policy and
# tests/runtime: the scheduling policy, the device-memory plan and the one pipeline on logical time
# and on threads, none of which compiles the maths. `engine` (CI too) is tests/engine: the engine
# on threads with the fake and CPU backends, its kill-and-resume and staging tests, with 40 kills
# in all (ZKPIPE_KILL_RESUME_CYCLES, unless set): a sanitized zkpipe starts several times slower,
# and 100 outlast the test's 300 s under ASan. Any report fails its
# test: UB does not recover, every sanitizer halts on its first error. tools/sanitizer-suppressions/
# holds only third-party false positives, each line explained. ZKPIPE_WARNINGS_AS_ERRORS=1 makes
# a warning fail the build.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
kind=${1:?usage: sanitize.sh asan|tsan [all|pipeline|engine]}
suites=${2:-all}
case $suites in
  all) parts="util;policy;runtime;properties;engine"; tests=.
       targets=(zkpipe_util_tests zkpipe_policy_tests zkpipe_runtime_tests zkpipe_property_tests zkpipe_engine_tests
                zkpipe_kill_resume_tests zkpipe_run_list_tests zkpipe) ;;
  pipeline) parts="policy;runtime"; tests=tests  # not the zkpipe command's tests in tools/
            targets=(zkpipe_policy_tests zkpipe_runtime_tests) ;;
  engine) parts="engine"; tests=tests/engine
          targets=(zkpipe_engine_tests zkpipe_kill_resume_tests zkpipe_run_list_tests zkpipe)
          export ZKPIPE_KILL_RESUME_CYCLES=${ZKPIPE_KILL_RESUME_CYCLES:-40} ;;
  *) echo "usage: sanitize.sh asan|tsan [all|pipeline|engine]"; exit 2 ;;
esac
suppressions="$here/tools/sanitizer-suppressions"
case $kind in
  asan)
    flags="-fsanitize=address,undefined -fno-sanitize-recover=all"
    export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1"
    export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
    export LSAN_OPTIONS="suppressions=$suppressions/lsan.supp:print_suppressions=0" ;;
  tsan)
    # -Wno-tsan: GCC warns that TSan does not model std::atomic_thread_fence, which SimGrid's
    # headers use (s4u::Activity's reference count): third-party code, and no engine code fences.
    flags="-fsanitize=thread -Wno-tsan"
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$suppressions/tsan.supp:print_suppressions=0" ;;
  *) echo "usage: sanitize.sh asan|tsan [all|pipeline|engine]"; exit 2 ;;
esac
build="$here/build-$kind"
generator=(); command -v ninja >/dev/null && generator=(-G Ninja)
launcher=(); command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# cpu_s: CPU seconds (user + system) of this script's finished children, for the figures it
# prints (`times` must run in this shell: in a subshell it counts nothing).
read_cpu_s() {
  times >"$build/.times"
  cpu_s=$(tail -1 "$build/.times" | awk '{ split($1 " " $2, t, /[ms ]/); print int(t[1] * 60 + t[2] + t[4] * 60 + t[5]) }')
}
mkdir -p "$build"
start=$(date +%s)
cmake -S "$here" -B "$build" "${generator[@]}" "${launcher[@]}" -DZKPIPE_CUDA=OFF -DZKPIPE_X86_ADX=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DCMAKE_CXX_FLAGS="$flags -fno-omit-frame-pointer" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
  -DZKPIPE_TEST_PARTS="$parts" \
  -DCMAKE_COMPILE_WARNING_AS_ERROR="$([ "${ZKPIPE_WARNINGS_AS_ERRORS:-0}" = 1 ] && echo ON || echo OFF)" >/dev/null
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
built=$(date +%s)
read_cpu_s
build_cpu=$cpu_s
cd "$build/$tests"
status=0
ctest --output-on-failure -j "$(nproc)" --timeout 1800 || status=$?
read_cpu_s
echo "sanitize.sh $kind $suites: build $((built - start)) s ($build_cpu CPU s), tests $(($(date +%s) - built)) s" \
     "($((cpu_s - build_cpu)) CPU s) on $(nproc) cores"
exit $status
