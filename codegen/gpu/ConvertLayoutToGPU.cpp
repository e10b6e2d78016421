//===- ConvertLayoutToGPU.cpp - layout conversions between registers ------===//
//
// convert_layout between two layouts whose register maps and thread bases
// agree moves nothing: the m16n8k16 accumulator of [M, N] (16-bit after
// truncf) and the A operand of [M, N] hold the same elements in the same
// registers (LayoutUtils.h), so P goes to P V without shared memory.
// Conversions that move elements between threads (through shared memory)
// are not lowered yet and are refused.
//
//===----------------------------------------------------------------------===//

#include "BlockToGPU.h"
#include "LayoutUtils.h"

#include "attn/Dialect/AttnBlockDialect.h"

using namespace mlir;
using namespace mlir::attn::blockgpu;
namespace blk = mlir::attn_block;

namespace {

/// Whether `from` -> `to` keeps every element in its thread and register.
bool sameRegisters(RankedTensorType from, RankedTensorType to) {
  std::string why;
  auto a = registerMap(from, false, why);
  auto b = registerMap(to, false, why);
  if (failed(a) || failed(b) || a->offsets != b->offsets)
    return false;
  // Thread bases: an mma tile and its A operand both start at row
  // 16 * mt * warp + lane / 4, column 2 * (lane % 4).
  auto isMmaOrA = [](Attribute e) {
    if (isa<blk::MmaLayoutAttr>(e))
      return true;
    auto d = dyn_cast<blk::DotOperandLayoutAttr>(e);
    return d && d.getOpIdx() == 0;
  };
  return isMmaOrA(from.getEncoding()) && isMmaOrA(to.getEncoding()) &&
         mmaParent(from.getEncoding()) == mmaParent(to.getEncoding());
}

struct ConvertInRegisters : OpConversionPattern<blk::ConvertLayoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::ConvertLayoutOp op,
                                OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    auto from = cast<RankedTensorType>(op.getInput().getType());
    auto to = cast<RankedTensorType>(op.getType());
    if (!sameRegisters(from, to))
      return rw.notifyMatchFailure(op, "moves elements between threads");
    rw.replaceOpWithMultiple(op, {adaptor.getInput()});
    return success();
  }
};

} // namespace

bool mlir::attn::blockgpu::isRegisterIdentity(RankedTensorType from,
                                              RankedTensorType to) {
  return sameRegisters(from, to);
}

void mlir::attn::blockgpu::populateConvertLayoutPatterns(
    BlockTypeConverter &tc, RewritePatternSet &patterns) {
  patterns.add<ConvertInRegisters>(tc, patterns.getContext());
}
