//===- KernelSupport.cpp - shared by the CPU and CUDA kernels -------------===//

#include "KernelSupport.h"

#include "ShapeSpecialize.h"
#include "attn/Dialect/AttnBlockDialect.h"
#include "attn/Dialect/AttnDialect.h"
#include "attn/Dialect/AttnLaunchDialect.h"
#include "attn/Dialect/SourceLimits.h"
#include "attn/Memory.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/SourceMgr.h"

#include <cmath>
#include <cstring>
#include <limits>

using llvm::createStringError;
using llvm::Error;
using llvm::Expected;

namespace attn::detail {

DialectRegistry kernelRegistry() {
  DialectRegistry registry;
  registry.insert<mlir::attn::AttnDialect, mlir::attn_block::AttnBlockDialect,
                  mlir::attn_launch::AttnLaunchDialect>();
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
  if (t.isInteger(32))
    return DType::I32;
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
  const bool narrowing = dtypeSize(want) < dtypeSize(in.dtype);
  for (size_t i = 0, n = in.numel(); i < n; ++i) {
    double x = in.get(i);
    // An i64 beyond i32's range is refused, not wrapped.
    bool fits = !(narrowing && isInt(want)) ||
                (x >= std::numeric_limits<int32_t>::min() &&
                 x <= std::numeric_limits<int32_t>::max());
    if (fits)
      out.set(i, x);
    // A finite value that becomes inf in the narrower type is refused, not
    // silently turned into inf (an f64 1e300 read for an f32 argument).
    if (!fits || (narrowing && std::isfinite(x) && !isInt(want) &&
                  !std::isfinite(out.get(i))))
      return createStringError(
          "argument " + std::to_string(idx) + ": element " + std::to_string(i) +
          " = " + std::to_string(x) + " of the " + dtypeName(in.dtype).str() +
          " input overflows " + dtypeName(want).str());
  }
  return std::move(out.bytes);
}

Error ProgramKernel::load(llvm::StringRef source, llvm::StringRef entryName,
                          llvm::StringRef bufferName) {
  ctx = std::make_unique<MLIRContext>(kernelRegistry());
  ctx->loadAllAvailableDialects();
  entry = entryName.str();
  if (std::optional<std::string> deep =
          mlir::attn::checkSourceNesting(source, bufferName))
    return createStringError("cannot parse " + bufferName.str() + ":\n" +
                             *deep);
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
  func.walk([&](Operation *op) {
    Value g, beta, cu, k;
    if (auto s = dyn_cast<mlir::attn::ScoresOp>(op)) {
      g = s.getG();
      beta = s.getBeta();
      cu = s.getCuSeqlens();
      k = s.getK();
    } else if (auto a = dyn_cast<mlir::attn::AttentionOp>(op)) {
      g = a.getG();
      beta = a.getBeta();
      cu = a.getCuSeqlens();
      k = a.getK();
    } else if (auto sg = dyn_cast<mlir::attn::ScoresGradOp>(op)) {
      g = sg.getG();
      beta = sg.getBeta();
      cu = sg.getCuSeqlens();
      k = sg.getK();
    } else if (auto ag = dyn_cast<mlir::attn::AttentionGradOp>(op)) {
      g = ag.getG();
      beta = ag.getBeta();
      cu = ag.getCuSeqlens();
      k = ag.getK();
    }
    // Only entry arguments: a value computed in the program is not known
    // before it runs.
    auto entryArg = [&](Value v) -> std::optional<size_t> {
      auto arg = dyn_cast_or_null<BlockArgument>(v);
      if (arg && arg.getOwner()->isEntryBlock() &&
          arg.getOwner()->getParentOp() == func.getOperation())
        return arg.getArgNumber();
      return std::nullopt;
    };
    auto note = [&](Value v, std::vector<size_t> &list) {
      if (auto n = entryArg(v); n && !llvm::is_contained(list, *n))
        list.push_back(*n);
    };
    note(g, gateArgs);
    note(beta, betaArgs);
    if (auto n = entryArg(cu))
      cuSeqlensArgs.emplace_back(*n, entryArg(k));
  });
  if (func.getNumResults() == 0)
    return createStringError("@" + entry +
                             " must return at least one tensor, it returns "
                             "none");
  for (auto [i, t] : llvm::enumerate(func.getResultTypes())) {
    auto r =
        sigOf(t, func.getNumResults() == 1 ? std::string("the result")
                                           : "result " + std::to_string(i));
    if (!r)
      return r.takeError();
    ress.push_back(*r);
  }
  return Error::success();
}

namespace {
/// The element at `p` as a double.
double loadElement(const uint8_t *p, DType dtype) {
  switch (dtype) {
  case DType::F32: {
    float x;
    std::memcpy(&x, p, 4);
    return x;
  }
  case DType::F64: {
    double x;
    std::memcpy(&x, p, 8);
    return x;
  }
  case DType::F16:
  case DType::BF16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return dtype == DType::F16 ? halfToFloat(h) : bf16ToFloat(h);
  }
  case DType::I64: {
    int64_t x;
    std::memcpy(&x, p, 8);
    return double(x);
  }
  case DType::I32: {
    int32_t x;
    std::memcpy(&x, p, 4);
    return x;
  }
  }
  return 0;
}

/// The first element of `view` (row-major order) for which `bad` holds, as
/// (linear index, value).
template <typename F>
std::optional<std::pair<int64_t, double>> findElement(const TensorView &view,
                                                      F bad) {
  size_t rank = view.shape.size(), esz = dtypeSize(view.dtype);
  int64_t n = view.numel();
  llvm::SmallVector<int64_t, 4> idx(rank, 0);
  auto *base = static_cast<const uint8_t *>(view.data);
  for (int64_t lin = 0; lin < n; ++lin) {
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d)
      off += idx[d] * view.stride(d);
    double x = loadElement(base + off * esz, view.dtype);
    if (bad(x))
      return std::make_pair(lin, x);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < view.shape[d])
        break;
      idx[d] = 0;
    }
  }
  return std::nullopt;
}
} // namespace

/// Packed sequences' offsets (input `idx`): N + 1 >= 2 of them (on any
/// device: the kernels read cu[1]) and, in host memory, nondecreasing from 0
/// to S (the keys' length, where known).
static Error checkCuSeqlens(const TensorView &cu, size_t idx,
                            std::optional<int64_t> s) {
  std::string what = "input " + std::to_string(idx) +
                     " (cu_seqlens, packed sequences' offsets)";
  if (cu.numel() < 2)
    return createStringError(what + " holds " + std::to_string(cu.numel()) +
                             " offsets: it needs N + 1 >= 2 (0, then the end "
                             "of each sequence)");
  if (cu.device != Device::CPU)
    return Error::success();
  double prev = 0;
  for (int64_t n = 0; n < cu.numel(); ++n) {
    double x = loadElement(static_cast<const uint8_t *>(cu.data) +
                               n * cu.stride(0) * dtypeSize(cu.dtype),
                           cu.dtype);
    if ((n == 0 && x != 0) || x < prev)
      return createStringError(what + " holds " +
                               std::to_string(static_cast<int64_t>(x)) +
                               " at element " + std::to_string(n) +
                               ": offsets must start at 0 and never decrease");
    prev = x;
  }
  if (s && prev != static_cast<double>(*s))
    return createStringError(
        what + " ends at " + std::to_string(static_cast<int64_t>(prev)) +
        ": the last offset must be the sequence length " + std::to_string(*s));
  return Error::success();
}

Error ProgramKernel::checkInputValues(llvm::ArrayRef<TensorView> inputs) const {
  auto skip = [&](size_t idx) {
    const TensorView &v = inputs[idx];
    // Device memory is not read here: that would wait for the stream.
    return v.device != Device::CPU || v.dtype == DType::I32 ||
           v.dtype == DType::I64;
  };
  for (size_t idx : gateArgs) {
    if (skip(idx))
      continue;
    auto hit = findElement(inputs[idx], [](double x) { return std::isinf(x); });
    if (!hit)
      continue;
    bool minus = hit->second < 0;
    return createStringError(
        "input " + std::to_string(idx) + " (a log forget gate) holds " +
        (minus ? "-inf" : "+inf") + " at element " +
        std::to_string(hit->first) +
        (minus ? " (a forget gate of exactly 0)" : "") +
        ": not supported, the gate bias is computed from prefix sums and "
        "would be NaN (-inf - -inf)");
  }
  for (size_t idx : betaArgs) {
    if (skip(idx))
      continue;
    // NaN is not refused: it propagates like NaN in any other input.
    auto hit = findElement(inputs[idx], [](double x) {
      return x < kMinPathBeta || x > kMaxPathBeta;
    });
    if (!hit)
      continue;
    std::string value;
    llvm::raw_string_ostream(value) << hit->second;
    return createStringError(
        "input " + std::to_string(idx) + " (PaTH's beta) holds " + value +
        " at element " + std::to_string(hit->first) +
        ": beta must lie in [0, 2], where each transform I - beta w w^T "
        "(unit w) is a reflection or a contraction; outside it the products "
        "of transforms grow without bound and overflow");
  }
  for (auto [idx, keys] : cuSeqlensArgs) {
    if (Error e =
            checkCuSeqlens(inputs[idx], idx,
                           keys ? std::optional<int64_t>(inputs[*keys].shape[2])
                                : std::nullopt))
      return e;
  }
  return Error::success();
}

Error ProgramKernel::checkInputValues(llvm::ArrayRef<HostArray> inputs) const {
  std::vector<TensorView> views;
  for (const HostArray &a : inputs)
    views.emplace_back(const_cast<uint8_t *>(a.bytes.data()), a.dtype, a.shape);
  return checkInputValues(views);
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
    // The data must be exactly what the shape says: a wrapped element
    // count (e.g. 2^32 x 2^32) must not pass as an empty array.
    std::optional<uint64_t> bytes = checkedBytes(in.shape, dtypeSize(in.dtype));
    if (!bytes)
      return createStringError("input " + std::to_string(i) + " has " +
                               TensorSig{in.dtype, in.shape}.str() +
                               ": more than 2^62 bytes");
    if (*bytes != in.bytes.size())
      return createStringError("input " + std::to_string(i) + " has " +
                               TensorSig{in.dtype, in.shape}.str() + " (" +
                               std::to_string(*bytes) + " bytes) but holds " +
                               std::to_string(in.bytes.size()) + " bytes");
    shapes.push_back(in.shape);
  }
  if (auto r = verify(program, entry, shapes); !r)
    return r.takeError();
  return shapes;
}

Expected<std::vector<std::vector<int64_t>>>
InputChecker::verify(ModuleOp program, llvm::StringRef entry,
                     const std::vector<std::vector<int64_t>> &shapes) {
  // Verifying clones the function: once per distinct set of input shapes,
  // not on every launch.
  std::lock_guard<std::mutex> lock(mutex);
  auto it = verified.find(shapes);
  if (it != verified.end())
    return it->second;
  auto func = program.lookupSymbol<func::FuncOp>(entry);
  std::vector<std::vector<int64_t>> result;
  if (Error e = verifyAtShapes(func, shapes, &result))
    return std::move(e);
  verified.emplace(shapes, result);
  return result;
}

Error checkView(const TensorView &view, const TensorSig &sig, Device device,
                size_t alignment, llvm::StringRef what, bool memory) {
  auto fail = [&](const std::string &why) {
    return createStringError(what.str() + " (" + sig.str() + "): " + why);
  };
  TensorSig got{view.dtype,
                std::vector<int64_t>(view.shape.begin(), view.shape.end())};
  if (view.dtype != sig.dtype)
    return fail("element type " + dtypeName(view.dtype).str() + ", expected " +
                dtypeName(sig.dtype).str());
  bool ok = view.shape.size() == sig.shape.size();
  for (size_t d = 0; ok && d < sig.shape.size(); ++d)
    ok = view.shape[d] >= 0 &&
         (sig.shape[d] < 0 || sig.shape[d] == view.shape[d]);
  if (!ok)
    return fail("got shape " + got.str());
  if (!memory)
    return Error::success();
  if (view.device != device)
    return fail("memory on the " + deviceName(view.device).str() +
                ", the kernel runs on the " + deviceName(device).str());
  if (!view.strides.empty() && view.strides.size() != view.shape.size())
    return fail(std::to_string(view.strides.size()) + " strides for rank " +
                std::to_string(view.shape.size()));
  for (int64_t s : view.strides)
    if (s < 0)
      return fail("negative stride " + std::to_string(s));
  // Every offset computed from the shape and strides must fit: a product
  // that wraps would address memory outside the view.
  if (!checkedBytes(view.shape, dtypeSize(view.dtype)))
    return fail("more than 2^62 bytes");
  if (view.numel() == 0)
    return Error::success();
  std::optional<uint64_t> span = spanBytes(view);
  if (!span)
    return fail("its strides reach more than 2^62 bytes");
  if (!view.data)
    return fail("null data pointer");
  if (reinterpret_cast<uintptr_t>(view.data) >
      std::numeric_limits<uintptr_t>::max() - *span)
    return fail("its strides reach past the end of the address space");
  size_t align = alignment ? alignment : dtypeSize(view.dtype);
  if (reinterpret_cast<uintptr_t>(view.data) % align != 0)
    return fail("data pointer not aligned to " + std::to_string(align) +
                " bytes");
  return Error::success();
}

bool viewsOverlap(const TensorView &a, const TensorView &b) {
  if (!a.numel() || !b.numel())
    return false;
  // Both spans were bounded by checkView (or are of host arrays).
  auto lo = [](const TensorView &v) {
    return reinterpret_cast<uintptr_t>(v.data);
  };
  return lo(a) < lo(b) + *spanBytes(b) && lo(b) < lo(a) + *spanBytes(a);
}

std::optional<uint64_t> spanBytes(const TensorView &view) {
  uint64_t last = 0; // offset of the last element, in elements
  for (size_t d = 0; d < view.shape.size(); ++d) {
    if (view.shape[d] == 0)
      return 0;
    uint64_t step;
    if (__builtin_mul_overflow(uint64_t(view.shape[d] - 1),
                               uint64_t(view.stride(d)), &step) ||
        __builtin_add_overflow(last, step, &last))
      return std::nullopt;
  }
  uint64_t bytes;
  if (__builtin_add_overflow(last, uint64_t(1), &bytes) ||
      __builtin_mul_overflow(bytes, uint64_t(dtypeSize(view.dtype)), &bytes) ||
      bytes > kMaxArrayBytes)
    return std::nullopt;
  return bytes;
}

void copyStrided(const TensorView &src, const TensorView &dst) {
  size_t rank = src.shape.size(), esz = dtypeSize(src.dtype);
  int64_t n = src.numel();
  if (n == 0)
    return;
  if (src.isContiguous() && dst.isContiguous()) {
    std::memcpy(dst.data, src.data, n * esz);
    return;
  }
  // An odometer over the index space; the innermost dim is one loop.
  llvm::SmallVector<int64_t, 4> idx(rank, 0);
  auto *s = static_cast<const uint8_t *>(src.data);
  auto *d = static_cast<uint8_t *>(dst.data);
  int64_t inner = rank ? src.shape[rank - 1] : 1;
  int64_t ss = rank ? src.stride(rank - 1) : 1,
          ds = rank ? dst.stride(rank - 1) : 1;
  for (int64_t done = 0; done < n; done += inner) {
    int64_t so = 0, dof = 0;
    for (size_t k = 0; k + 1 < rank; ++k) {
      so += idx[k] * src.stride(k);
      dof += idx[k] * dst.stride(k);
    }
    for (int64_t i = 0; i < inner; ++i)
      std::memcpy(d + (dof + i * ds) * esz, s + (so + i * ss) * esz, esz);
    for (size_t k = rank - 1; k-- > 0;) {
      if (++idx[k] < src.shape[k])
        break;
      idx[k] = 0;
    }
  }
}

Expected<std::vector<std::vector<int64_t>>>
ProgramKernel::resultShapes(llvm::ArrayRef<TensorView> inputs) {
  if (inputs.size() != args.size())
    return createStringError("@" + entry + " takes " +
                             std::to_string(args.size()) + " inputs, got " +
                             std::to_string(inputs.size()));
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    // Only shapes and dtypes matter here.
    if (Error e = checkView(inputs[i], args[i], dev, 0,
                            "input " + std::to_string(i), /*memory=*/false))
      return std::move(e);
    shapes.emplace_back(inputs[i].shape.begin(), inputs[i].shape.end());
  }
  return resultShapeAt(shapes);
}

namespace {
/// The shape of `returned` (a result not from an attn op) at input
/// `shapes`: a returned argument's, or, in a block program written by hand
/// (its launches fill a buffer), that of a to_tensor of a memref.alloc
/// whose dynamic sizes are tensor.dim of arguments at constant indices.
std::optional<std::vector<int64_t>>
shapeOfReturned(func::FuncOp fn, Value returned,
                const std::vector<std::vector<int64_t>> &shapes) {
  if (auto arg = dyn_cast<BlockArgument>(returned))
    return shapes[arg.getArgNumber()];
  auto toTensor = returned.getDefiningOp<bufferization::ToTensorOp>();
  auto alloc = toTensor ? toTensor.getBuffer().getDefiningOp<memref::AllocOp>()
                        : memref::AllocOp();
  if (!alloc)
    return std::nullopt;
  std::vector<int64_t> shape;
  auto sizes = alloc.getDynamicSizes();
  size_t next = 0;
  for (int64_t d : alloc.getType().getShape()) {
    if (d >= 0) {
      shape.push_back(d);
      continue;
    }
    auto dim = sizes[next++].getDefiningOp<tensor::DimOp>();
    auto arg = dim ? dyn_cast<BlockArgument>(dim.getSource()) : nullptr;
    std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
    if (!arg || !index || arg.getOwner() != &fn.getBody().front() ||
        *index >= static_cast<int64_t>(shapes[arg.getArgNumber()].size()))
      return std::nullopt;
    shape.push_back(shapes[arg.getArgNumber()][*index]);
  }
  return shape;
}
} // namespace

Expected<std::vector<std::vector<int64_t>>>
ProgramKernel::resultShapeAt(const std::vector<std::vector<int64_t>> &shapes) {
  auto r = checker.verify(*program, entry, shapes);
  if (!r)
    return r;
  std::vector<std::vector<int64_t>> out = *r;
  auto fn = program->lookupSymbol<func::FuncOp>(entry);
  Operation *ret = fn.getBody().front().getTerminator();
  for (auto [i, shape] : llvm::enumerate(out)) {
    const TensorSig &sig = ress[i];
    // Known from the attn ops, a rank-0 result, or a static result type.
    if (!shape.empty() || sig.shape.empty() ||
        llvm::none_of(sig.shape, [](int64_t d) { return d < 0; })) {
      if (shape.empty())
        shape = sig.shape;
      continue;
    }
    std::optional<std::vector<int64_t>> known =
        shapeOfReturned(fn, ret->getOperand(i), shapes);
    if (!known)
      return createStringError(
          "cannot infer the shape of " +
          (ress.size() == 1 ? std::string("the result")
                            : "result " + std::to_string(i)) +
          " of @" + entry + " (it does not come from an attn op)");
    shape = std::move(*known);
  }
  return out;
}

/// Refuses an output whose elements share addresses: written in place, two
/// elements at one address would race, and a zero stride puts every
/// element of its dim at one address. The strides sorted, each must step
/// over everything the smaller ones span (checkView bounded the span, so
/// the products cannot wrap).
static Error checkOutputStrides(const TensorView &output,
                                llvm::StringRef what) {
  llvm::SmallVector<std::pair<uint64_t, uint64_t>, 4> dims; // (stride, extent)
  for (size_t d = 0; d < output.shape.size(); ++d)
    if (output.shape[d] > 1)
      dims.push_back({uint64_t(output.stride(d)), uint64_t(output.shape[d])});
  llvm::sort(dims);
  for (size_t d = 0; d < dims.size(); ++d)
    if (dims[d].first == 0 ||
        (d > 0 && dims[d].first < dims[d - 1].first * dims[d - 1].second))
      return createStringError(what.str() + "'s strides make elements overlap");
  return Error::success();
}

Expected<std::vector<std::vector<int64_t>>>
ProgramKernel::checkLaunch(llvm::ArrayRef<TensorView> inputs,
                           llvm::ArrayRef<TensorView> outputs,
                           size_t alignment) {
  if (inputs.size() != args.size())
    return createStringError("@" + entry + " takes " +
                             std::to_string(args.size()) + " inputs, got " +
                             std::to_string(inputs.size()));
  if (outputs.size() != ress.size())
    return createStringError(
        "@" + entry + " returns " + std::to_string(ress.size()) + " result" +
        (ress.size() == 1 ? "" : "s") + ", got " +
        std::to_string(outputs.size()) + " output" +
        (outputs.size() == 1 ? "" : "s") + " (one per result)");
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (Error e = checkView(inputs[i], args[i], dev, alignment,
                            "input " + std::to_string(i)))
      return std::move(e);
    shapes.emplace_back(inputs[i].shape.begin(), inputs[i].shape.end());
  }
  // One result keeps the messages' old name, "the output".
  auto name = [&](size_t i) {
    return ress.size() == 1 ? std::string("the output")
                            : "output " + std::to_string(i);
  };
  for (size_t i = 0; i < outputs.size(); ++i)
    if (Error e = checkView(outputs[i], ress[i], dev, alignment, name(i)))
      return std::move(e);
  auto results = resultShapeAt(shapes);
  if (!results)
    return results.takeError();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorView &out = outputs[i];
    if (!llvm::equal((*results)[i], llvm::ArrayRef<int64_t>(out.shape))) {
      TensorSig want{ress[i].dtype, (*results)[i]}, got{out.dtype, {}};
      got.shape.assign(out.shape.begin(), out.shape.end());
      return createStringError(name(i) + " must be " + want.str() +
                               " for these inputs, got " + got.str());
    }
    if (Error e = checkOutputStrides(out, name(i)))
      return std::move(e);
    // Each result is written where it lies: two outputs on the same bytes
    // would overwrite each other.
    for (size_t j = 0; j < i; ++j)
      if (viewsOverlap(outputs[j], out))
        return createStringError(
            "outputs " + std::to_string(j) + " and " + std::to_string(i) +
            " overlap in memory; each result needs its own memory");
  }
  if (Error e = checkInputValues(inputs))
    return std::move(e);
  return results;
}

Expected<ProgramKernel::HostInputs>
ProgramKernel::convertInputs(llvm::ArrayRef<HostArray> inputs) {
  auto shapes = checkInputs(inputs);
  if (!shapes)
    return shapes.takeError();
  HostInputs h;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto bytes = convertTo(inputs[i], args[i].dtype, i);
    if (!bytes)
      return bytes.takeError();
    h.storage.push_back(std::move(*bytes));
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    h.views.emplace_back(h.storage[i].data(), args[i].dtype, (*shapes)[i]);
  return std::move(h);
}

} // namespace attn::detail
