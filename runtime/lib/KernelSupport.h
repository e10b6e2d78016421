//===- KernelSupport.h - shared by the CPU and CUDA kernels -----*- C++ -*-===//
//
// Parsing a program and reading its entry signature, collecting
// diagnostics into error values, and checking run-time inputs against the
// signature and (once per shape set) the op verifiers.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_KERNELSUPPORT_H
#define ATTN_RUNTIME_KERNELSUPPORT_H

#include "attn/Runtime.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace attn::detail {

using namespace mlir;

/// Collects the diagnostics emitted while it lives, for error values.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext *ctx)
      : os(text), handler(ctx, [this](Diagnostic &diag) {
          if (diag.getSeverity() == DiagnosticSeverity::Remark) {
            std::string r;
            llvm::raw_string_ostream ros(r);
            ros << diag.getLocation() << ": " << diag.str();
            remarks.push_back(r);
            return success();
          }
          os << diag.getLocation() << ": " << diag.str() << "\n";
          for (Diagnostic &note : diag.getNotes())
            os << "  note: " << note.str() << "\n";
          return success();
        }) {}
  /// Remarks the compilation made (e.g. what was not fused), in order.
  std::vector<std::string> remarks;
  llvm::Error error(llvm::StringRef what) {
    return llvm::createStringError(what.str() + ":\n" +
                                   llvm::StringRef(text).rtrim().str());
  }

private:
  std::string text;
  llvm::raw_string_ostream os;
  ScopedDiagnosticHandler handler;
};

/// Every dialect, extension and LLVM IR translation a kernel may need.
DialectRegistry kernelRegistry();

llvm::Expected<TensorSig> sigOf(Type t, llvm::StringRef what);

/// Converts `in` to the element type `want`, or fails naming argument `idx`.
llvm::Expected<std::vector<uint8_t>> convertTo(const HostArray &in, DType want,
                                               size_t idx);

/// Checks input shapes against the entry signature and, once per distinct
/// set of shapes, against the op verifiers at those shapes; remembers the
/// result shapes each set gives. Thread-safe.
class InputChecker {
public:
  /// The inputs' shapes once they match the signature and the verifiers.
  llvm::Expected<std::vector<std::vector<int64_t>>>
  check(ModuleOp program, llvm::StringRef entry,
        const std::vector<TensorSig> &args, llvm::ArrayRef<HostArray> inputs);
  /// Every result's shape for input `shapes` (already matching the
  /// signature); one is empty when its result does not come from an attn
  /// op (then only the compiled function knows it).
  llvm::Expected<std::vector<std::vector<int64_t>>>
  verify(ModuleOp program, llvm::StringRef entry,
         const std::vector<std::vector<int64_t>> &shapes);

private:
  std::mutex mutex;
  std::map<std::vector<std::vector<int64_t>>, std::vector<std::vector<int64_t>>>
      verified;
};

/// Checks one launch() view against its signature: dtype, device, rank and
/// static dims, strides, a data pointer aligned to `alignment` bytes (0:
/// the element size). `what` names it in the message ("input 2", "the
/// output"). Without `memory`, only the dtype and shape are checked.
llvm::Error checkView(const TensorView &view, const TensorSig &sig,
                      Device device, size_t alignment, llvm::StringRef what,
                      bool memory = true);

/// Whether the bytes two non-empty views span (first to last element)
/// intersect; false when either is empty.
bool viewsOverlap(const TensorView &a, const TensorView &b);

/// The bytes from `view.data` to the end of its last element, or nullopt
/// above 2^62 (checked arithmetic: strides from a caller may be anything).
/// The shape must already fit in 2^62 bytes.
std::optional<uint64_t> spanBytes(const TensorView &view);

/// PaTH's beta range: each transform I - beta w w^T with unit w has
/// eigenvalues 1 - beta and 1, at most 1 in magnitude only for beta in
/// [0, 2].
inline constexpr double kMinPathBeta = 0.0, kMaxPathBeta = 2.0;

/// Copies the elements of `src` into `dst` (same shape and dtype, any
/// strides, host memory).
void copyStrided(const TensorView &src, const TensorView &dst);

/// What every compiled kernel keeps: its context, the program as given (it
/// is re-verified at the input shapes), the entry function and its
/// signature (Kernel's arguments() and results()).
class ProgramKernel : public Kernel {
public:
  using Kernel::launch;
  llvm::Expected<std::vector<std::vector<int64_t>>>
  resultShapes(llvm::ArrayRef<TensorView> inputs) override;

protected:
  /// Every result's shape at input `shapes` (matching the signature): from
  /// the attn ops, else a static result type or a returned argument's
  /// shape.
  llvm::Expected<std::vector<std::vector<int64_t>>>
  resultShapeAt(const std::vector<std::vector<int64_t>> &shapes);
  /// Creates the context, parses `source` and reads @entry's signature.
  llvm::Error load(llvm::StringRef source, llvm::StringRef entry,
                   llvm::StringRef bufferName);
  /// The inputs' shapes once they match the signature and the verifiers.
  llvm::Expected<std::vector<std::vector<int64_t>>>
  checkInputs(llvm::ArrayRef<HostArray> inputs) {
    auto shapes = checker.check(*program, entry, args, inputs);
    if (shapes)
      if (llvm::Error e = checkInputValues(inputs))
        return std::move(e);
    return shapes;
  }
  /// Checks launch()'s views (counts, each view, the shape relations, each
  /// output's shape, that no output overlaps itself or another output);
  /// returns the result shapes.
  llvm::Expected<std::vector<std::vector<int64_t>>>
  checkLaunch(llvm::ArrayRef<TensorView> inputs,
              llvm::ArrayRef<TensorView> outputs, size_t alignment);
  /// run()'s inputs converted to the signature's dtypes, as host views.
  struct HostInputs {
    std::vector<std::vector<uint8_t>> storage;
    std::vector<TensorView> views;
  };
  llvm::Expected<HostInputs> convertInputs(llvm::ArrayRef<HostArray> inputs);
  /// The value checks of run() and launch() (one place, so that attn-run,
  /// the C++ and C APIs and Python refuse the same inputs): fails when a
  /// log forget gate argument holds +-inf (the kernels compute the bias as
  /// a difference of prefix sums, G_i - G_j, which is NaN (-inf - -inf)
  /// where the exact sum over (j, i] is finite), when a PaTH beta
  /// argument lies outside [kMinPathBeta, kMaxPathBeta], or when packed
  /// sequences' offsets (cu_seqlens) do not run from 0 to S without
  /// decreasing. Views in device memory are not read.
  llvm::Error checkInputValues(llvm::ArrayRef<TensorView> inputs) const;
  llvm::Error checkInputValues(llvm::ArrayRef<HostArray> inputs) const;

  std::unique_ptr<MLIRContext> ctx;
  OwningOpRef<ModuleOp> program;
  /// Entry arguments used as a log forget gate (`g` of scores/attention)
  /// and as PaTH's beta.
  std::vector<size_t> gateArgs, betaArgs;
  /// Entry arguments used as packed sequences' offsets (cu_seqlens), each
  /// with the entry argument holding its op's keys (k), if k is one.
  std::vector<std::pair<size_t, std::optional<size_t>>> cuSeqlensArgs;

private:
  InputChecker checker;
};

} // namespace attn::detail
namespace attn::cuda {
class Device;
}
namespace attn::detail {

/// The kernel factories behind Engine::compile.
llvm::Expected<std::shared_ptr<Kernel>>
createCpuKernel(llvm::StringRef source, const CompileOptions &options,
                llvm::StringRef bufferName);
llvm::Expected<std::shared_ptr<Kernel>>
createCudaKernel(llvm::StringRef source, const CompileOptions &options,
                 llvm::StringRef bufferName,
                 std::shared_ptr<cuda::Device> device);

} // namespace attn::detail

#endif // ATTN_RUNTIME_KERNELSUPPORT_H
