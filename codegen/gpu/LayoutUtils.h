//===- LayoutUtils.h - which thread and register hold a tile element -*- C++
//-*-===//
//
// The register layouts of the block program (AttnBlockAttrs.td) as maps from
// a thread's registers to tile elements, in the spirit of Triton's
// emitIndices: register i of thread (warp w, lane l) holds the element at
// base(w, l) + offsets[i], the offsets compile-time constants. Every tile
// type of the GPU form converts to `numRegs` scalars of its element type in
// this order, and the lowering of each op relies on it. The map of each
// layout: docs/lowering-details.md, "codegen/gpu/LayoutUtils.h".
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_GPU_LAYOUTUTILS_H
#define ATTN_CODEGEN_GPU_LAYOUTUTILS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"

#include <string>

namespace mlir::attn_block {
class SharedBufferType;
class SliceLayoutAttr;
} // namespace mlir::attn_block

namespace mlir::attn::blockgpu {

/// Where each register of a thread sits in a tile (see the file comment).
struct RegisterMap {
  /// offsets[i][d]: register i's element minus the thread's base, dim d.
  SmallVector<SmallVector<int64_t, 2>> offsets;
  int64_t numRegs() const { return offsets.size(); }
};

/// The register map of `type` (a dot operand stored `transposed`: an A as
/// [K, M], a B as [N, K]), or an error naming the layout and why it is not
/// lowered.
FailureOr<RegisterMap> registerMap(RankedTensorType type, bool transposed,
                                   std::string &why);

/// Registers per thread of `type`, or -1 when its layout is not lowered.
int64_t numRegisters(RankedTensorType type);

/// The thread's base coordinates (one index per dim) for `type`.
SmallVector<Value> threadBase(OpBuilder &b, Location loc, RankedTensorType type,
                              bool transposed);

/// The mma layout (v2 or v3) a register layout derives from (itself, the parent
/// of a slice or dot_operand), or null.
Attribute mmaParent(Attribute layout);
/// Whether this thread is the one that stores (adds) the elements it holds
/// of a slice of an mma layout, which several threads hold: quad 0 of warp 0
/// for a column slice (each warp's quads hold every column), the first lane
/// of each quad for a row slice.
Value sliceOwner(OpBuilder &b, Location loc, attn_block::SliceLayoutAttr slice);
/// The row stride (elements) of a 2-D buffer whose rows lie as they are:
/// #attn_block.padded_shared's, else the row length (unswizzled).
int64_t rowStrideOf(attn_block::SharedBufferType buf);

/// gpu.thread_id x split into (warp, lane).
std::pair<Value, Value> warpAndLane(OpBuilder &b, Location loc);

/// Element offset of (row, col) in a shared tile of `rows` x `width`
/// laid out by
///  * #attn_block.shared<vec, perPhase, maxPhase> (row-major): vector
///    c / vec of row r is stored at vector (c / vec) ^ ((r / perPhase) %
///    maxPhase);
///  * #attn_block.padded_shared<rowStride>: r * rowStride + c;
///  * #attn_block.nvmma_shared<swizzleBytes = 128> (16-bit elements,
///    isSwizzle128): width / 64 panels of [rows][64], panel p at p * rows *
///    64, the 16-byte chunk c of row r at chunk c ^ (r % 8) -- wgmma's
///    128-byte swizzle, given panels on 1024-byte bounds (rows % 8 == 0).
Value swizzledOffset(OpBuilder &b, Location loc, Attribute sharedLayout,
                     Value row, Value col, int64_t width, int64_t rows);

/// The offsets swizzledOffset(rowT + dr, 8 chunkT + inVecT + dc) of one
/// thread's elements in a shared tile of `width` columns, for many
/// constant (dr, dc): rowT, chunkT < 2^chunkTBits and inVecT < inVecTMax
/// are the thread's values. Where the swizzle allows (#attn_block.shared
/// with vec = 8 and a power-of-two maxPhase >= 2^chunkTBits, perPhase *
/// maxPhase dividing dr, 2^chunkTBits dividing dc / 8, dc % 8 + inVecTMax
/// <= 8) the phase is the thread's and
///   chunk ^ phase = (k & ~(P - 1)) + ((chunkT + (k & (P - 1))) ^ phase)
/// (k = dc / 8, P = maxPhase), so each offset is one of P thread values
/// (made once) plus a constant: an access is a register + immediate, not
/// one address register per access, which LICM would keep live across a
/// loop. In #attn_block.padded_shared every offset is the thread's plus a
/// constant. Elsewhere it is swizzledOffset.
class SwizzledAddresses {
public:
  SwizzledAddresses(OpBuilder &b, Location loc, Attribute sharedLayout,
                    int64_t width, int64_t rows, Value rowT, Value chunkT,
                    int64_t chunkTBits, Value inVecT, int64_t inVecTMax);
  Value at(int64_t dr, int64_t dc);

private:
  OpBuilder &b;
  Location loc;
  Attribute layout;
  int64_t width, rows, chunkTBits, inVecTMax;
  Value rowT, chunkT, inVecT;
  /// The thread's swizzle phase; for #attn_block.padded_shared, its offset.
  Value phase;
  llvm::DenseMap<int64_t, Value> byLowChunk;
};

/// (rows, elements) after which the pattern of `sharedLayout` (a tile of
/// `width` columns) repeats: swizzledOffset(r + k * rows, c) =
/// swizzledOffset(r, c) + k * elements.
std::pair<int64_t, int64_t> swizzlePeriod(Attribute sharedLayout,
                                          int64_t width);

/// Whether `sharedLayout` is the 128-byte wgmma swizzle this backend
/// lowers for `elt` rows of `width` elements.
bool isSwizzle128(Attribute sharedLayout, Type elt, int64_t width);

/// Whether `sharedLayout` is #attn_block.nvmma_shared<swizzleBytes = 0>
/// (wgmma's interleaved layout, no swizzle) this backend lowers for `elt`
/// rows of `width` elements: 16-bit elements, rows of whole 16-byte
/// chunks; chunk k of row r at (k * rows + r) * 16 bytes, so that every
/// 8 rows of a chunk are one contiguous 8 x 16-byte core matrix.
bool isInterleaved(Attribute sharedLayout, Type elt, int64_t width);

/// Either wgmma layout above.
inline bool isWgmmaShared(Attribute sharedLayout, Type elt, int64_t width) {
  return isSwizzle128(sharedLayout, elt, width) ||
         isInterleaved(sharedLayout, elt, width);
}

} // namespace mlir::attn::blockgpu

#endif // ATTN_CODEGEN_GPU_LAYOUTUTILS_H
