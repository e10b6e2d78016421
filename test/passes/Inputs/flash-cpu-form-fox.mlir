// The CPU-form flash kernel of examples/fox.mlir as attn-to-block made it
// at commit 804e436 (attn-opt examples/fox.mlir --attn-fuse --attn-to-block),
// the input of block-to-cpu.mlir.
module {
  func.func private @main_attention_kernel(%arg0: memref<?x?x?x64xf32>, %arg1: memref<?x?x?x64xf32>, %arg2: memref<?x?x?x64xf32>, %arg3: memref<?x?x?xf32>, %arg4: memref<?x?x?x64xf32>) attributes {attn_block.kernel} {
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
    %9 = attn_block.load %arg0[%2, %3, %7, %c0] dims [2, 3] padding 0.000000e+00 : memref<?x?x?x64xf32> -> tensor<64x64xf32>
    %cst = arith.constant 0.180336878 : f32
    %10 = tensor.empty() : tensor<64x64xf32>
    %11 = linalg.fill ins(%cst : f32) outs(%10 : tensor<64x64xf32>) -> tensor<64x64xf32>
    %12 = arith.mulf %9, %11 : tensor<64x64xf32>
    %13 = attn_block.iota %8 : tensor<64xi64>
    %c64_5 = arith.constant 64 : index
    %14 = arith.addi %8, %c64_5 : index
    %15 = arith.minsi %dim_4, %14 : index
    %16 = attn_block.load %arg3[%2, %3, %8] dims [2] padding 0.000000e+00 : memref<?x?x?xf32> -> tensor<64xf32>
    %17 = arith.extf %16 : tensor<64xf32> to tensor<64xf64>
    %cst_6 = arith.constant 0.000000e+00 : f64
    %c64_7 = arith.constant 64 : index
    %18 = scf.for %arg5 = %c0 to %8 step %c64_7 iter_args(%arg6 = %cst_6) -> (f64) {
      %42 = attn_block.load %arg3[%2, %3, %arg5] dims [2] padding 0.000000e+00 : memref<?x?x?xf32> -> tensor<64xf32>
      %43 = arith.extf %42 : tensor<64xf32> to tensor<64xf64>
      %44 = attn_block.iota %arg5 : tensor<64xi64>
      %45 = arith.index_cast %8 : index to i64
      %46 = tensor.empty() : tensor<64xi64>
      %47 = linalg.fill ins(%45 : i64) outs(%46 : tensor<64xi64>) -> tensor<64xi64>
      %48 = arith.cmpi slt, %44, %47 : tensor<64xi64>
      %cst_17 = arith.constant 0.000000e+00 : f64
      %49 = tensor.empty() : tensor<64xf64>
      %50 = linalg.fill ins(%cst_17 : f64) outs(%49 : tensor<64xf64>) -> tensor<64xf64>
      %51 = arith.select %48, %43, %50 : tensor<64xi1>, tensor<64xf64>
      %52 = attn_block.broadcast %51 axis 0 : tensor<64xf64> -> tensor<1x64xf64>
      %53 = attn_block.reduce sum %52 axis 1 : tensor<1x64xf64> -> tensor<1xf64>
      %c0_18 = arith.constant 0 : index
      %extracted = tensor.extract %53[%c0_18] : tensor<1xf64>
      %54 = arith.addf %arg6, %extracted : f64
      scf.yield %54 : f64
    }
    %19 = tensor.empty() : tensor<64xf64>
    %20 = linalg.fill ins(%18 : f64) outs(%19 : tensor<64xf64>) -> tensor<64xf64>
    %21 = attn_block.scan %17 : tensor<64xf64>
    %22 = arith.addf %21, %20 : tensor<64xf64>
    %cst_8 = arith.constant 0.000000e+00 : f64
    %c64_9 = arith.constant 64 : index
    %23 = scf.for %arg5 = %c0 to %c0 step %c64_9 iter_args(%arg6 = %cst_8) -> (f64) {
      %42 = attn_block.load %arg3[%2, %3, %arg5] dims [2] padding 0.000000e+00 : memref<?x?x?xf32> -> tensor<64xf32>
      %43 = arith.extf %42 : tensor<64xf32> to tensor<64xf64>
      %44 = attn_block.iota %arg5 : tensor<64xi64>
      %45 = arith.index_cast %c0 : index to i64
      %46 = tensor.empty() : tensor<64xi64>
      %47 = linalg.fill ins(%45 : i64) outs(%46 : tensor<64xi64>) -> tensor<64xi64>
      %48 = arith.cmpi slt, %44, %47 : tensor<64xi64>
      %cst_17 = arith.constant 0.000000e+00 : f64
      %49 = tensor.empty() : tensor<64xf64>
      %50 = linalg.fill ins(%cst_17 : f64) outs(%49 : tensor<64xf64>) -> tensor<64xf64>
      %51 = arith.select %48, %43, %50 : tensor<64xi1>, tensor<64xf64>
      %52 = attn_block.broadcast %51 axis 0 : tensor<64xf64> -> tensor<1x64xf64>
      %53 = attn_block.reduce sum %52 axis 1 : tensor<1x64xf64> -> tensor<1xf64>
      %c0_18 = arith.constant 0 : index
      %extracted = tensor.extract %53[%c0_18] : tensor<1xf64>
      %54 = arith.addf %arg6, %extracted : f64
      scf.yield %54 : f64
    }
    %cst_10 = arith.constant 0xFF800000 : f32
    %24 = tensor.empty() : tensor<64xf32>
    %25 = linalg.fill ins(%cst_10 : f32) outs(%24 : tensor<64xf32>) -> tensor<64xf32>
    %cst_11 = arith.constant 0.000000e+00 : f32
    %26 = tensor.empty() : tensor<64xf32>
    %27 = linalg.fill ins(%cst_11 : f32) outs(%26 : tensor<64xf32>) -> tensor<64xf32>
    %cst_12 = arith.constant 0.000000e+00 : f32
    %28 = tensor.empty() : tensor<64x64xf32>
    %29 = linalg.fill ins(%cst_12 : f32) outs(%28 : tensor<64x64xf32>) -> tensor<64x64xf32>
    %c64_13 = arith.constant 64 : index
    %30:4 = scf.for %arg5 = %c0 to %15 step %c64_13 iter_args(%arg6 = %25, %arg7 = %27, %arg8 = %29, %arg9 = %23) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>, f64) {
      %42 = attn_block.load %arg1[%2, %5, %arg5, %c0] dims [2, 3] padding 0.000000e+00 : memref<?x?x?x64xf32> -> tensor<64x64xf32>
      %cst_17 = arith.constant 0.000000e+00 : f32
      %43 = tensor.empty() : tensor<64x64xf32>
      %44 = linalg.fill ins(%cst_17 : f32) outs(%43 : tensor<64x64xf32>) -> tensor<64x64xf32>
      %45 = attn_block.dot %12, %42, %44 transpose_b : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
      %46 = attn_block.load %arg3[%2, %3, %arg5] dims [2] padding 0.000000e+00 : memref<?x?x?xf32> -> tensor<64xf32>
      %47 = arith.extf %46 : tensor<64xf32> to tensor<64xf64>
      %48 = tensor.empty() : tensor<64xf64>
      %49 = linalg.fill ins(%arg9 : f64) outs(%48 : tensor<64xf64>) -> tensor<64xf64>
      %50 = attn_block.scan %47 : tensor<64xf64>
      %51 = arith.addf %50, %49 : tensor<64xf64>
      %52 = attn_block.broadcast %51 axis 0 : tensor<64xf64> -> tensor<64x64xf64>
      %53 = attn_block.broadcast %22 axis 1 : tensor<64xf64> -> tensor<64x64xf64>
      %54 = arith.subf %53, %52 : tensor<64x64xf64>
      %cst_18 = arith.constant 1.44269502 : f32
      %55 = tensor.empty() : tensor<64x64xf32>
      %56 = linalg.fill ins(%cst_18 : f32) outs(%55 : tensor<64x64xf32>) -> tensor<64x64xf32>
      %57 = arith.truncf %54 : tensor<64x64xf64> to tensor<64x64xf32>
      %58 = arith.mulf %57, %56 : tensor<64x64xf32>
      %59 = arith.addf %45, %58 : tensor<64x64xf32>
      %60 = attn_block.broadcast %47 axis 0 : tensor<64xf64> -> tensor<1x64xf64>
      %61 = attn_block.reduce sum %60 axis 1 : tensor<1x64xf64> -> tensor<1xf64>
      %c0_19 = arith.constant 0 : index
      %extracted = tensor.extract %61[%c0_19] : tensor<1xf64>
      %62 = arith.addf %arg9, %extracted : f64
      %63 = attn_block.iota %arg5 : tensor<64xi64>
      %64 = attn_block.broadcast %63 axis 0 : tensor<64xi64> -> tensor<64x64xi64>
      %65 = attn_block.broadcast %13 axis 1 : tensor<64xi64> -> tensor<64x64xi64>
      %66 = arith.index_cast %dim_4 : index to i64
      %67 = tensor.empty() : tensor<64x64xi64>
      %68 = linalg.fill ins(%66 : i64) outs(%67 : tensor<64x64xi64>) -> tensor<64x64xi64>
      %69 = arith.cmpi slt, %64, %68 : tensor<64x64xi64>
      %70 = arith.cmpi sle, %64, %65 : tensor<64x64xi64>
      %71 = arith.andi %69, %70 : tensor<64x64xi1>
      %cst_20 = arith.constant 0xFF800000 : f32
      %72 = tensor.empty() : tensor<64x64xf32>
      %73 = linalg.fill ins(%cst_20 : f32) outs(%72 : tensor<64x64xf32>) -> tensor<64x64xf32>
      %74 = arith.select %71, %59, %73 : tensor<64x64xi1>, tensor<64x64xf32>
      %75 = attn_block.reduce max %74 axis 1 : tensor<64x64xf32> -> tensor<64xf32>
      %76 = arith.maximumf %arg6, %75 : tensor<64xf32>
      %cst_21 = arith.constant 0xFF800000 : f32
      %77 = tensor.empty() : tensor<64xf32>
      %78 = linalg.fill ins(%cst_21 : f32) outs(%77 : tensor<64xf32>) -> tensor<64xf32>
      %79 = arith.cmpf oeq, %76, %78 : tensor<64xf32>
      %cst_22 = arith.constant 0.000000e+00 : f32
      %80 = tensor.empty() : tensor<64xf32>
      %81 = linalg.fill ins(%cst_22 : f32) outs(%80 : tensor<64xf32>) -> tensor<64xf32>
      %82 = arith.select %79, %81, %76 : tensor<64xi1>, tensor<64xf32>
      %83 = arith.subf %arg6, %82 : tensor<64xf32>
      %84 = math.exp2 %83 : tensor<64xf32>
      %85 = attn_block.broadcast %82 axis 1 : tensor<64xf32> -> tensor<64x64xf32>
      %86 = arith.subf %74, %85 : tensor<64x64xf32>
      %87 = math.exp2 %86 : tensor<64x64xf32>
      %88 = attn_block.reduce sum %87 axis 1 : tensor<64x64xf32> -> tensor<64xf32>
      %89 = arith.mulf %arg7, %84 : tensor<64xf32>
      %90 = arith.addf %89, %88 : tensor<64xf32>
      %91 = attn_block.load %arg2[%2, %5, %arg5, %c0] dims [2, 3] padding 0.000000e+00 : memref<?x?x?x64xf32> -> tensor<64x64xf32>
      %92 = attn_block.broadcast %84 axis 1 : tensor<64xf32> -> tensor<64x64xf32>
      %93 = arith.mulf %arg8, %92 : tensor<64x64xf32>
      %94 = attn_block.dot %87, %91, %93 : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
      scf.yield %76, %90, %94, %62 : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>, f64
    }
    %cst_14 = arith.constant 0.000000e+00 : f32
    %31 = tensor.empty() : tensor<64xf32>
    %32 = linalg.fill ins(%cst_14 : f32) outs(%31 : tensor<64xf32>) -> tensor<64xf32>
    %33 = arith.cmpf oeq, %30#1, %32 : tensor<64xf32>
    %cst_15 = arith.constant 1.000000e+00 : f32
    %34 = tensor.empty() : tensor<64xf32>
    %35 = linalg.fill ins(%cst_15 : f32) outs(%34 : tensor<64xf32>) -> tensor<64xf32>
    %36 = arith.divf %35, %30#1 : tensor<64xf32>
    %cst_16 = arith.constant 0.000000e+00 : f32
    %37 = tensor.empty() : tensor<64xf32>
    %38 = linalg.fill ins(%cst_16 : f32) outs(%37 : tensor<64xf32>) -> tensor<64xf32>
    %39 = arith.select %33, %38, %36 : tensor<64xi1>, tensor<64xf32>
    %40 = attn_block.broadcast %39 axis 1 : tensor<64xf32> -> tensor<64x64xf32>
    %41 = arith.mulf %30#2, %40 : tensor<64x64xf32>
    attn_block.store %41, %arg4[%2, %3, %7, %c0] dims [2, 3] : tensor<64x64xf32> -> memref<?x?x?x64xf32>
    return
  }
  func.func @main(%arg0: tensor<?x?x?x64xf32>, %arg1: tensor<?x?x?x64xf32>, %arg2: tensor<?x?x?x64xf32>, %arg3: tensor<?x?x?xf32>) -> tensor<?x?x?x64xf32> {
    %0 = bufferization.to_buffer %arg0 read_only : tensor<?x?x?x64xf32> to memref<?x?x?x64xf32>
    %1 = bufferization.to_buffer %arg1 read_only : tensor<?x?x?x64xf32> to memref<?x?x?x64xf32>
    %2 = bufferization.to_buffer %arg2 read_only : tensor<?x?x?x64xf32> to memref<?x?x?x64xf32>
    %3 = bufferization.to_buffer %arg3 read_only : tensor<?x?x?xf32> to memref<?x?x?xf32>
    %c0 = arith.constant 0 : index
    %dim = tensor.dim %arg0, %c0 : tensor<?x?x?x64xf32>
    %c1 = arith.constant 1 : index
    %dim_0 = tensor.dim %arg0, %c1 : tensor<?x?x?x64xf32>
    %c2 = arith.constant 2 : index
    %dim_1 = tensor.dim %arg0, %c2 : tensor<?x?x?x64xf32>
    %alloc = memref.alloc(%dim, %dim_0, %dim_1) : memref<?x?x?x64xf32>
    %c64 = arith.constant 64 : index
    %4 = arith.ceildivui %dim_1, %c64 : index
    %5 = arith.muli %dim, %dim_0 : index
    attn_block.launch @main_attention_kernel grid(%4, %5) args(%0, %1, %2, %3, %alloc) : memref<?x?x?x64xf32>, memref<?x?x?x64xf32>, memref<?x?x?x64xf32>, memref<?x?x?xf32>, memref<?x?x?x64xf32>
    %6 = bufferization.to_tensor %alloc restrict writable : memref<?x?x?x64xf32> to tensor<?x?x?x64xf32>
    return %6 : tensor<?x?x?x64xf32>
  }
}

