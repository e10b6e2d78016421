// The CPU-form flash kernel of examples/rope.mlir as attn-to-block made it
// at commit 804e436 (attn-opt examples/rope.mlir --attn-fuse --attn-to-block),
// the input of block-to-cpu.mlir.
module {
  func.func private @main_attention_kernel(%arg0: memref<?x?x?x64xf32>, %arg1: memref<?x?x?x64xf32>, %arg2: memref<?x?x?x64xf32>, %arg3: memref<?x32xf32>, %arg4: memref<?x32xf32>, %arg5: memref<?x?x?x64xf32>) attributes {attn_block.kernel} {
    %0 = attn_block.program_id 0
    %1 = attn_block.program_id 1
    %c1 = arith.constant 1 : index
    %dim = memref.dim %arg0, %c1 : memref<?x?x?x64xf32>
    %c1_0 = arith.constant 1 : index
    %dim_1 = memref.dim %arg1, %c1_0 : memref<?x?x?x64xf32>
    %c2 = arith.constant 2 : index
    %dim_2 = memref.dim %arg0, %c2 : memref<?x?x?x64xf32>
    %c2_3 = arith.constant 2 : index
    %dim_4 = memref.dim %arg1, %c2_3 : memref<?x?x?x64xf32>
    %2 = arith.divui %1, %dim : index
    %3 = arith.remui %1, %dim : index
    %4 = arith.divui %dim, %dim_1 : index
    %5 = arith.divui %3, %4 : index
    %6 = arith.subi %dim_4, %dim_2 : index
    %c64 = arith.constant 64 : index
    %7 = arith.muli %0, %c64 : index
    %8 = arith.addi %6, %7 : index
    %c0 = arith.constant 0 : index
    %c0_5 = arith.constant 0 : index
    %c0_6 = arith.constant 0 : index
    %9 = arith.minsi %c0_6, %c0_5 : index
    %10 = attn_block.load %arg0[%2, %3, %7, %c0] dims [2, 3] padding 0.000000e+00 : memref<?x?x?x64xf32> -> tensor<64x64xf32>
    %c0_7 = arith.constant 0 : index
    %11 = arith.addi %7, %c0_7 : index
    %c0_8 = arith.constant 0 : index
    %12 = arith.addi %11, %c0_8 : index
    %13 = arith.subi %12, %9 : index
    %c0_9 = arith.constant 0 : index
    %14 = attn_block.load %arg3[%13, %c0_9] dims [0, 1] padding 0.000000e+00 : memref<?x32xf32> -> tensor<64x32xf32>
    %c0_10 = arith.constant 0 : index
    %15 = attn_block.load %arg4[%13, %c0_10] dims [0, 1] padding 0.000000e+00 : memref<?x32xf32> -> tensor<64x32xf32>
    %16 = attn_block.rope %10, %14, %15 style half : tensor<64x64xf32>, tensor<64x32xf32>
    %cst = arith.constant 0.180336878 : f32
    %17 = tensor.empty() : tensor<64x64xf32>
    %18 = linalg.fill ins(%cst : f32) outs(%17 : tensor<64x64xf32>) -> tensor<64x64xf32>
    %19 = arith.mulf %16, %18 : tensor<64x64xf32>
    %20 = attn_block.iota %8 : tensor<64xi64>
    %c64_11 = arith.constant 64 : index
    %21 = arith.addi %8, %c64_11 : index
    %22 = arith.minsi %dim_4, %21 : index
    %cst_12 = arith.constant 0xFF800000 : f32
    %23 = tensor.empty() : tensor<64xf32>
    %24 = linalg.fill ins(%cst_12 : f32) outs(%23 : tensor<64xf32>) -> tensor<64xf32>
    %cst_13 = arith.constant 0.000000e+00 : f32
    %25 = tensor.empty() : tensor<64xf32>
    %26 = linalg.fill ins(%cst_13 : f32) outs(%25 : tensor<64xf32>) -> tensor<64xf32>
    %cst_14 = arith.constant 0.000000e+00 : f32
    %27 = tensor.empty() : tensor<64x64xf32>
    %28 = linalg.fill ins(%cst_14 : f32) outs(%27 : tensor<64x64xf32>) -> tensor<64x64xf32>
    %c64_15 = arith.constant 64 : index
    %29:3 = scf.for %arg6 = %c0 to %22 step %c64_15 iter_args(%arg7 = %24, %arg8 = %26, %arg9 = %28) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
      %41 = attn_block.load %arg1[%2, %5, %arg6, %c0] dims [2, 3] padding 0.000000e+00 : memref<?x?x?x64xf32> -> tensor<64x64xf32>
      %c0_19 = arith.constant 0 : index
      %42 = arith.addi %arg6, %c0_19 : index
      %43 = arith.subi %42, %9 : index
      %c0_20 = arith.constant 0 : index
      %44 = attn_block.load %arg3[%43, %c0_20] dims [0, 1] padding 0.000000e+00 : memref<?x32xf32> -> tensor<64x32xf32>
      %c0_21 = arith.constant 0 : index
      %45 = attn_block.load %arg4[%43, %c0_21] dims [0, 1] padding 0.000000e+00 : memref<?x32xf32> -> tensor<64x32xf32>
      %46 = attn_block.rope %41, %44, %45 style half : tensor<64x64xf32>, tensor<64x32xf32>
      %cst_22 = arith.constant 0.000000e+00 : f32
      %47 = tensor.empty() : tensor<64x64xf32>
      %48 = linalg.fill ins(%cst_22 : f32) outs(%47 : tensor<64x64xf32>) -> tensor<64x64xf32>
      %49 = attn_block.dot %19, %46, %48 transpose_b : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
      %50 = attn_block.iota %arg6 : tensor<64xi64>
      %51 = attn_block.broadcast %50 axis 0 : tensor<64xi64> -> tensor<64x64xi64>
      %52 = attn_block.broadcast %20 axis 1 : tensor<64xi64> -> tensor<64x64xi64>
      %53 = arith.index_cast %dim_4 : index to i64
      %54 = tensor.empty() : tensor<64x64xi64>
      %55 = linalg.fill ins(%53 : i64) outs(%54 : tensor<64x64xi64>) -> tensor<64x64xi64>
      %56 = arith.cmpi slt, %51, %55 : tensor<64x64xi64>
      %57 = arith.cmpi sle, %51, %52 : tensor<64x64xi64>
      %58 = arith.andi %56, %57 : tensor<64x64xi1>
      %cst_23 = arith.constant 0xFF800000 : f32
      %59 = tensor.empty() : tensor<64x64xf32>
      %60 = linalg.fill ins(%cst_23 : f32) outs(%59 : tensor<64x64xf32>) -> tensor<64x64xf32>
      %61 = arith.select %58, %49, %60 : tensor<64x64xi1>, tensor<64x64xf32>
      %62 = attn_block.reduce max %61 axis 1 : tensor<64x64xf32> -> tensor<64xf32>
      %63 = arith.maximumf %arg7, %62 : tensor<64xf32>
      %cst_24 = arith.constant 0xFF800000 : f32
      %64 = tensor.empty() : tensor<64xf32>
      %65 = linalg.fill ins(%cst_24 : f32) outs(%64 : tensor<64xf32>) -> tensor<64xf32>
      %66 = arith.cmpf oeq, %63, %65 : tensor<64xf32>
      %cst_25 = arith.constant 0.000000e+00 : f32
      %67 = tensor.empty() : tensor<64xf32>
      %68 = linalg.fill ins(%cst_25 : f32) outs(%67 : tensor<64xf32>) -> tensor<64xf32>
      %69 = arith.select %66, %68, %63 : tensor<64xi1>, tensor<64xf32>
      %70 = arith.subf %arg7, %69 : tensor<64xf32>
      %71 = math.exp2 %70 : tensor<64xf32>
      %72 = attn_block.broadcast %69 axis 1 : tensor<64xf32> -> tensor<64x64xf32>
      %73 = arith.subf %61, %72 : tensor<64x64xf32>
      %74 = math.exp2 %73 : tensor<64x64xf32>
      %75 = attn_block.reduce sum %74 axis 1 : tensor<64x64xf32> -> tensor<64xf32>
      %76 = arith.mulf %arg8, %71 : tensor<64xf32>
      %77 = arith.addf %76, %75 : tensor<64xf32>
      %78 = attn_block.load %arg2[%2, %5, %arg6, %c0] dims [2, 3] padding 0.000000e+00 : memref<?x?x?x64xf32> -> tensor<64x64xf32>
      %79 = attn_block.broadcast %71 axis 1 : tensor<64xf32> -> tensor<64x64xf32>
      %80 = arith.mulf %arg9, %79 : tensor<64x64xf32>
      %81 = attn_block.dot %74, %78, %80 : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
      scf.yield %63, %77, %81 : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
    }
    %cst_16 = arith.constant 0.000000e+00 : f32
    %30 = tensor.empty() : tensor<64xf32>
    %31 = linalg.fill ins(%cst_16 : f32) outs(%30 : tensor<64xf32>) -> tensor<64xf32>
    %32 = arith.cmpf oeq, %29#1, %31 : tensor<64xf32>
    %cst_17 = arith.constant 1.000000e+00 : f32
    %33 = tensor.empty() : tensor<64xf32>
    %34 = linalg.fill ins(%cst_17 : f32) outs(%33 : tensor<64xf32>) -> tensor<64xf32>
    %35 = arith.divf %34, %29#1 : tensor<64xf32>
    %cst_18 = arith.constant 0.000000e+00 : f32
    %36 = tensor.empty() : tensor<64xf32>
    %37 = linalg.fill ins(%cst_18 : f32) outs(%36 : tensor<64xf32>) -> tensor<64xf32>
    %38 = arith.select %32, %37, %35 : tensor<64xi1>, tensor<64xf32>
    %39 = attn_block.broadcast %38 axis 1 : tensor<64xf32> -> tensor<64x64xf32>
    %40 = arith.mulf %29#2, %39 : tensor<64x64xf32>
    attn_block.store %40, %arg5[%2, %3, %7, %c0] dims [2, 3] : tensor<64x64xf32> -> memref<?x?x?x64xf32>
    return
  }
  func.func @main(%arg0: tensor<?x?x?x64xf32>, %arg1: tensor<?x?x?x64xf32>, %arg2: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
    %c2 = arith.constant 2 : index
    %dim = tensor.dim %arg0, %c2 : tensor<?x?x?x64xf32>
    %c2_0 = arith.constant 2 : index
    %dim_1 = tensor.dim %arg1, %c2_0 : tensor<?x?x?x64xf32>
    %c0 = arith.constant 0 : index
    %0 = arith.addi %dim_1, %c0 : index
    %c0_2 = arith.constant 0 : index
    %1 = arith.addi %c0_2, %dim : index
    %c0_3 = arith.constant 0 : index
    %2 = arith.minsi %c0_3, %c0_2 : index
    %3 = arith.maxsi %0, %1 : index
    %4 = arith.subi %3, %2 : index
    %generated = tensor.generate %4 {
    ^bb0(%arg3: index, %arg4: index):
      %cst = arith.constant -0.28782313662425574 : f64
      %13 = arith.index_cast %arg4 : index to i64
      %14 = arith.sitofp %13 : i64 to f64
      %15 = arith.mulf %14, %cst : f64
      %16 = arith.addi %arg3, %2 : index
      %17 = math.exp %15 : f64
      %18 = arith.index_cast %16 : index to i64
      %19 = arith.sitofp %18 : i64 to f64
      %20 = arith.mulf %19, %17 : f64
      %21 = math.cos %20 : f64
      %22 = arith.truncf %21 : f64 to f32
      tensor.yield %22 : f32
    } : tensor<?x32xf32>
    %generated_4 = tensor.generate %4 {
    ^bb0(%arg3: index, %arg4: index):
      %cst = arith.constant -0.28782313662425574 : f64
      %13 = arith.index_cast %arg4 : index to i64
      %14 = arith.sitofp %13 : i64 to f64
      %15 = arith.mulf %14, %cst : f64
      %16 = arith.addi %arg3, %2 : index
      %17 = math.exp %15 : f64
      %18 = arith.index_cast %16 : index to i64
      %19 = arith.sitofp %18 : i64 to f64
      %20 = arith.mulf %19, %17 : f64
      %21 = math.sin %20 : f64
      %22 = arith.truncf %21 : f64 to f32
      tensor.yield %22 : f32
    } : tensor<?x32xf32>
    %5 = bufferization.to_buffer %arg0 read_only : tensor<?x?x?x64xf32> to memref<?x?x?x64xf32>
    %6 = bufferization.to_buffer %arg1 read_only : tensor<?x?x?x64xf32> to memref<?x?x?x64xf32>
    %7 = bufferization.to_buffer %arg2 read_only : tensor<?x?x?x64xf32> to memref<?x?x?x64xf32>
    %8 = bufferization.to_buffer %generated read_only : tensor<?x32xf32> to memref<?x32xf32>
    %9 = bufferization.to_buffer %generated_4 read_only : tensor<?x32xf32> to memref<?x32xf32>
    %c0_5 = arith.constant 0 : index
    %dim_6 = tensor.dim %arg0, %c0_5 : tensor<?x?x?x64xf32>
    %c1 = arith.constant 1 : index
    %dim_7 = tensor.dim %arg0, %c1 : tensor<?x?x?x64xf32>
    %c2_8 = arith.constant 2 : index
    %dim_9 = tensor.dim %arg0, %c2_8 : tensor<?x?x?x64xf32>
    %alloc = memref.alloc(%dim_6, %dim_7, %dim_9) : memref<?x?x?x64xf32>
    %c64 = arith.constant 64 : index
    %10 = arith.ceildivui %dim_9, %c64 : index
    %11 = arith.muli %dim_6, %dim_7 : index
    attn_block.launch @main_attention_kernel grid(%10, %11) args(%5, %6, %7, %8, %9, %alloc) : memref<?x?x?x64xf32>, memref<?x?x?x64xf32>, memref<?x?x?x64xf32>, memref<?x32xf32>, memref<?x32xf32>, memref<?x?x?x64xf32>
    %12 = bufferization.to_tensor %alloc restrict writable : memref<?x?x?x64xf32> to tensor<?x?x?x64xf32>
    return %12 : tensor<?x?x?x64xf32>
  }
}

