//===- Exp2ToCPU.cpp - exp2 of the fused kernels as a polynomial ----------===//
//
// f32 math.exp2 inside block kernels as element-wise arithmetic that
// vectorizes with the tile loops (a libm call per element does not):
// 2^x = 2^k * 2^f, k = roundeven(x), f in [-1/2, 1/2], 2^f by Cephes'
// degree-6 polynomial, 2^k in the exponent bits; x clamped to [-127, 127]
// (-inf gives exactly 0, NaN stays NaN). The reference lowering keeps libm.
// Accuracy: bench/RESULTS.md, "CPU: figures moved from code comments".
//
//===----------------------------------------------------------------------===//

#include "Exp2ToCPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace {

/// Cephes exp2f.c, highest degree first: 2^f = 1 + f * P(f).
constexpr float kExp2Poly[] = {1.535336188319500e-4f, 1.339887440266574e-3f,
                               9.618437357674640e-3f, 5.550332471162809e-2f,
                               2.402264791363012e-1f, 6.931472028550421e-1f};

struct ExpandExp2 : OpRewritePattern<math::Exp2Op> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::Exp2Op op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return failure();
    auto fn = op->getParentOfType<func::FuncOp>();
    if (!fn || !fn->hasAttr("attn_block.kernel"))
      return failure();
    Location loc = op.getLoc();
    auto shaped = dyn_cast<ShapedType>(type);
    Type i32 = rewriter.getI32Type();
    Type intType = shaped ? Type(shaped.clone(i32)) : i32;
    auto f = [&](float v) -> Value {
      Attribute a = rewriter.getF32FloatAttr(v);
      if (shaped)
        a = DenseElementsAttr::get(shaped, a);
      return arith::ConstantOp::create(rewriter, loc, cast<TypedAttr>(a));
    };
    auto i = [&](int32_t v) -> Value {
      Attribute a = rewriter.getI32IntegerAttr(v);
      if (shaped)
        a = DenseElementsAttr::get(cast<ShapedType>(intType), a);
      return arith::ConstantOp::create(rewriter, loc, cast<TypedAttr>(a));
    };
    Value x = op.getOperand();
    // maximumf/minimumf propagate NaN; the select below keeps it.
    Value xc = arith::MinimumFOp::create(
        rewriter, loc, arith::MaximumFOp::create(rewriter, loc, x, f(-127.0f)),
        f(127.0f));
    Value k = math::RoundEvenOp::create(rewriter, loc, xc);
    Value r = arith::SubFOp::create(rewriter, loc, xc, k);
    Value p = f(kExp2Poly[0]);
    for (float c : ArrayRef<float>(kExp2Poly).drop_front())
      p = math::FmaOp::create(rewriter, loc, p, r, f(c));
    p = math::FmaOp::create(rewriter, loc, r, p, f(1.0f));
    // 2^k: biased exponent k + 127 in bits 23..30 (0 for k = -127).
    Value ki = arith::FPToSIOp::create(rewriter, loc, intType, k);
    Value bits = arith::ShLIOp::create(
        rewriter, loc, arith::AddIOp::create(rewriter, loc, ki, i(127)), i(23));
    Value scale = arith::BitcastOp::create(rewriter, loc, type, bits);
    Value y = arith::MulFOp::create(rewriter, loc, p, scale);
    Value nan =
        arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::UNO, x, x);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, nan, x, y);
    return success();
  }
};

} // namespace

void mlir::attn::populateExp2ToCPUPatterns(RewritePatternSet &patterns) {
  patterns.add<ExpandExp2>(patterns.getContext());
}
