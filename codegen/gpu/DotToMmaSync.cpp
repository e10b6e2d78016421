//===- DotToMmaSync.cpp - ldmatrix operands and m16n8k16 mma.sync ---------===//
//
// local_load of a swizzled shared tile into a dot operand layout: one
// ldmatrix.x4 per 16x16 piece (x2 for K = 8), each lane addressing one
// 16-byte row, which hands each lane the registers of LayoutUtils.h; dot:
// one nvvm.mma.sync m16n8k16 per (mi, ni, ki), except where b_band says the
// piece of B is zero. The lane addressing: docs/lowering-details.md,
// "codegen/gpu/DotToMmaSync.cpp".
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
    SmallVector<Value> out(acc.begin(), acc.end());
    for (int64_t ki = 0; ki < kt; ++ki)
      for (int64_t mi = 0; mi < mt; ++mi) {
        int64_t a0 = (mi * kt + ki) * aRegs;
        SmallVector<Value> aOps;
        for (int64_t e = 0; e < aRegs; e += 2)
          aOps.push_back(pair(a, a0 + e));
        for (int64_t ni = 0; ni < nt; ++ni) {
          if (zeroPiece(ki, ni))
            continue;
          int64_t b0 = (ki * nt + ni) * bRegs, c0 = (mi * nt + ni) * 4;
          SmallVector<Value> bOps;
          for (int64_t e = 0; e < bRegs; e += 2)
            bOps.push_back(pair(bReg, b0 + e));
          SmallVector<Value> cOps(out.begin() + c0, out.begin() + c0 + 4);
          auto d = NVVM::MmaOp::create(
              rw, loc, resTy, aOps, bOps, cOps, {16, 8, kStep}, std::nullopt,
              std::nullopt, std::array<NVVM::MMATypes, 2>{t, t},
              std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                             NVVM::MMALayout::col});
          for (int64_t r = 0; r < 4; ++r)
            out[c0 + r] =
                LLVM::ExtractValueOp::create(rw, loc, d, ArrayRef<int64_t>{r});
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
