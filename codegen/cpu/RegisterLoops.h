//===- RegisterLoops.h - register-resident loops of the CPU tiles -*- C++
//-*-===//
//
// Helpers for the loops whose accumulator lives in registers (the dot's and
// the stencil's rows).
//
// laneChunks: a tile row of n lanes is split into power-of-two vectors of
// at most 64 lanes. x86 legalizes a loop-carried vector<74xf32> or
// vector<84xf32> (the haloed MTA tiles) lane by lane: every step extracts
// and re-inserts each element through the stack; power-of-two pieces stay
// in ymm registers, and 64 lanes (8 ymm accumulators) leave registers for
// the operands.
//
// forUnrolled: the reduction loop over k (or the kernel taps) emitted
// already unrolled. The JIT runs LLVM without its loop unroller, whose
// full unrolling of every fixed-trip tile loop triples the compile time;
// these few loops are where unrolling pays.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_CPU_REGISTERLOOPS_H
#define ATTN_CODEGEN_CPU_REGISTERLOOPS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/SmallVector.h"

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

/// acc = step(i, acc) for i in [0, n), n static: a loop of `factor` copies
/// of the step, then the n % factor left over, in order (the same sums as
/// the plain loop). `step(builder, loc, i, acc) -> acc`.
template <typename Step>
Value forUnrolled(OpBuilder &b, Location loc, int64_t n, int64_t factor,
                  Value init, Step step) {
  auto idx = [&](OpBuilder &ob, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(ob, loc, v);
  };
  int64_t main = n / factor * factor;
  Value acc = init;
  if (main == factor) {
    // One round: no loop.
    for (int64_t i = 0; i < main; ++i)
      acc = step(b, loc, idx(b, i), acc);
  } else if (main > 0) {
    auto loop = scf::ForOp::create(
        b, loc, idx(b, 0), idx(b, main), idx(b, factor), ValueRange{acc},
        [&](OpBuilder &lb, Location l, Value i0, ValueRange carried) {
          Value a = carried[0];
          for (int64_t u = 0; u < factor; ++u) {
            Value i =
                u == 0 ? i0 : arith::AddIOp::create(lb, l, i0, idx(lb, u));
            a = step(lb, l, i, a);
          }
          scf::YieldOp::create(lb, l, a);
        });
    acc = loop.getResult(0);
  }
  for (int64_t i = main; i < n; ++i)
    acc = step(b, loc, idx(b, i), acc);
  return acc;
}

} // namespace mlir::attn

#endif // ATTN_CODEGEN_CPU_REGISTERLOOPS_H
