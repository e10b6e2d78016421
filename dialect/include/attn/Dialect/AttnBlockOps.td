//===- AttnBlockOps.td - the block program dialect ---------*- tablegen -*-===//
//
// attn_block is attn's Triton-like block-level IR. A kernel is a function run
// once per *program instance* of a grid; it reads tiles out of memory with
// bounds masks, computes on whole tiles (ranked static tensors: dots, row
// reductions, scans, elementwise arith/math such as exp2) and writes tiles
// back. Loops carry tiles (online-softmax state). A tile's layout (how its
// elements map to threads, warps, registers) is the encoding of its tensor
// type (AttnBlockAttrs.td); a kernel for a GPU target states every layout,
// shared buffer, copy and wait (AttnBlockGpuOps.td), and attn-block-strip-gpu
// gives such a kernel its sequential meaning for the CPU backend.
// docs/block-program.md describes the design and how PaTH and MTA map.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_BLOCK_OPS_TD
#define ATTN_BLOCK_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "attn/Dialect/AttnBase.td"
include "attn/Dialect/AttnBlockEnums.td"
include "attn/Dialect/AttnBlockBase.td"


class AttnBlock_Op<string mnemonic, list<Trait> traits = []>
    : Op<AttnBlock_Dialect, mnemonic, traits>;

def AttnBlock_Tile : RankedTensorOf<[AnyFloat, AnySignlessInteger, Index]>;
// Tiles that memory, dots, reductions and scans handle: floats only.
def AttnBlock_FloatTile : RankedTensorOf<[AnyFloat]>;

// GPU-side ops: shared buffers, async copies, barriers, layout conversion.
include "attn/Dialect/AttnBlockGpuOps.td"


def AttnBlock_ProgramIdOp : AttnBlock_Op<"program_id", [Pure]> {
  let summary = "index of this program instance along a grid axis";
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<2>]>:$axis);
  let results = (outs Index:$result);
  let assemblyFormat = "$axis attr-dict";
}

def AttnBlock_LoadOp : AttnBlock_Op<"load", [MemoryEffects<[MemRead]>]> {
  let summary = "masked tile load";
  let description = [{
    Reads a tile whose dim `r` walks memref dim `tile_dims[r]` from
    `indices[tile_dims[r]]`; the other memref dims stay at their index.
    Elements outside the memref read as `padding` (the bounds mask), so a
    tile may hang over the end of a sequence. `in_bounds` promises that the
    whole tile lies inside the memref (scratch buffers the lowering sized
    itself): no mask is needed, a backend may copy whole rows.

    ```mlir
    %q = attn_block.load %qm[%b, %h, %row0, %c0] dims [2, 3] padding 0.0
        : memref<?x?x?x64xf32> -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins AnyMemRef:$base, Variadic<Index>:$indices,
                       DenseI64ArrayAttr:$dims, F64Attr:$padding,
                       UnitAttr:$in_bounds);
  let results = (outs AttnBlock_FloatTile:$result);
  let assemblyFormat = [{
    $base `[` $indices `]` `dims` $dims `padding` $padding
    (`in_bounds` $in_bounds^)? attr-dict `:` type($base) `->` type($result)
  }];
  let hasVerifier = 1;
}

def AttnBlock_StoreOp : AttnBlock_Op<"store", [MemoryEffects<[MemWrite]>]> {
  let summary = "masked tile store";
  let description = [{
    Writes `value` like `load` reads; elements outside the memref are
    dropped (the bounds mask). `in_bounds` as on `load`.

    `add`: a reducing store, `base[...] += value`, atomic per element, so
    that programs running at once may add into the same elements (f32 only;
    the order of the additions, hence the rounding, is not deterministic).
  }];
  let arguments = (ins AttnBlock_FloatTile:$value, AnyMemRef:$base,
                       Variadic<Index>:$indices, DenseI64ArrayAttr:$dims,
                       UnitAttr:$in_bounds, UnitAttr:$add);
  let assemblyFormat = [{
    $value `,` $base `[` $indices `]` `dims` $dims (`in_bounds` $in_bounds^)?
    (`add` $add^)? attr-dict `:` type($value) `->` type($base)
  }];
  let hasVerifier = 1;
}

def AttnBlock_DotOp : AttnBlock_Op<"dot", [Pure, AllTypesMatch<["acc", "result"]>]> {
  let summary = "tile matrix product with accumulator";
  let description = [{
    `result = acc + a * b` with `a: [M, K]` (or `[K, M]` with
    `transpose_a`), `b: [K, N]` (or `[N, K]` with `transpose_b`),
    accumulated in the accumulator's type (f32). A transposed `a` is read
    from shared memory (a `local_load` of a buffer on the GPU): the mma.sync
    lowering loads it with `ldmatrix.trans`, the wgmma lowering sets the
    instruction's transpose bit for A.

    `b_band = array<i64: lo, hi>` states that `b[k, n]` is zero unless
    `lo <= k - n <= hi` (a banded operand, such as the Toeplitz matrix of a
    convolution): a backend may skip the products of pieces wholly outside
    the band (the mma.sync lowering skips those m16n8k16 steps), and one that
    ignores it computes the same result.

    `skip_zero_a`: a zero element of `a` contributes nothing, not even
    against a NaN or inf in `b` (`0 * inf` would be NaN): the product of
    probabilities and values, where a masked key's probability is an exact
    zero and its value must reach no row that does not see it
    (docs/input-limits.md, "Non-finite values"). The CPU lowering selects
    (when `b` holds a non-finite element); the mma.sync lowering multiplies
    `b` with its non-finite elements read as 0 and counts the infinities
    each output meets with two more products, three times the work; wgmma
    refuses it. The GPU forms' main kernels therefore multiply and mark
    their rows that come out non-finite, and a second, mma.sync kernel
    computes those rows again with this flag.
  }];
  let arguments = (ins AttnBlock_FloatTile:$a, AttnBlock_FloatTile:$b,
                       TensorRankOf<[F32], [2]>:$acc, UnitAttr:$transpose_b,
                       OptionalAttr<DenseI64ArrayAttr>:$b_band,
                       UnitAttr:$skip_zero_a, UnitAttr:$transpose_a);
  let results = (outs TensorRankOf<[F32], [2]>:$result);
  // A dot without a band, as most are.
  let builders = [
    OpBuilder<(ins "Type":$result, "Value":$a, "Value":$b, "Value":$acc,
                   "UnitAttr":$transpose_b), [{
      build($_builder, $_state, result, a, b, acc, transpose_b,
            DenseI64ArrayAttr(), UnitAttr(), UnitAttr());
    }]>
  ];
  let assemblyFormat = [{
    $a `,` $b `,` $acc (`transpose_a` $transpose_a^)?
    (`transpose_b` $transpose_b^)? attr-dict `:`
    type($a) `,` type($b) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    LogicalResult verifyDotLayouts();
  }];
}

def AttnBlock_ReduceOp : AttnBlock_Op<"reduce", [Pure]> {
  let summary = "reduction of a 2-D tile along one axis";
  let description = [{
    `axis` 1 reduces each row, `axis` 0 each column; the result is the
    kept axis as a 1-D tile (on the GPU the slice of the input's layout
    along the reduced dim). A column reduction of a tile whose layout spreads
    its rows over several warps (an mma accumulator of W > 1 warps) names a
    `scratch` shared buffer `[W, columns]` of the element type, through
    which the warps exchange their partial results (in warp order, so the
    result does not depend on timing); the CPU form ignores it.

    ```mlir
    %c = attn_block.reduce sum %x axis 0 scratch(%s : !attn_block.smem<4x64xf32, #sh>)
        : tensor<64x64xf32, #mma> -> tensor<64xf32, #attn_block.slice<dim = 0, parent = #mma>>
    ```
  }];
  let arguments = (ins AttnBlock_ReduceKind:$kind, AttnBlock_FloatTile:$input,
                       ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<1>]>:$axis,
                       Optional<AttnBlock_SharedBufferType>:$scratch);
  let results = (outs AttnBlock_FloatTile:$result);
  let assemblyFormat = [{
    $kind $input `axis` $axis
    (`scratch` `(` $scratch^ `:` qualified(type($scratch)) `)`)?
    attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def AttnBlock_FoldOp : AttnBlock_Op<"fold", [Pure]> {
  let summary = "sum of a 2-D tile's column blocks of `width` columns";
  let description = [{
    `result[i, c] = sum_k input[i, k * width + c]` for an `[M, N]` input,
    `width` dividing `N`: the row sums of the input left spread over
    `width` columns (a `reduce sum axis 1` of the result gives them). A
    flash kernel carries its softmax row sums this way through its key loop
    and reduces the `width` columns once after it: in an mma accumulator
    layout the columns congruent modulo 8 of a row are in one thread, so on
    a GPU the fold is in-thread adds and the lanes sharing a row exchange
    their partial sums once per kernel instead of once per key tile. Input
    and result have the same layout.

    ```mlir
    %l8 = attn_block.fold %p width 8
        : tensor<64x64xf32, #mma> -> tensor<64x8xf32, #mma>
    ```
  }];
  let arguments = (ins AttnBlock_FloatTile:$input,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$width);
  let results = (outs AttnBlock_FloatTile:$result);
  let assemblyFormat = "$input `width` $width attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def AttnBlock_ScanOp : AttnBlock_Op<"scan", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "inclusive prefix sum of a 1-D tile";
  let description = [{
    `result[i] = input[0] + ... + input[i]`. A tile whose layout spreads it
    over more than one warp (the GPU form: `#attn_block.blocked` over W
    warps) names a `scratch` shared buffer, `[n] x` the tile's element type
    with n >= W, through which the warps exchange their totals; the kernel
    allocates it with `local_alloc`, so its bytes are counted with the
    kernel's other shared buffers. The CPU form ignores it.

    ```mlir
    %s = attn_block.scan %x scratch(%buf : !attn_block.smem<8xf64, #shared>)
        : tensor<2048xf64, #blocked>
    ```
  }];
  let arguments = (ins AttnBlock_FloatTile:$input,
                       Optional<AttnBlock_SharedBufferType>:$scratch);
  let results = (outs AttnBlock_FloatTile:$result);
  let assemblyFormat = [{
    $input (`scratch` `(` $scratch^ `:` qualified(type($scratch)) `)`)?
    attr-dict `:` type($input)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input,
                   CArg<"::mlir::Value", "{}">:$scratch), [{
      build($_builder, $_state, input.getType(), input, scratch);
    }]>
  ];
  let hasVerifier = 1;
}

def AttnBlock_BroadcastOp : AttnBlock_Op<"broadcast", [Pure]> {
  let summary = "broadcast a 1-D tile along a new axis of a 2-D tile";
  let description = [{
    `result[i, j] = input[i]` for `axis = 1` (a column vector spread along
    rows' keys), `result[i, j] = input[j]` for `axis = 0`.
  }];
  let arguments = (ins AttnBlock_Tile:$input,
                       ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<1>]>:$axis);
  let results = (outs AttnBlock_Tile:$result);
  let assemblyFormat = "$input `axis` $axis attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def AttnBlock_IotaOp : AttnBlock_Op<"iota", [Pure]> {
  let summary = "the tile [start, start + N) of consecutive i64 values";
  let arguments = (ins Index:$start);
  let results = (outs TensorRankOf<[I64], [1]>:$result);
  let assemblyFormat = "$start attr-dict `:` type($result)";
}

def AttnBlock_RopeOp : AttnBlock_Op<"rope", [Pure, AllTypesMatch<["input", "result"]>,
                                            AllTypesMatch<["cos", "sin"]>]> {
  let summary = "rotary embedding of a [rows, D] f32 tile from cos/sin tiles";
  let description = [{
    Rotates the first `2 * R2` features of each row as `attn.rope` does,
    with `cos`/`sin: [rows, R2]` holding `cos/sin(pos_r * theta^(-2i/R))`
    for the row's position (tiles of the per-position tables the launch
    computes once). `style half` pairs `(x[i], x[i + R2])`, `interleaved`
    pairs `(x[2i], x[2i+1])`; features past `2 * R2` pass through. The
    rotation happens on the tile in registers: no extra pass over q or k.
  }];
  let arguments = (ins TensorRankOf<[F32], [2]>:$input,
                       TensorRankOf<[F32], [2]>:$cos,
                       TensorRankOf<[F32], [2]>:$sin, Attn_RopeStyle:$style);
  let results = (outs TensorRankOf<[F32], [2]>:$result);
  let assemblyFormat = [{
    $input `,` $cos `,` $sin `style` $style attr-dict `:` type($input) `,`
    type($cos)
  }];
  let hasVerifier = 1;
}

def AttnBlock_LaunchOp : AttnBlock_Op<"launch", []> {
  let summary = "run a kernel function once per program instance of a grid";
  let description = [{
    Calls `kernel` (a func.func of memrefs whose body uses
    `attn_block.program_id`) for every point of the 2-D grid
    `[grid_x, grid_y]`; instances may run in any order and in parallel.
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel, Index:$grid_x,
                       Index:$grid_y, Variadic<AnyMemRef>:$args);
  let assemblyFormat = [{
    $kernel `grid` `(` $grid_x `,` $grid_y `)` `args` `(` $args `)` attr-dict
    `:` type($args)
  }];
}

//===----------------------------------------------------------------------===//
// Ops added for MTA
//===----------------------------------------------------------------------===//

def AttnBlock_StencilOp : AttnBlock_Op<"stencil", [Pure]> {
  let summary = "valid 2-D cross-correlation of a haloed tile with a small kernel";
  let description = [{
    `result[r, c] = sum_{a < A, b < B} kernel[a, b] * input[r + a, c + b]`
    for `input: [R + A - 1, C + B - 1]`, `kernel: [A, B]`,
    `result: [R, C]`, all f32. The input carries the halo: `A - 1` rows
    above and `(B - 1) / 2` columns each side of the output when it is MTA's
    key-query convolution (spec/mta.md §1.2); masking the source (Mask_0,
    zero padding) is the producer's job, with `arith.select` on the input.

    ```mlir
    %c = attn_block.stencil %s0, %theta
        : tensor<69x74xf32>, tensor<6x11xf32> -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins TensorRankOf<[F32], [2]>:$input,
                       TensorRankOf<[F32], [2]>:$kernel);
  let results = (outs TensorRankOf<[F32], [2]>:$result);
  let assemblyFormat = [{
    $input `,` $kernel attr-dict `:` type($input) `,` type($kernel) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Ops added for PaTH
//===----------------------------------------------------------------------===//

def AttnBlock_ExtractRowOp : AttnBlock_Op<"extract_row", [Pure]> {
  let summary = "row `index` of a 2-D tile, as a 1-D tile";
  let description = [{
    `result[j] = tile[index, j]`. `index` is dynamic (a loop index); it must
    lie in `[0, rows)`. PaTH's forward substitution reads row `r` of the
    chunk's `A = stril(beta W W^T)` at step `r`.

    ```mlir
    %a = attn_block.extract_row %A[%r] : tensor<64x64xf32> -> tensor<64xf32>
    ```
  }];
  let arguments = (ins AttnBlock_FloatTile:$tile, Index:$index);
  let results = (outs AttnBlock_FloatTile:$result);
  let assemblyFormat = [{
    $tile `[` $index `]` attr-dict `:` type($tile) `->` type($result)
  }];
  let hasVerifier = 1;
}

def AttnBlock_InsertRowOp : AttnBlock_Op<"insert_row",
    [Pure, AllTypesMatch<["dest", "result"]>]> {
  let summary = "a 2-D tile with row `index` replaced by a 1-D tile";
  let description = [{
    `result = dest` except `result[index, j] = row[j]`. `index` is dynamic
    and must lie in `[0, rows)`. PaTH's forward substitution writes row `r`
    of `T = (I + A)^-1 diag(beta)` at step `r` into the loop-carried tile.

    ```mlir
    %T1 = attn_block.insert_row %t, %T0[%r] : tensor<64xf32> -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins AttnBlock_FloatTile:$row, AttnBlock_FloatTile:$dest,
                       Index:$index);
  let results = (outs AttnBlock_FloatTile:$result);
  let assemblyFormat = [{
    $row `,` $dest `[` $index `]` attr-dict `:` type($row) `->` type($dest)
  }];
  let hasVerifier = 1;
}

#endif // ATTN_BLOCK_OPS_TD
