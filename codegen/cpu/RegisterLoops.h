//===- RegisterLoops.h - register-resident loops of the CPU tiles -*- C++
//-*-===//
//
// Helpers for the loops whose accumulators live in registers (the dot's and
// the stencil's rows): laneChunks (power-of-two pieces of at most 64 lanes),
// rowsPerBlock / forRowBlocks (several rows of a narrow piece in one loop),
// forUnrolled (the reduction loop emitted unrolled). Why each:
// docs/lowering-details.md, "codegen/cpu/RegisterLoops.h".
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_CPU_REGISTERLOOPS_H
#define ATTN_CODEGEN_CPU_REGISTERLOOPS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace mlir::attn {

/// The widest piece: 8 AVX2 registers of f32.
constexpr int64_t kMaxChunkLanes = 64;

/// (offset, width) pieces covering [0, n): 64-lane pieces, then the
/// remainder's binary digits, widest first (74 -> 64, 8, 2).
inline llvm::SmallVector<std::pair<int64_t, int64_t>> laneChunks(int64_t n) {
  llvm::SmallVector<std::pair<int64_t, int64_t>> chunks;
  int64_t off = 0;
  for (; n - off >= kMaxChunkLanes; off += kMaxChunkLanes)
    chunks.push_back({off, kMaxChunkLanes});
  for (int64_t w = kMaxChunkLanes / 2; w >= 1; w /= 2)
    if (n - off >= w) {
      chunks.push_back({off, w});
      off += w;
    }
  return chunks;
}

/// Rows of a `w`-lane piece computed together: 64 lanes of accumulators
/// (8 ymm) in all, one row for a full piece, at most 8 rows (one vector
/// each) for the narrowest.
inline int64_t rowsPerBlock(int64_t w) {
  return std::clamp<int64_t>(kMaxChunkLanes / std::max<int64_t>(w, 8), 1, 8);
}

/// acc = block(builder, loc, firstRow, rows, acc) over rows [0, m) in
/// blocks of `r` rows (`rows` static): a loop over the full blocks, then
/// one block of the m % r rows left.
template <typename Block>
Value forRowBlocks(OpBuilder &b, Location loc, int64_t m, int64_t r, Value init,
                   Block block) {
  auto idx = [&](OpBuilder &ob, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(ob, loc, v);
  };
  int64_t full = m / r * r;
  Value acc = init;
  if (full == r) {
    acc = block(b, loc, idx(b, 0), r, acc);
  } else if (full > 0) {
    auto loop = scf::ForOp::create(
        b, loc, idx(b, 0), idx(b, full), idx(b, r), ValueRange{acc},
        [&](OpBuilder &lb, Location l, Value i0, ValueRange carried) {
          scf::YieldOp::create(lb, l, block(lb, l, i0, r, carried[0]));
        });
    acc = loop.getResult(0);
  }
  if (m > full)
    acc = block(b, loc, idx(b, full), m - full, acc);
  return acc;
}

/// accs = step(i, accs) for i in [0, n), n static: a loop of `factor`
/// copies of the step, then the n % factor left over, in order (the same
/// sums as the plain loop). `step(builder, loc, i, accs) -> accs`.
template <typename Step>
llvm::SmallVector<Value> forUnrolledN(OpBuilder &b, Location loc, int64_t n,
                                      int64_t factor, ValueRange init,
                                      Step step) {
  auto idx = [&](OpBuilder &ob, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(ob, loc, v);
  };
  int64_t main = n / factor * factor;
  llvm::SmallVector<Value> accs(init);
  if (main == factor) {
    // One round: no loop.
    for (int64_t i = 0; i < main; ++i)
      accs = step(b, loc, idx(b, i), ValueRange(accs));
  } else if (main > 0) {
    auto loop = scf::ForOp::create(
        b, loc, idx(b, 0), idx(b, main), idx(b, factor), accs,
        [&](OpBuilder &lb, Location l, Value i0, ValueRange carried) {
          llvm::SmallVector<Value> a(carried);
          for (int64_t u = 0; u < factor; ++u) {
            Value i =
                u == 0 ? i0 : arith::AddIOp::create(lb, l, i0, idx(lb, u));
            a = step(lb, l, i, ValueRange(a));
          }
          scf::YieldOp::create(lb, l, a);
        });
    accs.assign(loop.getResults().begin(), loop.getResults().end());
  }
  for (int64_t i = main; i < n; ++i)
    accs = step(b, loc, idx(b, i), ValueRange(accs));
  return accs;
}

/// The one-accumulator form of forUnrolledN: `step(builder, loc, i, acc)`.
template <typename Step>
Value forUnrolled(OpBuilder &b, Location loc, int64_t n, int64_t factor,
                  Value init, Step step) {
  return forUnrolledN(b, loc, n, factor, ValueRange{init},
                      [&](OpBuilder &ob, Location l, Value i,
                          ValueRange acc) -> llvm::SmallVector<Value> {
                        return {step(ob, l, i, acc[0])};
                      })
      .front();
}

} // namespace mlir::attn

#endif // ATTN_CODEGEN_CPU_REGISTERLOOPS_H
