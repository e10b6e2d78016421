//===- PathTiles.h - PaTH's shape, indices and walk range -------*- C++ -*-===//
//
// The op's shape and constants, the program indices and the walk's range
// of PaTH's block kernels (PathToBlock.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PASSES_PATHTILES_H
#define ATTN_PASSES_PATHTILES_H

#include "TileBuilder.h"

namespace mlir::attn {

inline constexpr double kPathLog2e = 1.4426950408889634;

/// What PaTH's kernels know about the op.
struct PathShape {
  int64_t c, d, dv;
  double qScale;    ///< scale * log2(e), folded into q
  double gateScale; ///< factor of G_i - G_j in the base-2 logits
  MaskKind mask;
  int64_t window;
  /// The walk moves q~ through a chunk with one dot by the dense D x D
  /// matrix -W^T U (C D^2 MACs) when that is cheaper than the two low-rank
  /// dots by W^T and U (2 C^2 D MACs), i.e. when D < 2C.
  bool dense() const { return d < 2 * c; }
};

/// Program ids and the indices every kernel derives from them.
struct PathProgram {
  Value b, head, kvHead;
  Value pos0; ///< first position of this program's chunk
  Value row0; ///< its query row (pos0 - (S - T)); kernels 2 and 3
  Value chunk;
  Value off;        ///< S - T; kernels 2 and 3
  Value firstChunk; ///< the chunk holding the first query; kernels 2 and 3
};

/// Kernels 2 and 3's `p` moved to query chunk `chunk` (FlashRows::redo's
/// programs walk several).
inline PathProgram programAtChunk(TileBuilder &t, PathProgram p, Value chunk,
                                  int64_t c) {
  p.chunk = chunk;
  p.pos0 = arith::MulIOp::create(t.b, t.loc, chunk, t.idx(c));
  p.row0 = arith::SubIOp::create(t.b, t.loc, p.pos0, p.off);
  return p;
}

/// pid1 = b * heads + head; kernels 2 and 3 (`q` given) start at the chunk
/// holding the first query, S - T. `reversed` (the GPU form) numbers those
/// chunks heaviest first, the last chunk (the longest walk) at pid0 = 0.
inline PathProgram programIndices(TileBuilder &t, Value q, Value k, int64_t c,
                                  bool reversed = false) {
  OpBuilder &b = t.b;
  Location loc = t.loc;
  PathProgram p;
  Value pid0 = blk::ProgramIdOp::create(b, loc, 0);
  Value pid1 = blk::ProgramIdOp::create(b, loc, 1);
  Value hk = memref::DimOp::create(b, loc, k, 1);
  Value heads = q ? memref::DimOp::create(b, loc, q, 1).getResult() : hk;
  p.b = arith::DivUIOp::create(b, loc, pid1, heads);
  p.head = arith::RemUIOp::create(b, loc, pid1, heads);
  p.kvHead = q ? arith::DivUIOp::create(
                     b, loc, p.head, arith::DivUIOp::create(b, loc, heads, hk))
                     .getResult()
               : p.head;
  p.chunk = pid0;
  if (!q) {
    p.pos0 = arith::MulIOp::create(b, loc, pid0, t.idx(c));
    return p;
  }
  Value tLen = memref::DimOp::create(b, loc, q, 2);
  Value sLen = memref::DimOp::create(b, loc, k, 2);
  p.off = arith::SubIOp::create(b, loc, sLen, tLen);
  p.firstChunk = arith::DivUIOp::create(b, loc, p.off, t.idx(c));
  return programAtChunk(
      t, p,
      reversed ? t.heaviestFirst(
                     pid0, arith::CeilDivUIOp::create(b, loc, sLen, t.idx(c)))
               : arith::AddIOp::create(b, loc, p.firstChunk, pid0).getResult(),
      c);
}

/// The PathShape of `op` for chunks of `c` positions.
inline PathShape makePathShape(AttentionOp op, int64_t c) {
  PathShape ps;
  ps.c = c;
  ps.d = cast<ShapedType>(op.getK().getType()).getDimSize(3);
  ps.dv = cast<ShapedType>(op.getV().getType()).getDimSize(3);
  ps.qScale = op.getScaleOrDefault() * kPathLog2e;
  ps.gateScale =
      (op.getGateScaled() ? op.getScaleOrDefault() : 1.0) * kPathLog2e;
  ps.mask = op.getMask();
  ps.window = op.getWindow().value_or(0);
  return ps;
}

/// The first key chunk the right-to-left walk of the query chunk starting
/// at `pos0` visits: 0, or with a sliding window the chunk of the window's
/// first key. The walk runs over chunks [that, pos0 / C).
inline Value walkLowChunk(TileBuilder &t, const PathShape &ps, Value pos0) {
  Value c0 = t.idx(0);
  if (ps.mask != MaskKind::sliding_window)
    return c0;
  OpBuilder &b = t.b;
  Value first = arith::SubIOp::create(
      b, t.loc, arith::AddIOp::create(b, t.loc, pos0, t.idx(1)),
      t.idx(ps.window));
  return arith::DivSIOp::create(
      b, t.loc, arith::MaxSIOp::create(b, t.loc, first, c0), t.idx(ps.c));
}

} // namespace mlir::attn

#endif // ATTN_PASSES_PATHTILES_H
