//===- AttentionToBlock.h - per-algorithm block lowerings -------*- C++ -*-===//
//
// attn-to-block hands each fusable attn.attention to the lowering of its
// algorithm; each lowering emits its kernels (private func.func with the
// attn_block.kernel attribute) and the host-side launches (attn_block.launch,
// scratch as memref.alloc) that replace the op.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PASSES_ATTENTIONTOBLOCK_H
#define ATTN_PASSES_ATTENTIONTOBLOCK_H

#include "BlockTarget.h"
#include "attn/Dialect/AttnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::attn {

/// Tile shape of the kernels, from the pass options.
struct BlockLoweringConfig {
  int64_t blockM, blockN;
  /// PaTH's chunk size C (the `path-chunk` option).
  int64_t pathChunk;
  /// The CPU form, or the GPU form of a chip (FlashToBlockGpu.cpp).
  BlockTarget target;
  /// PaTH on a GPU: the transport dots as hi / lo splits (the
  /// `path-transport=split` option) instead of f16 (PathToBlock.cpp).
  bool pathSplitTransport = false;
  /// PaTH's chunk kernel in the wgmma form on sm_90a (the
  /// `path-chunk-wgmma` option; PathToBlock.cpp).
  bool pathChunkWgmma = false;
  /// PaTH's attention kernel in the wgmma form on sm_90a (the
  /// `path-attention-wgmma` option; PathToBlock.cpp).
  bool pathAttentionWgmma = false;
  /// The backward's dQ by a second walk (the `grad-dq=walk` option, the
  /// default: deterministic) instead of reducing stores from the dK/dV
  /// walk (FlashGradToBlock.cpp).
  bool gradDqWalk = true;
};

/// A new private kernel `<enclosing func>_<suffix>` taking `argTypes`, with
/// an empty entry block, inserted into `symbols`.
func::FuncOp createBlockKernel(AttentionOp op, SymbolTable &symbols,
                               StringRef suffix, TypeRange argTypes);

/// A kernel's arguments, each declared by name once: the kernel's signature
/// and its launch's operands both follow the declarations, and the kernel's
/// body finds an argument by its name, so no position is matched in two
/// places. A null value declares an argument absent (from the signature and
/// the launch alike): the body's lookup gives null for it.
class KernelArgs {
public:
  void add(StringRef name, Value v) { args.push_back({name.str(), v}); }
  /// A new kernel taking the present arguments (createBlockKernel).
  func::FuncOp createKernel(AttentionOp op, SymbolTable &symbols,
                            StringRef suffix) const;
  /// attn_block.launch of `kernel` over a (grid0, grid1) grid at `b`.
  void launch(OpBuilder &b, Location loc, func::FuncOp kernel, Value grid0,
              Value grid1) const;
  /// In `kernel` (made by createKernel): the block argument declared as
  /// `name`, or null where it was declared absent.
  Value in(func::FuncOp kernel, StringRef name) const;
  /// The value declared as `name` (null where absent), outside the kernel.
  Value value(StringRef name) const;

private:
  SmallVector<Value> present() const;
  SmallVector<std::pair<std::string, Value>> args;
};

/// Which rows a flash or PaTH attention kernel writes (docs/input-limits.md,
/// "Non-finite values": a masked key's zero probability must skip its
/// value, even a NaN or inf). `all`: every row, the product of P and V
/// skipping zeros exactly (the CPU target). On a GPU, whose wgmma cannot
/// skip: `marking`, every row with the plain product, marking in
/// `rowsNonFinite` ([B, Hq, T] f32, the count of non-finite elements a
/// row) those that came out non-finite; and `redo`, an mma.sync kernel
/// whose programs return at once unless one of their rows is marked, and
/// otherwise write the marked rows again with skip_zero_a, leaving the
/// others as they were (NonFiniteRows.h). A finite row never needs the
/// second kernel; a row that met a non-finite value, rightly or through a
/// zero probability, is always non-finite, so none is missed.
enum class FlashRows { all, marking, redo };

/// Plain/RoPE/FoX attention (no PaTH, no MTA), for the CPU and the GPU
/// alike: the GPU form's kernel (buildFlashGpuKernel) and its prologue
/// kernels (RoPE's rotations, FoX's G'). FlashToBlock.cpp.
void lowerFlashAttention(AttentionOp op, SymbolTable &symbols,
                         const BlockLoweringConfig &cfg);

/// Why the fused flash backward cannot take `op` for `target` (a sentence),
/// or "" if it can. FlashGradToBlock.cpp.
std::string checkFlashGradSupport(AttentionGradOp op,
                                  const BlockTarget &target);

/// The backward of plain / FoX attention: the delta, dq, dkdv (and with FoX
/// the G' and dg) kernels and their launches, replacing `op`.
/// FlashGradToBlock.cpp. checkFlashGradSupport must have accepted `op`.
void lowerFlashAttentionGrad(AttentionGradOp op, SymbolTable &symbols,
                             const BlockLoweringConfig &cfg);

/// Why the GPU forms of flash attention and its backward cannot take
/// q, k, v of these types (16-bit, one element type, static head dims up
/// to `maxHeadDim` that are multiples of 8, or of 64 where the kernels do
/// not pad them: gpuTileHeadDim), or "" if they can. FlashToBlockGpu.cpp.
std::string checkFlashGpuOperands(Value q, Value k, Value v, int64_t maxHeadDim,
                                  bool padsHeadDims);

/// The head dim of a GPU form's tiles for a tensor's D: D rounded up to a
/// multiple of 64, a swizzled shared row of 8 16-byte chunks. The copies
/// and loads read the columns past D as 0 (a dot over them adds nothing)
/// and the stores leave them out; a D that is a multiple of 8 keeps every
/// copied 16-byte chunk wholly inside or outside the row.
inline int64_t gpuTileHeadDim(int64_t d) { return (d + 63) / 64 * 64; }

/// Why the GPU form of the flash kernel cannot express `op` for `target`
/// with `blockN`-key tiles, or "" if it can. FlashToBlockGpu.cpp.
std::string checkFlashGpuSupport(AttentionOp op, const BlockTarget &target,
                                 int64_t blockN);

/// Builds the body of `kernel` (made by `args.createKernel`), the GPU-form
/// flash kernel of `op` (layouts, shared buffers, cp.async pipeline; see
/// FlashToBlockGpu.cpp), over the arguments `args` declares: q, k, v, FoX's
/// gPrefix and records, out, and lse where the op returns the row LSE.
/// checkFlashGpuSupport must have accepted `op`. With RoPE, q and k must
/// arrive rotated; with FoX, G' is the gate kernel's -gamma log2(e)
/// cumsum(g) (launchGatePrefix). Where usesFoxRecords(op), the kernel
/// starts each key tile's scores as the bias, a dot of the query rows'
/// operand and the tile's records.
/// For the CPU target (the same kernel, run after attn-block-strip-gpu) the
/// tiles keep sm_80's layouts, `blockM` is the block-m option, P stays f32
/// (the CPU computes dots in f32), and FoX's bias is added per score from
/// an f64 G' (launchGatePrefix's CPU form).
/// `which` (FlashRows): which rows the kernel writes and how.
void buildFlashGpuKernel(AttentionOp op, func::FuncOp kernel,
                         const KernelArgs &args, const BlockTarget &target,
                         int64_t blockM, int64_t blockN, FlashRows which);

/// The target of a FlashRows::redo kernel: `target` on mma.sync (which
/// lowers skip_zero_a), 4 warps of 16 rows, 64-key tiles.
BlockTarget redoTarget(const BlockTarget &target);

/// FoX's key records (launchFoxRecords): kFoxRecordCols bf16 per key, 16
/// bytes (one m16n8k8 of mma.sync; on wgmma one k16 step that reads them
/// twice against zeros), written by programs of kFoxRecordKeys keys. 16
/// bytes rather than 32 keep the D = 64 kernel's shared memory within 5
/// blocks per SM, as plain attention's.
constexpr int64_t kFoxRecordCols = 8, kFoxRecordKeys = 64;

/// Whether the flash kernel of `op` for `target` takes FoX's bias from
/// records: FoX and a positive scale on a GPU target (the row maxima are
/// taken on raw scores; with c <= 0, and on the CPU, the bias is added per
/// score).
bool usesFoxRecords(AttentionOp op, const BlockTarget &target);

/// Whether the flash kernel for `target` reads FoX's G' in f64 (the CPU:
/// G_i - G_j to f64's digits, which f32 loses at T = 4K) rather than f32.
inline bool gatePrefixInF64(const BlockTarget &target) { return !target.gpu; }

/// FoX's key records for the flash kernel's S dots, from G'
/// (launchGatePrefix's buffer): a GPU-form block kernel
/// `<func>_fox_records` launched at `b` writes, for key j of each (batch,
/// query head) row, v_j = G'_j / (scale log2 e) as three bf16 pieces hi +
/// mid + lo in columns 0-2 of a [B, Hq, S, kFoxRecordCols] buffer, ones in
/// columns 3-5 and zeros after, which it returns. The flash kernel's S =
/// Q K^T then accumulates onto the dot of its query rows' [1, 1, 1, -w_i
/// pieces] (w_i = G'_i / c, made once) and the records: the whole bias
/// from one more tensor-core step (K = 8), where adding it per score
/// cost a load, an fma and moves into every accumulator
/// (FlashToBlockGpu.cpp, foxOperand). `dependentLaunch`: it waits for the
/// gate kernel (griddep_wait) and lets the flash kernel start early.
Value launchFoxRecords(AttentionOp op, SymbolTable &symbols, OpBuilder &b,
                       Value gPrime, bool dependentLaunch);

/// For the GPU form of FoX in attn-to-block (no GPU prologue kernels
/// there): a GPU-form block kernel `<func>_gate_prefix` (one warp per
/// (batch, query head) row, scalar code) computing the gate kernel's
/// G' = -gamma log2(e) cumsum(g) (f64 sums; f32 out, or f64 with
/// `f64Out`, gatePrefixInF64), launched at `b`; returns the G' buffer.
/// FlashToBlockGpu.cpp. `dependentLaunch`: it lets the next kernel start early
/// and waits for the kernels before it (launch_dependents, griddep_wait).
Value launchGatePrefix(AttentionOp op, SymbolTable &symbols, OpBuilder &b,
                       bool dependentLaunch = false, bool f64Out = false);

/// For the GPU form of RoPE in attn-to-block (no GPU prologue kernels
/// there): GPU-form block kernels `<func>_rope_table`, `<func>_rope_q` and
/// `<func>_rope_k` (scalar code, one warp per program; RopeToBlockGpu.cpp)
/// launched at `b`, computing the cos/sin tables in f64 and rotating q and k
/// by `op`'s RoPE attributes (style, rope_dim, rope_offset, rope_q_offset; no
/// scale). Returns the new buffers q rotated [B, Hq, T, D] and k rotated
/// [B, Hk, S, D], both of q's element type. Reads nothing of `op` but q, k
/// and the RoPE attributes, so any lowering (flash, MTA) may call it; `op`
/// must have RoPE and a static head dim D (the GPU forms' checks).
/// `dependentLaunch`: each lets the next kernel start early, and the
/// rotations wait for the table kernel (launch_dependents, griddep_wait).
/// The cos/sin tables of launchRopeGpu's table kernel: [T, R/2] for the
/// query positions, [S, R/2] for the keys, f32.
struct RopeTables {
  Value cosQ, sinQ, cosK, sinK;
};

/// `tables`, when given, receives the table kernel's buffers
/// (launchRopeInverse rotates with them).
std::pair<Value, Value> launchRopeGpu(AttentionOp op, SymbolTable &symbols,
                                      OpBuilder &b,
                                      bool dependentLaunch = false,
                                      RopeTables *tables = nullptr);

/// The backward of RoPE: for each (in, out) of `qk` (q's side, then k's),
/// a kernel `<func>_rope_{q,k}_inverse` launched at `b` writes into `out`
/// the opposite rotation of `in` ([B, H, T or S, D] buffers; in of any
/// float type, out of its own), by `op`'s RoPE attributes and `tables`
/// (launchRopeGpu's). RopeToBlockGpu.cpp.
void launchRopeInverse(AttentionOp op, SymbolTable &symbols, OpBuilder &b,
                       const RopeTables &tables,
                       ArrayRef<std::pair<Value, Value>> qk);

/// Rotated q and k as 16-bit pairs hi + lo of the f32 rotation (hi as
/// launchRopeGpu's, lo = the rest rounded again), and the tables.
struct RopeSplit {
  Value qHi, qLo, kHi, kLo;
  RopeTables tables;
};

/// launchRopeGpu whose kernels also write the rest of each rotation: the
/// MTA GPU form takes q k^T as hi hi + lo hi + hi lo, because its stencils
/// sum many scores and a score rounded once shows in its worst rows.
/// RopeToBlockGpu.cpp.
RopeSplit launchRopeGpuSplit(AttentionOp op, SymbolTable &symbols,
                             OpBuilder &b);

/// cos/sin(p * theta^(-2i/R)) for every position p a query or key of `op`
/// takes, [P, R/2] f32 tensors built on the host in f64 (positions reach
/// 1e5, where f32 angles lose the phase); row 0 is position
/// min(rope_offset, the first query's position). FlashToBlock.cpp.
std::pair<Value, Value> buildRopeTables(AttentionOp op, OpBuilder &b);

/// MTA attention (key-query convolutions, head mixing) and the MTA output
/// norm, alone or with RoPE/FoX: MtaToBlock.cpp.
void lowerMtaAttention(AttentionOp op, SymbolTable &symbols,
                       const BlockLoweringConfig &cfg);

/// Why the GPU form of MTA cannot express `op` for `target`, or "" if it
/// can. MtaToBlockGpu.cpp.
std::string checkMtaGpuSupport(AttentionOp op, const BlockTarget &target);

/// MTA and the MTA output norm in the GPU form (one kernel, or the LSE and
/// output passes; with FoX the gate-prefix kernel): MtaToBlockGpu.cpp.
/// checkMtaGpuSupport must have accepted `op`.
void lowerMtaAttentionGpu(AttentionOp op, SymbolTable &symbols,
                          const BlockLoweringConfig &cfg);

/// Why PaTH's kernels cannot express `op` for `target` with chunks of
/// `pathChunk` positions, or "" if they can. PathToBlock.cpp.
std::string checkPathSupport(AttentionOp op, const BlockTarget &target,
                             int64_t pathChunk);

/// PaTH / PaTH-FoX attention (no RoPE, no MTA) for the CPU and the GPU
/// alike: the chunk kernel, the attention kernel and, with FoX, the
/// gate-prefix kernel. PathToBlock.cpp. checkPathSupport must have
/// accepted `op`.
void lowerPathAttention(AttentionOp op, SymbolTable &symbols,
                        const BlockLoweringConfig &cfg);

} // namespace mlir::attn

#endif // ATTN_PASSES_ATTENTIONTOBLOCK_H
