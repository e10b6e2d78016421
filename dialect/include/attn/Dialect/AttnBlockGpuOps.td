//===- AttnBlockGpuOps.td - shared memory, copies, barriers -*- tablegen -*-===//
//
// The ops a GPU kernel of the block program states explicitly, in the
// spirit of Triton's Gluon dialect: shared buffers and their stages, copies
// from global into shared memory (cp.async), the waits and barriers that
// order them, and layout conversions. The GPU backend lowers each op as
// written;
// attn-block-strip-gpu (codegen/cpu/StripGpu.cpp) turns them into their
// sequential meaning for the CPU backend (copies become plain copies at
// issue, waits and barriers vanish).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_BLOCK_GPU_OPS_TD
#define ATTN_BLOCK_GPU_OPS_TD

include "attn/Dialect/AttnBlockAttrs.td"
include "mlir/IR/RegionKindInterface.td"

def AttnBlock_LocalAllocOp : AttnBlock_Op<"local_alloc",
                                          [MemoryEffects<[MemAlloc]>]> {
  let summary = "a buffer in shared memory, live for the whole kernel";
  let results = (outs AttnBlock_SharedBufferType:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
}

def AttnBlock_LocalIndexOp : AttnBlock_Op<"local_index", [Pure]> {
  let summary = "one stage of a multi-stage shared buffer";
  let description = [{
    The sub-buffer `buffer[index]` along the leading (stage) dimension. A
    constant `index` must be a stage of the buffer (the verifier refuses
    one outside); a dynamic one is the program's to keep in range.
  }];
  let arguments = (ins AttnBlock_SharedBufferType:$buffer, Index:$index);
  let results = (outs AttnBlock_SharedBufferType:$result);
  let assemblyFormat = [{
    $buffer `[` $index `]` attr-dict `:` qualified(type($buffer)) `->`
    qualified(type($result))
  }];
  let hasVerifier = 1;
}

def AttnBlock_LocalSubviewOp : AttnBlock_Op<"local_subview", [Pure]> {
  let summary = "a [rows, cols] window of a padded shared buffer";
  let description = [{
    The elements `buffer[row + r, col + c]` for `r < rows`, `c < cols` (the
    result's shape) as a buffer of their own, aliasing `buffer`: a
    `local_load` of it reads the window (MTA's score rows at an offset as
    an mma A operand), an `async_copy` into it writes there. Both buffers
    are `#attn_block.padded_shared` with one row stride, which is how the
    window sits in its parent. `row` may be dynamic; the window must lie
    inside the buffer (checked where the offsets are constants).

    ```mlir
    %w = attn_block.local_subview %s[%r, %c0]
        : !attn_block.smem<192x96xf16, #p> -> !attn_block.smem<64x96xf16, #p>
    ```
  }];
  let arguments = (ins AttnBlock_SharedBufferType:$buffer, Index:$row,
                       Index:$col);
  let results = (outs AttnBlock_SharedBufferType:$result);
  let assemblyFormat = [{
    $buffer `[` $row `,` $col `]` attr-dict `:` qualified(type($buffer)) `->`
    qualified(type($result))
  }];
  let hasVerifier = 1;
}

def AttnBlock_LocalLoadOp : AttnBlock_Op<"local_load",
                                         [MemoryEffects<[MemRead]>]> {
  let summary = "a tile read from a shared buffer into its register layout";
  let arguments = (ins AttnBlock_SharedBufferType:$buffer);
  let results = (outs AttnBlock_FloatTile:$result);
  let assemblyFormat = [{
    $buffer attr-dict `:` qualified(type($buffer)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def AttnBlock_LocalStoreOp : AttnBlock_Op<"local_store",
                                          [MemoryEffects<[MemWrite]>]> {
  let summary = "a tile written into a shared buffer";
  let arguments = (ins AttnBlock_FloatTile:$value,
                       AttnBlock_SharedBufferType:$buffer);
  let assemblyFormat = [{
    $value `,` $buffer attr-dict `:` type($value) `->` qualified(type($buffer))
  }];
  let hasVerifier = 1;
}

def AttnBlock_AsyncCopyOp : AttnBlock_Op<"async_copy",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "asynchronous bounds-masked copy of a tile into shared memory";
  let description = [{
    Starts copying the tile that `attn_block.load` with the same `indices`
    and `dims` would read into `buffer` (cp.async, 16 bytes per thread and
    instruction); elements outside the memref are written as `padding`.
    The copy is complete once a wait covers the group it was committed in
    (`async_commit_group`, `async_wait`); reading the buffer before that is
    a race.

    ```mlir
    %t = attn_block.async_copy %k[%b, %h, %j0, %c0] dims [2, 3] padding 0.0
        into %stage : memref<?x?x?x64xbf16> -> !attn_block.smem<64x64xbf16, #s>
    ```
  }];
  let arguments = (ins AnyMemRef:$base, Variadic<Index>:$indices,
                       DenseI64ArrayAttr:$dims, F64Attr:$padding,
                       AttnBlock_SharedBufferType:$buffer);
  let results = (outs AttnBlock_AsyncTokenType:$token);
  let assemblyFormat = [{
    $base `[` $indices `]` `dims` $dims `padding` $padding `into` $buffer
    attr-dict `:` type($base) `->` qualified(type($buffer))
  }];
  let hasVerifier = 1;
}

def AttnBlock_AsyncCommitGroupOp : AttnBlock_Op<"async_commit_group", []> {
  let summary = "closes the group of the copies issued since the last one";
  let arguments = (ins Variadic<AttnBlock_AsyncTokenType>:$tokens);
  let results = (outs AttnBlock_AsyncTokenType:$group);
  let assemblyFormat = "($tokens^)? attr-dict";
}

def AttnBlock_AsyncWaitOp : AttnBlock_Op<"async_wait", []> {
  let summary = "waits until at most `pending` committed groups are in flight";
  let description = [{
    cp.async.wait_group `pending`: every group committed before the last
    `pending` ones has landed in shared memory (for this thread; a barrier
    makes it visible to the others). The tokens name the groups the wait is
    for, so that a pipeliner or a reader of the IR can check the count.
  }];
  let arguments = (ins Variadic<AttnBlock_AsyncTokenType>:$tokens,
                       ConfinedAttr<I64Attr, [IntMinValue<0>]>:$pending);
  let assemblyFormat = "($tokens^)? `pending` $pending attr-dict";
}

def AttnBlock_AsyncStoreAddOp : AttnBlock_Op<"async_store_add",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "asynchronous reducing store of a shared f32 tile";
  let description = [{
    Starts adding the f32 tile in `buffer` into the tile of `base` at
    `indices` (`dims`: its rows and columns), as `attn_block.store ... add`
    of the buffer's tile would; rows outside the memref are left alone.
    The GPU lowering issues one bulk reduction per row
    (cp.reduce.async.bulk ... add.f32, sm_90 and newer) from the thread of
    that row, each in a bulk group of its own: the adds run in L2 while the
    kernel goes on. The buffer's writes must be visible to the async proxy
    first (`fence_async_shared`, then a barrier), and the buffer may be
    written again only once an `async_store_wait ... read` and a barrier
    follow the store. On the CPU the adds happen at issue.

    ```mlir
    attn_block.async_store_add %s into %dq[%b, %h, %i0, %c0] dims [2, 3]
        : !attn_block.smem<64x64xf32, #p> -> memref<?x?x?x64xf32>
    ```
  }];
  let arguments = (ins AttnBlock_SharedBufferType:$buffer, AnyMemRef:$base,
                       Variadic<Index>:$indices, DenseI64ArrayAttr:$dims);
  let assemblyFormat = [{
    $buffer `into` $base `[` $indices `]` `dims` $dims attr-dict `:`
    qualified(type($buffer)) `->` type($base)
  }];
  let hasVerifier = 1;
}

def AttnBlock_AsyncStoreWaitOp : AttnBlock_Op<"async_store_wait", []> {
  let summary = "waits for this thread's asynchronous reducing stores";
  let description = [{
    cp.async.bulk.wait_group(.read) `pending`: at most `pending` of the
    bulk groups this thread committed (`async_store_add`) are still in
    flight; with `read`, only until they have read their shared source
    (the buffer may be written again after a barrier), else until their
    writes are done. A kernel waits for all of them before it returns
    (its shared memory goes with it).
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<0>]>:$pending,
                       UnitAttr:$read);
  let assemblyFormat = "`pending` $pending (`read` $read^)? attr-dict";
}

def AttnBlock_BarrierOp : AttnBlock_Op<"barrier", []> {
  let summary = "every thread of the block reaches this point (bar.sync 0)";
  let assemblyFormat = "attr-dict";
}

def AttnBlock_FenceAsyncSharedOp : AttnBlock_Op<"fence_async_shared", []> {
  let summary = "makes this thread's shared-memory writes visible to wgmma";
  let description = [{
    fence.proxy.async.shared::cta: the shared-memory writes this thread has
    made through the generic proxy (stores, and cp.async copies once an
    `async_wait` covers them) become visible to the async proxy, which
    wgmma (a `dot` reading an `#attn_block.nvmma_shared` tile) reads
    through. A barrier after it publishes every thread's writes: wait,
    fence, barrier, then the warpgroup MMA.
  }];
  let assemblyFormat = "attr-dict";
}

def AttnBlock_GriddepWaitOp : AttnBlock_Op<"griddep_wait", []> {
  let summary = "waits for the kernels this one was launched dependent on";
  let description = [{
    griddepcontrol.wait (sm_90 and newer): the kernel may have been
    launched with programmatic dependent launch, i.e. while the kernel
    before it in the stream still runs; this waits until that kernel (and
    so every kernel before it) has completed and its memory writes are
    visible. A kernel states it right before its first read of memory an
    earlier kernel writes, so that its prologue and the copies of its other
    inputs overlap that kernel. Without a dependent launch it returns at
    once; on the CPU (attn-block-strip-gpu) kernels run one after another
    and it vanishes. Only in an `attn_block.kernel` function.
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def AttnBlock_LaunchDependentsOp
    : AttnBlock_Op<"launch_dependents", []> {
  let summary = "lets the next kernel start while this one runs";
  let description = [{
    griddepcontrol.launch_dependents (sm_90 and newer): once every program
    of this kernel has passed it, the kernel after it in the stream may be
    scheduled if it was launched dependent (programmatic dependent launch),
    so its set-up overlaps this kernel's work; that kernel still waits
    (griddep_wait) before it reads what this one writes. A prologue kernel
    states it first thing. Without a dependent launch after it, nothing
    happens; on the CPU (attn-block-strip-gpu) it vanishes. Only in an
    `attn_block.kernel` function.
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def AttnBlock_ConvertLayoutOp : AttnBlock_Op<"convert_layout", [Pure]> {
  let summary = "the same tile in another register layout";
  let description = [{
    Moves a tile's elements between threads (through shared memory or warp
    shuffles, the backend's choice); the values do not change.
  }];
  let arguments = (ins AttnBlock_Tile:$input);
  let results = (outs AttnBlock_Tile:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

#endif // ATTN_BLOCK_GPU_OPS_TD
