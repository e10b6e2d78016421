//===- BlockToGPU.h - attn-block-to-gpu conversion patterns -----*- C++ -*-===//
//
// attn-block-to-gpu lowers a GPU-form block kernel (FlashToBlockGpu.cpp)
// op by op. Its type converter turns a tile in a register layout into the
// scalars a thread holds (1:N, in LayoutUtils.h's order), a shared buffer
// into (the workgroup memref of its allocation, the element offset of this
// stage), an async token into nvgpu's. One file per op family registers its
// patterns here.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_GPU_BLOCKTOGPU_H
#define ATTN_CODEGEN_GPU_BLOCKTOGPU_H

#include "attn/Codegen/GpuOccupancy.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::attn_block {
class AsyncCopyOp;
class AsyncStoreAddOp;
class DotOp;
class LocalStoreOp;
class LocalSubviewOp;
class ReduceOp;
class LoadOp;
class ScanOp;
class StoreOp;
} // namespace mlir::attn_block

namespace mlir::tensor {
class ExtractOp;
} // namespace mlir::tensor

namespace mlir::attn::blockgpu {

/// Tiles -> per-thread registers, shared buffers -> (memref, offset).
class BlockTypeConverter : public TypeConverter {
public:
  explicit BlockTypeConverter(MLIRContext *ctx);
};

/// The converted scalar operands of a 1:N adaptor (index operands convert
/// 1:1): the first value of each range.
inline SmallVector<Value> singleValues(ArrayRef<ValueRange> ranges) {
  SmallVector<Value> out;
  for (ValueRange v : ranges)
    out.push_back(v.front());
  return out;
}

/// `x` as printed, for diagnostics that name a type or attribute.
template <typename T> std::string str(const T &x) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << x;
  return s;
}

/// Byte offset of each local_alloc in the dynamic shared memory; with
/// `alignedBase` (a kernel with #attn_block.nvmma_shared buffers) the
/// offsets count from the first kSharedAlign-byte bound of it.
struct SharedOffsets {
  llvm::DenseMap<Operation *, int64_t> bytes;
  bool alignedBase = false;
};
/// The async_copy ops whose first tile row is provably not negative
/// (integer range analysis of the kernel: loop induction variables from a
/// non-negative start, memref dims, sums of those). Their chunks need no
/// lower row bound: the block program may start a copy above row 0 (a
/// halo), and where it cannot the check costs a subtraction per chunk.
using NonNegativeRowCopies = llvm::DenseSet<Operation *>;
NonNegativeRowCopies findNonNegativeRowCopies(Operation *kernel);

/// The alignment of wgmma's 128-byte swizzle pattern, which the launch plan
/// reserves as slack.
constexpr int64_t kSharedAlign = gpu_occupancy::kWgmmaAlign;

/// ElementwiseToGPU.cpp: arith/math ops on tiles, tensor.splat, iota,
/// program_id.
void populateElementwisePatterns(BlockTypeConverter &tc,
                                 RewritePatternSet &patterns);
/// ReduceToGPU.cpp: reduce (in-thread, then xor shuffles over the lanes of
/// a row) and broadcast.
void populateReducePatterns(BlockTypeConverter &tc,
                            RewritePatternSet &patterns);
/// Why ReduceToGPU.cpp cannot lower `op`, or "".
std::string unsupportedReason(attn_block::ReduceOp op);
/// ScanToGPU.cpp: scan of a 1-D blocked tile (in-thread sums, a warp scan
/// by shuffles, the warps' totals through the scan's scratch buffer), and
/// the extract of its last element.
void populateScanPatterns(BlockTypeConverter &tc, RewritePatternSet &patterns);
/// Why ScanToGPU.cpp cannot lower `op`, or "".
std::string unsupportedReason(attn_block::ScanOp op);
/// Why ScanToGPU.cpp cannot lower `op` (an element of a register tile), or
/// "".
std::string unsupportedReason(tensor::ExtractOp op);
/// ConvertLayoutToGPU.cpp: convert_layout between layouts holding the same
/// registers.
void populateConvertLayoutPatterns(BlockTypeConverter &tc,
                                   RewritePatternSet &patterns);
/// Whether convert_layout `from` -> `to` keeps every register in place
/// (the conversions ConvertLayoutToGPU.cpp lowers).
bool isRegisterIdentity(RankedTensorType from, RankedTensorType to);
/// AsyncCopyToGPU.cpp: local_alloc / local_index, async_copy (cp.async,
/// zero fill), commit / wait, barrier.
void populateAsyncCopyPatterns(BlockTypeConverter &tc,
                               RewritePatternSet &patterns,
                               const SharedOffsets &offsets,
                               const NonNegativeRowCopies &nonNegativeRows,
                               int64_t numThreads);
/// Why `op` cannot become cp.async copies by `threads` threads, or "".
std::string unsupportedReason(attn_block::AsyncCopyOp op, int64_t threads);
/// BulkStoreToGPU.cpp: async_store_add (one cp.reduce.async.bulk per row
/// of the tile, from the row's thread), async_store_wait.
void populateBulkStorePatterns(BlockTypeConverter &tc,
                               RewritePatternSet &patterns, int64_t numThreads);
/// Why `op` cannot become bulk reductions, or "".
std::string unsupportedReason(attn_block::AsyncStoreAddOp op);
/// DotToMmaSync.cpp: local_load into dot operands (ldmatrix), dot
/// (m16n8k16 mma.sync).
/// `transposedLoads`: the local_loads that feed the a of a transpose_a dot
/// or the b of a transpose_b dot (their tiles are stored [K, M], [N, K]).
void populateDotPatterns(BlockTypeConverter &tc, RewritePatternSet &patterns,
                         const llvm::DenseSet<Operation *> &transposedLoads);
/// DotToWgmma.cpp: local_load of an #attn_block.nvmma_shared tile (the
/// buffer itself, for a descriptor), dot with a wgmma accumulator (mma
/// version 3: fence, m64nNk16 per k16 step, commit, wait),
/// fence_async_shared.
void populateWgmmaPatterns(BlockTypeConverter &tc, RewritePatternSet &patterns);
/// Why DotToWgmma.cpp cannot lower `op` (a dot with an mma version 3
/// accumulator), or "".
std::string unsupportedWgmmaReason(attn_block::DotOp op);
/// Why `op` cannot be lowered by LoadStoreToGPU.cpp, or "".
std::string unsupportedReason(attn_block::StoreOp op);
/// LocalStoreToGPU.cpp: local_store of mma tiles into padded shared
/// buffers; why `op` is not lowered, or "" (and likewise for a
/// local_subview, whose lowering is in AsyncCopyToGPU.cpp).
void populateLocalStorePatterns(BlockTypeConverter &tc,
                                RewritePatternSet &patterns);
std::string unsupportedReason(attn_block::LocalStoreOp op);
std::string unsupportedReason(attn_block::LocalSubviewOp op);
/// Why `op` cannot be lowered by LoadStoreToGPU.cpp, or "".
std::string unsupportedReason(attn_block::LoadOp op);
/// LoadStoreToGPU.cpp: store of a tile in a register layout (bounds-masked);
/// load of a slice tile (a register per element, bounds-masked).
void populateLoadStorePatterns(BlockTypeConverter &tc,
                               RewritePatternSet &patterns);

/// SinkOperandLoads.cpp: after the conversion, every ldmatrix (and the
/// register ops unpacking it) moves down to right before its first use,
/// never past a memory write or barrier: a dot then holds one k-slice of
/// its operand tiles at a time instead of the whole tiles.
void sinkOperandLoads(Operation *kernel);

/// A pair of 16-bit values as nvvm.mma.sync takes them: vector<2xf16>, or
/// bf16 pairs bit-cast to i32.
Value mmaOperand(OpBuilder &b, Location loc, Value pair);

} // namespace mlir::attn::blockgpu

#endif // ATTN_CODEGEN_GPU_BLOCKTOGPU_H
