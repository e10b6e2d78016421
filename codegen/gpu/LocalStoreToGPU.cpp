//===- LocalStoreToGPU.cpp - register tiles into padded shared buffers ----===//
//
// local_store of a tile in a register layout into a
// #attn_block.padded_shared buffer: each thread stores the elements it
// holds (LayoutUtils.h's register map) at row * rowStride + column, a
// register pair of adjacent columns (the m16n8 accumulator's c0 c1, c2 c3)
// as one vector store. With rowStride / 8 odd (16-bit elements) the rows
// of a warp's 4-byte stores fall in distinct banks. MTA's stencil stores
// its score tiles so (MtaToBlockGpu.cpp).
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
    auto buf = op.getBuffer().getType();
    auto pad = dyn_cast<blk::PaddedSharedLayoutAttr>(buf.getEncoding());
    if (!pad)
      return rw.notifyMatchFailure(op, "padded_shared buffers only");
    auto type = op.getValue().getType();
    std::string why;
    auto map = registerMap(type, /*transposedB=*/false, why);
    if (failed(map))
      return rw.notifyMatchFailure(op, why);
    Location loc = op.getLoc();
    auto c = [&](int64_t v) {
      return arith::ConstantIndexOp::create(rw, loc, v);
    };
    SmallVector<Value> base = threadBase(rw, loc, type, false);
    ValueRange smem = adaptor.getBuffer(), regs = adaptor.getValue();
    const int64_t stride = pad.getRowStride();
    Value thread = arith::AddIOp::create(
        rw, loc, smem[1],
        arith::AddIOp::create(
            rw, loc, arith::MulIOp::create(rw, loc, base[0], c(stride)),
            base[1]));
    auto at = [&](ArrayRef<int64_t> o) {
      return arith::AddIOp::create(rw, loc, thread, c(o[0] * stride + o[1]));
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
  if (!isa<blk::PaddedSharedLayoutAttr>(buf.getEncoding()))
    return "local_store is lowered into #attn_block.padded_shared buffers";
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
