#!/bin/sh
# A stand-in for CUDA 13.0's ptxas: only `--version`, the release the
# path-attention-wgmma check reads (test/passes/path-attention-wgmma.mlir).
echo "ptxas: NVIDIA (R) Ptx optimizing assembler"
echo "Cuda compilation tools, release 13.0, V13.0.88"
