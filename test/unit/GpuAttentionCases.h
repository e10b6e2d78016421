//===- GpuAttentionCases.h - attn.attention cases for the GPU tests -*- C++
//-*-===//
//
// One attn.attention case of the GPU tests (GpuAttentionTest.cpp,
// GpuTrainingTest.cpp): its program, and fresh random inputs rounded as the
// kernels take them with the fp64 oracle's output on the same values.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_UNIT_GPUATTENTIONCASES_H
#define ATTN_TEST_UNIT_GPUATTENTIONCASES_H

#include "ParsedModule.h"
#include "ProgramOracle.h"
#include "attn/Dialect/AttnDialect.h"
#include "attn/Runtime.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

namespace attn::gpu_test {

using attn::DType;
using attn::HostArray;
using attn::ref::Tensor;

struct Case {
  std::string variant; // plain | rope | fox | rope_fox
  int64_t B, H, Hk, T, D;
  DType dtype;
  // "" (causal), "mask none", "mask sliding_window window 100".
  std::string mask = "";
  std::string ropeAttrs = ""; // after rope(theta): style, dim, offsets
  std::string gateAttrs = ""; // after gate(%g): "scaled"
  std::string scale = "";     // "scale 1.000000e-01"
  int64_t Dv = 0;             // v's head dim (0: D)
  double fLo = 0.9;           // forget gates f in (fLo, 1)
  int64_t S = 0;              // keys (0: T); S > T: queries are the last T
  bool packed = false; // cu_seqlens: random cuts of T (RandomSpec::sequences)
};

inline void PrintTo(const Case &c, std::ostream *os) {
  *os << c.variant << " B=" << c.B << " H=" << c.H << " Hk=" << c.Hk
      << " T=" << c.T << " D=" << c.D
      << (c.dtype == DType::F16 ? " f16" : " bf16")
      << (c.mask.empty() ? "" : " " + c.mask)
      << (c.ropeAttrs.empty() ? "" : " " + c.ropeAttrs)
      << (c.gateAttrs.empty() ? "" : " " + c.gateAttrs)
      << (c.scale.empty() ? "" : " " + c.scale)
      << (c.Dv ? " Dv=" + std::to_string(c.Dv) : "")
      << (c.fLo != 0.9 ? " f>" + std::to_string(c.fLo) : "")
      << (c.S ? " S=" + std::to_string(c.S) : "")
      << (c.packed ? " packed" : "");
}

/// The last `t` rows (dim 2) of a [B, H, S, D] tensor.
inline Tensor lastRows(const Tensor &x, int64_t t) {
  const int64_t b = x.dim(0), h = x.dim(1), s = x.dim(2), d = x.dim(3);
  std::vector<double> data;
  data.reserve(b * h * t * d);
  for (int64_t bh = 0; bh < b * h; ++bh)
    data.insert(data.end(), x.data.begin() + (bh * s + s - t) * d,
                x.data.begin() + (bh * s + s) * d);
  return Tensor({b, h, t, d}, std::move(data));
}

inline std::string programFor(const Case &c) {
  std::string e = c.dtype == DType::F16 ? "f16" : "bf16";
  const int64_t dv = c.Dv ? c.Dv : c.D;
  auto t4 = [&](int64_t h, int64_t d) {
    return llvm::formatv("tensor<?x{0}x?x{1}x{2}>", h, d, e).str();
  };
  auto opt = [](const std::string &x) { return x.empty() ? x : " " + x; };
  bool gate = c.variant == "fox" || c.variant == "rope_fox";
  bool rope = c.variant == "rope" || c.variant == "rope_fox";
  std::string gt = llvm::formatv("tensor<?x{0}x?xf32>", c.H).str();
  std::string args = "%q: " + t4(c.H, c.D) + ", %k: " + t4(c.Hk, c.D) +
                     ", %v: " + t4(c.Hk, dv) + (gate ? ", %g: " + gt : "");
  std::string types = t4(c.H, c.D) + ", " + t4(c.Hk, c.D) + ", " +
                      t4(c.Hk, dv) + (gate ? ", " + gt : "");
  std::string out = t4(c.H, dv);
  if (c.packed) {
    args += ", %cu: tensor<?xi32>";
    types += ", tensor<?xi32>";
  }
  return "func.func @main(" + args + ") -> " + out +
         " {\n  %o = attn.attention %q, %k, %v" +
         (rope ? " rope(1.000000e+04)" + opt(c.ropeAttrs) : "") +
         (gate ? " gate(%g)" + opt(c.gateAttrs) : "") +
         (c.packed ? " cu_seqlens(%cu)" : "") + opt(c.mask) + opt(c.scale) +
         " : (" + types + ") -> " + out + "\n  return %o : " + out + "\n}\n";
}

using Parsed = attn::test_util::ParsedModule;

/// Random inputs for `c` from `seed`, as the kernels take them (`host`:
/// bf16/f16 tensors, f32 gates), and the oracle's output on the same
/// rounded values (`ref`).
inline void randomCase(const Case &c, Parsed &p, uint64_t seed,
                       std::vector<HostArray> &host, Tensor &ref) {
  attn::ref::RandomSpec spec;
  spec.batch = c.B;
  spec.heads = c.H;
  spec.seqLen = c.S ? c.S : c.T;
  spec.fLo = c.fLo;
  spec.seed = seed;
  auto ins = attn::ref::randomInputs(p.main(), spec);
  ASSERT_TRUE(static_cast<bool>(ins)) << llvm::toString(ins.takeError());
  // T < S: q keeps the last T positions of the S drawn; FoX's g is per key
  // position ([B, H, S], read at the queries' positions S - T + i) and RoPE
  // has no inputs, so q is the only input cut.
  if (c.S && c.S != c.T)
    (*ins)[0] = lastRows((*ins)[0], c.T);
  std::vector<Tensor> rounded;
  for (auto [i, t] : llvm::enumerate(*ins)) {
    // The offsets (packed: the last argument) in cu_seqlens' i32.
    DType dt = t.shape.size() == 4                ? c.dtype
               : c.packed && i + 1 == ins->size() ? DType::I32
                                                  : DType::F32;
    host.push_back(attn::ref::toHost(t, dt));
    auto r = attn::ref::fromHost(host.back());
    ASSERT_TRUE(static_cast<bool>(r));
    rounded.push_back(std::move(*r));
  }
  auto out = attn::ref::evaluate(p.main(), rounded);
  ASSERT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
  ref = std::move(*out);
}

} // namespace attn::gpu_test

#endif // ATTN_TEST_UNIT_GPUATTENTIONCASES_H
