//===- attn-fuzz-capi.cpp - bounded fuzzer of the C API's tensor views ----===//
//
// Launches small compiled kernels (plain, FoX, PaTH) through attn_launch and
// attn_launch_outputs on DLTensors with mutated metadata: null and
// misaligned data pointers, byte offsets (from no memory, wrapping the
// address space), dtypes, ranks, shapes, strides (zero, huge, overflowing),
// devices, input and output counts. Buffers
// are allocated after the mutation to hold the whole view, so a launch that
// passes the checks reads and writes only memory of the fuzzer; a view that
// no check could bound is not generated. A crash or a sanitizer report is a
// bug, as is a launch that succeeds on a view that must be refused (rank
// over 8, no data, a byte extent past 2^62, a CUDA or unknown device).
//
//   attn-fuzz-capi [--seed=N] [--seconds=S] [--runs=N]
//
//===----------------------------------------------------------------------===//

#include "attn/attn.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

std::string program(const char *variant) {
  std::string t = "tensor<?x?x?x16xf32>", g = "tensor<?x?x?xf32>";
  std::string v = variant;
  if (v == "plain")
    return "func.func @main(%q: " + t + ", %k: " + t + ", %v: " + t + ") -> " +
           t + " {\n %o = attn.attention %q, %k, %v : (" + t + ", " + t + ", " +
           t + ") -> " + t + "\n return %o : " + t + "\n}\n";
  if (v == "fox")
    return "func.func @main(%q: " + t + ", %k: " + t + ", %v: " + t +
           ", %g: " + g + ") -> " + t +
           " {\n %o = attn.attention %q, %k, %v gate(%g) : (" + t + ", " + t +
           ", " + t + ", " + g + ") -> " + t + "\n return %o : " + t + "\n}\n";
  return "func.func @main(%q: " + t + ", %k: " + t + ", %v: " + t +
         ", %w: " + t + ", %b: " + g + ") -> " + t +
         " {\n %o = attn.attention %q, %k, %v path(%w, %b) : (" + t + ", " + t +
         ", " + t + ", " + t + ", " + g + ") -> " + t + "\n return %o : " + t +
         "\n}\n";
}

/// One DLTensor and the memory it owns.
struct View {
  DLTensor t{};
  int64_t shape[16] = {};
  int64_t strides[16] = {};
  std::vector<unsigned char> storage;
  bool mustFail = false; // no check may let it through
};

using Rng = std::mt19937_64;
int64_t pick(Rng &rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

/// Bytes from the data pointer to the end of the last element, or -1 when
/// the arithmetic leaves 62 bits.
__int128 extentBytes(const View &v, int64_t esz) {
  __int128 last = 0;
  for (int d = 0; d < v.t.ndim; ++d) {
    if (v.shape[d] <= 0)
      return 0;
    int64_t s = v.t.strides ? v.strides[d] : 1;
    if (!v.t.strides)
      for (int e = d + 1; e < v.t.ndim; ++e)
        s = v.shape[e] > 0 ? s * v.shape[e] : 0;
    if (s < 0)
      return 0; // refused as negative
    last += __int128(v.shape[d] - 1) * s;
  }
  return (last + 1) * esz;
}

/// A view of `dims` (what the signature wants), with mutations when
/// `mutate`.
void makeView(View &v, Rng &rng, const std::vector<int64_t> &dims,
              bool mutate) {
  v.t.ndim = static_cast<int32_t>(dims.size());
  v.t.dtype = {kDLFloat, 32, 1};
  v.t.device = {kDLCPU, 0};
  for (size_t d = 0; d < dims.size(); ++d)
    v.shape[d] = dims[d];
  v.t.shape = v.shape;
  v.t.strides = nullptr;
  int kind = mutate ? static_cast<int>(pick(rng, 0, 10)) : 6;
  if (kind >= 8 && kind <= 10) { // permuted or padded strides
    v.t.strides = v.strides;
    int64_t s = pick(rng, 1, 3);
    for (int d = v.t.ndim; d-- > 0;) {
      v.strides[d] = s;
      s *= v.shape[d] + pick(rng, 0, 2);
    }
    if (kind == 9 && v.t.ndim > 1)
      std::swap(v.strides[0], v.strides[1]);
    if (kind == 10)
      v.strides[pick(rng, 0, v.t.ndim - 1)] = 0;
  }
  switch (kind) {
  case 0:
    v.t.dtype = {uint8_t(pick(rng, 0, 12)), uint8_t(pick(rng, 0, 64)),
                 uint16_t(pick(rng, 0, 2))};
    break;
  case 1:
    v.t.ndim = static_cast<int32_t>(pick(rng, -3, 12));
    for (int d = 0; d < 16; ++d)
      v.shape[d] = pick(rng, 0, 4);
    v.mustFail = v.t.ndim < 0 || v.t.ndim > ATTN_MAX_RANK;
    break;
  case 2:
    v.shape[pick(rng, 0, v.t.ndim - 1)] = pick(rng, -2, 2);
    break;
  case 3:
    v.t.strides = v.strides;
    for (int d = 0; d < v.t.ndim; ++d)
      v.strides[d] = pick(rng, 0, 1) ? INT64_MAX / pick(rng, 1, 4)
                                     : (int64_t(1) << pick(rng, 40, 62));
    break;
  case 4:
    v.t.device = {static_cast<DLDeviceType>(pick(rng, 2, 16)),
                  int32_t(pick(rng, 0, 1))};
    v.mustFail = true;
    break;
  case 5:
    v.t.strides = v.strides;
    for (int d = 0; d < v.t.ndim; ++d)
      v.strides[d] = pick(rng, -3, 3);
    break;
  default:
    break;
  }
  int64_t esz = v.t.dtype.bits >= 8 ? v.t.dtype.bits / 8 : 1;
  bool rankOk = v.t.ndim >= 0 && v.t.ndim <= ATTN_MAX_RANK;
  __int128 extent = rankOk ? extentBytes(v, esz) : 0;
  if (extent > (__int128(1) << 62))
    v.mustFail = true;
  // A view that fits no check and no buffer of ours is not generated.
  if (!v.mustFail && extent > (64 << 20)) {
    v.t.strides = nullptr;
    v.t.ndim = static_cast<int32_t>(dims.size());
    for (size_t d = 0; d < dims.size(); ++d)
      v.shape[d] = dims[d];
    extent = extentBytes(v, esz);
  }
  size_t bytes = v.mustFail ? 64 : static_cast<size_t>(extent) + 64;
  v.storage.assign(bytes, 0);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (size_t i = 0; i + 4 <= v.storage.size(); i += 4) {
    float x = pick(rng, 0, 200) ? u(rng) : INFINITY;
    std::memcpy(&v.storage[i], &x, 4);
  }
  auto *base = reinterpret_cast<unsigned char *>(
      (reinterpret_cast<uintptr_t>(v.storage.data()) + 15) & ~uintptr_t(15));
  v.t.data = base;
  switch (mutate ? pick(rng, 0, 9) : 9) {
  case 0: // no memory: refused when the view has elements
    v.t.data = nullptr;
    v.mustFail |= extent > 0;
    break;
  case 1: // no memory plus an offset
    v.t.data = nullptr;
    v.t.byte_offset = uint64_t(pick(rng, 1, 1 << 20));
    v.mustFail = true;
    break;
  case 2: // an offset that wraps the address space
    v.t.byte_offset = ~uint64_t(0) - uint64_t(pick(rng, 0, 8));
    v.mustFail = true;
    break;
  case 3: // misaligned, still inside the slack
    v.t.data = base + pick(rng, 1, 3);
    break;
  case 4:
    v.t.byte_offset = uint64_t(pick(rng, 0, 8)) * 4;
    break;
  default:
    break;
  }
}

} // namespace

int main(int argc, char **argv) {
  uint64_t seed = 0, maxRuns = ~uint64_t(0);
  double seconds = 30;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--seed=", 0) == 0)
      seed = std::strtoull(a.c_str() + 7, nullptr, 10);
    else if (a.rfind("--seconds=", 0) == 0)
      seconds = std::strtod(a.c_str() + 10, nullptr);
    else if (a.rfind("--runs=", 0) == 0)
      maxRuns = std::strtoull(a.c_str() + 7, nullptr, 10);
    else {
      std::fprintf(stderr, "usage: attn-fuzz-capi [--seed=N] [--seconds=S] "
                           "[--runs=N]\n");
      return 2;
    }
  }
  if (!seed)
    seed = std::chrono::steady_clock::now().time_since_epoch().count();
  std::printf("attn-fuzz-capi: seed %llu (repeat with --seed=%llu)\n",
              (unsigned long long)seed, (unsigned long long)seed);
  std::fflush(stdout);
  attn_engine *engine = nullptr;
  if (attn_engine_create("cpu", &engine)) {
    std::fprintf(stderr, "attn-fuzz-capi: error: %s\n", attn_last_error());
    return 1;
  }
  const char *variants[] = {"plain", "fox", "path"};
  attn_kernel *kernels[3];
  for (int i = 0; i < 3; ++i) {
    std::string src = program(variants[i]);
    if (attn_compile(engine, src.data(), src.size(), "main", &kernels[i])) {
      std::fprintf(stderr, "attn-fuzz-capi: error: %s\n", attn_last_error());
      return 1;
    }
  }
  Rng rng(seed);
  auto start = std::chrono::steady_clock::now();
  uint64_t runs = 0, refused = 0;
  while (runs < maxRuns &&
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                 .count() < seconds) {
    int which = static_cast<int>(pick(rng, 0, 2));
    size_t nargs = which == 0 ? 3 : which == 1 ? 4 : 5;
    int64_t B = pick(rng, 1, 2), H = pick(rng, 1, 2), T = pick(rng, 1, 24);
    // One view mutated (or none), the others valid: most launches reach
    // the kernel's own checks with a single thing wrong.
    int64_t mutated = pick(rng, 0, int64_t(nargs) + 1);
    std::vector<std::unique_ptr<View>> views;
    bool mustFail = false;
    for (size_t i = 0; i <= nargs; ++i) { // the last is the output
      bool threeD = (which == 1 && i == 3) || (which == 2 && i == 4);
      std::vector<int64_t> dims = threeD ? std::vector<int64_t>{B, H, T}
                                         : std::vector<int64_t>{B, H, T, 16};
      auto v = std::make_unique<View>();
      makeView(*v, rng, dims, int64_t(i) == mutated);
      mustFail |= v->mustFail;
      views.push_back(std::move(v));
    }
    std::vector<DLTensor> inputs;
    for (size_t i = 0; i < nargs; ++i)
      inputs.push_back(views[i]->t);
    size_t n = nargs;
    if (pick(rng, 0, 40) == 0) {
      n = size_t(pick(rng, 0, int64_t(nargs) - 1));
      mustFail = true;
    }
    const DLTensor *in = pick(rng, 0, 60) ? inputs.data() : nullptr;
    int s;
    if (pick(rng, 0, 1)) {
      s = attn_launch(kernels[which], in, n, &views[nargs]->t, nullptr);
    } else {
      // attn_launch_outputs: the one output, now and then a wrong count.
      DLTensor outs[2] = {views[nargs]->t, views[nargs]->t};
      size_t nOut = pick(rng, 0, 20) ? 1 : size_t(pick(rng, 0, 1)) * 2;
      mustFail |= nOut != 1;
      s = attn_launch_outputs(kernels[which], in, n, outs, nOut, nullptr);
    }
    if (s == 0 && mustFail) {
      std::fprintf(stderr,
                   "attn-fuzz-capi: error: run %llu (seed %llu): a launch "
                   "that must be refused succeeded\n",
                   (unsigned long long)runs, (unsigned long long)seed);
      return 1;
    }
    refused += s != 0;
    ++runs;
  }
  for (attn_kernel *k : kernels)
    attn_kernel_destroy(k);
  attn_engine_destroy(engine);
  std::printf("attn-fuzz-capi: %llu launches, %llu refused, no crash\n",
              (unsigned long long)runs, (unsigned long long)refused);
  return 0;
}
