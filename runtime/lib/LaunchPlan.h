//===- LaunchPlan.h - the one executor of launch plans ----------*- C++ -*-===//
//
// A compiled program says how it runs as data: an `attn_launch.plan` on its
// entry (dialect/include/attn/Dialect/AttnLaunch.td, docs/launch-plan.md).
// This reads it once per kernel and evaluates it at each launch: the dims
// from the inputs' shapes, the values, the scratch sizes, each kernel's
// grid and arguments. The CPU and CUDA kernels only bind what it computes
// (descriptors, driver parameters) and launch; no kernel name, buffer list
// or launch order lives in the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_LAUNCHPLAN_H
#define ATTN_RUNTIME_LAUNCHPLAN_H

#include "attn/Runtime.h"

#include "attn/Dialect/AttnLaunchDialect.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <array>
#include <string>
#include <vector>

namespace attn::detail {

/// The plan of one entry function, ready to evaluate (the attributes it
/// came from live as long as the kernel's MLIRContext).
class LaunchPlan {
public:
  using ArgKind = mlir::attn_launch::ArgKind;
  struct Arg {
    ArgKind kind;
    int64_t index;
    mlir::AffineMap value; // elements of a buffer, a scalar's value
  };
  struct Kernel {
    std::string name; // the leaf name: a gpu.func, or the JIT'd function
    mlir::AffineMap grid;
    std::array<unsigned, 3> block;
    unsigned smem;
    bool dependent;
    std::vector<Arg> args;
  };
  struct Buffer {
    std::string name;
    mlir::AffineMap bytes;
  };

  /// Reads the plan of function `fn` (func.func, or llvm.func once
  /// lowered); an error names what is missing (plans are verified with the
  /// IR, so a missing one is an internal error).
  static llvm::Expected<LaunchPlan> read(mlir::Operation *fn,
                                         llvm::StringRef name,
                                         mlir::attn_launch::Device device);

  /// The plan's symbols for a launch on `inputs`: the dims, then the
  /// values. Fails naming a dim whose input or dim is missing.
  llvm::Expected<llvm::SmallVector<int64_t, 16>>
  symbols(llvm::ArrayRef<TensorView> inputs) const;
  /// Result `result` of `map` at `symbols`.
  static int64_t eval(mlir::AffineMap map, llvm::ArrayRef<int64_t> symbols,
                      unsigned result = 0);
  /// A kernel's grid; fails when a dim exceeds the CUDA limits (x < 2^31,
  /// y and z <= 65535) or is negative, naming the kernel.
  llvm::Expected<std::array<unsigned, 3>>
  grid(const Kernel &k, llvm::ArrayRef<int64_t> symbols) const;

  const std::vector<Kernel> &kernels() const { return kernelList; }
  const std::vector<Buffer> &buffers() const { return bufferList; }
  /// Whether input `i` is read by some kernel (others need no device copy).
  bool readsInput(size_t i) const;

private:
  std::vector<std::pair<int64_t, int64_t>> dims; // (input, dim)
  std::vector<std::string> dimNames;
  std::vector<mlir::AffineMap> values;
  std::vector<Buffer> bufferList;
  std::vector<Kernel> kernelList;
};

} // namespace attn::detail

#endif // ATTN_RUNTIME_LAUNCHPLAN_H
