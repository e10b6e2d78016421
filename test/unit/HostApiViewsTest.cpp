//===- HostApiViewsTest.cpp - CPU launches on arbitrary strided views -----===//
//
// Kernel::launch on the CPU reads strided inputs where they lie and writes
// the caller's output in place (attn-caller-buffers): views sliced out of a
// packed qkv buffer, an output inside a larger buffer with padding, an
// output interleaved with the inputs, views with a non-unit innermost
// stride. Every buffer is poisoned first; every element of the output view
// is checked against the fp64 oracle and every other byte must still be
// poison (inputs untouched).
//
//===----------------------------------------------------------------------===//

#include "HostApiSupport.h"

namespace attn::hostapi {
namespace {

/// A poisoned f32 buffer the views below point into.
struct Buffer {
  std::vector<float> data;
  explicit Buffer(size_t n) : data(n) {
    std::memset(data.data(), 0xFF, n * sizeof(float));
  }
  TensorView view(int64_t offset, std::vector<int64_t> shape,
                  std::vector<int64_t> strides) {
    return TensorView(data.data() + offset, DType::F32, shape, strides);
  }
};

/// Calls `f(linear index, element offset)` for every element of `v`.
template <typename F> void forEach(const TensorView &v, F f) {
  size_t rank = v.shape.size();
  std::vector<int64_t> idx(rank, 0);
  for (int64_t lin = 0, n = v.numel(); lin < n; ++lin) {
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d)
      off += idx[d] * v.stride(d);
    f(lin, off);
    for (size_t d = rank; d-- > 0;)
      if (++idx[d] < v.shape[d])
        break;
      else
        idx[d] = 0;
  }
}

/// Where each view of a launch lies: offsets and strides into one buffer.
struct Placement {
  size_t bufferFloats;
  std::vector<std::pair<int64_t, std::vector<int64_t>>> inputs; // per arg
  std::pair<int64_t, std::vector<int64_t>> output;
};

/// Draws inputs for `variant` at B, H, T, writes them into a poisoned
/// buffer as `place` says, launches, and checks the output view against
/// the oracle and every byte outside the views against the poison.
void launchInPlace(
    const std::string &variant, int64_t B, int64_t H, int64_t T,
    const std::function<Placement(int64_t, int64_t, int64_t)> &place) {
  const int64_t D = 64;
  std::string src = attentionProgram(variant, D, "f32");
  auto kernel = cpuEngine().compile(src);
  ASSERT_TRUE(static_cast<bool>(kernel)) << llvm::toString(kernel.takeError());
  Parsed p(src);
  uint64_t seed = freshSeed();
  ref::RandomSpec spec;
  spec.batch = B;
  spec.heads = H;
  spec.seqLen = T;
  spec.seed = seed;
  auto ins = ref::randomInputs(p.main(), spec);
  ASSERT_TRUE(static_cast<bool>(ins)) << llvm::toString(ins.takeError());
  auto want = ref::evaluate(p.main(), *ins);
  ASSERT_TRUE(static_cast<bool>(want)) << llvm::toString(want.takeError());

  Placement pl = place(B, H, T);
  Buffer buf(pl.bufferFloats);
  std::vector<bool> owned(pl.bufferFloats, false);
  std::vector<TensorView> views;
  for (size_t i = 0; i < ins->size(); ++i) {
    const Tensor &t = (*ins)[i];
    TensorView v = buf.view(pl.inputs[i].first, t.shape, pl.inputs[i].second);
    forEach(v, [&](int64_t lin, int64_t off) {
      buf.data[pl.inputs[i].first + off] = static_cast<float>(t.data[lin]);
      owned[pl.inputs[i].first + off] = true;
    });
    views.push_back(v);
  }
  std::vector<float> before = buf.data;
  TensorView out = buf.view(pl.output.first, want->shape, pl.output.second);
  forEach(out, [&](int64_t, int64_t off) {
    ASSERT_FALSE(owned[pl.output.first + off]) << "test bug: views overlap";
    owned[pl.output.first + off] = true;
  });
  if (llvm::Error e = (*kernel)->launch(views, out))
    FAIL() << variant << " seed " << seed << ": "
           << llvm::toString(std::move(e));

  // Every output element, from the oracle.
  Tensor got;
  got.shape = want->shape;
  got.data.resize(want->data.size());
  forEach(out, [&](int64_t lin, int64_t off) {
    got.data[lin] = buf.data[pl.output.first + off];
  });
  for (double x : got.data)
    ASSERT_TRUE(std::isfinite(x)) << variant << " seed " << seed;
  EXPECT_LE(ref::relError(got, *want), 1e-5) << variant << " seed " << seed;
  // Inputs and every byte outside the output untouched.
  size_t changed = 0;
  std::vector<bool> isOut(pl.bufferFloats, false);
  forEach(out,
          [&](int64_t, int64_t off) { isOut[pl.output.first + off] = true; });
  for (size_t i = 0; i < pl.bufferFloats; ++i)
    if (!isOut[i] && std::memcmp(&before[i], &buf.data[i], sizeof(float)))
      ++changed;
  EXPECT_EQ(changed, 0u) << variant
                         << ": bytes outside the output view changed (seed "
                         << seed << ")";
}

/// q, k, v sliced out of one packed [B, T, 3, H, D] buffer (what a fused
/// QKV projection writes), the gate [B, H, T] as the even elements of a
/// [B, H, T, 2] buffer (innermost stride 2: packed before the call), the
/// output a [B, H, T, D] view of a padded [B, T, H + 1, D + 8] buffer.
Placement packedQkvPaddedOut(int64_t B, int64_t H, int64_t T) {
  const int64_t D = 64, P = D + 8;
  Placement pl;
  int64_t qkv = B * T * 3 * H * D;
  std::vector<int64_t> s = {T * 3 * H * D, D, 3 * H * D, 1};
  pl.inputs = {{0, s}, {H * D, s}, {2 * H * D, s}};
  int64_t gate = B * H * T * 2;
  pl.inputs.push_back({qkv, {H * T * 2, T * 2, 2}});
  int64_t outBase = qkv + gate + 5; // any offset
  pl.output = {outBase, {T * (H + 1) * P, P, (H + 1) * P, 1}};
  pl.bufferFloats = outBase + B * T * (H + 1) * P;
  return pl;
}

TEST(HostApiCpuViews, SlicedInputsPaddedOutputInPlace) {
  for (const char *variant : {"plain", "rope", "fox", "rope_fox"})
    launchInPlace(variant, 2, 3, 37, packedQkvPaddedOut);
}

/// The output interleaved with the inputs in one [B, T, 4, H, D] buffer
/// (q, k, v, o): the spans overlap, so the kernel computes into a
/// temporary and copies; the inputs must not change.
TEST(HostApiCpuViews, OutputInterleavedWithInputs) {
  for (const char *variant : {"plain", "fox"})
    launchInPlace(variant, 2, 2, 29, [](int64_t B, int64_t H, int64_t T) {
      const int64_t D = 64;
      Placement pl;
      std::vector<int64_t> s = {T * 4 * H * D, D, 4 * H * D, 1};
      pl.inputs = {{0, s}, {H * D, s}, {2 * H * D, s}};
      int64_t packed = B * T * 4 * H * D;
      pl.inputs.push_back({packed, {}}); // the gate, contiguous after
      pl.output = {3 * H * D, s};
      pl.bufferFloats = packed + B * H * T;
      return pl;
    });
}

/// Heads-major outer dims transposed (a [H, B, T, D] buffer viewed as
/// BHSD), and an output whose innermost stride is 2 (written through a
/// temporary).
TEST(HostApiCpuViews, TransposedOuterDimsStridedOutput) {
  launchInPlace("rope", 3, 2, 19, [](int64_t B, int64_t H, int64_t T) {
    const int64_t D = 64;
    Placement pl;
    int64_t n = B * H * T * D;
    std::vector<int64_t> s = {T * D, B * T * D, D, 1};
    pl.inputs = {{0, s}, {n, s}, {2 * n, s}};
    pl.output = {3 * n + 1, {H * T * D * 2, T * D * 2, D * 2, 2}};
    pl.bufferFloats = 3 * n + 1 + 2 * n;
    return pl;
  });
}

} // namespace
} // namespace attn::hostapi
