"""Prints an MLIR program nested DEPTH deep in one of four ways (KIND):
regions, types, array attributes or an attn program whose attention sits
inside nested scf.execute_region ops. Usage: deep-nesting.py KIND DEPTH."""
import sys

kind, n = sys.argv[1], int(sys.argv[2])
if kind == "regions":
    print("func.func @main() {\n" + '"t.op"() ({\n' * n + '"t.end"() : () -> ()\n'
          + "}) : () -> ()\n" * n + "return\n}")
elif kind == "types":
    print("func.func @main(%a: " + "tensor<" * n + "f32" + ">" * n +
          ") { return }")
elif kind == "attrs":
    print("func.func @main() attributes {a = " + "[" * n + "]" * n +
          "} { return }")
else:
    sys.exit("unknown kind " + kind)
