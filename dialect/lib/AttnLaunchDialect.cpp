//===- AttnLaunchDialect.cpp - launch plans as data -----------------------===//

#include "attn/Dialect/AttnLaunchDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn_launch;

#include "attn/Dialect/AttnLaunchDialect.cpp.inc"
#include "attn/Dialect/AttnLaunchEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/AttnLaunchAttrs.cpp.inc"

void AttnLaunchDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "attn/Dialect/AttnLaunchAttrs.cpp.inc"
      >();
}

/// A map of the plan's integer language: no dims, at most `symbols`
/// symbols, `results` results (0: any number, at least one).
static LogicalResult checkMap(function_ref<InFlightDiagnostic()> emitError,
                              AffineMap map, StringRef what, unsigned symbols,
                              unsigned results = 1) {
  if (!map)
    return emitError() << what << ": missing map";
  if (map.getNumDims() != 0)
    return emitError() << what << ": the map must have no dims, only symbols";
  if (map.getNumSymbols() > symbols)
    return emitError() << what << ": the map has " << map.getNumSymbols()
                       << " symbols, only " << symbols << " are defined there";
  if (results ? map.getNumResults() != results : map.getNumResults() == 0)
    return emitError() << what << ": the map must have "
                       << (results ? std::to_string(results) : "at least one")
                       << " result" << (results == 1 ? "" : "s") << ", got "
                       << map.getNumResults();
  return success();
}

LogicalResult DimAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              StringRef name, int64_t input, int64_t dim) {
  if (name.empty())
    return emitError() << "a plan dim needs a name";
  if (input < 0 || dim < 0)
    return emitError() << "dim '" << name
                       << "': input and dim must be non-negative";
  return success();
}

LogicalResult ArgAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              ArgKind kind, int64_t index, AffineMap value) {
  if (index < 0)
    return emitError() << "argument index " << index << " is negative";
  if (kind == ArgKind::scalar && index != 0)
    return emitError() << "a scalar argument has no index";
  if ((kind == ArgKind::scratch || kind == ArgKind::scalar) && !value)
    return emitError() << "a " << stringifyArgKind(kind)
                       << " argument needs its "
                       << (kind == ArgKind::scalar ? "value" : "elements");
  if (value && value.getNumResults() != 1)
    return emitError() << "an argument's map must have one result";
  return success();
}

// input 0 [, elements = map] | output [1] [, elements = map]
// | scratch 1, elements = map | scalar map
Attribute ArgAttr::parse(AsmParser &parser, Type) {
  StringRef word;
  if (parser.parseLess() || parser.parseKeyword(&word))
    return {};
  std::optional<ArgKind> kind = symbolizeArgKind(word);
  if (!kind) {
    parser.emitError(parser.getCurrentLocation(),
                     "expected input, output, scratch or scalar");
    return {};
  }
  int64_t index = 0;
  AffineMap value;
  if (*kind == ArgKind::input || *kind == ArgKind::scratch) {
    if (parser.parseInteger(index))
      return {};
  } else if (*kind == ArgKind::output) {
    // The first (often only) result's view is plain `output`.
    OptionalParseResult parsed = parser.parseOptionalInteger(index);
    if (parsed.has_value() && failed(*parsed))
      return {};
  }
  if (*kind == ArgKind::scalar) {
    if (parser.parseAffineMap(value))
      return {};
  } else if (succeeded(parser.parseOptionalComma())) {
    if (parser.parseKeyword("elements") || parser.parseEqual() ||
        parser.parseAffineMap(value))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                    parser.getContext(), *kind, index, value);
}

void ArgAttr::print(AsmPrinter &p) const {
  p << '<' << stringifyArgKind(getKind());
  if (getKind() == ArgKind::input || getKind() == ArgKind::scratch ||
      (getKind() == ArgKind::output && getIndex() != 0))
    p << ' ' << getIndex();
  if (getKind() == ArgKind::scalar)
    p << ' ' << getValue();
  else if (getValue())
    p << ", elements = " << getValue();
  p << '>';
}

LogicalResult KernelAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 SymbolRefAttr name, AffineMap grid,
                                 DenseI64ArrayAttr block, int64_t smem,
                                 ArrayAttr args, bool dependent) {
  if (!name)
    return emitError() << "a kernel needs a name";
  if (failed(checkMap(emitError, grid, "the grid",
                      std::numeric_limits<unsigned>::max(), 3)))
    return failure();
  if (!block || block.size() != 3 ||
      llvm::any_of(block.asArrayRef(), [](int64_t b) { return b < 1; }))
    return emitError() << "block must be three positive thread counts";
  if (smem < 0)
    return emitError() << "negative dynamic shared memory " << smem;
  for (Attribute a : args)
    if (!isa<ArgAttr>(a))
      return emitError() << "kernel arguments must be #attn_launch.arg, got "
                         << a;
  return success();
}

LogicalResult PlanAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               Device device, ArrayAttr dims, ArrayAttr values,
                               ArrayAttr buffers, ArrayAttr kernels) {
  llvm::SmallDenseSet<StringRef> names;
  for (Attribute d : dims) {
    auto dim = dyn_cast<DimAttr>(d);
    if (!dim)
      return emitError() << "plan dims must be #attn_launch.dim, got " << d;
    if (!names.insert(dim.getName()).second)
      return emitError() << "plan dim '" << dim.getName()
                         << "' is defined twice";
  }
  unsigned nd = dims.size(), ns = nd + values.size();
  for (auto [i, v] : llvm::enumerate(values)) {
    auto map = dyn_cast<AffineMapAttr>(v);
    if (!map)
      return emitError() << "plan values must be affine maps, got " << v;
    if (failed(checkMap(emitError, map.getValue(), "value " + std::to_string(i),
                        nd + i, 0)))
      return failure();
  }
  for (auto [i, b] : llvm::enumerate(buffers)) {
    auto buf = dyn_cast<BufferAttr>(b);
    if (!buf)
      return emitError() << "plan buffers must be #attn_launch.buffer, got "
                         << b;
    if (failed(checkMap(emitError, buf.getBytes(),
                        "buffer '" + buf.getName().str() + "'", ns)))
      return failure();
  }
  if (kernels.empty())
    return emitError() << "a plan launches at least one kernel";
  for (Attribute k : kernels) {
    auto kernel = dyn_cast<KernelAttr>(k);
    if (!kernel)
      return emitError() << "plan kernels must be #attn_launch.kernel, got "
                         << k;
    std::string what = "kernel " + kernel.getName().getLeafReference().str();
    if (failed(checkMap(emitError, kernel.getGrid(), what + " grid", ns, 3)))
      return failure();
    for (auto [j, a] : llvm::enumerate(kernel.getArgs())) {
      auto arg = cast<ArgAttr>(a);
      std::string argWhat = what + " argument " + std::to_string(j);
      if (arg.getValue() &&
          failed(checkMap(emitError, arg.getValue(), argWhat, ns)))
        return failure();
      if (arg.getKind() == ArgKind::scratch &&
          arg.getIndex() >= static_cast<int64_t>(buffers.size()))
        return emitError() << argWhat << ": scratch " << arg.getIndex()
                           << " does not exist (the plan has " << buffers.size()
                           << " buffers)";
    }
  }
  return success();
}

/// On a func.func, the plan's input indices and dims must exist.
LogicalResult AttnLaunchDialect::verifyOperationAttribute(Operation *op,
                                                          NamedAttribute attr) {
  if (attr.getName() != kPlanAttrName)
    return op->emitError() << "unknown attn_launch attribute '"
                           << attr.getName().getValue() << "'";
  auto plan = dyn_cast<PlanAttr>(attr.getValue());
  if (!plan)
    return op->emitError() << "'" << kPlanAttrName
                           << "' must be an #attn_launch.plan";
  auto fn = dyn_cast<func::FuncOp>(op);
  if (!fn)
    return success(); // lowered to llvm.func: the arguments are descriptors
  // A plan of caller-owned buffers (attn-caller-buffers) takes the output
  // as the last argument; one of tensors takes inputs only.
  unsigned inputs = fn.getNumArguments() - (fn.getNumResults() ? 0 : 1);
  auto rankOf = [&](int64_t i) -> int64_t {
    auto t = dyn_cast<ShapedType>(fn.getArgumentTypes()[i]);
    return t && t.hasRank() ? t.getRank() : -1;
  };
  for (Attribute d : plan.getDims()) {
    auto dim = cast<DimAttr>(d);
    if (dim.getInput() >= inputs || dim.getDim() >= rankOf(dim.getInput()))
      return op->emitError()
             << "plan dim '" << dim.getName() << "' reads dim " << dim.getDim()
             << " of input " << dim.getInput() << ", which does not exist";
  }
  for (Attribute k : plan.getKernels())
    for (Attribute a : cast<KernelAttr>(k).getArgs()) {
      auto arg = cast<ArgAttr>(a);
      if (arg.getKind() == ArgKind::input && arg.getIndex() >= inputs)
        return op->emitError()
               << "plan kernel " << cast<KernelAttr>(k).getName()
               << " takes input " << arg.getIndex() << " of " << inputs;
    }
  return success();
}
