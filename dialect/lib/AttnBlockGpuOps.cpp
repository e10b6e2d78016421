//===- AttnBlockGpuOps.cpp - shared memory, async copies, barriers --------===//
//
// Verifiers of the GPU-side block-program ops (AttnBlockGpuOps.td).
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/AttnBlockDialect.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::attn_block;

/// The tile type a shared buffer holds: its shape and element type.
static RankedTensorType tileOf(SharedBufferType buffer) {
  return RankedTensorType::get(buffer.getShape(), buffer.getElementType());
}

/// A tile and a shared buffer that exchange it: same shape and elements.
static LogicalResult verifyTileMatchesBuffer(Operation *op,
                                             RankedTensorType tile,
                                             SharedBufferType buffer) {
  if (tile.getShape() != buffer.getShape() ||
      tile.getElementType() != buffer.getElementType())
    return op->emitOpError()
           << "tile " << tile << " does not match buffer " << buffer;
  return verifyTileLayout([&] { return op->emitOpError(); }, tile);
}

LogicalResult LocalIndexOp::verify() {
  SharedBufferType in = getBuffer().getType(), out = getType();
  if (in.getRank() < 2 || out.getShape() != in.getShape().drop_front() ||
      out.getElementType() != in.getElementType() ||
      out.getEncoding() != in.getEncoding())
    return emitOpError() << "a stage of " << in << " is "
                         << "the buffer without its leading dim, not " << out;
  // A constant stage outside the buffer addresses shared memory of other
  // buffers; a dynamic one is the program's to keep in range.
  APInt c;
  if (matchPattern(getIndex(), m_ConstantInt(&c)) &&
      (c.isNegative() || c.getSExtValue() >= in.getShape()[0]))
    return emitOpError() << "stage " << c.getSExtValue() << " of " << in
                         << ", which has " << in.getShape()[0] << " stages";
  return success();
}

LogicalResult LocalSubviewOp::verify() {
  SharedBufferType in = getBuffer().getType(), out = getType();
  auto padded = dyn_cast<PaddedSharedLayoutAttr>(in.getEncoding());
  if (!padded || out.getEncoding() != in.getEncoding())
    return emitOpError() << "takes a window of a #attn_block.padded_shared "
                            "buffer into a buffer of the same layout (one row "
                            "stride), not "
                         << in << " -> " << out;
  if (out.getElementType() != in.getElementType())
    return emitOpError() << "a window of " << in << " has its elements, not "
                         << out;
  const Value offsets[2] = {getRow(), getCol()};
  const StringRef names[2] = {"row", "column"};
  for (int i = 0; i < 2; ++i) {
    Value offset = offsets[i];
    StringRef name = names[i];
    int64_t size = in.getShape()[i], window = out.getShape()[i];
    if (window > size)
      return emitOpError() << "window " << out << " has more " << name
                           << "s than " << in;
    APInt c;
    if (matchPattern(offset, m_ConstantInt(&c)) &&
        (c.getSExtValue() < 0 || c.getSExtValue() + window > size))
      return emitOpError() << "window at " << name << " " << c.getSExtValue()
                           << " of " << window << " " << name << "s leaves "
                           << in;
  }
  return success();
}

LogicalResult GriddepWaitOp::verify() {
  Operation *fn = (*this)->getParentWithTrait<OpTrait::IsIsolatedFromAbove>();
  if (!fn || !fn->hasAttr(kKernelAttrName))
    return emitOpError() << "orders a GPU kernel after the kernels it was "
                            "launched dependent on: it must be inside a "
                            "function marked '"
                         << kKernelAttrName << "'";
  return success();
}

LogicalResult LaunchDependentsOp::verify() {
  Operation *fn = (*this)->getParentWithTrait<OpTrait::IsIsolatedFromAbove>();
  if (!fn || !fn->hasAttr(kKernelAttrName))
    return emitOpError() << "lets the kernel after this one start early: it "
                            "must be inside a function marked '"
                         << kKernelAttrName << "'";
  return success();
}

LogicalResult LocalLoadOp::verify() {
  return verifyTileMatchesBuffer(*this, getType(), getBuffer().getType());
}

LogicalResult LocalStoreOp::verify() {
  return verifyTileMatchesBuffer(*this, getValue().getType(),
                                 getBuffer().getType());
}

LogicalResult AsyncCopyOp::verify() {
  SharedBufferType buffer = getBuffer().getType();
  // cp.async moves 4, 8 or 16 bytes per instruction: the rows must hold a
  // whole number of 4-byte pieces.
  int64_t rowBytes = buffer.getShape().back() *
                     buffer.getElementType().getIntOrFloatBitWidth() / 8;
  if (rowBytes % 4 != 0)
    return emitOpError() << "rows of " << buffer
                         << " are not a multiple of 4 bytes (cp.async)";
  return verifyTileAccess(*this, getBase().getType(), getIndices().size(),
                          getDims(), tileOf(buffer));
}

LogicalResult AsyncStoreAddOp::verify() {
  SharedBufferType buffer = getBuffer().getType();
  if (buffer.getRank() != 2 || !buffer.getElementType().isF32() ||
      getBase().getType().getElementType() != buffer.getElementType())
    return emitOpError() << "adds a 2-D f32 buffer into an f32 memref, got "
                         << buffer << " and " << getBase().getType();
  return verifyTileAccess(*this, getBase().getType(), getIndices().size(),
                          getDims(), tileOf(buffer));
}

LogicalResult ConvertLayoutOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getType());
  if (in.getShape() != out.getShape() ||
      in.getElementType() != out.getElementType())
    return emitOpError() << "converts the layout only: " << in << " and " << out
                         << " differ in shape or elements";
  if (failed(verifyTileLayout([&] { return emitOpError(); }, in)) ||
      failed(verifyTileLayout([&] { return emitOpError(); }, out)))
    return failure();
  return success();
}

OpFoldResult ConvertLayoutOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // convert(convert(x)) is one conversion from x's layout.
  if (auto inner = getInput().getDefiningOp<ConvertLayoutOp>()) {
    if (inner.getInput().getType() == getType())
      return inner.getInput();
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return {};
}
