//===- CudaDriver.h - the CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// attn has no link-time CUDA dependency: libcuda.so.1 is dlopen'ed the first
// time a GPU is asked for, so the same binary runs (on the CPU) where no
// driver exists. Every driver error becomes an llvm::Error whose message
// names the call and the driver's own error string.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CUDADRIVER_H
#define ATTN_CUDADRIVER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace attn::cuda {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int smMajor = 0, smMinor = 0;
  int multiprocessors = 0;
  int maxSharedPerBlockOptin = 0; // bytes, the opt-in limit (> 48 KB)
  int memoryPools = 0;            // cuMemAllocAsync supported
  std::string chip() const {      // "sm_90"
    return "sm_" + std::to_string(smMajor) + std::to_string(smMinor);
  }
};

class Module;

/// The loaded driver with the primary context of one device. Not copyable;
/// `open` returns an error value when libcuda.so.1 is missing, cuInit fails
/// or no device exists. Every call makes that context current on the
/// calling thread first, so any thread may use a Device. `stream` arguments
/// are CUstreams (nullptr: the legacy default stream).
class Device {
public:
  static llvm::Expected<std::unique_ptr<Device>> open(int ordinal = 0);
  ~Device();

  const DeviceInfo &info() const { return dev; }

  llvm::Expected<uint64_t> alloc(size_t bytes);
  llvm::Error free(uint64_t ptr);
  llvm::Error copyToDevice(uint64_t dst, const void *src, size_t bytes);
  llvm::Error copyToHost(void *dst, uint64_t src, size_t bytes);
  /// Sets `bytes` bytes at `dst` to `byte` (e.g. 0xFF: NaN poison).
  llvm::Error fill(uint64_t dst, unsigned char byte, size_t bytes);
  llvm::Error synchronize();
  /// Waits for the work enqueued on `stream`.
  llvm::Error synchronize(void *stream);

  /// A new non-blocking stream (cuStreamCreate) and its destruction.
  llvm::Expected<void *> createStream();
  llvm::Error destroyStream(void *stream);

  /// Stream-ordered allocation and free (cuMemAllocAsync/cuMemFreeAsync;
  /// where the driver or device lacks memory pools, cuMemAlloc, and a free
  /// after the stream has drained).
  llvm::Expected<uint64_t> allocAsync(size_t bytes, void *stream);
  llvm::Error freeAsync(uint64_t ptr, void *stream);
  /// Copies `height` rows of `width` bytes between device buffers whose
  /// rows are `srcPitch` / `dstPitch` bytes apart, enqueued on `stream`.
  llvm::Error copy2D(uint64_t dst, size_t dstPitch, uint64_t src,
                     size_t srcPitch, size_t width, size_t height,
                     void *stream);
  /// True when `ptr` is memory the device can address as its own (device
  /// or managed memory), false for host or unknown pointers.
  bool isDeviceMemory(uint64_t ptr);

  /// Loads a cubin (or PTX, which the driver JIT-compiles).
  llvm::Expected<std::unique_ptr<Module>> load(llvm::ArrayRef<char> image);

  /// Launches `kernel` of `module`; `args` point at each argument's value.
  /// With `wait`, synchronizes so that faults in the kernel surface here.
  /// With `afterPrevious` the launch uses programmatic stream serialization
  /// (sm_90+, where the driver has cuLaunchKernelEx): the kernel may start
  /// once the previous kernel in the stream executes
  /// griddepcontrol.launch_dependents, and must itself execute
  /// griddepcontrol.wait before it reads what that kernel wrote.
  llvm::Error launch(Module &module, llvm::StringRef kernel,
                     std::array<unsigned, 3> grid,
                     std::array<unsigned, 3> block, unsigned sharedBytes,
                     llvm::ArrayRef<void *> args, bool wait = true,
                     bool afterPrevious = false, void *stream = nullptr);

  /// Device time of what `work` enqueues on `stream`, in ms (CUDA events
  /// around it).
  llvm::Expected<float> timeMs(llvm::function_ref<llvm::Error()> work,
                               void *stream = nullptr);

  struct Api; // the resolved driver entry points (CudaDriver.cpp)

private:
  Device() = default;
  /// Makes the device's context current on the calling thread.
  llvm::Error bind();
  std::shared_ptr<Api> api;
  void *context = nullptr;
  DeviceInfo dev;
  friend class Module;
};

class Module {
public:
  ~Module();

private:
  friend class Device;
  std::shared_ptr<Device::Api> api;
  void *handle = nullptr;
  /// Kernels looked up so far, with the dynamic shared memory limit last
  /// set on each (Device::launch; kernels of one module may launch from
  /// several threads).
  struct Function {
    void *handle = nullptr;
    unsigned sharedBytes = 0;
  };
  std::mutex mutex;
  std::map<std::string, Function> functions;
};

} // namespace attn::cuda

#endif // ATTN_CUDADRIVER_H
