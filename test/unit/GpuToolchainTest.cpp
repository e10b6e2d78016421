//===- GpuToolchainTest.cpp - MLIR GPU kernel -> cubin -> CUDA launch -----===//
//
// The path every attn GPU kernel will take, checked end to end on a small
// kernel: gpu dialect -> NVVM -> LLVM NVPTX -> PTX -> ptxas -> cubin
// (gpu-module-to-binary, in-process), loaded and launched through the
// dlopen'ed driver (attn/CudaDriver.h), checked against the host result.
// Tests needing a GPU skip with a message where none exists.
//
//===----------------------------------------------------------------------===//

#include "attn/CudaDriver.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace {

const char *kKernel = R"(
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale_add(%x: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %tid = gpu.thread_id x
      %base = arith.muli %bid, %bdim : index
      %i = arith.addi %base, %tid : index
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %b = memref.load %y[%i] : memref<?xf32>
        %c2 = arith.constant 2.0 : f32
        %m = arith.mulf %a, %c2 : f32
        %s = arith.addf %m, %b : f32
        memref.store %s, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
})";

std::string cudaHome() {
  if (const char *h = std::getenv("CUDA_HOME"))
    return h;
  return "/usr/local/cuda";
}

/// Compiles kKernel for `chip` and returns the cubin bytes.
std::string compileCubin(const std::string &chip, std::string &error) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  mlir::registerAllPasses();
  mlir::MLIRContext ctx(registry);
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return mlir::success();
  });
  auto module = mlir::parseSourceString<mlir::ModuleOp>(kKernel, &ctx);
  if (!module) {
    error = "parse: " + diagnostics;
    return "";
  }
  mlir::PassManager pm(&ctx);
  // Passes on the top-level module (parsePassPipeline adds to `pm`, which
  // is anchored on it already).
  std::string pipeline =
      "nvvm-attach-target{chip=" + chip +
      " O=3},gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm,"
      "reconcile-unrealized-casts),"
      "gpu-module-to-binary{format=bin toolkit=" +
      cudaHome() + "}";
  if (mlir::failed(mlir::parsePassPipeline(pipeline, pm)) ||
      mlir::failed(pm.run(*module))) {
    error = "compile: " + diagnostics;
    return "";
  }
  std::string cubin;
  module->walk([&](mlir::gpu::BinaryOp bin) {
    auto object = llvm::cast<mlir::gpu::ObjectAttr>(bin.getObjects()[0]);
    cubin = object.getObject().str();
  });
  if (cubin.empty()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    error = "no gpu.binary produced:\n" + text.substr(0, 2000) + diagnostics;
  }
  return cubin;
}

TEST(GpuToolchain, CompilesToCubinWithoutAGpu) {
  // Needs only the CUDA toolkit's ptxas, which development machines have.
  if (!llvm::sys::fs::exists(cudaHome() + "/bin/ptxas"))
    GTEST_SKIP() << "no ptxas under " << cudaHome() << " (set CUDA_HOME)";
  for (const char *chip : {"sm_80", "sm_90"}) {
    std::string error;
    std::string cubin = compileCubin(chip, error);
    ASSERT_FALSE(cubin.empty()) << chip << ": " << error;
    EXPECT_EQ(cubin.substr(0, 4), "\x7f"
                                  "ELF")
        << chip;
  }
}

TEST(CudaDriver, MissingDriverOrDeviceIsAnErrorValue) {
  auto device = attn::cuda::Device::open(/*ordinal=*/1000);
  ASSERT_FALSE(static_cast<bool>(device));
  std::string message = llvm::toString(device.takeError());
  EXPECT_TRUE(message.find("libcuda.so.1") != std::string::npos ||
              message.find("no CUDA device 1000") != std::string::npos)
      << message;
}

TEST(GpuToolchain, CompiledKernelRunsOnTheDevice) {
  auto device = attn::cuda::Device::open();
  if (!device)
    GTEST_SKIP() << "no GPU: " << llvm::toString(device.takeError());
  const attn::cuda::DeviceInfo &info = (*device)->info();
  std::string error;
  std::string cubin = compileCubin(info.chip(), error);
  ASSERT_FALSE(cubin.empty()) << error;

  const int64_t n = 100003; // not a multiple of the block size
  std::vector<float> x(n), y(n), expect(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = 0.5f * static_cast<float>(i % 97) - 7.0f;
    y[i] = static_cast<float>(i % 13);
    expect[i] = 2.0f * x[i] + y[i];
  }
  auto dx = (*device)->alloc(n * sizeof(float));
  auto dy = (*device)->alloc(n * sizeof(float));
  ASSERT_TRUE(dx && dy);
  ASSERT_FALSE(static_cast<bool>(
      (*device)->copyToDevice(*dx, x.data(), n * sizeof(float))));
  ASSERT_FALSE(static_cast<bool>(
      (*device)->copyToDevice(*dy, y.data(), n * sizeof(float))));
  auto module =
      (*device)->load(llvm::ArrayRef<char>(cubin.data(), cubin.size()));
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  // Each memref<?xf32> is passed as its descriptor: allocated and aligned
  // pointers, offset, size, stride.
  uint64_t px = *dx, py = *dy;
  int64_t zero = 0, one = 1, count = n;
  void *args[] = {&px, &px,   &zero,  &count, &one,  &py,
                  &py, &zero, &count, &one,   &count};
  unsigned blocks = static_cast<unsigned>((n + 127) / 128);
  llvm::Error launched = (*device)->launch(
      **module, "scale_add", {blocks, 1, 1}, {128, 1, 1}, 0, args);
  ASSERT_FALSE(static_cast<bool>(launched))
      << llvm::toString(std::move(launched));
  std::vector<float> got(n, -1.0f);
  ASSERT_FALSE(static_cast<bool>(
      (*device)->copyToHost(got.data(), *dy, n * sizeof(float))));
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(got[i], expect[i]) << "element " << i;
  EXPECT_FALSE(static_cast<bool>((*device)->free(*dx)));
  EXPECT_FALSE(static_cast<bool>((*device)->free(*dy)));
}

TEST(GpuToolchain, LaunchErrorsAreMessages) {
  auto device = attn::cuda::Device::open();
  if (!device)
    GTEST_SKIP() << "no GPU: " << llvm::toString(device.takeError());
  std::string error;
  std::string cubin = compileCubin((*device)->info().chip(), error);
  ASSERT_FALSE(cubin.empty()) << error;
  auto module =
      (*device)->load(llvm::ArrayRef<char>(cubin.data(), cubin.size()));
  ASSERT_TRUE(static_cast<bool>(module));
  llvm::Error e = (*device)->launch(**module, "no_such_kernel", {1, 1, 1},
                                    {1, 1, 1}, 0, {});
  ASSERT_TRUE(static_cast<bool>(e));
  EXPECT_NE(llvm::toString(std::move(e)).find("no_such_kernel"),
            std::string::npos);
  auto bad = (*device)->load(llvm::ArrayRef<char>("not a cubin", 11));
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("cuModuleLoadData"),
            std::string::npos);
}

} // namespace
