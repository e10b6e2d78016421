//===- Passes.td - attn passes -----------------------------*- tablegen -*-===//

#ifndef ATTN_PASSES_TD
#define ATTN_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnLowerToReference : Pass<"attn-lower-reference", "ModuleOp"> {
  let summary = "Lower every attn op to its naive reference loops";
  let description = [{
    The readable executable semantics of the dialect: every attn op becomes
    loop nests (scf) over buffers (memref) with arith/math bodies that follow
    the formulas of the op documentation literally, materialising score maps
    `[B, H, T, S]`. Operands are read through `bufferization.to_buffer` and
    results are fresh buffers wrapped by `bufferization.to_tensor`, so the
    module then bufferizes with `one-shot-bufferize`. This is the baseline
    fused kernels are checked against at moderate sizes, not a fast path.

    `attn.attention` is expanded into the unfused chain first (its
    documented meaning), then lowered op by op.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"
  ];
}

def AttnExpandAttention : Pass<"attn-expand-attention", "ModuleOp"> {
  let summary = "Expand attn.attention into the chain of attn ops it means";
  let description = [{
    The inverse of `attn-fuse`: rewrites every `attn.attention` into
    `[rope] -> scores -> [kq_conv pre] -> [head_mix pre] -> softmax ->
    [kq_conv post] -> [head_mix post] -> weighted_sum -> [head_norm]`.
    The reference lowering runs it first.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def AttnGrad : Pass<"attn-grad", "ModuleOp"> {
  let summary = "Derive each function's training pair: a forward that saves "
                "the row LSEs, and its gradient function";
  let description = [{
    For `func.func @f(args) -> o` (every function holding attn ops, or those
    named by `functions`) adds

    * `@f_fwd(args) -> (o, lse_1, ..., lse_n)`: f with the per-row
      log-sum-exp (f32 `[B, H, T]`) of each `attn.attention`'s softmax (its
      `lse` result) and of each chain softmax's input (`attn.logsumexp`)
      appended, in program order: the state a fused backward needs;
    * `@f_grad(args, o, lse_1, ..., lse_n, dO) -> (dx, ...)`: the gradient
      of `<dO, o>` w.r.t. every float argument x, in argument order, given
      everything the forward returned. Integer arguments (RoPE positions)
      are not differentiable and get no result; the attribute
      `attn.grad_args` lists the argument each result is for.

    `@f` stays as it is. The backward recomputes the forward from the
    arguments and chains each op's VJP (VJPOpInterface) in reverse,
    summing the cotangents of values used more than once; an argument the
    result does not depend on gets zeros. An `attn.attention`'s VJP is
    `attn.attention_grad` on its saved LSE (and on `o` where the attention
    gives the function's result, so it is not recomputed), which
    `attn-to-block` fuses where it can; run `attn-fuse` first so that
    chains become `attn.attention`. Ops outside `attn.attention` run
    through the reference lowering (slow, correct), with a remark.
    docs/training.md describes the whole scheme.
  }];
  let options = [
    ListOption<"functions", "functions", "std::string",
               "the functions to differentiate (default: every function "
               "holding attn ops)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect", "::mlir::func::FuncDialect"
  ];
}

def AttnFuse : Pass<"attn-fuse", "ModuleOp"> {
  let summary = "Fuse chains of attn ops into attn.attention";
  let description = [{
    The inverse of `attn-expand-attention`: rewrites every chain
    `[rope q] [rope k] -> scores -> [kq_conv pre] -> [head_mix pre] ->
    softmax -> [kq_conv post] -> [head_mix post] -> weighted_sum ->
    [head_norm]` into one `attn.attention` with the same meaning, carrying
    the scores' path, gate, mask, window and scale and the MTA and norm
    operands over. Chains are matched from the weighted_sum (or the
    head_norm consuming it) upward; the pieces must come in the documented
    order and stage, in one block.

    A chain is left alone when any intermediate value (score map, MTA
    outputs, probabilities) has more than one use, when an op the fused form
    cannot express sits in between, or when the fused op would not verify
    (e.g. MTA without a causal mask, v's element type not q's). A head_norm
    joins only when the weighted_sum result has no other use.

    RoPE joins (`rope(theta)`, `rope_offset` = k's offset) only when q and k
    both come from single-use `attn.rope` ops without `positions`, with equal
    theta, style and rotary dim, and q's offset is provably k's offset
    + S - T: T and S static, or q and k rotated from the same tensor
    (T == S). Otherwise the ropes stay outside and the fused op reads their
    results, which is still exact.

    The pass is silent; with `report` it emits a remark per fused chain
    (`fused N ops into attn.attention`) and one saying why a chain, a
    head_norm or a pair of ropes was left unfused.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark for every fusion and for every chain, head_norm "
           "or RoPE pair left unfused, saying why">
  ];
}

def AttnToBlock : Pass<"attn-to-block", "ModuleOp"> {
  let summary = "Lower fusable attn.attention ops to block-program kernels";
  let description = [{
    Each fusable `attn.attention` becomes private kernel functions in the
    `attn_block` dialect and the `attn_block.launch` ops that run them in
    order over scratch buffers, the last writing a fresh output buffer:
    plain, RoPE and FoX attention one FlashAttention-style kernel (one
    program per query tile and (batch, query head), online softmax over
    key tiles, causal tile skipping, GQA, dynamic B/H/T/S, T < S); PaTH and
    PaTH-FoX a chunk kernel (the UT transform) and the right-to-left walk
    carrying the transported query (for the CPU a third kernel, the
    diagonal block, between them); MTA and the output norm one kernel
    (pre-softmax pieces only) or two passes (row LSE, then the output).
    For a GPU `target` every kernel is stated in its GPU form (layouts,
    shared buffers, copies and waits), with the block kernels that prepare
    its inputs (RoPE tables and rotations, FoX's gate prefix, MTA's
    Toeplitz operands) launched first; a PaTH or MTA op that form does not
    cover is an error naming why. PaTH with RoPE or with MTA pieces stays
    `attn.attention`, with a remark, for the reference lowering.
    docs/block-program.md describes every kernel and its GPU form.
  }];
  let options = [
    Option<"blockM", "block-m", "int64_t", /*default=*/"64",
           "query rows per program instance">,
    Option<"blockN", "block-n", "int64_t", /*default=*/"64",
           "keys per step of the key walk">,
    Option<"pathChunk", "path-chunk", "int64_t", /*default=*/"64",
           "PaTH: tokens per chunk of the UT transform (also the query "
           "rows per program and the keys per step of its walk); a "
           "multiple of 16 on the CPU, 64 on a GPU">,
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "cpu (tiles without layouts, for attn-block-to-cpu) or the GPU "
           "form for a chip (sm_80, sm_90, sm_90a: mma.sync, plus dependent "
           "launches from sm_90 on, plus wgmma on sm_90a) for "
           "attn-block-to-gpu; the flash kernel's block-m is then 16 * warps">,
    Option<"warps", "warps", "int64_t", /*default=*/"4",
           "GPU targets: warps per program of the flash kernel's GPU form "
           "(4 or 8; sm_90a: one or two warpgroups), one 16-row tile each; "
           "the PaTH and MTA forms keep their own">,
    Option<"pathTransport", "path-transport", "std::string",
           /*default=*/"\"f16\"",
           "GPU targets, PaTH: the precision of the walk's transport dots "
           "q~ W^T and (q~ W^T) U: f16 (each operand rounded once to f16, "
           "q~ at a per-row scale) or split (each f32 operand a 16-bit "
           "hi + lo pair, three products a dot: about 16 more bits, twice "
           "the walk's dots)">,
    Option<"pathChunkWgmma", "path-chunk-wgmma", "bool", /*default=*/"false",
           "target sm_90a, PaTH: the chunk (preparation) kernel in the "
           "wgmma form (tiles in wgmma's layouts, shared operands read in "
           "place); off: mma.sync like sm_90 (docs/block-program.md, "
           "\"PaTH's kernels on a GPU\")">,
    Option<"pathAttentionWgmma", "path-attention-wgmma", "bool",
           /*default=*/"false",
           "target sm_90a, PaTH: the attention kernel (the walk) in the "
           "wgmma form, its dots' A operands in registers; off: mma.sync. "
           "Needs ptxas 13.3 or newer (docs/block-program.md, \"PaTH's kernels "
           "on a GPU\")">,
    Option<"gradDq", "grad-dq", "std::string", /*default=*/"\"walk\"",
           "attn.attention_grad: how dQ is summed over the key tiles: walk "
           "(a second walk per query tile: 7 dots a tile pair, "
           "deterministic) or reduce (the dK/dV walk adds each tile's dQ, "
           "and FoX's row sums of dS, into f32 sums: bulk reductions from "
           "sm_90 on, atomic adds on sm_80; 5 dots, not bitwise "
           "deterministic: docs/training.md)">,
  ];
  let dependentDialects = [
    "::mlir::attn_block::AttnBlockDialect", "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::func::FuncDialect"
  ];
}

def AttnCallerBuffers : Pass<"attn-caller-buffers", "ModuleOp"> {
  let summary = "Entry function on caller-owned strided buffers, outputs in place";
  let description = [{
    Rewrites `@entry(tensor...) -> (tensor...)` into
    `@entry(memref..., memref...)` for a host program that owns the memory:
    every argument becomes
    `memref<...xT, strided<[?, ..., ?, 1], offset: ?>>` (any outer strides
    and offset, unit innermost stride) read through
    `bufferization.to_tensor restrict`, and each of the N >= 1 results is
    written into its own trailing output memref of the same layout, in
    result order (`bufferization.materialize_in_destination ... restrict
    writable`).
    Run after attn-to-block and attn-lower-reference, before
    attn-block-to-cpu: the memref arguments of block kernels that only
    load, store and take dims get the strided layout too, so that kernels
    read the caller's views where they lie, and the fresh buffer a launch
    writes a result into is replaced by that result's output memref (the
    kernels write it in place, no copy). Where that does not apply (a
    result computed by the reference lowering, a result that is an
    argument, a value returned twice) bufferization copies into the output.
    The entry gets an `attn_launch.plan`: one host launch of the entry on
    the inputs and the outputs (`output i` for result i).
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"main\"",
           "the function the host program calls">,
  ];
  let dependentDialects = [
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect", "::mlir::attn_launch::AttnLaunchDialect"
  ];
}

def AttnBlockLaunchPlan : Pass<"attn-block-launch-plan", "ModuleOp"> {
  let summary = "Launch plan and gpu.module from a block program's host "
                "launches";
  let description = [{
    For each host function holding `attn_block.launch` ops (what
    `attn-to-block{target=<chip>}` makes), moves the launched GPU-form
    kernels into `gpu.module @<function>_gpu` targeting
    `#nvvm.target<chip>` and states the host side as an `attn_launch.plan`
    (docs/launch-plan.md) on the function, with `attn.gpu_module` naming
    the module: the plan's dims are the dynamic dims of the function's
    arguments, each `memref.alloc` a launch passes a scratch buffer (the one
    returned is the output), each launch a kernel in order, with its grid,
    `32 * attn_block.num_warps` threads, the shared memory attn-block-to-gpu
    gives it, and the arguments of the flat-pointer ABI
    (attn/Codegen/BlockGpuAbi.h: each memref its buffer, then its dynamic
    sizes as scalars). Index arithmetic (arith.constant, tensor/memref.dim,
    addi, subi, muli, divui/divsi, ceildivui, remui, maxsi/minsi) becomes
    affine expressions; any other op on the way to a grid or a size, a
    host op other than launches, allocations and index arithmetic, a
    CPU-form kernel, a kernel with wgmma layouts for a chip without wgmma,
    or one whose shared memory exceeds the chip's is an error naming it.
    The host function keeps its launches as the statement of the plan.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "NVIDIA architecture of the kernels (sm_80, sm_90, sm_90a, ...)">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::attn_launch::AttnLaunchDialect"
  ];
}

def AttnDumpPtx : Pass<"attn-write-ptx", "ModuleOp"> {
  let summary = "Write the PTX of every gpu.module lowered to NVVM";
  let description = [{
    Serializes each `gpu.module` (already in the LLVM/NVVM dialects, with an
    `#nvvm.target`) to PTX and writes it to `path` (modules one after the
    other, each preceded by a `// gpu.module @name` line). The IR is left
    unchanged; `attn-opt --attn-dump-ptx=PATH` adds this pass (path=PATH) to
    `--attn-to-gpu`.
  }];
  let options = [
    Option<"path", "path", "std::string", /*default=*/"\"-\"",
           "file to write, - for stdout">,
  ];
}

#endif // ATTN_PASSES_TD
