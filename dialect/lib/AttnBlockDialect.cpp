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
  addOperations<
#define GET_OP_LIST
#include "attn/Dialect/AttnBlockOps.cpp.inc"
      >();
}

/// Shared by load and store: `dims` picks distinct memref dims, one per tile
/// dim, and there is one index per memref dim.
static LogicalResult verifyTileAccess(Operation *op, MemRefType mem,
                                      size_t numIndices, ArrayRef<int64_t> dims,
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
  return success();
}

LogicalResult LoadOp::verify() {
  return verifyTileAccess(*this, getBase().getType(), getIndices().size(),
                          getDims(), getType());
}

LogicalResult StoreOp::verify() {
  return verifyTileAccess(*this, getBase().getType(), getIndices().size(),
                          getDims(), getValue().getType());
}

LogicalResult DotOp::verify() {
  ArrayRef<int64_t> a = getA().getType().getShape(),
                    b = getB().getType().getShape(),
                    c = getAcc().getType().getShape();
  if (a.size() != 2 || b.size() != 2 || c.size() != 2)
    return emitOpError("operands must be 2-D tiles");
  int64_t bk = getTransposeB() ? b[1] : b[0],
          bn = getTransposeB() ? b[0] : b[1];
  if (a[1] != bk || c[0] != a[0] || c[1] != bn)
    return emitOpError() << "shapes do not compose: a " << getA().getType()
                         << ", b " << getB().getType()
                         << (getTransposeB() ? " (transposed)" : "") << ", acc "
                         << getAcc().getType();
  return success();
}

LogicalResult ReduceOp::verify() {
  auto in = getInput().getType(), out = getType();
  if (in.getRank() != 2 || out.getRank() != 1 ||
      out.getDimSize(0) != in.getDimSize(1 - getAxis()) ||
      in.getElementType() != out.getElementType())
    return emitOpError() << "reducing axis " << getAxis() << " of " << in
                         << " cannot give " << out;
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
