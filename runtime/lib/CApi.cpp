//===- CApi.cpp - attn/attn.h over attn/Runtime.h -------------------------===//
//
// Every entry point catches everything at the boundary (this file is built
// with exceptions on: a std::bad_alloc from the C++ side becomes
// ATTN_ERROR_INTERNAL), turns llvm::Errors into a status code plus the
// calling thread's last message, and never dereferences a null handle.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime.h"
#include "attn/attn.h"

#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <vector>

struct attn_engine {
  std::unique_ptr<attn::Engine> engine;
};

struct attn_kernel {
  std::shared_ptr<attn::Kernel> kernel;
  /// A training backward's: the argument of each gradient (result).
  bool isBackward = false;
  std::vector<size_t> gradArgs;
};

namespace {

thread_local std::string lastError;

int fail(attn_status status, std::string message) {
  lastError = std::move(message);
  return status;
}

int fail(attn_status status, llvm::Error e) {
  return fail(status, llvm::toString(std::move(e)));
}

/// Runs `body` (returning an int status), catching every exception.
template <typename F> int guarded(const char *fn, F &&body) {
  try {
    return body();
  } catch (const std::exception &e) {
    return fail(ATTN_ERROR_INTERNAL, std::string(fn) + ": " + e.what());
  } catch (...) {
    return fail(ATTN_ERROR_INTERNAL, std::string(fn) + ": unknown exception");
  }
}

llvm::Expected<attn::DType> dtypeOf(DLDataType t) {
  if (t.lanes == 1) {
    if (t.code == kDLFloat && t.bits == 32)
      return attn::DType::F32;
    if (t.code == kDLFloat && t.bits == 16)
      return attn::DType::F16;
    if (t.code == kDLBfloat && t.bits == 16)
      return attn::DType::BF16;
    if (t.code == kDLFloat && t.bits == 64)
      return attn::DType::F64;
    if (t.code == kDLInt && t.bits == 64)
      return attn::DType::I64;
    if (t.code == kDLInt && t.bits == 32)
      return attn::DType::I32;
  }
  return llvm::createStringError(
      "unsupported DLPack dtype (code " + std::to_string(t.code) + ", bits " +
      std::to_string(t.bits) + ", lanes " + std::to_string(t.lanes) + ")");
}

DLDataType dlpackOf(attn::DType t) {
  switch (t) {
  case attn::DType::F32:
    return {kDLFloat, 32, 1};
  case attn::DType::F16:
    return {kDLFloat, 16, 1};
  case attn::DType::BF16:
    return {kDLBfloat, 16, 1};
  case attn::DType::F64:
    return {kDLFloat, 64, 1};
  case attn::DType::I64:
    return {kDLInt, 64, 1};
  case attn::DType::I32:
    return {kDLInt, 32, 1};
  }
  return {kDLFloat, 32, 1};
}

DLDevice dlpackOf(attn::Device d) {
  return {d == attn::Device::CPU ? kDLCPU : kDLCUDA, 0};
}

llvm::Expected<attn::TensorView> viewOf(const DLTensor &t,
                                        const std::string &what) {
  auto bad = [&](const std::string &why) {
    return llvm::createStringError(what + ": " + why);
  };
  auto dtype = dtypeOf(t.dtype);
  if (!dtype)
    return bad(llvm::toString(dtype.takeError()));
  if (t.ndim < 0 || t.ndim > ATTN_MAX_RANK)
    return bad("rank " + std::to_string(t.ndim) + " (at most " +
               std::to_string(ATTN_MAX_RANK) + ")");
  if (t.ndim > 0 && !t.shape)
    return bad("null shape");
  // A caller may pass any integer as the device type; reading it as the
  // enum would be undefined for values outside the enumerators' range.
  static_assert(sizeof(DLDeviceType) == sizeof(int32_t));
  int32_t deviceType;
  std::memcpy(&deviceType, &t.device.device_type, sizeof deviceType);
  attn::Device device;
  if (deviceType == kDLCPU)
    device = attn::Device::CPU;
  else if (deviceType == kDLCUDA || deviceType == kDLCUDAManaged)
    device = attn::Device::CUDA;
  else
    return bad("unsupported DLPack device type " + std::to_string(deviceType) +
               " (expected kDLCPU or kDLCUDA)");
  if (device == attn::Device::CUDA && t.device.device_id != 0)
    return bad("on CUDA device " + std::to_string(t.device.device_id) +
               "; the engine runs on device 0");
  // An offset from no memory is no pointer; one that wraps the address
  // space is none either (the launch checks the rest of the view).
  if (!t.data && t.byte_offset)
    return bad("null data pointer with byte_offset " +
               std::to_string(t.byte_offset));
  if (reinterpret_cast<uintptr_t>(t.data) >
      std::numeric_limits<uintptr_t>::max() - t.byte_offset)
    return bad("data pointer plus byte_offset " +
               std::to_string(t.byte_offset) + " wraps the address space");
  attn::TensorView v;
  v.data = static_cast<char *>(t.data) + t.byte_offset;
  v.dtype = *dtype;
  v.device = device;
  v.shape.assign(t.shape, t.shape + t.ndim);
  if (t.strides)
    v.strides.assign(t.strides, t.strides + t.ndim);
  return v;
}

/// Views of `n` tensors named "<what> i" in messages.
llvm::Expected<std::vector<attn::TensorView>>
viewsOf(const DLTensor *inputs, size_t n, const std::string &what = "input") {
  if (n && !inputs)
    return llvm::createStringError("null " + what + "s array for " +
                                   std::to_string(n) + " " + what + "s");
  std::vector<attn::TensorView> views;
  for (size_t i = 0; i < n; ++i) {
    auto v = viewOf(inputs[i], what + " " + std::to_string(i));
    if (!v)
      return v.takeError();
    views.push_back(std::move(*v));
  }
  return views;
}

/// INVALID_ARGUMENT from one-result function `fn` on a kernel with several
/// results, naming `instead`; ATTN_OK otherwise.
int requireOneResult(const attn_kernel *kernel, const char *fn,
                     const char *instead) {
  size_t n = kernel->kernel->results().size();
  if (n == 1)
    return ATTN_OK;
  return fail(ATTN_ERROR_INVALID_ARGUMENT,
              std::string(fn) + ": the kernel returns " + std::to_string(n) +
                  " results; use " + instead);
}

void fillInfo(const attn::TensorSig &sig, attn_tensor_info *out) {
  *out = {};
  out->dtype = dlpackOf(sig.dtype);
  out->ndim = static_cast<int32_t>(sig.shape.size());
  for (size_t d = 0; d < sig.shape.size() && d < ATTN_MAX_RANK; ++d)
    out->shape[d] = sig.shape[d];
}

} // namespace

extern "C" {

const char *attn_last_error(void) { return lastError.c_str(); }

int attn_engine_create(const char *device, attn_engine **out) {
  return guarded("attn_engine_create", [&] {
    if (!out)
      return fail(ATTN_ERROR_INVALID_ARGUMENT,
                  "attn_engine_create: null output pointer");
    *out = nullptr;
    auto e = attn::Engine::create(device ? device : "");
    if (!e) {
      std::string why = llvm::toString(e.takeError());
      bool badName = why.rfind("unknown device", 0) == 0;
      return fail(badName ? ATTN_ERROR_INVALID_ARGUMENT : ATTN_ERROR_DEVICE,
                  why);
    }
    *out = new attn_engine{std::move(*e)};
    return static_cast<int>(ATTN_OK);
  });
}

void attn_engine_destroy(attn_engine *engine) {
  try {
    delete engine;
  } catch (...) {
  }
}

int attn_engine_device(const attn_engine *engine, DLDevice *out) {
  if (!engine || !out)
    return fail(ATTN_ERROR_INVALID_ARGUMENT,
                "attn_engine_device: null engine or output pointer");
  *out = dlpackOf(engine->engine->device());
  return ATTN_OK;
}

int attn_compile(attn_engine *engine, const char *mlir, size_t len,
                 const char *entry, attn_kernel **out) {
  return guarded("attn_compile", [&] {
    if (!out)
      return fail(ATTN_ERROR_INVALID_ARGUMENT,
                  "attn_compile: null output pointer");
    *out = nullptr;
    if (!engine)
      return fail(ATTN_ERROR_INVALID_ARGUMENT, "attn_compile: null engine");
    if (!mlir && len)
      return fail(ATTN_ERROR_INVALID_ARGUMENT, "attn_compile: null program");
    attn::CompileOptions options;
    if (entry)
      options.entry = entry;
    auto k = engine->engine->compile(llvm::StringRef(mlir, len), options);
    if (!k)
      return fail(ATTN_ERROR_COMPILE, k.takeError());
    *out = new attn_kernel{std::move(*k)};
    return static_cast<int>(ATTN_OK);
  });
}

int attn_compile_training(attn_engine *engine, const char *mlir, size_t len,
                          const char *entry, attn_kernel **forward,
                          attn_kernel **backward) {
  return guarded("attn_compile_training", [&] {
    if (!forward || !backward)
      return fail(ATTN_ERROR_INVALID_ARGUMENT,
                  "attn_compile_training: null output pointer");
    *forward = *backward = nullptr;
    if (!engine)
      return fail(ATTN_ERROR_INVALID_ARGUMENT,
                  "attn_compile_training: null engine");
    if (!mlir && len)
      return fail(ATTN_ERROR_INVALID_ARGUMENT,
                  "attn_compile_training: null program");
    attn::CompileOptions options;
    if (entry)
      options.entry = entry;
    attn::Engine &e = *engine->engine;
    auto pair = e.compileTraining(llvm::StringRef(mlir, len), options);
    if (!pair) {
      return fail(ATTN_ERROR_COMPILE, llvm::toString(pair.takeError()));
    }
    auto fwd = std::make_unique<attn_kernel>();
    fwd->kernel = std::move(pair->forward);
    auto bwd = std::make_unique<attn_kernel>();
    bwd->kernel = std::move(pair->backward);
    bwd->isBackward = true;
    bwd->gradArgs = std::move(pair->gradArgs);
    *forward = fwd.release();
    *backward = bwd.release();
    return static_cast<int>(ATTN_OK);
  });
}

int attn_kernel_grad_arg(const attn_kernel *backward, size_t index,
                         size_t *out) {
  if (!backward || !out)
    return fail(ATTN_ERROR_INVALID_ARGUMENT,
                "attn_kernel_grad_arg: null kernel or output pointer");
  const std::vector<size_t> &of = backward->gradArgs;
  if (!backward->isBackward)
    return fail(ATTN_ERROR_INVALID_ARGUMENT,
                "attn_kernel_grad_arg: not a backward from "
                "attn_compile_training");
  if (index >= of.size())
    return fail(ATTN_ERROR_INVALID_ARGUMENT,
                "attn_kernel_grad_arg: gradient " + std::to_string(index) +
                    " of " + std::to_string(of.size()));
  *out = of[index];
  return ATTN_OK;
}

void attn_kernel_destroy(attn_kernel *kernel) {
  try {
    delete kernel;
  } catch (...) {
  }
}

int attn_kernel_num_args(const attn_kernel *kernel, size_t *out) {
  if (!kernel || !out)
    return fail(ATTN_ERROR_INVALID_ARGUMENT,
                "attn_kernel_num_args: null kernel or output pointer");
  *out = kernel->kernel->arguments().size();
  return ATTN_OK;
}

/// Entry `index` of `sigs` (the arguments or the results, `what`) into
/// `out`, for the C function `fn`.
static int sigInfo(const char *fn, const char *what,
                   const std::vector<attn::TensorSig> &sigs, size_t index,
                   attn_tensor_info *out) {
  if (index >= sigs.size())
    return fail(ATTN_ERROR_INVALID_ARGUMENT,
                std::string(fn) + ": " + what + " " + std::to_string(index) +
                    " of " + std::to_string(sigs.size()));
  if (sigs[index].shape.size() > ATTN_MAX_RANK)
    return fail(ATTN_ERROR_INVALID_ARGUMENT,
                std::string(fn) + ": rank above ATTN_MAX_RANK");
  fillInfo(sigs[index], out);
  return ATTN_OK;
}

int attn_kernel_arg_info(const attn_kernel *kernel, size_t index,
                         attn_tensor_info *out) {
  if (!kernel || !out)
    return fail(ATTN_ERROR_INVALID_ARGUMENT,
                "attn_kernel_arg_info: null kernel or output pointer");
  return sigInfo("attn_kernel_arg_info", "argument",
                 kernel->kernel->arguments(), index, out);
}

int attn_kernel_result_info(const attn_kernel *kernel, attn_tensor_info *out) {
  if (!kernel || !out)
    return fail(ATTN_ERROR_INVALID_ARGUMENT,
                "attn_kernel_result_info: null kernel or output pointer");
  if (int st = requireOneResult(kernel, "attn_kernel_result_info",
                                "attn_kernel_result_info_at"))
    return st;
  fillInfo(kernel->kernel->result(), out);
  return ATTN_OK;
}

int attn_kernel_num_results(const attn_kernel *kernel, size_t *out) {
  if (!kernel || !out)
    return fail(ATTN_ERROR_INVALID_ARGUMENT,
                "attn_kernel_num_results: null kernel or output pointer");
  *out = kernel->kernel->results().size();
  return ATTN_OK;
}

int attn_kernel_result_info_at(const attn_kernel *kernel, size_t index,
                               attn_tensor_info *out) {
  if (!kernel || !out)
    return fail(ATTN_ERROR_INVALID_ARGUMENT,
                "attn_kernel_result_info_at: null kernel or output pointer");
  return sigInfo("attn_kernel_result_info_at", "result",
                 kernel->kernel->results(), index, out);
}

int attn_kernel_device(const attn_kernel *kernel, DLDevice *out) {
  if (!kernel || !out)
    return fail(ATTN_ERROR_INVALID_ARGUMENT,
                "attn_kernel_device: null kernel or output pointer");
  *out = dlpackOf(kernel->kernel->device());
  return ATTN_OK;
}

int attn_kernel_result_shape(attn_kernel *kernel, const DLTensor *inputs,
                             size_t n, int64_t *shape) {
  return guarded("attn_kernel_result_shape", [&] {
    if (!kernel || !shape)
      return fail(ATTN_ERROR_INVALID_ARGUMENT,
                  "attn_kernel_result_shape: null kernel or shape pointer");
    if (int st = requireOneResult(kernel, "attn_kernel_result_shape",
                                  "attn_kernel_result_shape_at"))
      return st;
    return attn_kernel_result_shape_at(kernel, 0, inputs, n, shape);
  });
}

int attn_kernel_result_shape_at(attn_kernel *kernel, size_t index,
                                const DLTensor *inputs, size_t n,
                                int64_t *shape) {
  return guarded("attn_kernel_result_shape_at", [&] {
    if (!kernel || !shape)
      return fail(ATTN_ERROR_INVALID_ARGUMENT,
                  "attn_kernel_result_shape_at: null kernel or shape pointer");
    size_t count = kernel->kernel->results().size();
    if (index >= count)
      return fail(ATTN_ERROR_INVALID_ARGUMENT,
                  "attn_kernel_result_shape_at: result " +
                      std::to_string(index) + " of " + std::to_string(count));
    auto views = viewsOf(inputs, n);
    if (!views)
      return fail(ATTN_ERROR_LAUNCH, views.takeError());
    auto s = kernel->kernel->resultShapes(*views);
    if (!s)
      return fail(ATTN_ERROR_LAUNCH, s.takeError());
    std::copy((*s)[index].begin(), (*s)[index].end(), shape);
    return static_cast<int>(ATTN_OK);
  });
}

const char *attn_kernel_remark(const attn_kernel *kernel, size_t index) {
  if (!kernel || index >= kernel->kernel->remarks().size())
    return nullptr;
  return kernel->kernel->remarks()[index].c_str();
}

int attn_launch(attn_kernel *kernel, const DLTensor *inputs, size_t n,
                const DLTensor *output, void *stream) {
  return guarded("attn_launch", [&] {
    if (!kernel || !output)
      return fail(ATTN_ERROR_INVALID_ARGUMENT,
                  "attn_launch: null kernel or output");
    if (int st = requireOneResult(kernel, "attn_launch", "attn_launch_outputs"))
      return st;
    auto views = viewsOf(inputs, n);
    if (!views)
      return fail(ATTN_ERROR_LAUNCH, views.takeError());
    auto out = viewOf(*output, "the output");
    if (!out)
      return fail(ATTN_ERROR_LAUNCH, out.takeError());
    if (llvm::Error e = kernel->kernel->launch(*views, *out, stream))
      return fail(ATTN_ERROR_LAUNCH, std::move(e));
    return static_cast<int>(ATTN_OK);
  });
}

int attn_launch_outputs(attn_kernel *kernel, const DLTensor *inputs,
                        size_t n_inputs, const DLTensor *outputs,
                        size_t n_outputs, void *stream) {
  return guarded("attn_launch_outputs", [&] {
    if (!kernel)
      return fail(ATTN_ERROR_INVALID_ARGUMENT,
                  "attn_launch_outputs: null kernel");
    auto views = viewsOf(inputs, n_inputs);
    if (!views)
      return fail(ATTN_ERROR_LAUNCH, views.takeError());
    auto outs = viewsOf(outputs, n_outputs, "output");
    if (!outs)
      return fail(ATTN_ERROR_LAUNCH, outs.takeError());
    if (llvm::Error e = kernel->kernel->launch(
            *views, llvm::ArrayRef<attn::TensorView>(*outs), stream))
      return fail(ATTN_ERROR_LAUNCH, std::move(e));
    return static_cast<int>(ATTN_OK);
  });
}

} // extern "C"
