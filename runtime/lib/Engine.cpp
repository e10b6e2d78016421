//===- Engine.cpp - device selection and the in-memory kernel cache -------===//

#include "attn/Runtime.h"

#include "attn/CudaDriver.h"

#include "GpuOptions.h"
#include "KernelSupport.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

using namespace mlir;
using llvm::createStringError;
using llvm::Error;
using llvm::Expected;

namespace attn {

llvm::StringRef deviceName(Device d) {
  return d == Device::CPU ? "cpu" : "cuda";
}

Expected<Pipeline> parsePipeline(llvm::StringRef name) {
  if (name == "auto" || name.empty())
    return Pipeline::Auto;
  if (name == "reference")
    return Pipeline::Reference;
  if (name == "fused")
    return Pipeline::Fused;
  return createStringError("unknown pipeline '" + name.str() +
                           "' (expected auto, fused or reference)");
}

std::string TensorSig::str() const {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  return s + dtypeName(dtype).str() + ">";
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t TensorView::stride(size_t d) const {
  if (!strides.empty())
    return strides[d];
  int64_t s = 1;
  for (size_t i = d + 1; i < shape.size(); ++i)
    s *= shape[i];
  return s;
}

bool TensorView::isContiguous() const {
  if (strides.empty())
    return true;
  int64_t want = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && strides[d] != want)
      return false;
    want *= shape[d];
  }
  return true;
}

Kernel::~Kernel() = default;

Error Kernel::requireOneResult(llvm::StringRef what,
                               llvm::StringRef instead) const {
  if (ress.size() == 1)
    return Error::success();
  return createStringError(what.str() + " serves one-result kernels; @" +
                           entry + " returns " + std::to_string(ress.size()) +
                           " results: use " + instead.str());
}

Error Kernel::launch(llvm::ArrayRef<TensorView> inputs,
                     const TensorView &output, void *stream) {
  if (Error e = requireOneResult("launch(inputs, output)",
                                 "launch(inputs, outputs) with one output "
                                 "per result"))
    return e;
  return launch(inputs, llvm::ArrayRef<TensorView>(output), stream);
}

Expected<std::vector<int64_t>>
Kernel::resultShape(llvm::ArrayRef<TensorView> inputs) {
  if (Error e = requireOneResult("resultShape()", "resultShapes()"))
    return std::move(e);
  auto shapes = resultShapes(inputs);
  if (!shapes)
    return shapes.takeError();
  return std::move(shapes->front());
}

Expected<HostArray> Kernel::run(llvm::ArrayRef<HostArray> inputs) {
  if (Error e = requireOneResult("run()", "runAll()"))
    return std::move(e);
  auto all = runAll(inputs);
  if (!all)
    return all.takeError();
  return std::move(all->front());
}

Expected<std::vector<double>>
Kernel::benchmark(llvm::ArrayRef<HostArray> inputs, unsigned runs) {
  std::vector<double> ms;
  for (unsigned i = 0; i < runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto out = runAll(inputs);
    if (!out)
      return out.takeError();
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - t0)
                     .count());
  }
  return ms;
}

Engine::Engine(Device dev, bool explicitDevice)
    : dev(dev), explicitDevice(explicitDevice) {}
Engine::~Engine() = default;

Expected<std::unique_ptr<Engine>> Engine::create(llvm::StringRef device) {
  std::string want = device.str();
  if (want.empty())
    if (const char *env = std::getenv("ATTN_DEVICE"))
      want = env;
  if (want == "cpu")
    return std::unique_ptr<Engine>(new Engine(Device::CPU, true));
  if (want.empty() || want == "auto" || want == "cuda") {
    bool asked = want == "cuda";
    auto gpu = cuda::Device::open();
    if (!gpu) {
      if (asked)
        return createStringError("device 'cuda' requested: " +
                                 llvm::toString(gpu.takeError()));
      llvm::consumeError(gpu.takeError());
      return std::unique_ptr<Engine>(new Engine(Device::CPU, false));
    }
    std::unique_ptr<Engine> e(new Engine(Device::CUDA, asked));
    e->gpu = std::move(*gpu);
    return std::move(e);
  }
  return createStringError("unknown device '" + want +
                           "' (expected cpu, cuda or auto)");
}

std::string Engine::gpuArch() const { return gpu ? gpu->info().chip() : ""; }

Expected<std::shared_ptr<Kernel>> Engine::compile(llvm::StringRef source,
                                                  const CompileOptions &options,
                                                  llvm::StringRef bufferName) {
  // The buffer name is part of the key: diagnostics and remarks name it.
  std::string key = options.entry + '\0' +
                    std::to_string(static_cast<int>(options.pipeline)) + '\0' +
                    bufferName.str() + '\0' +
                    detail::gpuOptionsKey(options.gpu) + '\0' + source.str();
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end())
      return it->second;
  }
  Expected<std::shared_ptr<Kernel>> kernel = nullptr;
  if (dev == Device::CUDA && options.pipeline != Pipeline::Reference) {
    std::lock_guard<std::mutex> lock(gpuMutex);
    kernel = detail::createCudaKernel(source, options, bufferName, gpu);
    if (kernel) {
      (*kernel)->dev = Device::CUDA;
    } else if (!explicitDevice) {
      // Chosen automatically: run what the GPU backend lacks on the CPU,
      // and say so.
      std::string why = llvm::toString(kernel.takeError());
      kernel = detail::createCpuKernel(source, options, bufferName);
      if (kernel)
        (*kernel)->notes.insert((*kernel)->notes.begin(),
                                "runs on the CPU: " + why);
    }
  } else if (dev == Device::CUDA && explicitDevice) {
    return createStringError("the reference pipeline runs on the CPU only "
                             "(use --device=cpu)");
  } else {
    kernel = detail::createCpuKernel(source, options, bufferName);
  }
  if (!kernel)
    return kernel.takeError();
  std::lock_guard<std::mutex> lock(mutex);
  cache.emplace(key, *kernel);
  return *kernel;
}

} // namespace attn
