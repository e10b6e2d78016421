// Every program of examples/ parses, verifies and round-trips through the
// custom and the generic form. Default-valued attributes written out in the
// examples (theta 1e4, eps 1e-5) are elided when printed.
// RUN: attn-opt %S/../../examples/fox.mlir | attn-opt | FileCheck %s --check-prefix=FOX
// RUN: attn-opt %S/../../examples/fox.mlir --mlir-print-op-generic | attn-opt | FileCheck %s --check-prefix=FOX
// RUN: attn-opt %S/../../examples/path.mlir | attn-opt | FileCheck %s --check-prefix=PATH
// RUN: attn-opt %S/../../examples/path.mlir --mlir-print-op-generic | attn-opt | FileCheck %s --check-prefix=PATH
// RUN: attn-opt %S/../../examples/path_fox.mlir | attn-opt | FileCheck %s --check-prefix=PATHFOX
// RUN: attn-opt %S/../../examples/path_fox.mlir --mlir-print-op-generic | attn-opt | FileCheck %s --check-prefix=PATHFOX
// RUN: attn-opt %S/../../examples/path_bf16.mlir | attn-opt | FileCheck %s --check-prefix=PATHBF16
// RUN: attn-opt %S/../../examples/path_fox_bf16.mlir | attn-opt | FileCheck %s --check-prefix=PATHFOXBF16
// RUN: attn-opt %S/../../examples/rope.mlir | attn-opt | FileCheck %s --check-prefix=ROPE
// RUN: attn-opt %S/../../examples/rope.mlir --mlir-print-op-generic | attn-opt | FileCheck %s --check-prefix=ROPE
// RUN: attn-opt %S/../../examples/mta.mlir | attn-opt | FileCheck %s --check-prefix=MTA
// RUN: attn-opt %S/../../examples/mta.mlir --mlir-print-op-generic | attn-opt | FileCheck %s --check-prefix=MTA
// RUN: attn-opt %S/../../examples/mta_pre.mlir | attn-opt | FileCheck %s --check-prefix=MTAPRE
// RUN: attn-opt %S/../../examples/mta_pre.mlir --mlir-print-op-generic | attn-opt | FileCheck %s --check-prefix=MTAPRE

// FOX-LABEL: func.func @main
// FOX-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[G:[^:]*]]: {{[^)]*}})
// FOX-NEXT: %[[S:.*]] = attn.scores %[[Q]], %[[K]] gate(%[[G]]) : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
// FOX-NEXT: %[[P:.*]] = attn.softmax %[[S]] : tensor<?x?x?x?xf32>
// FOX-NEXT: %[[O:.*]] = attn.weighted_sum %[[P]], %[[V]] : (tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
// FOX-NEXT: return %[[O]]

// PATH-LABEL: func.func @main
// PATH-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[W:[^:]*]]: {{[^,]*}}, %[[B:[^:]*]]: {{[^)]*}})
// PATH-NEXT: %[[S:.*]] = attn.scores %[[Q]], %[[K]] path(%[[W]], %[[B]]) : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
// PATH-NEXT: attn.softmax %[[S]]
// PATH-NEXT: attn.weighted_sum

// PATHFOX-LABEL: func.func @main
// PATHFOX-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[W:[^:]*]]: {{[^,]*}}, %[[B:[^:]*]]: {{[^,]*}}, %[[G:[^:]*]]: {{[^)]*}})
// PATHFOX-NEXT: attn.scores %[[Q]], %[[K]] path(%[[W]], %[[B]]) gate(%[[G]]) scaled : (
// PATHFOX-NEXT: attn.softmax
// PATHFOX-NEXT: attn.weighted_sum

// ROPE-LABEL: func.func @main
// ROPE-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^)]*}})
// ROPE-NEXT: %[[QR:.*]] = attn.rope %[[Q]] : tensor<?x?x?x64xf32>
// ROPE-NEXT: %[[KR:.*]] = attn.rope %[[K]] : tensor<?x?x?x64xf32>
// ROPE-NEXT: %[[S:.*]] = attn.scores %[[QR]], %[[KR]] : (
// ROPE-NEXT: attn.softmax %[[S]]
// ROPE-NEXT: attn.weighted_sum %{{.*}}, %[[V]]

// MTA-LABEL: func.func @main
// MTA-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[TP:[^:]*]]: {{[^,]*}}, %[[WP:[^:]*]]: {{[^,]*}}, %[[TQ:[^:]*]]: {{[^,]*}}, %[[WQ:[^:]*]]: {{[^,]*}}, %[[GAM:[^:]*]]: {{[^,]*}}, %[[GW:[^:]*]]: {{[^,]*}}, %[[GB:[^:]*]]: {{[^)]*}})
// MTA-NEXT: %[[QR:.*]] = attn.rope %[[Q]] : tensor<?x?x?x64xf32>
// MTA-NEXT: %[[KR:.*]] = attn.rope %[[K]] : tensor<?x?x?x64xf32>
// MTA-NEXT: %[[S:.*]] = attn.scores %[[QR]], %[[KR]]
// MTA-NEXT: %[[C:.*]] = attn.kq_conv pre %[[S]], %[[TP]] : tensor<?x?x?x?xf32>, tensor<?x6x11xf32>
// MTA-NEXT: %[[M:.*]] = attn.head_mix pre %[[C]], %[[WP]] : tensor<?x?x?x?xf32>, tensor<?x?xf32>
// MTA-NEXT: %[[P:.*]] = attn.softmax %[[M]]
// MTA-NEXT: %[[C2:.*]] = attn.kq_conv post %[[P]], %[[TQ]] : tensor<?x?x?x?xf32>, tensor<?x6x11xf32>
// MTA-NEXT: %[[M2:.*]] = attn.head_mix post %[[C2]], %[[WQ]] : tensor<?x?x?x?xf32>, tensor<?x?xf32>
// MTA-NEXT: %[[O:.*]] = attn.weighted_sum %[[M2]], %[[V]]
// MTA-NEXT: %[[N:.*]] = attn.head_norm %[[O]], %[[GAM]] gate(%[[GW]], %[[GB]]) : (tensor<?x?x?x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<1xf32>) -> tensor<?x?x?x64xf32>
// MTA-NEXT: return %[[N]]

// MTAPRE-LABEL: func.func @main
// MTAPRE: attn.scores
// MTAPRE-NEXT: attn.kq_conv pre %{{.*}}, %{{.*}} : tensor<?x?x?x?xf32>, tensor<?x6x11xf32>
// MTAPRE-NEXT: attn.softmax
// MTAPRE-NEXT: attn.weighted_sum

// PATHBF16-LABEL: func.func @main
// PATHBF16: attn.scores %{{.*}}, %{{.*}} path(%{{.*}}, %{{.*}}) : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
// PATHBF16: attn.weighted_sum {{.*}} -> tensor<?x?x?x64xbf16>

// PATHFOXBF16-LABEL: func.func @main
// PATHFOXBF16: attn.scores %{{.*}}, %{{.*}} path(%{{.*}}, %{{.*}}) gate(%{{.*}}) scaled : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
// PATHFOXBF16: attn.weighted_sum {{.*}} -> tensor<?x?x?x64xbf16>
