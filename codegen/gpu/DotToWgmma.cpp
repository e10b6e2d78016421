//===- DotToWgmma.cpp - warpgroup MMA (sm_90a) from shared descriptors ----===//
//
// A dot whose accumulator has an mma version 3 layout is wgmma: per
// warpgroup one wgmma.mma_async m64nNk16 per 16 of K between wgmma.fence
// and commit / wait 0 (Wgmma.h's inline PTX), A from registers or a shared
// tile, B a shared tile read in place through a matrix descriptor of its
// 128-byte swizzled buffer. Descriptors, the K = 8 form and the zero
// accumulator: docs/lowering-details.md, "codegen/gpu/DotToWgmma.cpp".
//
//===----------------------------------------------------------------------===//

#include "BlockToGPU.h"
#include "LayoutUtils.h"
#include "Wgmma.h"

#include "attn/Dialect/AttnBlockDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::blockgpu;
namespace blk = mlir::attn_block;

namespace {

bool inShared(Value tile) {
  return isa<blk::NvmmaSharedLayoutAttr>(
      cast<RankedTensorType>(tile.getType()).getEncoding());
}

/// `v` without the register-identity conversions in front of it.
Value throughConversions(Value v) {
  while (auto cvt = v.getDefiningOp<blk::ConvertLayoutOp>())
    v = cvt.getInput();
  return v;
}

/// Whether the registers of `op`'s A stay untouched until a later wait
/// that is not `op`'s own: A read from shared memory (no registers), the
/// next dot's A too (its wait holds them), or a tile made outside the loop
/// around `op` (live across all of it). Otherwise LLVM may reuse them
/// before the next dot's wait while the tensor cores still read them.
bool keepsARegisters(blk::DotOp op, blk::DotOp next) {
  Value a = op.getA();
  if (inShared(a) || throughConversions(a) == throughConversions(next.getA()))
    return true;
  auto loop = op->getParentOfType<scf::ForOp>();
  return loop && loop.isDefinedOutsideOfLoop(a);
}

/// Whether `op`'s only use is as the accumulator of a wgmma dot of the
/// same shape in its block, with A registers that outlive it
/// (keepsARegisters): then `op` is not committed or waited for; its
/// mma_async joins that dot's group, and the accumulators pass between them
/// without a fence (PTX orders accumulator accesses across wgmma.mma_async
/// of one shape), so the tensor cores run both back to back (FoX's key
/// term, then Q K^T).
bool chainsIntoNextDot(blk::DotOp op) {
  if (!op.getResult().hasOneUse())
    return false;
  OpOperand &use = *op.getResult().getUses().begin();
  auto next = dyn_cast<blk::DotOp>(use.getOwner());
  return next && use.get() == next.getAcc() &&
         next->getBlock() == op->getBlock() &&
         next.getAcc().getType() == op.getAcc().getType() &&
         keepsARegisters(op, next);
}

/// Whether `op`'s accumulator comes from a dot chained into it.
bool chainedFromDot(blk::DotOp op) {
  auto prev = op.getAcc().getDefiningOp<blk::DotOp>();
  return prev && chainsIntoNextDot(prev);
}

/// B read from an interleaved (unswizzled) buffer.
bool interleavedB(blk::DotOp op) {
  auto nv =
      dyn_cast<blk::NvmmaSharedLayoutAttr>(op.getB().getType().getEncoding());
  return nv && nv.getSwizzleBytes() == 0;
}

/// Whether `acc` is a splat of +0.0 (D = A B needs no accumulator).
bool isZeroSplat(Value acc) {
  auto splat = acc.getDefiningOp<tensor::SplatOp>();
  FloatAttr f;
  return splat && matchPattern(splat.getInput(), m_Constant(&f)) &&
         f.getValue().isPosZero();
}

struct LocalLoadInPlace : OpConversionPattern<blk::LocalLoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::LocalLoadOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    if (!inShared(op.getResult()))
      return rw.notifyMatchFailure(op, "not a tile read in place");
    rw.replaceOpWithMultiple(op, {adaptor.getBuffer()});
    return success();
  }
};

struct FenceToProxyAsync : OpConversionPattern<blk::FenceAsyncSharedOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::FenceAsyncSharedOp op, OpAdaptor,
                                ConversionPatternRewriter &rw) const override {
    wgmma::fenceProxyAsync(rw, op.getLoc());
    rw.eraseOp(op);
    return success();
  }
};

struct DotToWgmmaPattern : OpConversionPattern<blk::DotOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::DotOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    auto accType = op.getAcc().getType();
    auto mma = dyn_cast_or_null<blk::MmaLayoutAttr>(accType.getEncoding());
    if (!mma || mma.getVersion() != 3)
      return rw.notifyMatchFailure(op, "wgmma accumulators only");
    if (std::string why = unsupportedWgmmaReason(op); !why.empty())
      return rw.notifyMatchFailure(op, why);
    Location loc = op.getLoc();
    auto c = [&](int64_t v) {
      return arith::ConstantIndexOp::create(rw, loc, v);
    };
    auto aType = op.getA().getType(), bType = op.getB().getType();
    // K = 8 (unsupportedWgmmaReason: a register A, an interleaved B) is
    // one k16 step whose A registers for k 8-15 are zero and whose B
    // descriptor reads columns 0-7 again for them (LBO 0): FoX's 16-byte
    // key records.
    const bool transA = op.getTransposeA();
    const int64_t aK = aType.getDimSize(transA ? 0 : 1);
    const bool k8 = aK == 8;
    const int64_t n = accType.getDimSize(1), kt = k8 ? 1 : aK / 16;
    const bool half = aType.getElementType().isF16();
    const int64_t eltBytes = 2;
    // Shared address (bytes) of a tile read in place.
    auto address = [&](ValueRange view) -> Value {
      Value base =
          memref::ExtractAlignedPointerAsIndexOp::create(rw, loc, view[0]);
      return arith::AddIOp::create(
          rw, loc, base, arith::MulIOp::create(rw, loc, view[1], c(eltBytes)));
    };
    Value warp = warpAndLane(rw, loc).first;
    // This warpgroup's A rows: 64 rows of 128 bytes into each panel.
    Value groupRows = arith::MulIOp::create(
        rw, loc, arith::DivUIOp::create(rw, loc, warp, c(4)), c(64 * 128));

    // Registers written since the last wgmma: the accumulators (unless D
    // = A B) and the A fragments, packed pairs.
    const bool zeroAcc = isZeroSplat(op.getAcc());
    const bool chainedIn = chainedFromDot(op);
    SmallVector<Value> regs;
    if (!zeroAcc && !chainedIn)
      regs.append(adaptor.getAcc().begin(), adaptor.getAcc().end());
    const size_t nAcc = regs.size();
    Value descA;
    if (transA) {
      // A stored [K, M], M-major: this warpgroup's 64 columns are panel
      // `warp / 4` of the swizzled buffer (K rows of 128 bytes), read as
      // an N-major B is (LBO the next panel, SBO the next 8 rows).
      Value panel = arith::MulIOp::create(
          rw, loc, arith::DivUIOp::create(rw, loc, warp, c(4)), c(aK * 128));
      descA = wgmma::descriptor(
          rw, loc,
          arith::AddIOp::create(rw, loc, address(adaptor.getA()), panel),
          aK * 128, 1024);
    } else if (inShared(op.getA())) {
      descA = wgmma::descriptor(
          rw, loc,
          arith::AddIOp::create(rw, loc, address(adaptor.getA()), groupRows),
          16, 1024);
    } else {
      ValueRange a = adaptor.getA();
      Type elt = aType.getElementType();
      auto i32v = VectorType::get({1}, rw.getI32Type());
      for (size_t i = 0; i + 1 < a.size(); i += 2) {
        Value pair = vector::FromElementsOp::create(
            rw, loc, VectorType::get({2}, elt), ValueRange{a[i], a[i + 1]});
        Value cast = vector::BitCastOp::create(rw, loc, i32v, pair);
        regs.push_back(vector::ExtractOp::create(rw, loc, cast, 0));
      }
    }
    // A chained-in dot with a shared A has no register to fence.
    if (!chainedIn || !regs.empty())
      regs = wgmma::fence(rw, loc, regs);
    SmallVector<Value> acc(regs.begin(), regs.begin() + nAcc);
    if (chainedIn)
      acc.assign(adaptor.getAcc().begin(), adaptor.getAcc().end());
    ArrayRef<Value> aRegs = ArrayRef<Value>(regs).drop_front(nAcc);

    const bool kMajorB = op.getTransposeB();
    const int64_t bRows = bType.getDimSize(0);
    // An interleaved B (K-major, unswizzled: FoX's records): LBO the next
    // 8 columns' core matrices (bRows * 16 bytes on), SBO the next 8 rows'.
    const bool plainB = interleavedB(op);
    Value descB = plainB ? wgmma::descriptor(rw, loc, address(adaptor.getB()),
                                             k8 ? 0 : bRows * 16, 128,
                                             /*swizzle=*/false)
                         : wgmma::descriptor(rw, loc, address(adaptor.getB()),
                                             kMajorB ? 16 : bRows * 128, 1024);
    const int64_t aRows = aType.getDimSize(0);
    for (int64_t ks = 0; ks < kt; ++ks) {
      auto kMajorStep = [&](int64_t rows) {
        return (ks / 4) * rows * 128 + (ks % 4) * 32;
      };
      Value stepA = !descA ? Value()
                    : transA
                        ? wgmma::advance(rw, loc, descA, 16 * 128 * ks)
                        : wgmma::advance(rw, loc, descA, kMajorStep(aRows));
      Value stepB = wgmma::advance(rw, loc, descB,
                                   plainB    ? ks * bRows * 32
                                   : kMajorB ? kMajorStep(bRows)
                                             : 16 * 128 * ks);
      SmallVector<Value> fragment;
      if (!descA && k8) {
        Value zero = arith::ConstantIntOp::create(rw, loc, 0, 32);
        fragment = {aRegs[0], aRegs[1], zero, zero};
      } else if (!descA) {
        fragment.assign(aRegs.begin() + 4 * ks, aRegs.begin() + 4 * ks + 4);
      }
      acc = wgmma::mmaAsync(rw, loc, acc, n, half, fragment, stepA, stepB,
                            /*transB=*/!kMajorB, transA);
    }
    if (chainsIntoNextDot(op)) {
      // The next dot commits and waits for both (chainsIntoNextDot).
      rw.replaceOpWithMultiple(op, {acc});
      return success();
    }
    wgmma::commit(rw, loc);
    // The A fragments must stay untouched until the wait too.
    SmallVector<Value> pending = acc;
    pending.append(aRegs.begin(), aRegs.end());
    pending = wgmma::wait(rw, loc, pending, 0);
    pending.truncate(acc.size());
    rw.replaceOpWithMultiple(op, {pending});
    return success();
  }
};

} // namespace

std::string mlir::attn::blockgpu::unsupportedWgmmaReason(blk::DotOp op) {
  auto accType = op.getAcc().getType();
  auto mma = cast<blk::MmaLayoutAttr>(accType.getEncoding());
  auto aType = op.getA().getType(), bType = op.getB().getType();
  Type e = aType.getElementType();
  if (op.getSkipZeroA())
    return "skip_zero_a is lowered for mma.sync only (three products a "
           "step); a wgmma kernel leaves the rows that need it to an "
           "mma.sync kernel";
  if ((!e.isBF16() && !e.isF16()) || bType.getElementType() != e ||
      !accType.getElementType().isF32())
    return "wgmma is lowered for bf16/f16 operands with f32 accumulators";
  const int64_t n = accType.getDimSize(1);
  if (n % 8 != 0 || n > 256 || mma.getInstrShape()[1] != n)
    return "a wgmma accumulator [M, N] needs N a multiple of 8 up to 256 "
           "and instrShape = [64, N, 16] (one m64nNk16 per k16 step)";
  const int64_t aK = aType.getDimSize(op.getTransposeA() ? 0 : 1);
  const bool k8 = aK == 8;
  if (aK % 16 != 0 && !k8)
    return "wgmma needs K a multiple of 16, or 8";
  if (k8 && (inShared(op.getA()) || !interleavedB(op)))
    return "a wgmma dot with K = 8 takes A from registers and B interleaved "
           "(swizzleBytes = 0), whose descriptor reads its 8 columns twice";
  if (!inShared(op.getB()))
    return "wgmma reads its B operand from shared memory (a local_load "
           "into an #attn_block.nvmma_shared tile)";
  if (interleavedB(op) && !op.getTransposeB())
    return "wgmma reads an interleaved (swizzleBytes = 0) B K-major only: "
           "a transpose_b dot";
  if (inShared(op.getA()) &&
      cast<blk::NvmmaSharedLayoutAttr>(op.getA().getType().getEncoding())
              .getSwizzleBytes() != 128)
    return "wgmma reads a shared A in the 128-byte swizzle";
  if (op.getTransposeA() &&
      (!inShared(op.getA()) || aType.getDimSize(1) % 64 != 0))
    return "wgmma reads a transposed A ([K, M], M-major) from a 128-byte "
           "swizzled shared tile of 64 columns per warpgroup";
  if (!op.getB().getDefiningOp<blk::LocalLoadOp>() ||
      (inShared(op.getA()) && !op.getA().getDefiningOp<blk::LocalLoadOp>()))
    return "a shared wgmma operand must be a local_load of its buffer";
  if (!inShared(op.getA())) {
    auto d = dyn_cast<blk::DotOperandLayoutAttr>(aType.getEncoding());
    if (!d || d.getOpIdx() != 0 || d.getKWidth() != 2)
      return "a register A of wgmma must be #attn_block.dot_operand<opIdx = "
             "0, kWidth = 2> of the accumulator's mma";
  }
  return "";
}

void mlir::attn::blockgpu::populateWgmmaPatterns(BlockTypeConverter &tc,
                                                 RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<LocalLoadInPlace, FenceToProxyAsync, DotToWgmmaPattern>(tc, ctx);
}
