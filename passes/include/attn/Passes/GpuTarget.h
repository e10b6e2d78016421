//===- GpuTarget.h - target descriptions and option checks -----*- C++ -*-===//
//
// The targets (cpu and the NVIDIA chips from sm_80 on) and what each offers
// the kernels (TargetDesc, getTargetDesc; docs/targets.md), and the checks
// of what the GPU backend accepts as its target and kernel shape, used up
// front by the attn-to-gpu pipeline and the runtime
// (CompileOptions::gpu, ATTN_GPU_*), so that a bad option is an error
// naming it before any kernel is built, never an abort in LLVM's
// instruction selection or a crash in the NVVM target.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PASSES_GPUTARGET_H
#define ATTN_PASSES_GPUTARGET_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir::attn {

/// The oldest architecture the kernels run on: they use cp.async, ldmatrix
/// and bf16 mma.sync, which appear with sm_80.
inline constexpr unsigned kMinGpuSm = 80;

/// The matrix instruction a target's kernels use for `attn_block.dot`.
enum class MmaKind {
  None,    // CPU: vector FMAs (codegen/cpu)
  MmaSync, // mma.sync.m16n8k16, operands in registers (sm_80 and newer)
  Wgmma,   // warpgroup MMA, B (and maybe A) read from shared memory (sm_90a)
};

/// The tile shape of the flash kernel for one head dim.
struct TileShape {
  int64_t headDim;
  int64_t blockM; // query rows per program instance
  int64_t blockN; // keys per step of the key walk
};

/// What a target offers the kernels and the shapes they take by default: the
/// one description that attn-to-block, the GPU lowering, the option checks
/// and the runtime read. Defaults are the measured ones of
/// docs/gpu-backend.md (4 warps, 64 x 64 tiles, 2 stages at D = 64 and 128).
struct TargetDesc {
  llvm::StringRef name; // "cpu", "sm_80", "sm_90", "sm_90a", ...
  unsigned sm;          // the XY of sm_XY; 0 for the CPU
  MmaKind mma;
  int64_t warps;  // warps per block (CPU: 1, one thread per program)
  int64_t stages; // K/V tiles in flight (CPU: 1, loads are synchronous)
  /// Largest dynamic shared memory of one block, bytes (the opt-in maximum
  /// of the CUDA C++ Programming Guide's compute-capability table); 0 on the
  /// CPU.
  int64_t sharedBytes;
  bool cpAsync;         // cp.async (sm_80 and newer)
  bool tma;             // bulk tensor copies with mbarriers (sm_90 and newer)
  bool dependentLaunch; // griddepcontrol (sm_90 and newer)
  /// Tile shapes by head dim, ascending.
  llvm::ArrayRef<TileShape> tiles;

  bool isGpu() const { return sm != 0; }
  /// The tile shape for head dim `headDim`: its row, else that of the
  /// largest listed head dim below it, else the first row.
  TileShape tileFor(int64_t headDim) const;
};

/// The description of `target`: "cpu" or an NVIDIA architecture that
/// checkGpuChip accepts; anything else is an error naming the problem (the
/// message of checkGpuChip). The reference lives as long as the program.
llvm::Expected<const TargetDesc &> getTargetDesc(llvm::StringRef target);

/// "" when `chip` names an NVIDIA architecture the kernels can target
/// (sm_80 or newer, spelled as LLVM's NVPTX backend knows it: sm_80, sm_86,
/// sm_90, sm_90a, sm_100a, ...), else a message naming the problem.
std::string checkGpuChip(llvm::StringRef chip);

/// The XY of "sm_XY[a|f]" (0 when `chip` is not of that form).
unsigned gpuSmVersion(llvm::StringRef chip);

/// "" when the kernel shape options are valid (the flash kernel of
/// attn-to-block: warps 4 or 8, each owning one 16-row tile, or wgmma's
/// one or two warpgroups; block-n 64 or 128), else a message naming the
/// option.
std::string checkGpuKernelOptions(int64_t warps, int64_t blockN);

/// "" when `transport` names a precision of PaTH's transport dots in the
/// GPU form (f16, split), else a message listing them.
std::string checkPathTransport(llvm::StringRef transport);
/// "" when `gradDq` is an attn-to-block grad-dq value (walk or reduce).
std::string checkGradDq(llvm::StringRef gradDq);

/// "" when `format` is an output of the attn-to-gpu pipeline (bin, isa,
/// none), else a message listing them.
std::string checkGpuFormat(llvm::StringRef format);

} // namespace mlir::attn

#endif // ATTN_PASSES_GPUTARGET_H
