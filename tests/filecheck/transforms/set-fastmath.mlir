// set-fastmath puts the flags on every op with a `fastmath` property (float arith, cmpf, math)
// and leaves everything else alone; convert-to-llvm carries them to LLVM's instructions.
// RUN: irgrad-opt %s -p 'set-fastmath{flags="reassoc,contract"}' | filecheck %s
// RUN: irgrad-opt %s -p 'set-fastmath' | filecheck %s --check-prefix=FAST
// RUN: irgrad-opt %s -p 'set-fastmath{flags="reassoc,contract"},convert-to-llvm' -t llvm | filecheck %s --check-prefix=LLVM
// RUN: irgrad-opt %s -p 'convert-to-llvm' -t llvm | filecheck %s --check-prefix=EXACT
// RUN: not irgrad-opt %s -p 'set-fastmath{flags="reassoc,speed"}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not irgrad-opt %s -p 'set-fastmath{flags="none,nnan"}' 2>&1 | filecheck %s --check-prefix=NONE

func.func @f(%m: memref<1024xf32>, %k: i32) -> (f32, i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1024 : index
  %z = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f32) {
    %v = memref.load %m[%i] : memref<1024xf32>
    %e = math.exp %v : f32
    %p = arith.mulf %e, %v : f32
    %a = arith.addf %acc, %p : f32
    scf.yield %a : f32
  }
  %big = arith.cmpf ogt, %r, %z : f32
  %s = arith.select %big, %r, %z : f32
  %k2 = arith.addi %k, %k : i32
  func.return %s, %k2 : f32, i32
}

// CHECK:      math.exp %{{.*}} fastmath<reassoc,contract> : f32
// CHECK-NEXT: arith.mulf %{{.*}}, %{{.*}} fastmath<reassoc,contract> : f32
// CHECK-NEXT: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc,contract> : f32
// CHECK:      arith.cmpf ogt, %{{.*}}, %{{.*}} fastmath<reassoc,contract> : f32
// CHECK-NEXT: arith.select
// CHECK-NEXT: arith.addi %{{.*}}, %{{.*}} : i32

// FAST: arith.addf %{{.*}}, %{{.*}} fastmath<fast> : f32

// The flags reach LLVM on the float arithmetic (xDSL's translation does not put them on fcmp
// or on intrinsic calls such as llvm.exp: there they stay in the IR only).
// (xDSL keeps the flags in a set: their order in LLVM IR varies from run to run.)
// LLVM: fmul {{(reassoc contract|contract reassoc)}} float
// LLVM: fadd {{(reassoc contract|contract reassoc)}} float

// Without the pass, no flags: irgrad compiles IEEE-exact unless asked.
// EXACT-NOT: reassoc
// EXACT-NOT: fast

// BAD: error: set-fastmath: unknown fast-math flag 'speed'; flags are reassoc, nnan, ninf, nsz, arcp, contract, afn, fast, none
// BAD-NOT: Traceback
// NONE: error: set-fastmath: 'none' cannot be combined with other flags
