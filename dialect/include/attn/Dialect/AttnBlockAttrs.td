//===- AttnBlockAttrs.td - tile layouts and shared memory --*- tablegen -*-===//
//
// What a GPU target adds to the block program, stated in the IR as Triton's
// Gluon dialect states it: each tile's *layout* (which thread, warp and
// register holds which element) is the encoding of its tensor type, a
// *shared buffer* is a typed value with a swizzled shared-memory layout, and
// the kernel's copies, waits and barriers are ops (AttnBlockGpuOps.td). A
// backend lowers op by op from these and invents none of them; for the CPU
// backend attn-block-strip-gpu drops them. The register layouts follow
// TritonGPUAttrDefs.td; each is described on its definition below
// (docs/reference/generated/AttnBlockAttrs.md) and in
// docs/block-program.md, "Layouts, shared memory and asynchronous copies".
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_BLOCK_ATTRS_TD
#define ATTN_BLOCK_ATTRS_TD

include "mlir/IR/AttrTypeBase.td"
include "attn/Dialect/AttnBlockBase.td"

// A list of integers written `[a, b, ...]`.
def AttnBlock_DimList : ArrayRefParameter<"int64_t"> {
  let parser = [{
    [&]() -> ::mlir::FailureOr<::llvm::SmallVector<int64_t>> {
      ::llvm::SmallVector<int64_t> v;
      if ($_parser.parseCommaSeparatedList(
              ::mlir::AsmParser::Delimiter::Square,
              [&] { return $_parser.parseInteger(v.emplace_back()); }))
        return ::mlir::failure();
      return v;
    }()
  }];
  let printer = [{
    $_printer << '[';
    ::llvm::interleaveComma($_self, $_printer);
    $_printer << ']';
  }];
}

class AttnBlock_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<AttnBlock_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def AttnBlock_BlockedLayoutAttr : AttnBlock_Attr<"BlockedLayout", "blocked"> {
  let summary = "a tile spread over threads and warps in contiguous chunks";
  let description = [{
    Dimension `d` of the tile is covered by `sizePerThread[d]` consecutive
    elements per thread, `threadsPerWarp[d]` threads of a warp and
    `warpsPerCTA[d]` warps, repeated until the tile is covered; `order`
    lists the dims fastest-varying first (`[1, 0]`: row-major). The product
    of `threadsPerWarp` is 32.

    ```mlir
    #attn_block.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8],
                        warpsPerCTA = [4, 1], order = [1, 0]>
    ```
  }];
  let parameters = (ins AttnBlock_DimList:$sizePerThread,
                        AttnBlock_DimList:$threadsPerWarp,
                        AttnBlock_DimList:$warpsPerCTA,
                        AttnBlock_DimList:$order);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getOrder().size(); }
    int64_t getNumWarps() const;
  }];
}

def AttnBlock_MmaLayoutAttr : AttnBlock_Attr<"MmaLayout", "mma"> {
  let summary = "the accumulator layout of a tensor-core instruction";
  let description = [{
    `version = 2`: mma.sync (sm_80 and later), `instrShape = [16, 8]` per
    warp, each thread holding two pairs of adjacent columns of a 16x8
    block. `version = 3`: warpgroup MMA (sm_90a), `instrShape = [64, N, 16]`
    per warpgroup of 4 warps (N a multiple of 8 up to 256). `warpsPerCTA`
    tiles the instruction over the block's warps ([4, 1]: four warps
    stacked along rows; for version 3 the row count is a multiple of 4).
  }];
  let parameters = (ins "int64_t":$version,
                        AttnBlock_DimList:$warpsPerCTA,
                        AttnBlock_DimList:$instrShape);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getNumWarps() const;
  }];
}

def AttnBlock_DotOperandLayoutAttr
    : AttnBlock_Attr<"DotOperandLayout", "dot_operand"> {
  let summary = "the operand registers of a tensor-core instruction";
  let description = [{
    Operand `opIdx` (0 = A, 1 = B) of the mma whose accumulator has layout
    `parent`, with `kWidth` consecutive k-elements per 32-bit register
    (2 for 16-bit types). A version-3 parent's B operand always comes from
    shared memory (wgmma); only A may live in registers.
  }];
  let parameters = (ins "int64_t":$opIdx, "::mlir::Attribute":$parent,
                        "int64_t":$kWidth);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def AttnBlock_SliceLayoutAttr : AttnBlock_Attr<"SliceLayout", "slice"> {
  let summary = "a layout with one dimension removed";
  let description = [{
    The elements of a rank-(r-1) tile are held as the rank-r `parent`
    layout holds the tile broadcast along `dim`: the row max of an mma
    accumulator is `slice<dim = 1, parent = #mma>`, replicated over the
    threads that share a row. Reductions along `dim` produce it,
    broadcasts along `dim` consume it.
  }];
  let parameters = (ins "int64_t":$dim, "::mlir::Attribute":$parent);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def AttnBlock_SharedLayoutAttr : AttnBlock_Attr<"SharedLayout", "shared"> {
  let summary = "XOR-swizzled shared memory (ldmatrix, cp.async)";
  let description = [{
    Rows of the buffer are split into `vec`-element vectors; vector `c` of
    row `r` is stored at vector `c ^ ((r / perPhase) % maxPhase)`, so that
    the eight rows an ldmatrix reads hit distinct banks. `order` as for
    `blocked`. `vec = 1, perPhase = 1, maxPhase = 1` is unswizzled.
  }];
  let parameters = (ins "int64_t":$vec, "int64_t":$perPhase,
                        "int64_t":$maxPhase, AttnBlock_DimList:$order);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def AttnBlock_PaddedSharedLayoutAttr
    : AttnBlock_Attr<"PaddedSharedLayout", "padded_shared"> {
  let summary = "row-major shared memory with a padded row stride";
  let description = [{
    Element (r, c) of a 2-D buffer is stored at `r * rowStride + c`
    (`rowStride` >= the buffer's columns). Unlike the XOR swizzle, the
    layout is the same at every row offset, so a window of the buffer
    (`local_subview`) at any row is again a `padded_shared` buffer of the
    same stride: MTA's stencil reads its score rows at offsets R + a for
    every query tap a. With `rowStride / 8` odd (16-bit elements) the eight
    16-byte rows an ldmatrix reads start in distinct bank groups, and so do
    the rows of an mma tile's 4-byte stores.
  }];
  let parameters = (ins "int64_t":$rowStride);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def AttnBlock_NvmmaSharedLayoutAttr
    : AttnBlock_Attr<"NvmmaSharedLayout", "nvmma_shared"> {
  let summary = "shared memory in a wgmma swizzle mode";
  let description = [{
    The layout a wgmma shared-memory descriptor names:
    `swizzleBytes` 0 (interleaved 8x16-byte core matrices), 32, 64 or 128
    (the 16-byte chunks of each 8-row group XOR-permuted within
    `swizzleBytes`), the innermost dim contiguous unless `transposed`.
  }];
  let parameters = (ins "int64_t":$swizzleBytes, "bool":$transposed);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

class AttnBlock_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<AttnBlock_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def AttnBlock_SharedBufferType : AttnBlock_Type<"SharedBuffer", "smem"> {
  let summary = "a buffer in the block's shared memory";
  let description = [{
    A static `shape` of `elementType` in shared memory, laid out by
    `encoding` (`#attn_block.shared`, `#attn_block.nvmma_shared` or, 2-D,
    `#attn_block.padded_shared`). A
    leading dimension may count pipeline stages (`local_index` picks one).

    ```mlir
    !attn_block.smem<2x64x64xbf16, #attn_block.shared<vec = 8, perPhase = 1,
                                                      maxPhase = 8, order = [1, 0]>>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType,
                        "::mlir::Attribute":$encoding);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    int64_t getNumElements() const;
    /// Bytes the buffer takes.
    int64_t getSizeInBytes() const;
  }];
}

def AttnBlock_AsyncTokenType : AttnBlock_Type<"AsyncToken", "async_token"> {
  let summary = "completion of an asynchronous copy or of a group of them";
}

#endif // ATTN_BLOCK_ATTRS_TD
