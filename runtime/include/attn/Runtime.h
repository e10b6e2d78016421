//===- Runtime.h - attn JIT runtime: compile and run attn programs -*- C++
//-*-===//
//
// A host program hands the Engine an attn program (MLIR text or a parsed
// module) and gets back a Kernel compiled for the device it runs on; the
// Kernel runs on host arrays. Errors are values (llvm::Expected) whose
// messages name the argument and the expected shape; nothing aborts.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_H
#define ATTN_RUNTIME_H

#include "attn/Npy.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace mlir {
class MLIRContext;
class ModuleOp;
} // namespace mlir

namespace attn {
namespace cuda {
class Device;
}

/// A dense row-major host array; the same type the .npy reader returns.
using HostArray = NpyArray;

enum class Device { CPU, CUDA };
llvm::StringRef deviceName(Device d);

/// How a program is lowered.
enum class Pipeline {
  /// The best path available for the device: Fused on the CPU.
  Auto,
  /// attn-fuse, then fused kernels through the block program where the
  /// variant is supported; the reference lowering for the rest.
  Fused,
  /// The naive reference lowering (materialises score maps).
  Reference,
};
llvm::Expected<Pipeline> parsePipeline(llvm::StringRef name);

/// Shape of the GPU kernel. Unset fields (empty, 0) take the environment
/// (ATTN_GPU_CHIP, ATTN_GPU_WARPS, ATTN_GPU_M_TILES, ATTN_GPU_BLOCK_N,
/// ATTN_GPU_OVERLAP), else
/// the default for the device: sm_90a (wgmma) on sm_90 devices, the device's
/// own sm_XY (mma.sync) elsewhere.
struct GpuKernelOptions {
  std::string chip; // "sm_90a" (wgmma), "sm_90", "sm_80", ...
  int warps = 0;    // warps per block (wgmma: 4 or 8, one or two warpgroups)
  int mTiles = 0;   // 16-row tiles per warp (mma.sync only)
  int blockN = 0;   // keys per step
  int overlap = -1; // wgmma: 1 = softmax while P V runs, 0 = not, -1 unset
  /// sm_90+: 1 = the attention kernel starts while the rope or gate kernel
  /// before it runs (programmatic dependent launch), 0 = after it ends;
  /// -1 = $ATTN_GPU_PDL, else 1.
  int dependentLaunch = -1;
};

struct CompileOptions {
  std::string entry = "main";
  Pipeline pipeline = Pipeline::Auto;
  GpuKernelOptions gpu;
};

/// One argument or result of the entry function: element type and shape
/// (ShapedType::kDynamic = -1 marks a dynamic dim).
struct TensorSig {
  DType dtype;
  std::vector<int64_t> shape;
  std::string str() const; // "tensor<?x?x?x64xf32>"
};

class Kernel {
public:
  virtual ~Kernel();
  /// Runs the entry function on `inputs` (in argument order) and returns its
  /// single result. Inputs are checked against the signature and, with their
  /// concrete shapes, against every op's verifier before anything runs.
  virtual llvm::Expected<HostArray> run(llvm::ArrayRef<HostArray> inputs) = 0;
  /// Runs `runs` times on `inputs` and returns each run's time in ms: on a
  /// GPU, the device time of the kernels (inputs uploaded once, CUDA
  /// events); on the CPU, the wall time of run().
  virtual llvm::Expected<std::vector<double>>
  benchmark(llvm::ArrayRef<HostArray> inputs, unsigned runs);
  /// The device the kernel runs on (a program the GPU backend cannot
  /// compile falls back to the CPU when the device was chosen
  /// automatically; remarks() then says why).
  Device device() const { return dev; }
  const std::vector<TensorSig> &arguments() const { return args; }
  const TensorSig &result() const { return res; }
  /// The compiler's remarks, e.g. a piece that runs unfused and why.
  const std::vector<std::string> &remarks() const { return notes; }

protected:
  std::vector<TensorSig> args;
  TensorSig res;
  std::vector<std::string> notes;
  Device dev = Device::CPU;
  friend class Engine;
};

class Engine {
public:
  /// Picks the device: `device` ("cpu", "cuda" or "auto"), else
  /// $ATTN_DEVICE, else auto: CUDA when libcuda.so.1 loads and a GPU is
  /// present, otherwise the CPU.
  static llvm::Expected<std::unique_ptr<Engine>>
  create(llvm::StringRef device = "");
  ~Engine();

  Device device() const { return dev; }
  /// The GPU's architecture ("sm_90"), empty on the CPU.
  std::string gpuArch() const;

  /// Compiles `source` (MLIR text) once; identical text and options hit an
  /// in-memory cache. Thread-safe.
  llvm::Expected<std::shared_ptr<Kernel>>
  compile(llvm::StringRef source, const CompileOptions &options = {},
          llvm::StringRef bufferName = "<program>");

private:
  Engine(Device dev, bool explicitDevice);
  Device dev;
  bool explicitDevice; // no CPU fallback when the user asked for the GPU
  std::shared_ptr<cuda::Device> gpu;
  std::mutex mutex;
  std::mutex gpuMutex; // one GPU compilation at a time (driver context)
  std::unordered_map<std::string, std::shared_ptr<Kernel>> cache;
};

} // namespace attn

#endif // ATTN_RUNTIME_H
