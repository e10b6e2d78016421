//===- Runtime.h - attn JIT runtime: compile and run attn programs -*- C++
//-*-===//
//
// A host program hands the Engine an attn program (MLIR text) and gets back
// a Kernel compiled for the device it runs on. The Kernel launches on
// caller-owned memory (TensorView: pointer, dtype, shape, strides, device;
// on the GPU device pointers on the caller's stream) or, as a convenience,
// runs on host arrays. Errors are values (llvm::Expected) whose messages
// name the argument and the expected shape; nothing aborts. The C API over
// this one is attn/attn.h.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_H
#define ATTN_RUNTIME_H

#include "attn/Npy.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
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
  /// The best path available for the device: Fused on the CPU and on CUDA.
  Auto,
  /// attn-fuse, then the fused kernels from the block program: on the CPU
  /// attn-to-block and attn-block-to-cpu (the reference lowering for what
  /// is not fused); on CUDA the attn-to-gpu pipeline (every kernel and the
  /// launch plan from the block program, docs/gpu-backend.md), and a
  /// program it refuses runs on the CPU when the device was chosen
  /// automatically.
  Fused,
  /// The naive reference lowering (materialises score maps).
  Reference,
};
llvm::Expected<Pipeline> parsePipeline(llvm::StringRef name);

/// Shape of the GPU kernel. Unset fields (empty, 0, -1) take the environment
/// (ATTN_GPU_CHIP, ATTN_GPU_WARPS, ATTN_GPU_BLOCK_N, ATTN_GPU_PDL,
/// ATTN_GPU_PATH_TRANSPORT, ATTN_GPU_PATH_CHUNK_WGMMA,
/// ATTN_GPU_PATH_ATTENTION_WGMMA, ATTN_GPU_GRAD_DQ), else the
/// defaults: for the chip the device's own sm_XY (mma.sync), sm_90a (wgmma)
/// on sm_90 devices; for the rest those of the attn-to-gpu pipeline's
/// options (mlir::attn::GPUPipelineOptions: 4 warps, block-n 64) and
/// dependent launch on. One table (runtime/lib/GpuOptions.cpp) maps fields
/// to variables and makes the cache key.
struct GpuKernelOptions {
  std::string chip; // "sm_90a" (wgmma), "sm_90", "sm_80", ...
  int warps = 0;    // warps per block: 4 or 8 (wgmma: one or two warpgroups)
  int blockN = 0;   // keys per step: 64 or 128
  /// sm_90+: 1 = the attention kernel starts while the rope or gate kernel
  /// before it runs (programmatic dependent launch), 0 = after it ends;
  /// -1 = $ATTN_GPU_PDL, else 1.
  int dependentLaunch = -1;
  /// PaTH: the walk's transport dots in "f16" (one rounding) or "split"
  /// (hi + lo pairs, about 16 more bits, twice the dots); "" =
  /// $ATTN_GPU_PATH_TRANSPORT, else f16.
  std::string pathTransport;
  /// PaTH on sm_90a: 1 = the chunk kernel in the wgmma form, 0 = mma.sync;
  /// -1 = $ATTN_GPU_PATH_CHUNK_WGMMA, else as pathAttentionWgmma's default.
  int pathChunkWgmma = -1;
  /// PaTH on sm_90a: 1 = the attention kernel in the wgmma form (needs
  /// ptxas 13.3 or newer under CUDA_HOME: compiling returns an error
  /// naming the ptxas found otherwise), 0 = mma.sync;
  /// -1 = $ATTN_GPU_PATH_ATTENTION_WGMMA, else 1 on a wgmma chip whose
  /// toolkit's ptxas is 13.3 or newer and 0 elsewhere.
  int pathAttentionWgmma = -1;
  /// The backward's dQ: "walk" (a second walk per query tile,
  /// deterministic) or "reduce" (reducing stores from the dK/dV walk: f32
  /// adds in no fixed order, not bitwise deterministic: docs/training.md);
  /// "" = $ATTN_GPU_GRAD_DQ, else walk.
  std::string gradDq;
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

/// A view of caller-owned memory: element (i0, ..., in-1) lives at
/// `data + sum(ik * strides[k])` elements. `strides` empty means contiguous
/// row-major. BHSD, BSHD (a BHSD-shaped view of a [B, S, H, D] buffer:
/// strides {S*H*D, D, H*D, 1}) and any other strided view are accepted; on
/// the GPU the innermost stride must be 1.
struct TensorView {
  void *data = nullptr;
  DType dtype = DType::F32;
  llvm::SmallVector<int64_t, 4> shape;
  llvm::SmallVector<int64_t, 4> strides; // in elements; empty = contiguous
  Device device = Device::CPU;

  TensorView() = default;
  TensorView(void *data, DType dtype, llvm::ArrayRef<int64_t> shape,
             llvm::ArrayRef<int64_t> strides = {}, Device device = Device::CPU)
      : data(data), dtype(dtype), shape(shape.begin(), shape.end()),
        strides(strides.begin(), strides.end()), device(device) {}
  /// A view of a host array (contiguous, on the CPU).
  static TensorView of(HostArray &a) {
    return TensorView(a.bytes.data(), a.dtype, a.shape);
  }
  int64_t numel() const;
  /// The stride of dimension `d` in elements (row-major when `strides` is
  /// empty).
  int64_t stride(size_t d) const;
  /// True when the view is dense row-major (dims of size 1 may have any
  /// stride).
  bool isContiguous() const;
};

class Kernel {
public:
  virtual ~Kernel();
  /// Launches the entry function on caller-owned `inputs` (argument order)
  /// and writes its results into `outputs`, one per result in result order,
  /// each with its result's dtype and shape (resultShapes()); outputs whose
  /// memory overlaps another output's are refused. On the CPU the views are
  /// host memory, read and written in place (a view with a non-unit
  /// innermost stride, or an output overlapping an input, goes through a
  /// temporary), and the call returns when the results are written. On the
  /// GPU they are device memory, `stream` is a CUstream (nullptr: the
  /// legacy default stream), the work is enqueued on it and the call
  /// returns without waiting; scratch memory is kept by the kernel per
  /// stream across launches. Thread-safe: any number of threads may launch
  /// one kernel.
  virtual llvm::Error launch(llvm::ArrayRef<TensorView> inputs,
                             llvm::ArrayRef<TensorView> outputs,
                             void *stream = nullptr) = 0;
  /// launch() of a one-result kernel on its one `output`; a kernel with
  /// several results returns an error naming launch(inputs, outputs).
  llvm::Error launch(llvm::ArrayRef<TensorView> inputs,
                     const TensorView &output, void *stream = nullptr);
  /// Every result's shape for inputs of these shapes, in result order (the
  /// inputs are checked as launch checks them: count, dtype, static dims,
  /// shape relations).
  virtual llvm::Expected<std::vector<std::vector<int64_t>>>
  resultShapes(llvm::ArrayRef<TensorView> inputs) = 0;
  /// resultShapes() of a one-result kernel: its result's shape; a kernel
  /// with several results returns an error naming resultShapes().
  llvm::Expected<std::vector<int64_t>>
  resultShape(llvm::ArrayRef<TensorView> inputs);
  /// Runs the entry function on `inputs` (in argument order) and returns
  /// every result in result order: a convenience over launch() that
  /// converts element types, copies to and from the device and waits.
  /// Inputs are checked against the signature and, with their concrete
  /// shapes, against every op's verifier before anything runs.
  virtual llvm::Expected<std::vector<HostArray>>
  runAll(llvm::ArrayRef<HostArray> inputs) = 0;
  /// runAll() of a one-result kernel: its single result; a kernel with
  /// several results returns an error naming runAll().
  llvm::Expected<HostArray> run(llvm::ArrayRef<HostArray> inputs);
  /// Runs `runs` times on `inputs` and returns each run's time in ms: on a
  /// GPU, the device time of the kernels (inputs uploaded once, CUDA
  /// events); on the CPU, the wall time of runAll().
  virtual llvm::Expected<std::vector<double>>
  benchmark(llvm::ArrayRef<HostArray> inputs, unsigned runs);
  /// The device the kernel runs on (a program the GPU backend cannot
  /// compile falls back to the CPU when the device was chosen
  /// automatically; remarks() then says why).
  Device device() const { return dev; }
  const std::vector<TensorSig> &arguments() const { return args; }
  /// Every result's signature, in result order (at least one).
  const std::vector<TensorSig> &results() const { return ress; }
  /// The first result's signature: the result of a one-result kernel.
  const TensorSig &result() const { return ress.front(); }
  /// The compiler's remarks, e.g. a piece that runs unfused and why.
  const std::vector<std::string> &remarks() const { return notes; }

protected:
  /// The error of a one-result convenience (`what`) called on a kernel
  /// with several results, naming `instead`; success on one result.
  llvm::Error requireOneResult(llvm::StringRef what,
                               llvm::StringRef instead) const;

  std::string entry;
  std::vector<TensorSig> args;
  std::vector<TensorSig> ress;
  std::vector<std::string> notes;
  Device dev = Device::CPU;
  friend class Engine;
};

/// A function's training pair (docs/training.md): attn-grad's
/// @<entry>_fwd and @<entry>_grad, compiled. The state the forward saves
/// for the backward is one f32 [B, H, T] row log-sum-exp per attention or
/// softmax (O(B*H*T), nothing T x T).
struct TrainingKernels {
  /// (args) -> (o, saved_1, ..., saved_n): the function's result, then the
  /// saved state in program order.
  std::shared_ptr<Kernel> forward;
  /// (args, o, saved_1, ..., saved_n, dO) -> one gradient per float
  /// argument, in argument order: every result of the forward goes back in.
  std::shared_ptr<Kernel> backward;
  /// gradArgs[i] is the argument backward's result i belongs to; integer
  /// arguments (RoPE positions) are not differentiable and have none.
  std::vector<size_t> gradArgs;
  /// Each argument's name in the source ("q" for %q).
  std::vector<std::string> argNames;
  /// The number of saved tensors (the forward's results after o).
  size_t numSaved() const { return forward->results().size() - 1; }
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

  /// Compiles function `options.entry` of `source` for training: the
  /// attn-grad pass derives its training pair, and both functions compile
  /// as compile() compiles them (same cache, same CPU fallback of an
  /// automatic device, remarks on each kernel). The function must return
  /// one float tensor. Both kernels run on one device: on an automatic
  /// engine, a half the GPU backend refuses (PaTH's and MTA's backward have
  /// no GPU form yet) runs on the CPU and takes the other half with it,
  /// and remarks() says why; an engine created for "cuda" returns the GPU
  /// backend's error instead.
  llvm::Expected<TrainingKernels>
  compileTraining(llvm::StringRef source, const CompileOptions &options = {},
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
