//===- LocalStoreToGPU.cpp - register tiles into shared buffers ----------===//
//
// local_store of a tile in a register layout into a shared buffer: each
// thread stores the elements it holds (LayoutUtils.h's register map), a
// register pair of adjacent columns (the m16n8 accumulator's c0 c1, c2 c3)
// as one vector store. In #attn_block.padded_shared at row * rowStride +
// column: with rowStride / 8 odd (16-bit elements) the rows of a warp's
// 4-byte stores fall in distinct banks (MTA's score tiles). In a swizzled
// layout (#attn_block.shared, the wgmma 128-byte nvmma_shared) at
// swizzledOffset: a pair never straddles a 16-byte chunk (the flash
// backward's dS^T, read back as a transposed A).
//
//===----------------------------------------------------------------------===//

#include "BlockToGPU.h"
#include "LayoutUtils.h"

#include "attn/Dialect/AttnBlockDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::attn::blockgpu;
namespace blk = mlir::attn_block;

namespace {

struct LocalStoreToShared : OpConversionPattern<blk::LocalStoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::LocalStoreOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    if (std::string why = unsupportedReason(op); !why.empty())
      return rw.notifyMatchFailure(op, why);
    auto buf = op.getBuffer().getType();
    auto type = op.getValue().getType();
    std::string why;
    auto map = registerMap(type, /*transposed=*/false, why);
    if (failed(map))
      return rw.notifyMatchFailure(op, why);
    Location loc = op.getLoc();
    auto c = [&](int64_t v) {
      return arith::ConstantIndexOp::create(rw, loc, v);
    };
    SmallVector<Value> base = threadBase(rw, loc, type, false);
    ValueRange smem = adaptor.getBuffer(), regs = adaptor.getValue();
    auto pad = dyn_cast<blk::PaddedSharedLayoutAttr>(buf.getEncoding());
    // Padded: the thread's offset plus a constant per access.
    const int64_t stride = pad ? pad.getRowStride() : 0;
    Value thread =
        pad ? arith::AddIOp::create(
                  rw, loc, smem[1],
                  arith::AddIOp::create(
                      rw, loc,
                      arith::MulIOp::create(rw, loc, base[0], c(stride)),
                      base[1]))
            : Value();
    auto at = [&](ArrayRef<int64_t> o) -> Value {
      if (pad)
        return arith::AddIOp::create(rw, loc, thread, c(o[0] * stride + o[1]));
      Value row = arith::AddIOp::create(rw, loc, base[0], c(o[0]));
      Value col = arith::AddIOp::create(rw, loc, base[1], c(o[1]));
      return arith::AddIOp::create(rw, loc, smem[1],
                                   swizzledOffset(rw, loc, buf.getEncoding(),
                                                  row, col, buf.getShape()[1],
                                                  buf.getShape()[0]));
    };
    const auto &offs = map->offsets;
    for (int64_t i = 0; i < map->numRegs(); ++i) {
      bool pair = i + 1 < map->numRegs() && offs[i + 1][0] == offs[i][0] &&
                  offs[i + 1][1] == offs[i][1] + 1;
      if (!pair) {
        memref::StoreOp::create(rw, loc, regs[i], smem[0],
                                ValueRange{at(offs[i])});
        continue;
      }
      Value v = vector::FromElementsOp::create(
          rw, loc, VectorType::get({2}, type.getElementType()),
          ValueRange{regs[i], regs[i + 1]});
      vector::StoreOp::create(rw, loc, v, smem[0], ValueRange{at(offs[i])});
      ++i;
    }
    rw.eraseOp(op);
    return success();
  }
};

} // namespace

std::string mlir::attn::blockgpu::unsupportedReason(blk::LocalStoreOp op) {
  auto buf = op.getBuffer().getType();
  auto type = op.getValue().getType();
  Attribute enc = buf.getEncoding();
  if (buf.getRank() != 2 ||
      !(isa<blk::PaddedSharedLayoutAttr, blk::SharedLayoutAttr>(enc) ||
        isSwizzle128(enc, buf.getElementType(), buf.getShape()[1])))
    return "local_store is lowered into 2-D #attn_block.padded_shared, "
           "#attn_block.shared and 128-byte swizzled "
           "#attn_block.nvmma_shared buffers";
  if (auto sh = dyn_cast<blk::SharedLayoutAttr>(enc); sh && sh.getVec() % 2)
    return "local_store stores register pairs: a swizzled buffer's vec "
           "must be even";
  if (!isa_and_nonnull<blk::MmaLayoutAttr>(type.getEncoding()))
    return "local_store is lowered from mma accumulator tiles";
  return "";
}

std::string mlir::attn::blockgpu::unsupportedReason(blk::LocalSubviewOp op) {
  auto buf = op.getBuffer().getType();
  int64_t bytes = buf.getElementType().getIntOrFloatBitWidth() / 8;
  APInt col;
  auto pad = cast<blk::PaddedSharedLayoutAttr>(buf.getEncoding());
  if (!matchPattern(op.getCol(), m_ConstantInt(&col)) ||
      (col.getSExtValue() * bytes) % 16 != 0 ||
      (pad.getRowStride() * bytes) % 16 != 0)
    return "a window's rows must start on 16-byte bounds (ldmatrix, "
           "cp.async): a constant column offset and a row stride of "
           "16-byte multiples";
  return "";
}

void mlir::attn::blockgpu::populateLocalStorePatterns(
    BlockTypeConverter &tc, RewritePatternSet &patterns) {
  patterns.add<LocalStoreToShared>(tc, patterns.getContext());
}
