//===- ConvertLayoutToGPU.cpp - layout conversions between registers ------===//
//
// convert_layout between two layouts whose register maps and thread bases
// agree moves nothing: the m16n8k16 accumulator of [M, N] (16-bit after
// truncf) and the A operand of [M, N] hold the same elements in the same
// registers (LayoutUtils.h), so P goes to P V without shared memory; the
// same holds for wgmma's accumulator of m64nNk16 and the register A of
// m64nN'k16, and for the row slices of two mma layouts (the m, l of S and
// the rescaling of O when they come from instructions of different N).
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
  // 16 * mt * warp + lane / 4, column 2 * (lane % 4); so does the row
  // slice of one (row only).
  auto isMmaOrA = [](Attribute e) {
    if (isa<blk::MmaLayoutAttr>(e))
      return true;
    auto d = dyn_cast<blk::DotOperandLayoutAttr>(e);
    return d && d.getOpIdx() == 0;
  };
  auto isRowSlice = [](Attribute e) {
    auto s = dyn_cast<blk::SliceLayoutAttr>(e);
    return s && s.getDim() == 1;
  };
  // Per thread, mma layouts differ only in their version and warps
  // (instrShape's N, e.g. wgmma's m64n64 vs m64n128, places no register
  // differently: LayoutUtils.h).
  auto from0 = cast<blk::MmaLayoutAttr>(mmaParent(from.getEncoding()));
  auto to0 = cast<blk::MmaLayoutAttr>(mmaParent(to.getEncoding()));
  if (from0.getVersion() != to0.getVersion() ||
      from0.getWarpsPerCTA() != to0.getWarpsPerCTA())
    return false;
  return (isMmaOrA(from.getEncoding()) && isMmaOrA(to.getEncoding())) ||
         (isRowSlice(from.getEncoding()) && isRowSlice(to.getEncoding()));
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
