//===- CudaDriver.cpp - the CUDA driver API, loaded at run time -----------===//

#include "attn/CudaDriver.h"

#include <array>
#include <dlfcn.h>
#include <mutex>

using llvm::createStringError;
using llvm::Error;
using llvm::Expected;

namespace attn::cuda {

// The few driver types and entry points attn uses, declared here so that
// building attn needs no CUDA headers (signatures as in cuda.h, CUDA 12+).
using CUresult = int;
using CUdevice = int;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUstream = void *;
using CUevent = void *;
using CUdeviceptr = unsigned long long;

// cuLaunchKernelEx's configuration (cuda.h's CUlaunchConfig and
// CUlaunchAttribute, with the attribute value union cut to the int attn
// sets; the union is 64 bytes).
struct CUlaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    int value;
  } value;
};
struct CUlaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute *attrs;
  unsigned numAttrs;
};
static_assert(sizeof(CUlaunchAttribute) == 72, "cuda.h's layout");

// cuda.h's CUDA_MEMCPY2D (the _v2 layout).
struct CUmemcpy2D {
  size_t srcXInBytes, srcY;
  int srcMemoryType;
  const void *srcHost;
  CUdeviceptr srcDevice;
  void *srcArray;
  size_t srcPitch;
  size_t dstXInBytes, dstY;
  int dstMemoryType;
  void *dstHost;
  CUdeviceptr dstDevice;
  void *dstArray;
  size_t dstPitch;
  size_t WidthInBytes, Height;
};
static_assert(sizeof(CUmemcpy2D) == 128, "cuda.h's layout");

enum : int {
  kAttrMultiprocessors = 16,
  kAttrComputeMajor = 75,
  kAttrComputeMinor = 76,
  kAttrMaxSharedPerBlockOptin = 97,
  kAttrMemoryPoolsSupported = 115,
  kFuncAttrMaxDynamicShared = 8,
  kLaunchAttrProgrammaticStreamSerialization = 6,
  kPointerAttrMemoryType = 2,
  kMemoryTypeDevice = 2,
  kMemoryTypeUnified = 4,
};

struct Device::Api {
  void *lib = nullptr;
  CUresult (*cuInit)(unsigned);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuMemcpy2DAsync)(const CUmemcpy2D *, CUstream);
  CUresult (*cuPointerGetAttributes)(unsigned, int *, void **, CUdeviceptr);
  // Optional (CUDA 11.2+): null allocates with cuMemAlloc.
  CUresult (*cuMemAllocAsync)(CUdeviceptr *, size_t, CUstream) = nullptr;
  CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream) = nullptr;
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **);
  // Optional (CUDA 12 drivers have it): null launches without
  // programmatic stream serialization.
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **,
                               void **) = nullptr;
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  CUdevice device = 0;

  Error check(CUresult r, llvm::StringRef call) const {
    if (r == 0)
      return Error::success();
    const char *text = nullptr;
    if (cuGetErrorString)
      cuGetErrorString(r, &text);
    return createStringError("CUDA error in " + call.str() + ": " +
                             (text ? text : "unknown error") + " (" +
                             std::to_string(r) + ")");
  }
};

/// dlopen's libcuda.so.1 and resolves every entry point, once per process.
static Expected<std::shared_ptr<Device::Api>> loadApi() {
  static std::mutex mutex;
  static std::shared_ptr<Device::Api> cached;
  static std::string failure;
  std::lock_guard<std::mutex> lock(mutex);
  if (cached)
    return cached;
  if (!failure.empty())
    return createStringError(failure);
  auto api = std::make_shared<Device::Api>();
  api->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!api->lib) {
    const char *why = dlerror();
    failure = std::string("cannot load the CUDA driver libcuda.so.1: ") +
              (why ? why : "not found") +
              " (no NVIDIA driver on this machine?)";
    return createStringError(failure);
  }
  bool missing = false;
  std::string missingName;
  auto bind = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
        dlsym(api->lib, name));
    if (!fn && !missing) {
      missing = true;
      missingName = name;
    }
  };
  bind(api->cuInit, "cuInit");
  bind(api->cuGetErrorString, "cuGetErrorString");
  bind(api->cuDeviceGetCount, "cuDeviceGetCount");
  bind(api->cuDeviceGet, "cuDeviceGet");
  bind(api->cuDeviceGetName, "cuDeviceGetName");
  bind(api->cuDeviceGetAttribute, "cuDeviceGetAttribute");
  bind(api->cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  bind(api->cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  bind(api->cuCtxSetCurrent, "cuCtxSetCurrent");
  bind(api->cuCtxGetCurrent, "cuCtxGetCurrent");
  bind(api->cuStreamSynchronize, "cuStreamSynchronize");
  bind(api->cuStreamCreate, "cuStreamCreate");
  bind(api->cuStreamDestroy, "cuStreamDestroy_v2");
  bind(api->cuMemcpy2DAsync, "cuMemcpy2DAsync_v2");
  bind(api->cuPointerGetAttributes, "cuPointerGetAttributes");
  bind(api->cuCtxSynchronize, "cuCtxSynchronize");
  bind(api->cuMemAlloc, "cuMemAlloc_v2");
  bind(api->cuMemFree, "cuMemFree_v2");
  bind(api->cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  bind(api->cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  bind(api->cuMemsetD8, "cuMemsetD8_v2");
  bind(api->cuModuleLoadData, "cuModuleLoadData");
  bind(api->cuModuleUnload, "cuModuleUnload");
  bind(api->cuModuleGetFunction, "cuModuleGetFunction");
  bind(api->cuFuncSetAttribute, "cuFuncSetAttribute");
  bind(api->cuLaunchKernel, "cuLaunchKernel");
  bind(api->cuEventCreate, "cuEventCreate");
  bind(api->cuEventRecord, "cuEventRecord");
  bind(api->cuEventSynchronize, "cuEventSynchronize");
  bind(api->cuEventElapsedTime, "cuEventElapsedTime");
  bind(api->cuEventDestroy, "cuEventDestroy_v2");
  if (missing) {
    failure = "libcuda.so.1 lacks " + missingName + " (driver too old?)";
    return createStringError(failure);
  }
  api->cuLaunchKernelEx = reinterpret_cast<decltype(api->cuLaunchKernelEx)>(
      dlsym(api->lib, "cuLaunchKernelEx"));
  api->cuMemAllocAsync = reinterpret_cast<decltype(api->cuMemAllocAsync)>(
      dlsym(api->lib, "cuMemAllocAsync"));
  api->cuMemFreeAsync = reinterpret_cast<decltype(api->cuMemFreeAsync)>(
      dlsym(api->lib, "cuMemFreeAsync"));
  if (Error e = api->check(api->cuInit(0), "cuInit")) {
    failure = llvm::toString(std::move(e));
    return createStringError(failure);
  }
  cached = api;
  return cached;
}

Expected<std::unique_ptr<Device>> Device::open(int ordinal) {
  auto api = loadApi();
  if (!api)
    return api.takeError();
  std::unique_ptr<Device> d(new Device());
  d->api = *api;
  Device::Api &a = *d->api;
  int count = 0;
  if (Error e = a.check(a.cuDeviceGetCount(&count), "cuDeviceGetCount"))
    return std::move(e);
  if (ordinal < 0 || ordinal >= count)
    return createStringError("no CUDA device " + std::to_string(ordinal) +
                             " (" + std::to_string(count) + " present)");
  CUdevice dev;
  if (Error e = a.check(a.cuDeviceGet(&dev, ordinal), "cuDeviceGet"))
    return std::move(e);
  a.device = dev;
  char name[256] = {0};
  if (Error e = a.check(a.cuDeviceGetName(name, sizeof(name) - 1, dev),
                        "cuDeviceGetName"))
    return std::move(e);
  d->dev.ordinal = ordinal;
  d->dev.name = name;
  struct {
    int attr;
    int *out;
  } attrs[] = {{kAttrComputeMajor, &d->dev.smMajor},
               {kAttrComputeMinor, &d->dev.smMinor},
               {kAttrMultiprocessors, &d->dev.multiprocessors},
               {kAttrMaxSharedPerBlockOptin, &d->dev.maxSharedPerBlockOptin},
               {kAttrMemoryPoolsSupported, &d->dev.memoryPools}};
  for (auto &at : attrs)
    if (Error e = a.check(a.cuDeviceGetAttribute(at.out, at.attr, dev),
                          "cuDeviceGetAttribute"))
      return std::move(e);
  if (Error e = a.check(a.cuDevicePrimaryCtxRetain(&d->context, dev),
                        "cuDevicePrimaryCtxRetain"))
    return std::move(e);
  if (Error e = a.check(a.cuCtxSetCurrent(d->context), "cuCtxSetCurrent"))
    return std::move(e);
  return std::move(d);
}

Device::~Device() {
  if (context)
    api->cuDevicePrimaryCtxRelease(api->device);
}

Error Device::bind() {
  CUcontext current = nullptr;
  if (api->cuCtxGetCurrent(&current) == 0 && current == context)
    return Error::success();
  return api->check(api->cuCtxSetCurrent(context), "cuCtxSetCurrent");
}

Expected<uint64_t> Device::alloc(size_t bytes) {
  if (Error e = bind())
    return std::move(e);
  CUdeviceptr p = 0;
  if (Error e = api->check(api->cuMemAlloc(&p, bytes),
                           "cuMemAlloc(" + std::to_string(bytes) + " bytes)"))
    return std::move(e);
  return p;
}

Error Device::free(uint64_t ptr) {
  if (Error e = bind())
    return e;
  return api->check(api->cuMemFree(ptr), "cuMemFree");
}

Error Device::copyToDevice(uint64_t dst, const void *src, size_t bytes) {
  if (Error e = bind())
    return e;
  return api->check(api->cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
}

Error Device::copyToHost(void *dst, uint64_t src, size_t bytes) {
  if (Error e = bind())
    return e;
  return api->check(api->cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
}

Error Device::fill(uint64_t dst, unsigned char byte, size_t bytes) {
  if (Error e = bind())
    return e;
  return api->check(api->cuMemsetD8(dst, byte, bytes), "cuMemsetD8");
}

Error Device::synchronize() {
  if (Error e = bind())
    return e;
  return api->check(api->cuCtxSynchronize(), "cuCtxSynchronize");
}

Error Device::synchronize(void *stream) {
  if (Error e = bind())
    return e;
  return api->check(api->cuStreamSynchronize(stream), "cuStreamSynchronize");
}

Expected<void *> Device::createStream() {
  if (Error e = bind())
    return std::move(e);
  CUstream s = nullptr;
  // 1 = CU_STREAM_NON_BLOCKING: no implicit sync with the legacy stream.
  if (Error e = api->check(api->cuStreamCreate(&s, 1), "cuStreamCreate"))
    return std::move(e);
  return s;
}

Error Device::destroyStream(void *stream) {
  if (Error e = bind())
    return e;
  return api->check(api->cuStreamDestroy(stream), "cuStreamDestroy");
}

Expected<uint64_t> Device::allocAsync(size_t bytes, void *stream) {
  if (!api->cuMemAllocAsync || !dev.memoryPools)
    return alloc(bytes);
  if (Error e = bind())
    return std::move(e);
  CUdeviceptr p = 0;
  if (Error e =
          api->check(api->cuMemAllocAsync(&p, bytes, stream),
                     "cuMemAllocAsync(" + std::to_string(bytes) + " bytes)"))
    return std::move(e);
  return p;
}

Error Device::freeAsync(uint64_t ptr, void *stream) {
  if (!api->cuMemFreeAsync || !api->cuMemAllocAsync || !dev.memoryPools) {
    if (Error e = synchronize(stream))
      return e;
    return free(ptr);
  }
  if (Error e = bind())
    return e;
  return api->check(api->cuMemFreeAsync(ptr, stream), "cuMemFreeAsync");
}

Error Device::copy2D(uint64_t dst, size_t dstPitch, uint64_t src,
                     size_t srcPitch, size_t width, size_t height,
                     void *stream) {
  if (Error e = bind())
    return e;
  CUmemcpy2D c{};
  c.srcMemoryType = c.dstMemoryType = kMemoryTypeDevice;
  c.srcDevice = src;
  c.srcPitch = srcPitch;
  c.dstDevice = dst;
  c.dstPitch = dstPitch;
  c.WidthInBytes = width;
  c.Height = height;
  return api->check(api->cuMemcpy2DAsync(&c, stream), "cuMemcpy2DAsync");
}

bool Device::isDeviceMemory(uint64_t ptr) {
  if (Error e = bind()) {
    llvm::consumeError(std::move(e));
    return false;
  }
  // The plural form reports a pointer the driver does not know (host
  // memory) as type 0 instead of failing: no CUDA API error for tools such
  // as compute-sanitizer to flag.
  unsigned type = 0;
  int attr = kPointerAttrMemoryType;
  void *data[] = {&type};
  if (api->cuPointerGetAttributes(1, &attr, data, ptr) != 0)
    return false;
  return type == kMemoryTypeDevice || type == kMemoryTypeUnified;
}

Expected<std::unique_ptr<Module>> Device::load(llvm::ArrayRef<char> image) {
  if (Error e = bind())
    return std::move(e);
  // The driver reads PTX as a NUL-terminated string; cubins carry a size.
  std::string copy(image.begin(), image.end());
  std::unique_ptr<Module> m(new Module());
  m->api = api;
  if (Error e = api->check(api->cuModuleLoadData(&m->handle, copy.c_str()),
                           "cuModuleLoadData"))
    return std::move(e);
  return std::move(m);
}

Error Device::launch(Module &module, llvm::StringRef kernel,
                     std::array<unsigned, 3> grid,
                     std::array<unsigned, 3> block, unsigned sharedBytes,
                     llvm::ArrayRef<void *> args, bool wait, bool afterPrevious,
                     void *stream) {
  if (Error e = bind())
    return e;
  std::string name = kernel.str();
  CUfunction fn = nullptr;
  {
    // Looked up and given its shared memory limit once per module and
    // size: both are driver calls on the launch path, and a benchmark's
    // first kernel waits for them.
    std::lock_guard<std::mutex> lock(module.mutex);
    Module::Function &f = module.functions[name];
    if (!f.handle)
      if (Error e = api->check(
              api->cuModuleGetFunction(&f.handle, module.handle, name.c_str()),
              "cuModuleGetFunction(" + name + ")"))
        return e;
    fn = f.handle;
    // The opt-in limit covers dynamic plus static shared memory: set it
    // for every dynamic size up to the largest so far (a kernel with 48 KB
    // dynamic and 1 byte static fails to launch without it).
    if (sharedBytes > f.sharedBytes) {
      if (static_cast<int>(sharedBytes) > dev.maxSharedPerBlockOptin)
        return createStringError("kernel " + name + " needs " +
                                 std::to_string(sharedBytes) +
                                 " bytes of shared memory; the device "
                                 "allows " +
                                 std::to_string(dev.maxSharedPerBlockOptin));
      if (Error e = api->check(api->cuFuncSetAttribute(
                                   fn, kFuncAttrMaxDynamicShared, sharedBytes),
                               "cuFuncSetAttribute"))
        return e;
      f.sharedBytes = sharedBytes;
    }
  }
  std::vector<void *> params(args.begin(), args.end());
  CUresult r;
  if (afterPrevious && api->cuLaunchKernelEx) {
    CUlaunchAttribute attr{};
    attr.id = kLaunchAttrProgrammaticStreamSerialization;
    attr.value.value = 1;
    CUlaunchConfig config{grid[0],  grid[1],     grid[2], block[0], block[1],
                          block[2], sharedBytes, stream,  &attr,    1};
    r = api->cuLaunchKernelEx(&config, fn, params.data(), nullptr);
  } else {
    r = api->cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1],
                            block[2], sharedBytes, stream, params.data(),
                            nullptr);
  }
  if (Error e = api->check(r, "cuLaunchKernel(" + name + ")"))
    return e;
  if (!wait)
    return Error::success();
  if (Error e = synchronize(stream))
    return createStringError("kernel " + name +
                             " failed: " + llvm::toString(std::move(e)));
  return Error::success();
}

Expected<float> Device::timeMs(llvm::function_ref<Error()> work, void *stream) {
  if (Error e = bind())
    return std::move(e);
  CUevent start = nullptr, stop = nullptr;
  if (Error e = api->check(api->cuEventCreate(&start, 0), "cuEventCreate"))
    return std::move(e);
  if (Error e = api->check(api->cuEventCreate(&stop, 0), "cuEventCreate")) {
    api->cuEventDestroy(start);
    return std::move(e);
  }
  auto done = [&](Error e) -> Expected<float> {
    api->cuEventDestroy(start);
    api->cuEventDestroy(stop);
    return std::move(e);
  };
  if (Error e = api->check(api->cuEventRecord(start, stream), "cuEventRecord"))
    return done(std::move(e));
  if (Error e = work())
    return done(std::move(e));
  if (Error e = api->check(api->cuEventRecord(stop, stream), "cuEventRecord"))
    return done(std::move(e));
  if (Error e = api->check(api->cuEventSynchronize(stop), "cuEventSynchronize"))
    return done(std::move(e));
  float ms = 0;
  if (Error e = api->check(api->cuEventElapsedTime(&ms, start, stop),
                           "cuEventElapsedTime"))
    return done(std::move(e));
  api->cuEventDestroy(start);
  api->cuEventDestroy(stop);
  return ms;
}

Module::~Module() {
  if (handle)
    api->cuModuleUnload(handle);
}

} // namespace attn::cuda
