// attn-cpu-schedule-programs (codegen/cpu/ProgramSchedule.cpp): the OpenMP
// worksharing loop of a launch's grid hands programs out one at a time
// (schedule(dynamic)) and walks grid x from the top: the kernel gets
// x' = (lb + ub - 1) - x. A loop that calls no block kernel, or that has a
// schedule already, is left alone.
// RUN: attn-opt %s --attn-cpu-schedule-programs | FileCheck %s

func.func private @kernel(%x: index, %y: index) attributes {attn_block.kernel}
func.func private @other(%x: index, %y: index)

// CHECK-LABEL: func.func @grid
// CHECK-SAME: (%[[LBX:.*]]: index, %[[GX:.*]]: index, %[[GY:.*]]: index)
// CHECK: omp.wsloop schedule(dynamic) {
// CHECK-NEXT: omp.loop_nest (%[[X:.*]], %[[Y:.*]]) : index = (%[[LBX]], %{{.*}}) to (%[[GX]], %[[GY]]) step (%[[C1:.*]], %{{.*}}) {
// CHECK-NEXT: %[[SUM:.*]] = arith.addi %[[LBX]], %[[GX]] : index
// CHECK-NEXT: %[[LAST:.*]] = arith.subi %[[SUM]], %[[C1]] : index
// CHECK-NEXT: %[[XR:.*]] = arith.subi %[[LAST]], %[[X]] : index
// CHECK-NEXT: func.call @kernel(%[[XR]], %[[Y]])
func.func @grid(%lbx: index, %gx: index, %gy: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%x, %y) : index = (%lbx, %c0) to (%gx, %gy) step (%c1, %c1) {
        func.call @kernel(%x, %y) : (index, index) -> ()
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// CHECK-LABEL: func.func @not_a_launch
// CHECK: omp.wsloop {
// CHECK-NEXT: omp.loop_nest (%[[X:.*]], %[[Y:.*]]) : index
// CHECK-NEXT: func.call @other(%[[X]], %[[Y]])
// CHECK-LABEL: func.func @scheduled
// CHECK: omp.wsloop schedule(static) {
// CHECK-NEXT: omp.loop_nest (%[[X:.*]], %[[Y:.*]]) : index
// CHECK-NEXT: func.call @kernel(%[[X]], %[[Y]])
func.func @not_a_launch(%gx: index, %gy: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%x, %y) : index = (%c0, %c0) to (%gx, %gy) step (%c1, %c1) {
        func.call @other(%x, %y) : (index, index) -> ()
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

func.func @scheduled(%gx: index, %gy: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  omp.parallel {
    omp.wsloop schedule(static) {
      omp.loop_nest (%x, %y) : index = (%c0, %c0) to (%gx, %gy) step (%c1, %c1) {
        func.call @kernel(%x, %y) : (index, index) -> ()
        omp.yield
      }
    }
    omp.terminator
  }
  return
}
