//===- StripGpu.cpp - the sequential meaning of the GPU block program -----===//
//
// attn-block-strip-gpu: a block program in GPU form (register layouts,
// shared buffers, asynchronous copies, barriers) becomes
// the CPU form that attn-block-to-cpu lowers, by the sequential meaning
// every GPU op has in a race-free kernel: layouts dropped, shared buffers
// memref.alloc / subviews with a dynamic offset (so stages can be
// loop-carried), copies the loads they stand for, complete when issued,
// waits and barriers dropped. The op-by-op table:
// docs/block-program.md, "The CPU meaning of the GPU ops".
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Passes.h"
#include "attn/Dialect/AttnBlockDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNBLOCKSTRIPGPU
#include "attn/Codegen/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
namespace blk = mlir::attn_block;

namespace {

bool isBlockAttr(Attribute attr) {
  return attr && isa<blk::AttnBlockDialect>(attr.getDialect());
}

/// The CPU form of a type: tiles without their attn_block layout, shared
/// buffers as memrefs of the same shape (row-major, dynamic offset), async
/// tokens as i1. Other types are unchanged.
Type stripType(Type type) {
  MLIRContext *ctx = type.getContext();
  if (auto tile = dyn_cast<RankedTensorType>(type))
    return isBlockAttr(tile.getEncoding())
               ? RankedTensorType::get(tile.getShape(), tile.getElementType())
               : type;
  if (auto buf = dyn_cast<blk::SharedBufferType>(type)) {
    SmallVector<int64_t> strides(buf.getRank(), 1);
    for (int64_t d = buf.getRank() - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * buf.getShape()[d + 1];
    // A padded buffer and its windows share the row stride.
    if (auto pad = dyn_cast<blk::PaddedSharedLayoutAttr>(buf.getEncoding()))
      strides[0] = pad.getRowStride();
    return MemRefType::get(
        buf.getShape(), buf.getElementType(),
        StridedLayoutAttr::get(ctx, ShapedType::kDynamic, strides));
  }
  if (isa<blk::AsyncTokenType>(type))
    return IntegerType::get(ctx, 1);
  return type;
}

/// Rewrites the types of every value, function signature and typed
/// constant under `root` in place.
void stripTypes(Operation *root) {
  auto strip = [](TypeRange types) {
    return llvm::map_to_vector(types, stripType);
  };
  root->walk([&](Operation *op) {
    for (OpResult r : op->getResults())
      r.setType(stripType(r.getType()));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument a : block.getArguments())
          a.setType(stripType(a.getType()));
    if (auto fn = dyn_cast<FunctionOpInterface>(op))
      fn.setType(FunctionType::get(op->getContext(),
                                   strip(fn.getArgumentTypes()),
                                   strip(fn.getResultTypes())));
    // A constant tile's value carries the tile type, layout included.
    if (auto cst = dyn_cast<arith::ConstantOp>(op))
      if (auto dense = dyn_cast<DenseElementsAttr>(cst.getValue()))
        if (dense.getType() != cst.getType())
          cst.setValueAttr(dense.reshape(cast<ShapedType>(cst.getType())));
    op->removeAttr(blk::kNumWarpsAttrName);
    op->removeAttr(blk::kMinBlocksPerSmAttrName);
  });
}

/// Zero indices and the dims [0, rank) of a whole buffer.
std::pair<SmallVector<Value>, SmallVector<int64_t>>
wholeBuffer(OpBuilder &b, Location loc, Value buffer) {
  int64_t rank = cast<MemRefType>(buffer.getType()).getRank();
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  return {SmallVector<Value>(rank, c0), llvm::to_vector(llvm::seq(rank))};
}

/// `tile` written into all of `buffer`.
void storeWhole(OpBuilder &b, Location loc, Value tile, Value buffer) {
  auto [idx, dims] = wholeBuffer(b, loc, buffer);
  blk::StoreOp::create(b, loc, tile, buffer, idx, b.getDenseI64ArrayAttr(dims),
                       b.getUnitAttr());
}

/// A copy of the tile at `indices`/`dims` of `base` into `buffer`, done at
/// once: the load the copy stands for and a store of its tile.
void copyNow(OpBuilder &b, Location loc, Value base, ValueRange indices,
             ArrayRef<int64_t> dims, llvm::APFloat padding, Value buffer) {
  auto bufType = cast<MemRefType>(buffer.getType());
  auto tileType =
      RankedTensorType::get(bufType.getShape(), bufType.getElementType());
  Value tile = blk::LoadOp::create(
      b, loc, tileType, base, indices, b.getDenseI64ArrayAttr(dims),
      b.getF64FloatAttr(padding.convertToDouble()), /*in_bounds=*/nullptr);
  storeWhole(b, loc, tile, buffer);
}

Value completed(OpBuilder &b, Location loc) {
  return arith::ConstantIntOp::create(b, loc, 1, 1);
}

/// Replaces one GPU op (whose types stripTypes already rewrote) by its
/// sequential meaning; records the buffer ops it creates in `made`.
void stripOp(Operation *op, SmallVectorImpl<Operation *> &made) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  if (auto alloc = dyn_cast<blk::LocalAllocOp>(op)) {
    auto view = cast<MemRefType>(alloc.getType());
    SmallVector<int64_t> strides;
    int64_t offset;
    (void)view.getStridesAndOffset(strides, offset);
    // Padded rows: the buffer is the [rows, cols] corner of [rows, stride].
    SmallVector<int64_t> shape(view.getShape());
    const bool padded = view.getRank() == 2 && strides[0] != shape[1];
    if (padded)
      shape[1] = strides[0];
    auto mem = memref::AllocOp::create(
        b, loc, MemRefType::get(shape, view.getElementType()));
    Value whole = mem;
    if (padded) {
      auto corner = memref::SubViewOp::create(
          b, loc, mem, SmallVector<OpFoldResult>(2, b.getIndexAttr(0)),
          {b.getIndexAttr(shape[0]), b.getIndexAttr(view.getShape()[1])},
          SmallVector<OpFoldResult>(2, b.getIndexAttr(1)));
      made.push_back(corner);
      whole = corner;
    }
    auto cast = memref::CastOp::create(b, loc, view, whole);
    made.append({mem, cast});
    alloc.replaceAllUsesWith(cast.getResult());
  } else if (auto sub = dyn_cast<blk::LocalSubviewOp>(op)) {
    auto type = cast<MemRefType>(sub.getType());
    SmallVector<OpFoldResult> offsets = {sub.getRow(), sub.getCol()};
    SmallVector<OpFoldResult> sizes, strides(2, b.getIndexAttr(1));
    for (int64_t s : type.getShape())
      sizes.push_back(b.getIndexAttr(s));
    auto view = memref::SubViewOp::create(b, loc, type, sub.getBuffer(),
                                          offsets, sizes, strides);
    made.push_back(view);
    sub.replaceAllUsesWith(view.getResult());
  } else if (auto index = dyn_cast<blk::LocalIndexOp>(op)) {
    auto src = cast<MemRefType>(index.getBuffer().getType());
    SmallVector<OpFoldResult> offsets(src.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes, strides(src.getRank(), b.getIndexAttr(1));
    offsets[0] = index.getIndex();
    sizes.push_back(b.getIndexAttr(1));
    for (int64_t s : src.getShape().drop_front())
      sizes.push_back(b.getIndexAttr(s));
    auto view =
        memref::SubViewOp::create(b, loc, cast<MemRefType>(index.getType()),
                                  index.getBuffer(), offsets, sizes, strides);
    made.push_back(view);
    index.replaceAllUsesWith(view.getResult());
  } else if (auto load = dyn_cast<blk::LocalLoadOp>(op)) {
    auto [idx, dims] = wholeBuffer(b, loc, load.getBuffer());
    Value tile = blk::LoadOp::create(b, loc, load.getType(), load.getBuffer(),
                                     idx, b.getDenseI64ArrayAttr(dims),
                                     b.getF64FloatAttr(0.0), b.getUnitAttr());
    load.replaceAllUsesWith(tile);
  } else if (auto store = dyn_cast<blk::LocalStoreOp>(op)) {
    storeWhole(b, loc, store.getValue(), store.getBuffer());
  } else if (auto copy = dyn_cast<blk::AsyncCopyOp>(op)) {
    copyNow(b, loc, copy.getBase(), copy.getIndices(), copy.getDims(),
            copy.getPadding(), copy.getBuffer());
    copy.getToken().replaceAllUsesWith(completed(b, loc));
  } else if (auto add = dyn_cast<blk::AsyncStoreAddOp>(op)) {
    // The reducing store of the buffer's tile, done at issue.
    auto [idx, dims] = wholeBuffer(b, loc, add.getBuffer());
    auto bufType = cast<MemRefType>(add.getBuffer().getType());
    Value tile = blk::LoadOp::create(
        b, loc,
        RankedTensorType::get(bufType.getShape(), bufType.getElementType()),
        add.getBuffer(), idx, b.getDenseI64ArrayAttr(dims),
        b.getF64FloatAttr(0.0), b.getUnitAttr());
    blk::StoreOp::create(b, loc, tile, add.getBase(), add.getIndices(),
                         add.getDimsAttr(), /*in_bounds=*/nullptr,
                         /*add=*/b.getUnitAttr());
  } else if (auto group = dyn_cast<blk::AsyncCommitGroupOp>(op)) {
    group.getGroup().replaceAllUsesWith(completed(b, loc));
  } else if (auto cvt = dyn_cast<blk::ConvertLayoutOp>(op)) {
    cvt.replaceAllUsesWith(cvt.getInput());
  } else if (auto scan = dyn_cast<blk::ScanOp>(op)) {
    // The warps' totals need no buffer in one thread of control.
    scan.getScratchMutable().clear();
    return;
  } else if (auto reduce = dyn_cast<blk::ReduceOp>(op)) {
    // Nor do the warps' partial column results.
    reduce.getScratchMutable().clear();
    return;
  } else if (!isa<blk::AsyncWaitOp, blk::AsyncStoreWaitOp, blk::BarrierOp,
                  blk::FenceAsyncSharedOp, blk::GriddepWaitOp,
                  blk::LaunchDependentsOp>(op)) {
    return;
  }
  op->erase();
}

struct AttnBlockStripGpuPass
    : attn::impl::AttnBlockStripGpuBase<AttnBlockStripGpuPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    stripTypes(module);
    SmallVector<Operation *> ops, made;
    module.walk([&](Operation *op) {
      if (isa_and_nonnull<blk::AttnBlockDialect>(op->getDialect()))
        ops.push_back(op);
    });
    for (Operation *op : ops)
      stripOp(op, made);
    // Buffers nothing uses any more go.
    for (Operation *op : llvm::reverse(made))
      if (op->use_empty())
        op->erase();
  }
};

} // namespace
