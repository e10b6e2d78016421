#!/usr/bin/env bash
# Runs every test: builds attn, then ctest runs the lit suite (check-attn:
# dialect, verifier, pass and pipeline tests) and the GoogleTest suites
# (fp64 oracle, .npy I/O, programs executed on the CPU vs the oracle), and
# the Python module's tests (NumPy; attn.torch on PyTorch).
# GPU tests (ctest label gpu) skip with a message where no GPU exists.
#
# --sanitize: then also configures a second build directory
# ($ATTN_SANITIZE_BUILD_DIR, default build-sanitize) with -DATTN_SANITIZE=ON
# (ASan + UBSan) and runs the CPU tests there (ctest -LE gpu), each long
# sweep on a sample of its cases (ATTN_TEST_SAMPLE, test/unit/Sweep.h).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sanitize=0
for arg in "$@"; do
  case "$arg" in
    --sanitize) sanitize=1 ;;
    *) echo "test.sh: unknown argument '$arg' (expected --sanitize)" >&2; exit 2 ;;
  esac
done
"$root/scripts/build.sh"
build=${ATTN_BUILD_DIR:-$root/build}
# build.sh installed torch (scripts/install-torch.sh): its test must run,
# not skip, unless torch was declined with ATTN_NO_TORCH=1.
if [ "${ATTN_NO_TORCH:-0}" != 1 ]; then
  export ATTN_REQUIRE_TORCH=${ATTN_REQUIRE_TORCH:-1}
fi
(cd "$build" && ctest --output-on-failure -j "${ATTN_JOBS:-$(nproc)}")
if [ "$sanitize" = 1 ]; then
  sbuild=${ATTN_SANITIZE_BUILD_DIR:-$root/build-sanitize}
  ATTN_BUILD_DIR="$sbuild" \
    ATTN_CMAKE_ARGS="${ATTN_CMAKE_ARGS:-} -DATTN_SANITIZE=ON -DATTN_FUZZ_SECONDS=20" \
    "$root/scripts/build.sh"
  # detect_leaks=0: LLVM's and MLIR's uninstrumented shared libraries keep
  # process-lifetime allocations (cl::opt registries, ManagedStatics,
  # JIT memory managers) that LeakSanitizer would report at exit; leaks of
  # attn's own code are not what this run looks for (ASan still reports
  # use-after-free, overflows and double frees).
  # allow_user_poisoning=0: llvm::BumpPtrAllocator poisons a fresh slab when
  # its inline code is instrumented (attn's attribute storage allocates
  # through it, e.g. #attn_launch.plan) and unpoisons each piece it hands
  # out, but the same allocator's uninstrumented copy inside libMLIR hands
  # out pieces of that slab without unpoisoning them: every later StringAttr
  # in the slab would be a false use-after-poison. Heap redzones, freed
  # memory and stack checks do not depend on user poisoning.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:allow_user_poisoning=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  # Each case costs 2-5x under the sanitizers; the unsanitized run above
  # ran every case, this one looks for memory errors on one in four.
  export ATTN_TEST_SAMPLE=${ATTN_TEST_SAMPLE:-4}
  (cd "$sbuild" && ctest --output-on-failure -LE gpu -j "${ATTN_JOBS:-$(nproc)}")
fi
