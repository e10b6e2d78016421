//===- AttnBlockDialect.h - block program dialect ---------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTNBLOCKDIALECT_H
#define ATTN_DIALECT_ATTNBLOCKDIALECT_H

#include "attn/Dialect/AttnDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "attn/Dialect/AttnBlockDialect.h.inc"
#include "attn/Dialect/AttnBlockEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/AttnBlockAttrs.h.inc"
#define GET_TYPEDEF_CLASSES
#include "attn/Dialect/AttnBlockTypes.h.inc"

#define GET_OP_CLASSES
#include "attn/Dialect/AttnBlockOps.h.inc"

namespace mlir::attn_block {

/// Whether `attr` is one of the register layouts a tile's tensor type may
/// carry as its encoding (blocked, mma, dot_operand, slice).
bool isTileLayout(Attribute attr);

/// Checks that `tile`'s encoding, if any, is a register layout of the
/// tile's rank (a slice of rank r - 1 of a rank-r parent, an mma or
/// dot_operand layout of a 2-D tile) or a shared-memory layout (a tile that
/// an op such as wgmma reads in place from shared memory).
LogicalResult verifyTileLayout(function_ref<InFlightDiagnostic()> emitError,
                               RankedTensorType tile);

/// Shared by the ops that move a tile between memory and a tile or a shared
/// buffer (load, store, async_copy): one index per memref dim,
/// `dims` distinct increasing memref dims (one per tile dim), static tile,
/// matching element types, a register layout of the tile's rank if any.
LogicalResult verifyTileAccess(Operation *op, MemRefType mem, size_t numIndices,
                               ArrayRef<int64_t> dims, RankedTensorType tile);

/// The attribute on a kernel naming its warps per block.
constexpr llvm::StringLiteral kNumWarpsAttrName = "attn_block.num_warps";
/// Bytes of dynamic shared memory a lowered kernel's buffers take.
constexpr llvm::StringLiteral kSharedBytesAttrName = "attn_block.shared_bytes";
/// Blocks per SM a GPU kernel asks the register allocator to fit (ptxas'
/// .minnctapersm, nvvm.minctasm once lowered), when it sets one.
constexpr llvm::StringLiteral kMinBlocksPerSmAttrName =
    "attn_block.min_blocks_per_sm";
/// The unit attribute marking a block-program kernel function.
constexpr llvm::StringLiteral kKernelAttrName = "attn_block.kernel";

} // namespace mlir::attn_block

#endif // ATTN_DIALECT_ATTNBLOCKDIALECT_H
