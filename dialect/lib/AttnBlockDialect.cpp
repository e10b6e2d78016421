//===- AttnBlockDialect.cpp - block program dialect -----------------------===//

#include "attn/Dialect/AttnBlockDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::attn_block;

#include "attn/Dialect/AttnBlockDialect.cpp.inc"
#include "attn/Dialect/AttnBlockEnums.cpp.inc"

void AttnBlockDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "attn/Dialect/AttnBlockOps.cpp.inc"
      >();
}

/// The warps a register layout spreads a tile over (slices and dot operands
/// through their parent); nothing for shared or no layout.
static std::optional<int64_t> layoutWarps(Attribute layout) {
  if (auto blocked = dyn_cast_or_null<BlockedLayoutAttr>(layout))
    return blocked.getNumWarps();
  if (auto mma = dyn_cast_or_null<MmaLayoutAttr>(layout))
    return mma.getNumWarps();
  if (auto slice = dyn_cast_or_null<SliceLayoutAttr>(layout))
    return layoutWarps(slice.getParent());
  if (auto operand = dyn_cast_or_null<DotOperandLayoutAttr>(layout))
    return layoutWarps(operand.getParent());
  return std::nullopt;
}

/// Every register tile of `region` is spread over the `warps` that run it:
/// a layout of other warps would leave some of its elements to no thread,
/// or give threads that do not exist.
static LogicalResult verifyRegionWarps(Operation *kernel, Region &region,
                                       int64_t warps) {
  auto check = [&](Value v, Operation *at) -> LogicalResult {
    auto tile = dyn_cast<RankedTensorType>(v.getType());
    std::optional<int64_t> n =
        tile ? layoutWarps(tile.getEncoding()) : std::nullopt;
    if (!n || *n == warps)
      return success();
    return at->emitOpError()
           << "tile " << tile << " is spread over " << *n
           << " warps, but the warps that run it are " << warps << " ("
           << kNumWarpsAttrName << " = "
           << kernel->getAttrOfType<IntegerAttr>(kNumWarpsAttrName).getInt()
           << " on the kernel)";
  };
  for (Block &block : region) {
    for (BlockArgument arg : block.getArguments())
      if (failed(check(arg, region.getParentOp())))
        return failure();
    for (Operation &op : block) {
      for (Value r : op.getResults())
        if (failed(check(r, &op)))
          return failure();
      for (Region &inner : op.getRegions())
        if (failed(verifyRegionWarps(kernel, inner, warps)))
          return failure();
    }
  }
  return success();
}

LogicalResult AttnBlockDialect::verifyOperationAttribute(Operation *op,
                                                         NamedAttribute attr) {
  if (attr.getName() == kKernelAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError()
             << "'" << kKernelAttrName << "' must be a unit attribute";
    return success();
  }
  if (attr.getName() == kNumWarpsAttrName) {
    auto n = dyn_cast<IntegerAttr>(attr.getValue());
    if (!n || n.getInt() < 1 || n.getInt() > 32)
      return op->emitError()
             << "'" << kNumWarpsAttrName << "' must be an integer in [1, 32]";
    for (Region &region : op->getRegions())
      if (failed(verifyRegionWarps(op, region, n.getInt())))
        return failure();
    return success();
  }
  if (attr.getName() == kMinBlocksPerSmAttrName) {
    auto n = dyn_cast<IntegerAttr>(attr.getValue());
    if (!n || n.getInt() < 1 || n.getInt() > 32)
      return op->emitError() << "'" << kMinBlocksPerSmAttrName
                             << "' must be an integer in [1, 32]";
    return success();
  }
  if (attr.getName() == kSharedBytesAttrName) {
    auto n = dyn_cast<IntegerAttr>(attr.getValue());
    if (!n || n.getInt() < 0)
      return op->emitError()
             << "'" << kSharedBytesAttrName << "' must be a byte count";
    return success();
  }
  return op->emitError() << "unknown attn_block attribute '"
                         << attr.getName().getValue() << "'";
}

LogicalResult mlir::attn_block::verifyTileAccess(Operation *op, MemRefType mem,
                                                 size_t numIndices,
                                                 ArrayRef<int64_t> dims,
                                                 RankedTensorType tile) {
  if (numIndices != static_cast<size_t>(mem.getRank()))
    return op->emitOpError() << "needs " << mem.getRank() << " indices for "
                             << mem << ", got " << numIndices;
  if (dims.size() != static_cast<size_t>(tile.getRank()))
    return op->emitOpError() << "'dims' must name one memref dim per tile dim ("
                             << tile.getRank() << "), got " << dims.size();
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d < 0 || d >= mem.getRank() || (i > 0 && d <= dims[i - 1]))
      return op->emitOpError("'dims' must be increasing memref dims");
  }
  if (!tile.hasStaticShape())
    return op->emitOpError("tiles must have a static shape");
  if (tile.getElementType() != mem.getElementType())
    return op->emitOpError()
           << "tile element type " << tile.getElementType()
           << " must match the memref's " << mem.getElementType();
  return verifyTileLayout([&] { return op->emitOpError(); }, tile);
}

LogicalResult LoadOp::verify() {
  return verifyTileAccess(*this, getBase().getType(), getIndices().size(),
                          getDims(), getType());
}

LogicalResult StoreOp::verify() {
  if (getAdd() && !getValue().getType().getElementType().isF32())
    return emitOpError("a reducing store ('add') takes f32 tiles, got ")
           << getValue().getType().getElementType();
  return verifyTileAccess(*this, getBase().getType(), getIndices().size(),
                          getDims(), getValue().getType());
}

LogicalResult DotOp::verify() {
  ArrayRef<int64_t> a = getA().getType().getShape(),
                    b = getB().getType().getShape(),
                    c = getAcc().getType().getShape();
  if (a.size() != 2 || b.size() != 2 || c.size() != 2)
    return emitOpError("operands must be 2-D tiles");
  int64_t am = getTransposeA() ? a[1] : a[0],
          ak = getTransposeA() ? a[0] : a[1];
  int64_t bk = getTransposeB() ? b[1] : b[0],
          bn = getTransposeB() ? b[0] : b[1];
  if (ak != bk || c[0] != am || c[1] != bn)
    return emitOpError() << "shapes do not compose: a " << getA().getType()
                         << (getTransposeA() ? " (transposed)" : "") << ", b "
                         << getB().getType()
                         << (getTransposeB() ? " (transposed)" : "") << ", acc "
                         << getAcc().getType();
  if (std::optional<ArrayRef<int64_t>> band = getBBand())
    if (band->size() != 2 || (*band)[0] > (*band)[1])
      return emitOpError("b_band must be [lo, hi] with lo <= hi");
  return verifyDotLayouts();
}

/// With an mma accumulator the operands are that mma's dot_operand layouts;
/// wgmma (version 3) reads B, and may read A, from shared memory: such an
/// operand is a tile in an nvmma_shared layout (a local_load the backend
/// turns into a matrix descriptor, not into register loads).
LogicalResult DotOp::verifyDotLayouts() {
  for (Value v : {getA(), getB(), getAcc()})
    if (failed(verifyTileLayout([&] { return emitOpError(); },
                                cast<RankedTensorType>(v.getType()))))
      return failure();
  auto mma = dyn_cast_or_null<MmaLayoutAttr>(getAcc().getType().getEncoding());
  if (!mma)
    return success();
  if (getResult().getType().getEncoding() != mma)
    return emitOpError("result must have the accumulator's layout");
  bool wgmma = mma.getVersion() == 3;
  for (auto [idx, v] : llvm::enumerate(ValueRange{getA(), getB()})) {
    Attribute enc = cast<RankedTensorType>(v.getType()).getEncoding();
    if (wgmma && isa_and_nonnull<NvmmaSharedLayoutAttr>(enc))
      continue;
    auto op = dyn_cast_or_null<DotOperandLayoutAttr>(enc);
    if (op && op.getParent() == Attribute(mma) &&
        op.getOpIdx() == static_cast<int64_t>(idx))
      continue;
    if (wgmma && idx == 1)
      return emitOpError()
             << "operand b of a wgmma accumulator must be a "
                "tile in shared memory (#attn_block.nvmma_shared)";
    return emitOpError() << "operand " << (idx ? "b" : "a")
                         << " of an mma accumulator must have layout "
                            "#attn_block.dot_operand<opIdx = "
                         << idx << ", parent = " << mma << ", ...>"
                         << (wgmma ? " or #attn_block.nvmma_shared" : "");
  }
  return success();
}

LogicalResult ReduceOp::verify() {
  auto in = getInput().getType(), out = getType();
  if (in.getRank() != 2 || out.getRank() != 1 ||
      out.getDimSize(0) != in.getDimSize(1 - getAxis()) ||
      in.getElementType() != out.getElementType())
    return emitOpError() << "reducing axis " << getAxis() << " of " << in
                         << " cannot give " << out;
  if (Value scratch = getScratch()) {
    auto buf = cast<SharedBufferType>(scratch.getType());
    if (buf.getRank() != 2 || buf.getElementType() != in.getElementType() ||
        buf.getShape()[1] != out.getDimSize(0))
      return emitOpError() << "scratch " << buf << " must be [warps, "
                           << out.getDimSize(0) << "] of "
                           << in.getElementType();
  }
  return success();
}

LogicalResult FoldOp::verify() {
  auto in = getInput().getType(), out = getType();
  int64_t w = getWidth();
  if (in.getRank() != 2 || out.getRank() != 2 ||
      out.getDimSize(0) != in.getDimSize(0) || out.getDimSize(1) != w ||
      in.getDimSize(1) % w != 0 || in.getElementType() != out.getElementType())
    return emitOpError() << "folding " << in << " into blocks of " << w
                         << " columns cannot give " << out;
  if (in.getEncoding() != out.getEncoding())
    return emitOpError() << "input and result must have the same layout, got "
                         << in.getEncoding() << " and " << out.getEncoding();
  return success();
}

LogicalResult ScanOp::verify() {
  RankedTensorType in = getInput().getType();
  if (in.getRank() != 1)
    return emitOpError() << "scans a 1-D tile, got " << in;
  if (failed(verifyTileLayout([&] { return emitOpError(); }, in)))
    return failure();
  int64_t warps = 1;
  if (auto blocked = dyn_cast_or_null<BlockedLayoutAttr>(in.getEncoding()))
    warps = blocked.getNumWarps();
  Value scratch = getScratch();
  if (!scratch) {
    if (warps > 1)
      return emitOpError() << "a tile spread over " << warps
                           << " warps needs a scratch buffer for the warps' "
                              "totals: scratch(%buf : !attn_block.smem<"
                           << warps << "x" << in.getElementType() << ", ...>)";
    return success();
  }
  auto buffer = cast<SharedBufferType>(scratch.getType());
  if (!in.getEncoding())
    return emitOpError() << "a scratch buffer is for a tile in a register "
                            "layout, got "
                         << in;
  if (buffer.getRank() != 1 || buffer.getShape()[0] < warps ||
      buffer.getElementType() != in.getElementType())
    return emitOpError() << "scratch " << buffer << " must be a 1-D buffer of "
                         << in.getElementType() << " with at least the "
                         << warps << " warps of " << in.getEncoding()
                         << " elements";
  return success();
}

LogicalResult BroadcastOp::verify() {
  auto in = getInput().getType(), out = getType();
  if (in.getRank() != 1 || out.getRank() != 2 ||
      out.getDimSize(1 - getAxis()) != in.getDimSize(0) ||
      in.getElementType() != out.getElementType())
    return emitOpError() << "broadcasting " << in << " along axis " << getAxis()
                         << " cannot give " << out;
  return success();
}

LogicalResult RopeOp::verify() {
  auto in = getInput().getType(), cos = getCos().getType(),
       sin = getSin().getType();
  if (!cos.hasStaticShape())
    return emitOpError() << "cos/sin tiles must have a static shape, got "
                         << cos;
  if (cos != sin)
    return emitOpError() << "cos and sin tiles must have one type, got " << cos
                         << " and " << sin;
  if (cos.getDimSize(0) != in.getDimSize(0) ||
      2 * cos.getDimSize(1) > in.getDimSize(1))
    return emitOpError() << "cos/sin tiles " << cos << " must be [rows, R/2] "
                         << "with rows and R <= D of the input " << in;
  return success();
}

LogicalResult StencilOp::verify() {
  auto in = getInput().getType(), kernel = getKernel().getType(),
       out = getType();
  if (!in.hasStaticShape() || !kernel.hasStaticShape() || !out.hasStaticShape())
    return emitOpError("tiles must have a static shape");
  if (in.getDimSize(0) != out.getDimSize(0) + kernel.getDimSize(0) - 1 ||
      in.getDimSize(1) != out.getDimSize(1) + kernel.getDimSize(1) - 1)
    return emitOpError() << "input " << in << " must be the result " << out
                         << " plus the kernel " << kernel
                         << " minus one in each dim";
  return success();
}

//===----------------------------------------------------------------------===//
// Ops added for PaTH
//===----------------------------------------------------------------------===//

/// Shared by extract_row and insert_row: `row` is one row of `tile`, and a
/// constant `index` lies inside it.
static LogicalResult verifyRowAccess(Operation *op, RankedTensorType tile,
                                     RankedTensorType row, Value index) {
  if (tile.getRank() != 2 || row.getRank() != 1 ||
      tile.getDimSize(1) != row.getDimSize(0) ||
      tile.getElementType() != row.getElementType())
    return op->emitOpError()
           << "a row of " << tile << " must be "
           << RankedTensorType::get({tile.getRank() == 2 ? tile.getDimSize(1)
                                                         : tile.getDimSize(0)},
                                    tile.getElementType())
           << ", got " << row;
  APInt c;
  if (matchPattern(index, m_ConstantInt(&c)) &&
      (c.isNegative() || c.getSExtValue() >= tile.getDimSize(0)))
    return op->emitOpError()
           << "row index " << c.getSExtValue() << " is outside the "
           << tile.getDimSize(0) << " rows of " << tile;
  return success();
}

LogicalResult ExtractRowOp::verify() {
  return verifyRowAccess(*this, getTile().getType(), getType(), getIndex());
}

LogicalResult InsertRowOp::verify() {
  return verifyRowAccess(*this, getDest().getType(), getRow().getType(),
                         getIndex());
}

#define GET_OP_CLASSES
#include "attn/Dialect/AttnBlockOps.cpp.inc"
