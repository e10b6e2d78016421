//===- LaunchPlan.cpp - the one executor of launch plans ------------------===//

#include "LaunchPlan.h"

#include "mlir/IR/AffineExpr.h"

using llvm::createStringError;
using llvm::Error;
using llvm::Expected;
namespace al = mlir::attn_launch;

namespace attn::detail {

Expected<LaunchPlan> LaunchPlan::read(mlir::Operation *fn, llvm::StringRef name,
                                      al::Device device) {
  auto attr =
      fn ? fn->getAttrOfType<al::PlanAttr>(al::AttnLaunchDialect::kPlanAttrName)
         : al::PlanAttr();
  std::string where = "@" + name.str();
  if (!attr)
    return createStringError("internal error: the lowering gave " + where +
                             " no launch plan (attn_launch.plan)");
  if (attr.getDevice() != device)
    return createStringError("internal error: the launch plan of " + where +
                             " is for the " +
                             al::stringifyDevice(attr.getDevice()).str());
  LaunchPlan p;
  for (mlir::Attribute a : attr.getDims()) {
    auto d = mlir::cast<al::DimAttr>(a);
    p.dims.push_back({d.getInput(), d.getDim()});
    p.dimNames.push_back(d.getName().str());
  }
  for (mlir::Attribute a : attr.getValues())
    p.values.push_back(mlir::cast<mlir::AffineMapAttr>(a).getValue());
  for (mlir::Attribute a : attr.getBuffers()) {
    auto b = mlir::cast<al::BufferAttr>(a);
    p.bufferList.push_back({b.getName().str(), b.getBytes()});
  }
  for (mlir::Attribute a : attr.getKernels()) {
    auto k = mlir::cast<al::KernelAttr>(a);
    Kernel kernel;
    kernel.name = k.getName().getLeafReference().str();
    kernel.grid = k.getGrid();
    llvm::ArrayRef<int64_t> block = k.getBlock().asArrayRef();
    kernel.block = {static_cast<unsigned>(block[0]),
                    static_cast<unsigned>(block[1]),
                    static_cast<unsigned>(block[2])};
    kernel.smem = static_cast<unsigned>(k.getSmem());
    kernel.dependent = k.getDependent();
    for (mlir::Attribute arg : k.getArgs()) {
      auto x = mlir::cast<al::ArgAttr>(arg);
      kernel.args.push_back({x.getKind(), x.getIndex(), x.getValue()});
    }
    p.kernelList.push_back(std::move(kernel));
  }
  return p;
}

namespace {
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t evalExpr(mlir::AffineExpr e, llvm::ArrayRef<int64_t> s) {
  using mlir::AffineExprKind;
  if (auto c = mlir::dyn_cast<mlir::AffineConstantExpr>(e))
    return c.getValue();
  if (auto sym = mlir::dyn_cast<mlir::AffineSymbolExpr>(e))
    return s[sym.getPosition()];
  auto bin = mlir::cast<mlir::AffineBinaryOpExpr>(e);
  int64_t l = evalExpr(bin.getLHS(), s), r = evalExpr(bin.getRHS(), s);
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return l + r;
  case AffineExprKind::Mul:
    return l * r;
  case AffineExprKind::FloorDiv:
    return r ? floorDiv(l, r) : 0;
  case AffineExprKind::CeilDiv:
    return r ? -floorDiv(-l, r) : 0;
  case AffineExprKind::Mod:
    return r ? l - floorDiv(l, r) * r : 0;
  default:
    return 0; // no dims in plan maps (verified)
  }
}
} // namespace

int64_t LaunchPlan::eval(mlir::AffineMap map, llvm::ArrayRef<int64_t> symbols,
                         unsigned result) {
  return evalExpr(map.getResult(result), symbols);
}

Expected<llvm::SmallVector<int64_t, 16>>
LaunchPlan::symbols(llvm::ArrayRef<TensorView> inputs) const {
  llvm::SmallVector<int64_t, 16> s;
  for (auto [i, d] : llvm::enumerate(dims)) {
    auto [input, dim] = d;
    if (input >= static_cast<int64_t>(inputs.size()) ||
        dim >= static_cast<int64_t>(inputs[input].shape.size()))
      return createStringError("the launch plan's dim " + dimNames[i] +
                               " reads dim " + std::to_string(dim) +
                               " of input " + std::to_string(input) +
                               ", which the launch does not have");
    s.push_back(inputs[input].shape[dim]);
  }
  // A value is the maximum of its map's results (AttnLaunch.td).
  for (mlir::AffineMap v : values) {
    int64_t m = eval(v, s, 0);
    for (unsigned r = 1; r < v.getNumResults(); ++r)
      m = std::max(m, eval(v, s, r));
    s.push_back(m);
  }
  return s;
}

Expected<std::array<unsigned, 3>>
LaunchPlan::grid(const Kernel &k, llvm::ArrayRef<int64_t> symbols) const {
  static constexpr int64_t limit[3] = {(int64_t(1) << 31) - 1, 65535, 65535};
  std::array<unsigned, 3> g;
  for (unsigned d = 0; d < 3; ++d) {
    int64_t n = eval(k.grid, symbols, d);
    if (n < 0 || n > limit[d])
      return createStringError(
          "kernel " + k.name + ": grid dim " + "xyz"[d] + " = " +
          std::to_string(n) + " exceeds the grid limit of " +
          std::to_string(limit[d]) +
          (d == 1 ? " (the grid's y is B * H for attention)" : ""));
    g[d] = static_cast<unsigned>(n);
  }
  return g;
}

bool LaunchPlan::readsInput(size_t i) const {
  for (const Kernel &k : kernelList)
    for (const Arg &a : k.args)
      if (a.kind == ArgKind::input && a.index == static_cast<int64_t>(i))
        return true;
  return false;
}

} // namespace attn::detail
