//===- ElementwiseToGPU.cpp - elementwise tile math as per-register math --===//
//
// An arith/math op on tiles in one register layout becomes the same op on
// each register of the thread (the layouts agree, so register i of every
// operand holds the same element). Splats copy the scalar into every
// register; iota adds each register's coordinate to the start; program_id
// is the block index.
//
//===----------------------------------------------------------------------===//

#include "BlockToGPU.h"
#include "LayoutUtils.h"

#include "attn/Dialect/AttnBlockDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::attn::blockgpu;
namespace blk = mlir::attn_block;

namespace {

/// arith/math ops with one tile result, applied register by register.
struct ElementwiseOnRegisters : ConversionPattern {
  ElementwiseOnRegisters(const TypeConverter &tc, MLIRContext *ctx)
      : ConversionPattern(tc, MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op, ArrayRef<ValueRange> operands,
                                ConversionPatternRewriter &rw) const override {
    if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
        isa<arith::ConstantOp>(op) || op->getNumResults() != 1 ||
        op->getNumRegions() != 0)
      return failure();
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!type)
      return failure();
    int64_t n = numRegisters(type);
    if (n < 0)
      return rw.notifyMatchFailure(op, "layout not lowered");
    for (ValueRange v : operands)
      if (static_cast<int64_t>(v.size()) != n)
        return rw.notifyMatchFailure(op, "operands in another layout");
    SmallVector<Value> regs;
    for (int64_t i = 0; i < n; ++i) {
      OperationState st(op->getLoc(), op->getName());
      for (ValueRange v : operands)
        st.addOperands(v[i]);
      st.addTypes(type.getElementType());
      st.addAttributes(op->getAttrs());
      regs.push_back(rw.create(st)->getResult(0));
    }
    rw.replaceOpWithMultiple(op, {regs});
    return success();
  }
};

struct SplatToRegisters : OpConversionPattern<tensor::SplatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(tensor::SplatOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    int64_t n = numRegisters(op.getType());
    if (n < 0 || adaptor.getInput().size() != 1)
      return failure();
    SmallVector<Value> regs(n, adaptor.getInput().front());
    rw.replaceOpWithMultiple(op, {regs});
    return success();
  }
};

struct IotaToRegisters : OpConversionPattern<blk::IotaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::IotaOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    std::string why;
    auto map = registerMap(op.getType(), false, why);
    if (failed(map))
      return rw.notifyMatchFailure(op, why);
    Location loc = op.getLoc();
    Value start =
        arith::AddIOp::create(rw, loc, adaptor.getStart().front(),
                              threadBase(rw, loc, op.getType(), false).front());
    SmallVector<Value> regs;
    for (auto &o : map->offsets) {
      Value at = arith::AddIOp::create(
          rw, loc, start, arith::ConstantIndexOp::create(rw, loc, o[0]));
      regs.push_back(arith::IndexCastOp::create(rw, loc, rw.getI64Type(), at));
    }
    rw.replaceOpWithMultiple(op, {regs});
    return success();
  }
};

struct ProgramIdToBlockId : OpConversionPattern<blk::ProgramIdOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::ProgramIdOp op, OpAdaptor,
                                ConversionPatternRewriter &rw) const override {
    if (op.getAxis() > 2)
      return rw.notifyMatchFailure(op, "grid axes are x, y, z");
    gpu::Dimension dims[] = {gpu::Dimension::x, gpu::Dimension::y,
                             gpu::Dimension::z};
    rw.replaceOpWithNewOp<gpu::BlockIdOp>(op, dims[op.getAxis()]);
    return success();
  }
};

} // namespace

void mlir::attn::blockgpu::populateElementwisePatterns(
    BlockTypeConverter &tc, RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ElementwiseOnRegisters>(tc, ctx);
  patterns.add<SplatToRegisters, IotaToRegisters, ProgramIdToBlockId>(tc, ctx);
}
