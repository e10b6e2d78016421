//===- GpuPlan.h - how one attn.attention runs on an NVIDIA GPU -*- C++ -*-===//
//
// Why this lives in codegen/: the launch plan is what the GPU backend
// (codegen/gpu) builds kernels for and what the runtime (CudaKernel.cpp)
// executes; the planner (passes/lib/AttentionToGPU.cpp) only fills it in.
// Passes link codegen, so the struct, its rules and its attribute form sit
// in the lower layer (AttnCodegenGPU: codegen/gpu/GpuPlan.cpp) and every
// user includes it from here.
//
// The GPU backend turns one `attn.attention` into a `gpu.module` of up to
// three kernels and a launch plan: the attributes below, which the pass
// stores on the gpu.module (`attn.plan`) and the runtime reads back to size
// grids, workspaces and shared memory. Kernel ABI (all buffers flattened
// row-major, memref<?xT>):
//
//   rope_table(cos, sin, count, start)  cos/sin tables [P, R/2] f32 for
//                                       positions start..start+P-1, count =
//                                       P*R/2; grid ceil(count/256), 256 thr.
//   rope(x, y, cos, sin, rows, len, pos0)
//                                       y = RoPE(x), row r at table row
//                                       pos0 + r % len; grid
//                                       ceil(rows * D/2 / ropePairsPerThread
//                                       / 256), 256 threads.
//   gate(g, G, S)                       G = -gamma log2(e) cumsum(g) per row
//                                       of S (f64 sums, f32 out); grid B*Hq,
//                                       kGateThreads threads. Row r of the G
//                                       buffer takes gateRowFloats(S) floats;
//                                       with gateInAcc() it starts with
//                                       uTiles(S) records of uTileFloats()
//                                       (see there), G follows.
//   attention(q, k, v, o, G, Hq, Hk, T, S [, cos, sin, qPos0])
//                                       grid (ceil(T/blockM), B*Hq),
//                                       32*warps threads, smemBytes dynamic;
//                                       with ropeQInKernel() q is the input
//                                       (unrotated), query i at table row
//                                       qPos0 + i, and rope runs on k only.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_GPUPLAN_H
#define ATTN_CODEGEN_GPUPLAN_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/LLVM.h"

#include <algorithm>
#include <cstdint>

namespace mlir {
namespace attn {

struct GpuPlan {
  bool wgmma = false;   // sm_90a warpgroup MMA (else mma.sync)
  bool overlap = false; // wgmma: S_{j+1} and P_j V_j in flight together
  int64_t warps = 4;    // warps per block (wgmma: 4 per warpgroup)
  int64_t mTiles = 1;   // m16 row tiles per warp (1 or 2)
  int64_t blockN = 64;  // keys per step of the key walk
  int64_t stages = 2;   // K/V tiles in flight (cp.async pipeline depth)
  int64_t headDim = 0;  // D of q and k
  int64_t valueDim = 0; // D of v and the output
  bool half = false;    // f16 operands (else bf16)
  bool rope = false;    // the rope kernel runs on q and k first
  int64_t ropeDim = 0;  // rotated dims
  bool ropeInterleaved = false;
  double ropeTheta = 0;
  int64_t ropeOffset = 0; // key j at ropeOffset + j
  bool ropeQOffset = false;
  int64_t ropeQOffsetValue = 0; // query i at this + i, when ropeQOffset
  bool gate = false;            // FoX: the gate kernel runs first
  double gateScale = 1.0;       // gamma: 1, or the softmax scale when scaled
  int64_t mask = 0;             // 0 causal, 1 none, 2 sliding window
  int64_t window = 0;
  double scale = 1.0; // softmax scale
  /// Programmatic dependent launch (sm_90 and later): the kernel before
  /// attention (gate, or rope on k) lets it start early
  /// (griddepcontrol.launch_dependents), and attention waits for that
  /// kernel's results (griddepcontrol.wait) only after its prologue, right
  /// before it first reads memory the earlier kernels wrote. The runtime
  /// launches attention with programmatic stream serialization; without
  /// it the wait returns at once.
  bool dependentLaunch = false;
  /// The attention kernel is the block program's GPU form
  /// (lowering=block, FlashToBlockGpu.cpp): the rope kernel rotates q as
  /// well as k, and the gate kernel writes G alone, which the kernel reads
  /// per row and per key (no key tile records): ropeQInKernel() and
  /// gateInAcc() are false.
  bool blockProgram = false;

  /// wgmma's swizzled tiles start on 1024-byte bounds: the kernel rounds
  /// the dynamic shared memory base up, within this much slack.
  static constexpr int64_t kWgmmaAlign = 1024;
  /// Threads of a gate kernel block (one block per row) and keys per
  /// thread and round. 256 x 8: at T = 2K every block has one full round,
  /// and blocks of 1024 threads (61 registers) fit once per SM, which made
  /// the 256 rows of B*H at T = 2K, D = 64 run in two waves.
  static constexpr int64_t kGateThreads = 256;
  static constexpr int64_t kGateKeysPerThread = 8;

  int64_t blockM() const { return 16 * mTiles * warps; }
  /// Rotated pairs per thread of the rope kernel: 8 (16-byte loads and
  /// stores) when the rotated dims come in multiples of 16, else 1.
  int64_t ropePairsPerThread() const { return ropeDim % 16 == 0 ? 8 : 1; }
  /// The attention kernel rotates its Q tile in shared memory (once per
  /// block) instead of a rope pass over q; needs 8-pair chunks.
  bool ropeQInKernel() const {
    return rope && !blockProgram && ropePairsPerThread() == 8;
  }
  int64_t threads() const { return 32 * warps; }
  /// Blocks of `bytes` of dynamic shared memory that fit an sm_90 SM (228
  /// KB, 1 KB reserved per block).
  static int64_t blocksBySharedMemory(int64_t bytes) {
    return 228 * 1024 / (bytes + 1024);
  }
  /// Blocks per SM the attention kernel asks ptxas for (nvvm.minctasm), or
  /// 0 for no hint; both lowerings follow it. The blocks that shared memory
  /// allows on sm_90 (228 KB, 1 KB per block reserved), where that is more
  /// than 2 and the registers it leaves (64K per SM) are still >= 96 per
  /// thread: at D = 64 plain attention fits 5 blocks by itself, FoX with
  /// its key term in the S wgmma (gateInMma) took 108 registers (4 blocks)
  /// and fits 96 without spills, as does the block program's with its key
  /// term as S's initial value (112 registers unhinted; 147 with the bias
  /// per score, which spilled 248 bytes at 96). wgmma only; not
  /// with the overlap (P of the previous step stays live: it spills at 96),
  /// nor with FoX's bias added per score (a negative scale: G_j stays live;
  /// the direct kernel needs 107 registers and spills 8 bytes at 96).
  int64_t minBlocksPerSm() const {
    if (!wgmma || overlap || (gate && !gateInMma() && !gateKeyTermInS()))
      return 0;
    return occupancyHint(smemBytes(), threads());
  }
  /// The rule of minBlocksPerSm for any kernel of `smemBytes` of dynamic
  /// shared memory and `threads` threads (the block program's flash kernel
  /// takes it too): the blocks shared memory allows, where more than 2 and
  /// still >= 96 registers per thread; else 0.
  static int64_t occupancyHint(int64_t smemBytes, int64_t threads) {
    const int64_t blocks = blocksBySharedMemory(smemBytes);
    return blocks > 2 && 65536 / (blocks * threads) >= 96 ? blocks : 0;
  }
  /// The attention kernel starts while a rope or gate kernel before it
  /// still runs, and waits for it (dependentLaunch, and such a kernel
  /// exists). The kernel's wait (griddepcontrol.wait in the direct kernel,
  /// attn_block.griddep_wait in the block program's: BlockTarget::
  /// dependentLaunch) and the runtime's launch mode all follow this.
  bool attentionOverlapsPrologue() const {
    return dependentLaunch && (rope || gate);
  }
  /// FoX with the key term of its bias as the scores' initial value: S =
  /// Q K^T accumulates onto u_j = (G'_j - G'_j0) / (scale log2(e)) instead
  /// of zero (G' the stored -gamma log2(e) G, j0 the first key of j's
  /// blockN tile), so a score costs what it costs without FoX; the row term
  /// G'_j0 - G'_i joins the row max and offset once per row and tile. Needs
  /// a positive scale (max and masks work on raw scores); else the bias is
  /// added per score.
  ///
  /// The gate kernel writes one record per key tile; rows hold two spare
  /// records, so the kernel copies records ahead without bounds checks.
  /// See gateInMma() for the wgmma record; with mma.sync a record is
  /// G'_j0, 3 floats of padding (16-byte copies), then u_j in key order (a
  /// lane's columns c, c+1 are one 8-byte load, moved into the
  /// accumulators of rows r and r+8), copied two tiles ahead into
  /// gateTiles() = 4 shared slots and read after the step's copies, before
  /// its wait and barrier.
  bool gateInAcc() const { return gate && scale > 0 && !blockProgram; }
  /// The block program's kernel splits FoX's bias the same way, with S
  /// accumulating onto the key term of G' (FlashToBlockGpu.cpp, FoxKeyTerm;
  /// no records: it loads G' per key tile).
  bool gateKeyTermInS() const { return gate && scale > 0 && blockProgram; }
  /// gateInAcc with wgmma: u enters S through the tensor cores, as one more
  /// k16 step ahead of Q K^T (zero-initialised accumulators): A is a
  /// constant 256-byte shared tile after the record slots, ones in columns
  /// 0-2 of every row, and B the record: 16 bytes per key in key order, u_j
  /// split into three bf16 pieces (hi + mid + lo, 24 bits like f32) in
  /// columns 0-2, zeros in 3-7, read by wgmma without swizzle as 8-key x
  /// 8-column core matrices 128 bytes apart; columns 8-15 read the same
  /// bytes again (LBO 0), finite values against A's zeros. A step spends
  /// one wgmma on its bias instead of shared loads and moves into 32
  /// accumulators per thread. G'_j0 follows the keys (16 bytes, G'_j0 and
  /// padding). Records travel with their K tile (same cp.async group,
  /// `stages` slots: 5 blocks per SM still fit at D = 64).
  bool gateInMma() const { return gateInAcc() && wgmma; }
  /// Floats of a key tile's record (gateInAcc).
  int64_t uTileFloats() const {
    return gateInMma() ? 4 * blockN + 4 : 4 + blockN;
  }
  /// Records per row (gateInAcc): the key tiles and two spare.
  int64_t uTiles(int64_t keys) const {
    return (keys + blockN - 1) / blockN + 2;
  }
  /// Shared slots of records (gateInAcc; one per stage with gateInMma) or
  /// tiles of G (blockN floats).
  int64_t gateTiles() const {
    return !gate ? 0 : gateInAcc() && !gateInMma() ? 4 : stages;
  }
  /// Floats per (batch, query head) row of the gate kernel's output.
  int64_t gateRowFloats(int64_t keys) const {
    return gateInAcc() ? uTiles(keys) * uTileFloats() + (keys + 3) / 4 * 4
                       : keys;
  }
  /// Dynamic shared memory of the attention kernel, bytes: Q, the K/V
  /// stages, the record or G tiles (f32), gateInMma's A tile, alignment
  /// slack.
  int64_t smemBytes() const {
    return 2 * (blockM() * headDim + stages * blockN * (headDim + valueDim)) +
           gateSmemBytes() + (wgmma ? kWgmmaAlign : 0);
  }
  /// gateInMma's constant A tile: two 8 x 8 bf16 core matrices (ones, zeros).
  int64_t biasATileBytes() const { return gateInMma() ? 256 : 0; }
  /// Shared bytes after the K/V stages (FoX): gateInMma's A tile, then the
  /// record or G slots. A wgmma descriptor spans its whole operand tile
  /// (A: 64 rows x 16 bf16; B: 16 x blockN bf16) even where a zero stride
  /// makes it re-read fewer bytes (LBO / SBO 0 above), and memory checkers
  /// (compute-sanitizer memcheck) check that span: the region is padded so
  /// the span of the A tile and of the last record slot stay inside the
  /// allocation.
  int64_t gateSmemBytes() const {
    if (!gate)
      return 0;
    int64_t slots = 4 * gateTiles() * (gateInAcc() ? uTileFloats() : blockN);
    if (!gateInMma())
      return slots;
    int64_t used = biasATileBytes() + slots;
    int64_t aSpan = 64 * 16 * 2;
    int64_t lastRecordSpan = biasATileBytes() +
                             4 * (gateTiles() - 1) * uTileFloats() +
                             16 * blockN * 2;
    return std::max(used, std::max(aSpan, lastRecordSpan));
  }

  DictionaryAttr toAttr(MLIRContext *ctx) const;
  static FailureOr<GpuPlan> fromAttr(DictionaryAttr attr);
};

} // namespace attn
} // namespace mlir

#endif // ATTN_CODEGEN_GPUPLAN_H
