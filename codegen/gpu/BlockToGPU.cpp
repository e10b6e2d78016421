//===- BlockToGPU.cpp - attn-block-to-gpu: the GPU form to gpu/nvgpu/nvvm -===//
//
// The pass driver: each GPU-form kernel (attn_block.kernel, num_warps, in a
// gpu.module) is checked op by op (what no pattern lowers gets an error
// naming the op and layout), moved into a gpu.func with the flat-pointer ABI
// of BlockGpuAbi.h (each memref a flat buffer and its dynamic sizes, in the
// launch plan's order) and converted with the patterns of the *ToGPU.cpp and
// DotTo*.cpp files; scf.for loops carrying tiles carry their registers.
// docs/gpu-backend.md, "The block-program path".
//
//===----------------------------------------------------------------------===//

#include "BlockToGPU.h"
#include "LayoutUtils.h"

#include "attn/Codegen/BlockGpuAbi.h"

#include "attn/Codegen/Passes.h"
#include "attn/Dialect/AttnBlockDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNBLOCKTOGPU
#include "attn/Codegen/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn::blockgpu;
namespace blk = mlir::attn_block;

BlockTypeConverter::BlockTypeConverter(MLIRContext *ctx) {
  addConversion([](Type t) { return t; });
  auto sharedView = [ctx](Type elt, SmallVectorImpl<Type> &out) {
    auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    // Dynamic: every stage of a buffer shares its allocation's memref.
    out.push_back(MemRefType::get({ShapedType::kDynamic}, elt,
                                  MemRefLayoutAttrInterface{}, wg));
    out.push_back(IndexType::get(ctx));
  };
  addConversion(
      [sharedView](RankedTensorType t,
                   SmallVectorImpl<Type> &out) -> std::optional<LogicalResult> {
        if (!t.getEncoding())
          return std::nullopt;
        // A tile read in place by wgmma: the buffer it was loaded from.
        if (isa<blk::NvmmaSharedLayoutAttr>(t.getEncoding())) {
          sharedView(t.getElementType(), out);
          return success();
        }
        int64_t n = numRegisters(t);
        if (n < 0)
          return failure();
        out.append(n, t.getElementType());
        return success();
      });
  addConversion(
      [sharedView](blk::SharedBufferType t, SmallVectorImpl<Type> &out) {
        sharedView(t.getElementType(), out);
        return success();
      });
  addConversion([ctx](blk::AsyncTokenType) -> Type {
    return nvgpu::DeviceAsyncTokenType::get(ctx);
  });
}

namespace {

/// The local_loads feeding the a of a transpose_a dot or the b of a
/// transpose_b dot.
llvm::DenseSet<Operation *> transposedLoads(Operation *root) {
  llvm::DenseSet<Operation *> set;
  root->walk([&](blk::DotOp dot) {
    for (auto [operand, transposed] :
         {std::pair(dot.getA(), dot.getTransposeA()),
          std::pair(dot.getB(), dot.getTransposeB())})
      if (transposed)
        if (auto ld = operand.getDefiningOp<blk::LocalLoadOp>())
          set.insert(ld);
  });
  return set;
}

/// Why `op` of a GPU-form kernel cannot be lowered, or "".
std::string unsupported(Operation *op,
                        const llvm::DenseSet<Operation *> &transposed,
                        int64_t threads) {
  std::string why;
  for (Value v : llvm::concat<Value>(op->getOperands(), op->getResults())) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t)
      continue;
    if (!t.getEncoding())
      return "a tile without a layout (" + str(t) +
             "): the GPU form states every tile's layout";
    if (isa<blk::NvmmaSharedLayoutAttr>(t.getEncoding())) {
      if (!isa<blk::LocalLoadOp, blk::DotOp>(op))
        return "a tile in shared memory (" + str(t) +
               ") is only read in place by a wgmma dot";
      continue;
    }
    if (failed(registerMap(t, transposed.contains(v.getDefiningOp()), why)))
      return "layout " + str(t.getEncoding()) + " of " + str(t) + ": " + why;
    // A blocked tile is spread over every thread of the block.
    if (auto blocked = dyn_cast<blk::BlockedLayoutAttr>(t.getEncoding());
        blocked && 32 * blocked.getNumWarps() != threads)
      return "layout " + str(blocked) + " spreads a tile over " +
             std::to_string(blocked.getNumWarps()) +
             " warps, the kernel runs " + std::to_string(threads / 32);
  }
  if (auto scan = dyn_cast<blk::ScanOp>(op))
    return unsupportedReason(scan);
  if (auto extract = dyn_cast<tensor::ExtractOp>(op))
    return unsupportedReason(extract);
  if (auto copy = dyn_cast<blk::AsyncCopyOp>(op))
    return unsupportedReason(copy, threads);
  if (auto st = dyn_cast<blk::StoreOp>(op))
    return unsupportedReason(st);
  if (auto ld = dyn_cast<blk::LoadOp>(op))
    return unsupportedReason(ld);
  if (auto st = dyn_cast<blk::LocalStoreOp>(op))
    return unsupportedReason(st);
  if (auto sv = dyn_cast<blk::LocalSubviewOp>(op))
    return unsupportedReason(sv);
  if (auto bulk = dyn_cast<blk::AsyncStoreAddOp>(op))
    return unsupportedReason(bulk);
  if (auto reduce = dyn_cast<blk::ReduceOp>(op))
    return unsupportedReason(reduce);
  if (auto cvt = dyn_cast<blk::ConvertLayoutOp>(op)) {
    if (!isRegisterIdentity(cast<RankedTensorType>(cvt.getInput().getType()),
                            cast<RankedTensorType>(cvt.getType())))
      return "a conversion that moves elements between threads (through "
             "shared memory) is not lowered yet";
    return "";
  }
  if (auto ld = dyn_cast<blk::LocalLoadOp>(op)) {
    Attribute bufEnc = ld.getBuffer().getType().getEncoding();
    if (isa<blk::NvmmaSharedLayoutAttr>(ld.getType().getEncoding())) {
      auto buf = ld.getBuffer().getType();
      if (buf.getRank() != 2 ||
          !isWgmmaShared(bufEnc, buf.getElementType(), buf.getShape()[1]) ||
          buf.getShape()[0] % 8 != 0)
        return "wgmma descriptors are lowered for 2-D 16-bit buffers of 8 * "
               "k rows in the 128-byte swizzle (#attn_block.nvmma_shared<"
               "swizzleBytes = 128, transposed = false>, 64 * n columns) or "
               "interleaved (swizzleBytes = 0, 8 * n columns)";
      return "";
    }
    if (!isa<blk::DotOperandLayoutAttr>(ld.getType().getEncoding()))
      return "local_load is lowered into dot operand layouts (ldmatrix) or "
             "into nvmma_shared tiles (wgmma descriptors) only";
    if (!isa<blk::SharedLayoutAttr, blk::PaddedSharedLayoutAttr>(bufEnc))
      return "ldmatrix reads #attn_block.shared or #attn_block.padded_shared "
             "buffers";
    return "";
  }
  if (auto fold = dyn_cast<blk::FoldOp>(op)) {
    if (!isa_and_nonnull<blk::MmaLayoutAttr>(fold.getType().getEncoding()) ||
        fold.getWidth() % 8 != 0)
      return "fold is lowered for mma tiles and widths of 8 * k columns "
             "(in-thread adds) only";
    return "";
  }
  if (auto bc = dyn_cast<blk::BroadcastOp>(op)) {
    auto s =
        dyn_cast<blk::SliceLayoutAttr>(bc.getInput().getType().getEncoding());
    if (!s || s.getParent() != bc.getType().getEncoding() ||
        s.getDim() != static_cast<int64_t>(bc.getAxis()))
      return "broadcasts of a slice into its parent only";
    return "";
  }
  if (auto dot = dyn_cast<blk::DotOp>(op)) {
    auto m = dyn_cast<blk::MmaLayoutAttr>(dot.getAcc().getType().getEncoding());
    Type e = dot.getA().getType().getElementType();
    if (m && m.getVersion() == 3)
      return unsupportedWgmmaReason(dot);
    if (!m || m.getVersion() != 2 || (!e.isBF16() && !e.isF16()))
      return "dot is lowered to bf16/f16 mma.sync (mma version 2) or wgmma "
             "(mma version 3) only";
    if (dot.getTransposeA() && !dot.getA().getDefiningOp<blk::LocalLoadOp>())
      return "mma.sync reads a transposed A from shared memory (a local_load, "
             "ldmatrix.trans)";
    return "";
  }
  if (isa<blk::ProgramIdOp, blk::LocalAllocOp, blk::LocalIndexOp,
          blk::AsyncCommitGroupOp, blk::AsyncWaitOp, blk::AsyncStoreWaitOp,
          blk::BarrierOp, blk::FenceAsyncSharedOp, blk::GriddepWaitOp,
          blk::LaunchDependentsOp, blk::IotaOp>(op))
    return "";
  if (isa_and_nonnull<blk::AttnBlockDialect>(op->getDialect()))
    return "not lowered to the GPU yet";
  bool hasTiles = llvm::any_of(op->getResultTypes(), llvm::IsaPred<TensorType>);
  if (hasTiles && isa<arith::ConstantOp>(op))
    return "tile constants are written tensor.splat in the GPU form";
  if (hasTiles &&
      !isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) &&
      !isa<tensor::SplatOp, scf::ForOp, scf::YieldOp, scf::IfOp>(op))
    return "not lowered to the GPU yet";
  return "";
}

/// Byte offsets of the kernel's shared buffers, in order, 16-byte aligned
/// (cp.async and ldmatrix rows), nvmma_shared ones kSharedAlign-aligned
/// from an aligned base (wgmma's swizzle), which costs kSharedAlign bytes
/// of slack; their total.
int64_t assignShared(Operation *root, SharedOffsets &offsets) {
  int64_t total = 0;
  root->walk([&](blk::LocalAllocOp op) {
    int64_t align = 16;
    // The interleaved layout (swizzleBytes = 0) needs 16-byte bounds only.
    auto nv = dyn_cast<blk::NvmmaSharedLayoutAttr>(op.getType().getEncoding());
    if (nv && nv.getSwizzleBytes() != 0) {
      offsets.alignedBase = true;
      align = kSharedAlign;
    }
    total = (total + align - 1) / align * align;
    offsets.bytes[op] = total;
    total += (op.getType().getSizeInBytes() + 15) / 16 * 16;
  });
  return total + (offsets.alignedBase ? kSharedAlign : 0);
}

/// An identity-layout view `type` of the flat buffer `flat` with the
/// dynamic sizes `sizes` (one per dim; null where `type` is static).
Value view4d(OpBuilder &b, Location loc, Value flat, MemRefType type,
             ArrayRef<Value> sizes) {
  SmallVector<OpFoldResult> sz, st(type.getRank());
  for (int64_t d = 0; d < type.getRank(); ++d)
    sz.push_back(type.isDynamicDim(d) ? OpFoldResult(sizes[d])
                                      : b.getIndexAttr(type.getDimSize(d)));
  Value stride = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    st[d] = stride;
    Value size =
        type.isDynamicDim(d)
            ? sizes[d]
            : arith::ConstantIndexOp::create(b, loc, type.getDimSize(d))
                  .getResult();
    stride = arith::MulIOp::create(b, loc, stride, size);
  }
  // Static strides where the type has them.
  SmallVector<int64_t> strides;
  int64_t offset;
  if (succeeded(type.getStridesAndOffset(strides, offset)))
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (!ShapedType::isDynamic(strides[d]))
        st[d] = b.getIndexAttr(strides[d]);
  return memref::ReinterpretCastOp::create(b, loc, type, flat,
                                           b.getIndexAttr(0), sz, st);
}

} // namespace

std::string mlir::attn::blockgpu::flatAbiUnsupported(TypeRange argTypes) {
  for (auto [i, t] : llvm::enumerate(argTypes)) {
    auto m = dyn_cast<MemRefType>(t);
    if (!m || !m.getLayout().isIdentity() || m.getMemorySpace())
      return "argument " + std::to_string(i) + " (" + str(t) +
             ") is not a memref with the identity layout in global memory, "
             "which the flat-pointer kernel ABI passes";
  }
  return "";
}

SmallVector<FlatAbiParam>
mlir::attn::blockgpu::flatAbiParams(TypeRange argTypes) {
  SmallVector<FlatAbiParam> params;
  for (auto [i, t] : llvm::enumerate(argTypes)) {
    auto m = cast<MemRefType>(t);
    params.push_back({static_cast<unsigned>(i), -1});
    for (int64_t d = 0; d < m.getRank(); ++d)
      if (m.isDynamicDim(d))
        params.push_back({static_cast<unsigned>(i), d});
  }
  return params;
}

int64_t mlir::attn::blockgpu::sharedMemoryBytes(func::FuncOp fn) {
  SharedOffsets offsets;
  return assignShared(fn, offsets);
}

namespace {

/// The gpu.func of kernel `fn` in the flat-pointer ABI (BlockGpuAbi.h):
/// each memref argument is the identity-layout view of its flat buffer
/// with the sizes that follow it.
FailureOr<gpu::GPUFuncOp> makeFlatAbiFunc(func::FuncOp fn, IRMapping &mapping) {
  if (std::string bad = flatAbiUnsupported(fn.getArgumentTypes()); !bad.empty())
    return fn.emitError("attn-block-to-gpu: ") << bad;
  OpBuilder b(fn);
  Location loc = fn.getLoc();
  SmallVector<FlatAbiParam> params = flatAbiParams(fn.getArgumentTypes());
  SmallVector<Type> types;
  for (FlatAbiParam p : params) {
    auto m = cast<MemRefType>(fn.getArgumentTypes()[p.arg]);
    types.push_back(p.dim < 0 ? Type(MemRefType::get({ShapedType::kDynamic},
                                                     m.getElementType()))
                              : b.getIndexType());
  }
  auto gf = gpu::GPUFuncOp::create(b, loc, fn.getName(),
                                   b.getFunctionType(types, {}));
  Block &entry = gf.getBody().front();
  OpBuilder eb = OpBuilder::atBlockBegin(&entry);
  for (unsigned a = 0; a < fn.getNumArguments(); ++a) {
    auto m = cast<MemRefType>(fn.getArgumentTypes()[a]);
    Value flat;
    SmallVector<Value> sizes(m.getRank());
    for (auto [i, p] : llvm::enumerate(params))
      if (p.arg == a)
        (p.dim < 0 ? flat : sizes[p.dim]) = entry.getArgument(i);
    mapping.map(fn.getArgument(a), view4d(eb, loc, flat, m, sizes));
  }
  return gf;
}

LogicalResult lowerKernel(func::FuncOp fn) {
  auto warps = fn->getAttrOfType<IntegerAttr>("attn_block.num_warps");
  if (!warps || warps.getInt() < 1)
    return fn.emitError("attn-block-to-gpu: a GPU kernel needs "
                        "attn_block.num_warps");
  const int64_t threads = 32 * warps.getInt();
  auto transposed = transposedLoads(fn);
  WalkResult bad = fn.walk([&](Operation *op) {
    std::string why = unsupported(op, transposed, threads);
    if (why.empty())
      return WalkResult::advance();
    op->emitError("attn-block-to-gpu cannot lower '")
        << op->getName() << "': " << why;
    return WalkResult::interrupt();
  });
  if (bad.wasInterrupted())
    return failure();
  SharedOffsets offsets;
  int64_t shared = assignShared(fn, offsets);

  IRMapping mapping;
  auto gf = makeFlatAbiFunc(fn, mapping);
  if (failed(gf))
    return failure();
  MLIRContext *ctx = fn.getContext();
  gf->setKnownBlockSizeAttr(
      DenseI32ArrayAttr::get(ctx, {static_cast<int32_t>(threads), 1, 1}));
  (*gf)->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), UnitAttr::get(ctx));
  (*gf)->setAttr(blk::kSharedBytesAttrName,
                 IntegerAttr::get(IntegerType::get(ctx, 64), shared));
  if (auto blocks =
          fn->getAttrOfType<IntegerAttr>(blk::kMinBlocksPerSmAttrName))
    (*gf)->setAttr(
        NVVM::NVVMDialect::getMinctasmAttrName(),
        IntegerAttr::get(IntegerType::get(ctx, 32), blocks.getInt()));
  // Move the body after the ABI's prologue; func.return -> gpu.return.
  Block &src = fn.getBody().front();
  Block &dst = gf->getBody().front();
  for (BlockArgument a : src.getArguments())
    a.replaceAllUsesWith(mapping.lookup(a));
  dst.getOperations().splice(dst.end(), src.getOperations());
  auto ret = cast<func::ReturnOp>(dst.getTerminator());
  OpBuilder rb(ret);
  gpu::ReturnOp::create(rb, ret.getLoc());
  ret.erase();
  fn.erase();

  BlockTypeConverter tc(ctx);
  RewritePatternSet patterns(ctx);
  ConversionTarget target(*ctx);
  target.addLegalDialect<gpu::GPUDialect, nvgpu::NVGPUDialect,
                         NVVM::NVVMDialect, LLVM::LLVMDialect,
                         memref::MemRefDialect, vector::VectorDialect>();
  target.addIllegalDialect<blk::AttnBlockDialect>();
  target.addDynamicallyLegalDialect<arith::ArithDialect, math::MathDialect>(
      [&](Operation *op) { return tc.isLegal(op); });
  target.addIllegalOp<tensor::SplatOp>();
  scf::populateSCFStructuralTypeConversionsAndLegality(tc, patterns, target);
  populateElementwisePatterns(tc, patterns);
  populateReducePatterns(tc, patterns);
  populateScanPatterns(tc, patterns);
  populateConvertLayoutPatterns(tc, patterns);
  NonNegativeRowCopies nonNegativeRows = findNonNegativeRowCopies(*gf);
  populateAsyncCopyPatterns(tc, patterns, offsets, nonNegativeRows, threads);
  populateDotPatterns(tc, patterns, transposed);
  populateWgmmaPatterns(tc, patterns);
  populateLoadStorePatterns(tc, patterns);
  populateLocalStorePatterns(tc, patterns);
  populateBulkStorePatterns(tc, patterns, threads);
  if (failed(applyPartialConversion(*gf, target, std::move(patterns))))
    return failure();
  sinkOperandLoads(*gf);
  return success();
}

struct AttnBlockToGPUPass : attn::impl::AttnBlockToGPUBase<AttnBlockToGPUPass> {
  void runOnOperation() override {
    SmallVector<func::FuncOp> kernels;
    getOperation().walk([&](gpu::GPUModuleOp gm) {
      for (auto fn : gm.getOps<func::FuncOp>())
        if (fn->hasAttr("attn_block.kernel"))
          kernels.push_back(fn);
    });
    for (func::FuncOp fn : kernels)
      if (failed(lowerKernel(fn)))
        return signalPassFailure();
  }
};

} // namespace
