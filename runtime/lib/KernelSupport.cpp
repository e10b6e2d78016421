//===- KernelSupport.cpp - shared by the CPU and CUDA kernels -------------===//

#include "KernelSupport.h"

#include "ShapeSpecialize.h"
#include "attn/Dialect/AttnBlockDialect.h"
#include "attn/Dialect/AttnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/SourceMgr.h"

using llvm::createStringError;
using llvm::Error;
using llvm::Expected;

namespace attn::detail {

DialectRegistry kernelRegistry() {
  DialectRegistry registry;
  registry
      .insert<mlir::attn::AttnDialect, mlir::attn_block::AttnBlockDialect>();
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  return registry;
}

namespace {
Expected<DType> dtypeOf(Type t) {
  if (t.isF32())
    return DType::F32;
  if (t.isF16())
    return DType::F16;
  if (t.isBF16())
    return DType::BF16;
  if (t.isInteger(64))
    return DType::I64;
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return createStringError("unsupported element type " + s);
}

} // namespace

Expected<TensorSig> sigOf(Type t, llvm::StringRef what) {
  auto ranked = dyn_cast<RankedTensorType>(t);
  if (!ranked)
    return createStringError(what.str() + " must be a ranked tensor");
  auto dtype = dtypeOf(ranked.getElementType());
  if (!dtype)
    return createStringError(what.str() + ": " +
                             llvm::toString(dtype.takeError()));
  TensorSig sig{*dtype, {}};
  for (int64_t d : ranked.getShape())
    sig.shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
  return sig;
}

/// Converts `in` to the element type `want`, or fails naming argument `idx`.
Expected<std::vector<uint8_t>> convertTo(const HostArray &in, DType want,
                                         size_t idx) {
  if (in.dtype == want)
    return in.bytes;
  auto isInt = [](DType t) { return t == DType::I32 || t == DType::I64; };
  if (isInt(in.dtype) != isInt(want))
    return createStringError("argument " + std::to_string(idx) +
                             ": cannot convert " + dtypeName(in.dtype).str() +
                             " to " + dtypeName(want).str());
  HostArray out{want, in.shape,
                std::vector<uint8_t>(in.numel() * dtypeSize(want))};
  for (size_t i = 0, n = in.numel(); i < n; ++i)
    out.set(i, in.get(i));
  return std::move(out.bytes);
}

Error ProgramKernel::load(llvm::StringRef source, llvm::StringRef entryName,
                          llvm::StringRef bufferName) {
  ctx = std::make_unique<MLIRContext>(kernelRegistry());
  ctx->loadAllAvailableDialects();
  entry = entryName.str();
  DiagnosticCollector diags(ctx.get());
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, bufferName), llvm::SMLoc());
  program = parseSourceFile<ModuleOp>(sourceMgr, ctx.get());
  if (!program)
    return diags.error("cannot parse " + bufferName.str());
  auto func = program->lookupSymbol<func::FuncOp>(entry);
  if (!func || func.isDeclaration())
    return createStringError("no function @" + entry + " in " +
                             bufferName.str());
  for (auto [i, t] : llvm::enumerate(func.getArgumentTypes())) {
    auto sig = sigOf(t, "argument " + std::to_string(i));
    if (!sig)
      return sig.takeError();
    args.push_back(*sig);
  }
  if (func.getNumResults() != 1)
    return createStringError("@" + entry +
                             " must return exactly one tensor, it returns " +
                             std::to_string(func.getNumResults()));
  auto r = sigOf(func.getResultTypes()[0], "the result");
  if (!r)
    return r.takeError();
  res = *r;
  return Error::success();
}

Expected<std::vector<std::vector<int64_t>>>
InputChecker::check(ModuleOp program, llvm::StringRef entry,
                    const std::vector<TensorSig> &args,
                    llvm::ArrayRef<HostArray> inputs) {
  if (inputs.size() != args.size())
    return createStringError("@" + entry.str() + " takes " +
                             std::to_string(args.size()) + " inputs, got " +
                             std::to_string(inputs.size()));
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSig &sig = args[i];
    const HostArray &in = inputs[i];
    bool ok = in.shape.size() == sig.shape.size();
    for (size_t d = 0; ok && d < sig.shape.size(); ++d)
      ok =
          in.shape[d] >= 0 && (sig.shape[d] < 0 || sig.shape[d] == in.shape[d]);
    if (!ok) {
      TensorSig got{in.dtype, in.shape};
      return createStringError("input " + std::to_string(i) + " must be " +
                               sig.str() + ", got " + got.str());
    }
    shapes.push_back(in.shape);
  }
  // Verifying clones the function: once per distinct set of input shapes,
  // not on every run.
  std::lock_guard<std::mutex> lock(mutex);
  if (!verified.count(shapes)) {
    auto func = program.lookupSymbol<func::FuncOp>(entry);
    if (Error e = verifyAtShapes(func, shapes))
      return std::move(e);
    verified.insert(shapes);
  }
  return shapes;
}

} // namespace attn::detail
