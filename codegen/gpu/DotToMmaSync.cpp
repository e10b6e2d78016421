//===- DotToMmaSync.cpp - ldmatrix operands and m16n8k16 mma.sync ---------===//
//
// local_load of a swizzled shared tile into a dot operand layout: one
// ldmatrix.x4 per 16x16 piece (x2 for K = 8), each lane addressing one
// 16-byte row, which hands each lane the registers of LayoutUtils.h; dot:
// one nvvm.mma.sync m16n8k16 per (mi, ni, ki), except where b_band says the
// piece of B is zero; with skip_zero_a, B's non-finite elements taken out of
// that product and counted by two more (SkipZeroA). The lane addressing:
// docs/lowering-details.md, "codegen/gpu/DotToMmaSync.cpp".
//
//===----------------------------------------------------------------------===//

#include "BlockToGPU.h"
#include "LayoutUtils.h"

#include "attn/Dialect/AttnBlockDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <array>
#include <limits>

using namespace mlir;
using namespace mlir::attn::blockgpu;
namespace blk = mlir::attn_block;

Value mlir::attn::blockgpu::mmaOperand(OpBuilder &b, Location loc, Value pair) {
  auto type = cast<VectorType>(pair.getType());
  if (type.getElementType().isF16())
    return pair;
  auto i32v = VectorType::get({1}, b.getI32Type());
  Value cast = vector::BitCastOp::create(b, loc, i32v, pair);
  return vector::ExtractOp::create(b, loc, cast, 0);
}

namespace {

/// skip_zero_a on mma.sync: a zero of A must not meet a NaN or inf of B.
/// Each k16 step multiplies A by B with its non-finite elements read as 0,
/// then counts, with A's non-zeros read as 1, the +inf and the -inf (NaN
/// counting as both) each output element meets, and adds +inf or -inf (NaN
/// for both) where a count is positive: where A is never zero, or B always
/// finite, the result is the plain product's bit for bit. Three mma per
/// step: for kernels that run only where a non-finite value is known to be.
struct SkipZeroA {
  OpBuilder &b;
  Location loc;
  Type elt;

  Value constant(Type t, double v) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(t, v));
  }
  Value pick(Value cond, double yes, double no, Type t) {
    return arith::SelectOp::create(b, loc, cond, constant(t, yes),
                                   constant(t, no));
  }
  /// B's registers, finite ones kept and the others 0; and the +inf and
  /// -inf indicators (1 or 0; NaN sets both).
  void splitB(ValueRange regs, SmallVector<Value> &clean,
              SmallVector<Value> &pos, SmallVector<Value> &neg) {
    const double inf = std::numeric_limits<double>::infinity();
    for (Value x : regs) {
      using P = arith::CmpFPredicate;
      // ONE: ordered and unequal, false for NaN.
      Value finite = arith::AndIOp::create(
          b, loc, arith::CmpFOp::create(b, loc, P::ONE, x, constant(elt, inf)),
          arith::CmpFOp::create(b, loc, P::ONE, x, constant(elt, -inf)));
      clean.push_back(
          arith::SelectOp::create(b, loc, finite, x, constant(elt, 0.0)));
      Value nan = arith::CmpFOp::create(b, loc, P::UNO, x, x);
      auto is = [&](double v) {
        return arith::OrIOp::create(
            b, loc, nan,
            arith::CmpFOp::create(b, loc, P::OEQ, x, constant(elt, v)));
      };
      pos.push_back(pick(is(inf), 1.0, 0.0, elt));
      neg.push_back(pick(is(-inf), 1.0, 0.0, elt));
    }
  }
  /// A's registers as 1 where non-zero (NaN included), else 0.
  SmallVector<Value> nonZeros(ValueRange regs) {
    SmallVector<Value> out;
    for (Value x : regs)
      out.push_back(
          pick(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, x,
                                     constant(elt, 0.0)),
               1.0, 0.0, elt));
    return out;
  }
  /// `acc` with +inf added where `pos` > 0 and -inf where `neg` > 0.
  Value poison(Value acc, Value pos, Value neg) {
    Type f32 = acc.getType();
    const double inf = std::numeric_limits<double>::infinity();
    auto positive = [&](Value c) {
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, c,
                                   constant(f32, 0.0));
    };
    Value p = positive(pos), n = positive(neg);
    Value bad = arith::AddFOp::create(b, loc, pick(p, inf, 0.0, f32),
                                      pick(n, -inf, 0.0, f32));
    return arith::SelectOp::create(b, loc, arith::OrIOp::create(b, loc, p, n),
                                   arith::AddFOp::create(b, loc, acc, bad),
                                   acc);
  }
};

struct LocalLoadToLdmatrix : OpConversionPattern<blk::LocalLoadOp> {
  LocalLoadToLdmatrix(const TypeConverter &tc, MLIRContext *ctx,
                      const llvm::DenseSet<Operation *> &transposed)
      : OpConversionPattern(tc, ctx), transposed(transposed) {}

  LogicalResult matchAndRewrite(blk::LocalLoadOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    auto type = op.getType();
    auto opnd = dyn_cast_or_null<blk::DotOperandLayoutAttr>(type.getEncoding());
    auto buf = op.getBuffer().getType();
    if (!opnd || buf.getRank() != 2 ||
        !isa<blk::SharedLayoutAttr, blk::PaddedSharedLayoutAttr>(
            buf.getEncoding()))
      return rw.notifyMatchFailure(op, "ldmatrix into dot operands only");
    const bool trans = transposed.contains(op);
    std::string why;
    auto map = registerMap(type, trans, why);
    if (failed(map))
      return rw.notifyMatchFailure(op, why);
    Location loc = op.getLoc();
    auto c = [&](int64_t v) {
      return arith::ConstantIndexOp::create(rw, loc, v);
    };
    auto [warp, lane] = warpAndLane(rw, loc);
    ValueRange smem = adaptor.getBuffer();
    const int64_t width = buf.getShape()[1];
    Type elt = type.getElementType();
    auto mma = cast<blk::MmaLayoutAttr>(mmaParent(type.getEncoding()));
    const int64_t w = mma.getWarpsPerCTA()[0];
    SmallVector<Value> regs(map->numRegs());
    // One ldmatrix.x4 (.x2 with two slots) at (dr, dc) from the lane's own
    // row and column in `addr`, its pairs into `slots`.
    auto load = [&](SwizzledAddresses &addr, int64_t dr, int64_t dc, bool trans,
                    ArrayRef<int64_t> slots) {
      const int64_t n = slots.size();
      Value at = arith::AddIOp::create(rw, loc, smem[1], addr.at(dr, dc));
      Value m = nvgpu::LdMatrixOp::create(rw, loc, VectorType::get({n, 2}, elt),
                                          smem[0], ValueRange{at}, trans, n);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t h = 0; h < 2; ++h)
          regs[slots[i] + h] =
              vector::ExtractOp::create(rw, loc, m, ArrayRef<int64_t>{i, h});
    };
    Value l16 = arith::RemUIOp::create(rw, loc, lane, c(16));
    Value l8 = arith::RemUIOp::create(rw, loc, lane, c(8));
    Value hi16 = arith::DivUIOp::create(rw, loc, lane, c(16));
    Value mid = arith::RemUIOp::create(
        rw, loc, arith::DivUIOp::create(rw, loc, lane, c(8)), c(2));
    auto mul8 = [&](Value x) {
      return arith::MulIOp::create(rw, loc, x, c(8));
    };
    // A lane addresses row rowT + dr, column 8 chunkT + dc (chunkT < 2).
    auto addresses = [&](Value rowT, Value chunkT) {
      return SwizzledAddresses(rw, loc, buf.getEncoding(), width,
                               buf.getShape()[0], rowT, chunkT, 1, c(0), 1);
    };
    // K = 8 (LayoutUtils.h): ldmatrix.x2 of the k8 half, lanes 0-15
    // addressing its two matrices (A: rows 0-7, 8-15; B: n8 tiles 2p, 2p +
    // 1) at chunk 0.
    if (opnd.getOpIdx() == 0 && trans) {
      // A stored [K, M]: ldmatrix.trans of the four 8x8 pieces (k half,
      // m half) = (l / 16, (l / 8) % 2) of each 16x16 step, lane l
      // addressing its k row l % 8; each lane receives A's registers.
      const int64_t mt = type.getDimSize(1) / (16 * w),
                    kt = type.getDimSize(0) / 16;
      Value chunk = arith::AddIOp::create(
          rw, loc, mid, arith::MulIOp::create(rw, loc, warp, c(2 * mt)));
      SwizzledAddresses addr(
          rw, loc, buf.getEncoding(), width, buf.getShape()[0],
          arith::AddIOp::create(rw, loc, l8, mul8(hi16)), chunk,
          llvm::Log2_64(llvm::PowerOf2Ceil(2 * mt * w)), c(0), 1);
      for (int64_t mi = 0; mi < mt; ++mi)
        for (int64_t ki = 0; ki < kt; ++ki) {
          int64_t r0 = (mi * kt + ki) * 8;
          load(addr, 16 * ki, 16 * mi, true, {r0, r0 + 2, r0 + 4, r0 + 6});
        }
    } else if (opnd.getOpIdx() == 0) {
      const bool k8 = type.getDimSize(1) == 8;
      const int64_t mt = type.getDimSize(0) / (16 * w),
                    kt = k8 ? 1 : type.getDimSize(1) / 16;
      Value rowBase = arith::AddIOp::create(
          rw, loc, arith::MulIOp::create(rw, loc, warp, c(16 * mt)), l16);
      SwizzledAddresses addr = addresses(rowBase, k8 ? c(0) : hi16);
      for (int64_t mi = 0; mi < mt; ++mi)
        for (int64_t ki = 0; ki < kt; ++ki) {
          if (k8) {
            load(addr, 16 * mi, 0, false, {4 * mi, 4 * mi + 2});
            continue;
          }
          int64_t r0 = (mi * kt + ki) * 8;
          load(addr, 16 * mi, 16 * ki, false, {r0, r0 + 2, r0 + 4, r0 + 6});
        }
    } else {
      const bool transB = trans;
      int64_t kDim = transB ? 1 : 0;
      const bool k8 = type.getDimSize(kDim) == 8;
      const int64_t kt = k8 ? 1 : type.getDimSize(kDim) / 16,
                    nt = type.getDimSize(1 - kDim) / 8;
      Value rows8 = arith::AddIOp::create(rw, loc, l8, mul8(mid));
      SwizzledAddresses addr =
          k8 ? (transB ? addresses(rows8, c(0)) : addresses(l8, mid))
          : transB
              ? addresses(arith::AddIOp::create(rw, loc, l8, mul8(hi16)), mid)
              : addresses(rows8, hi16);
      for (int64_t ki = 0; ki < kt; ++ki)
        for (int64_t p = 0; p < nt / 2; ++p) {
          if (k8) {
            int64_t n0 = 4 * p, n1 = n0 + 2;
            if (transB)
              load(addr, 16 * p, 0, false, {n0, n1});
            else
              load(addr, 0, 16 * p, true, {n0, n1});
            continue;
          }
          int64_t n0 = (ki * nt + 2 * p) * 4, n1 = n0 + 4;
          if (transB)
            load(addr, 16 * p, 16 * ki, false, {n0, n0 + 2, n1, n1 + 2});
          else
            load(addr, 16 * ki, 16 * p, true, {n0, n0 + 2, n1, n1 + 2});
        }
    }
    rw.replaceOpWithMultiple(op, {regs});
    return success();
  }

  const llvm::DenseSet<Operation *> &transposed;
};

struct DotToMma : OpConversionPattern<blk::DotOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::DotOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    auto accType = op.getAcc().getType();
    auto mma = dyn_cast_or_null<blk::MmaLayoutAttr>(accType.getEncoding());
    if (!mma || mma.getVersion() != 2)
      return rw.notifyMatchFailure(op, "mma.sync accumulators only");
    Type elt = op.getA().getType().getElementType();
    if (!elt.isBF16() && !elt.isF16())
      return rw.notifyMatchFailure(op, "bf16 or f16 operands");
    Location loc = op.getLoc();
    const int64_t w = mma.getWarpsPerCTA()[0];
    // K = 8: one m16n8k8 per (mi, ni) on the first half of the k16
    // registers (LayoutUtils.h).
    const int64_t aK =
        op.getA().getType().getDimSize(op.getTransposeA() ? 0 : 1);
    const bool k8 = aK == 8;
    const int64_t mt = accType.getDimSize(0) / (16 * w),
                  nt = accType.getDimSize(1) / 8, kt = k8 ? 1 : aK / 16,
                  kStep = k8 ? 8 : 16, aRegs = k8 ? 4 : 8, bRegs = k8 ? 2 : 4;
    ValueRange a = adaptor.getA(), bReg = adaptor.getB(),
               acc = adaptor.getAcc();
    auto pair = [&](ValueRange regs, int64_t i) {
      Value v = vector::FromElementsOp::create(
          rw, loc, VectorType::get({2}, elt), ValueRange{regs[i], regs[i + 1]});
      return mmaOperand(rw, loc, v);
    };
    Type f32 = rw.getF32Type();
    auto resTy =
        LLVM::LLVMStructType::getLiteral(rw.getContext(), {f32, f32, f32, f32});
    NVVM::MMATypes t = elt.isF16() ? NVVM::MMATypes::f16 : NVVM::MMATypes::bf16;
    // B's piece rows kStep ki.., columns 8 ni.. holds k - n in [kStep ki -
    // 8 ni - 7, kStep ki - 8 ni + kStep - 1]: zero when that misses the
    // band.
    std::optional<ArrayRef<int64_t>> band = op.getBBand();
    auto zeroPiece = [&](int64_t ki, int64_t ni) {
      return band && (kStep * ki - 8 * ni + kStep - 1 < (*band)[0] ||
                      kStep * ki - 8 * ni - 7 > (*band)[1]);
    };
    // skip_zero_a (SkipZeroA): B cleaned, and the indicators that count
    // what A's non-zeros meet.
    SkipZeroA skip{rw, loc, elt};
    SmallVector<Value> bClean, bPos, bNeg, aNonZero;
    if (op.getSkipZeroA()) {
      skip.splitB(bReg, bClean, bPos, bNeg);
      aNonZero = skip.nonZeros(a);
      bReg = bClean;
    }
    auto mmaOf = [&](ArrayRef<Value> aOps, ArrayRef<Value> bOps,
                     ArrayRef<Value> cOps) {
      auto d = NVVM::MmaOp::create(
          rw, loc, resTy, aOps, bOps, cOps, {16, 8, kStep}, std::nullopt,
          std::nullopt, std::array<NVVM::MMATypes, 2>{t, t},
          std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                         NVVM::MMALayout::col});
      SmallVector<Value> r;
      for (int64_t i = 0; i < 4; ++i)
        r.push_back(
            LLVM::ExtractValueOp::create(rw, loc, d, ArrayRef<int64_t>{i}));
      return r;
    };
    auto pairs = [&](ValueRange regs, int64_t first, int64_t n) {
      SmallVector<Value> ops;
      for (int64_t e = 0; e < n; e += 2)
        ops.push_back(pair(regs, first + e));
      return ops;
    };
    Value zero = arith::ConstantOp::create(rw, loc, rw.getF32FloatAttr(0.0));
    const SmallVector<Value> zeros(4, zero);
    SmallVector<Value> out(acc.begin(), acc.end());
    for (int64_t ki = 0; ki < kt; ++ki)
      for (int64_t mi = 0; mi < mt; ++mi) {
        int64_t a0 = (mi * kt + ki) * aRegs;
        SmallVector<Value> aOps = pairs(a, a0, aRegs);
        for (int64_t ni = 0; ni < nt; ++ni) {
          if (zeroPiece(ki, ni))
            continue;
          int64_t b0 = (ki * nt + ni) * bRegs, c0 = (mi * nt + ni) * 4;
          SmallVector<Value> cOps(out.begin() + c0, out.begin() + c0 + 4);
          SmallVector<Value> d = mmaOf(aOps, pairs(bReg, b0, bRegs), cOps);
          if (op.getSkipZeroA()) {
            SmallVector<Value> nz = pairs(aNonZero, a0, aRegs);
            SmallVector<Value> pos = mmaOf(nz, pairs(bPos, b0, bRegs), zeros),
                               neg = mmaOf(nz, pairs(bNeg, b0, bRegs), zeros);
            for (int64_t r = 0; r < 4; ++r)
              d[r] = skip.poison(d[r], pos[r], neg[r]);
          }
          llvm::copy(d, out.begin() + c0);
        }
      }
    rw.replaceOpWithMultiple(op, {out});
    return success();
  }
};

} // namespace

void mlir::attn::blockgpu::populateDotPatterns(
    BlockTypeConverter &tc, RewritePatternSet &patterns,
    const llvm::DenseSet<Operation *> &transposedLoads) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<LocalLoadToLdmatrix>(tc, ctx, transposedLoads);
  patterns.add<DotToMma>(tc, ctx);
}
