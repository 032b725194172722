// RUN: irgrad-opt -p gpu-kernel-outlining %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: sed -e '/expected-error.*memref[.]store/d' %s | not irgrad-opt - -p gpu-kernel-outlining --split-input-file --verify-diagnostics 2>&1 >/dev/null | filecheck %s --check-prefix=UNEXPECTED

// The second RUN line drops an expected-error annotation: the error is then unexpected, and
// the run fails.
// UNEXPECTED: <stdin>:[[# @LINE + 92]]:3: error: unexpected error: 'memref.store' op stores to device memory from host code
// UNEXPECTED-NOT: error:

// A launch body becomes a kernel of `gpu.module @kernels`: the values it used from host code
// are its arguments (in order of first use), constants are cloned into it, and the launch's
// block and thread ids and sizes become gpu id ops. Host code launches it with
// gpu.launch_func; memref.alloc/dealloc become gpu.alloc/dealloc (device memory).

// CHECK:       builtin.module attributes {gpu.container_module} {
// CHECK-LABEL: func.func @scale
// CHECK:         %[[TMP:.*]] = gpu.alloc () : memref<64xf32>{{$}}
// CHECK:         gpu.launch_func  @kernels::@scale_kernel0 blocks in (%c2, %c1, %c1) threads in (%c32, %c1, %c1) args(%a : memref<64xf32>, %s : f32, %[[TMP]] : memref<64xf32>){{$}}
// CHECK-NEXT:    gpu.dealloc %[[TMP]] : memref<64xf32>{{$}}
// CHECK-NEXT:    func.return
// CHECK:       gpu.module @kernels {
// CHECK-NEXT:    gpu.func @scale_kernel0(%[[A:\w+]]: memref<64xf32>, %[[S:\w+]]: f32, %[[T:\w+]]: memref<64xf32>) kernel {
// CHECK-NEXT:      %[[BID:.*]] = gpu.block_id x{{$}}
// CHECK-NEXT:      %[[TID:.*]] = gpu.thread_id x{{$}}
// CHECK-NEXT:      %[[BDIM:.*]] = gpu.block_dim x{{$}}
// CHECK-NEXT:      %[[P:.*]] = arith.muli %[[BID]], %[[BDIM]] : index
// CHECK-NEXT:      %[[I:.*]] = arith.addi %[[P]], %[[TID]] : index
// CHECK-NEXT:      %[[V:.*]] = memref.load %[[A]][%[[I]]] : memref<64xf32>
// CHECK-NEXT:      %[[W:.*]] = arith.mulf %[[V]], %[[S]] : f32
// CHECK-NEXT:      memref.store %[[W]], %[[T]][%[[I]]] : memref<64xf32>
// CHECK-NEXT:      gpu.return
// CHECK-NEXT:    }
// CHECK-NOT:   gpu.launch blocks
func.func @scale(%a: memref<64xf32>, %s: f32) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %tmp = memref.alloc() : memref<64xf32>
  "gpu.launch"(%c2, %c1, %c1, %c32, %c1, %c1) <{operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>}> ({
  ^bb0(%bx: index, %by: index, %bz: index, %tx: index, %ty: index, %tz: index, %gx: index, %gy: index, %gz: index, %sx: index, %sy: index, %sz: index):
    %p = arith.muli %bx, %sx : index
    %i = arith.addi %p, %tx : index
    %v = memref.load %a[%i] : memref<64xf32>
    %w = arith.mulf %v, %s : f32
    memref.store %w, %tmp[%i] : memref<64xf32>
    "gpu.terminator"() : () -> ()
  }) : (index, index, index, index, index, index) -> ()
  memref.dealloc %tmp : memref<64xf32>
  func.return
}

// -----

// Copies between buffers of one type are device-to-device memcpys; a host-level load of a
// rank-0 device buffer is a device-to-host read into host memory; host scalars
// (memref.alloca) stay host memory. Globals get a public copy in the kernel module (device
// memory the module load initializes), and a memref.get_global a kernel uses is cloned
// into it.

// CHECK-LABEL: func.func @memory
// CHECK:         gpu.memcpy %b, %a : memref<2xf32>, memref<2xf32>{{$}}
// CHECK-NEXT:    %[[HOST:.*]] = memref.alloca() : memref<index>
// CHECK-NEXT:    gpu.memcpy %[[HOST]], %n : memref<index>, memref<index>{{$}}
// CHECK-NEXT:    %[[N:.*]] = memref.load %[[HOST]][] : memref<index>
// CHECK-NEXT:    %[[SCALAR:.*]] = memref.alloca() : memref<i32>
// CHECK-NEXT:    memref.store %k, %[[SCALAR]][] : memref<i32>
// CHECK-NOT:     memref.get_global
// CHECK:         gpu.launch_func  @kernels::@memory_kernel0 blocks in (%{{\w+}}, %{{\w+}}, %{{\w+}}) threads in (%{{\w+}}, %{{\w+}}, %{{\w+}}) args(%b : memref<2xf32>)
// CHECK:       gpu.module @kernels {
// CHECK:           %[[TABLE:.*]] = memref.get_global @table : memref<2xf32>
// CHECK:           memref.load %[[TABLE]]
// CHECK:         memref.global constant @table : memref<2xf32> = dense<[1.000000e+00, 2.000000e+00]>{{$}}
"memref.global"() <{sym_name = "table", sym_visibility = "private", type = memref<2xf32>, initial_value = dense<[1.0, 2.0]> : tensor<2xf32>, constant}> : () -> ()
func.func @memory(%a: memref<2xf32>, %b: memref<2xf32>, %n: memref<index>, %k: i32) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  "memref.copy"(%a, %b) : (memref<2xf32>, memref<2xf32>) -> ()
  %count = memref.load %n[] : memref<index>
  %scalar = memref.alloca() : memref<i32>
  memref.store %k, %scalar[] : memref<i32>
  %table = memref.get_global @table : memref<2xf32>
  "gpu.launch"(%c1, %c1, %c1, %c2, %c1, %c1) <{operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>}> ({
  ^bb0(%bx: index, %by: index, %bz: index, %tx: index, %ty: index, %tz: index, %gx: index, %gy: index, %gz: index, %sx: index, %sy: index, %sz: index):
    %v = memref.load %table[%tx] : memref<2xf32>
    memref.store %v, %b[%tx] : memref<2xf32>
    "gpu.terminator"() : () -> ()
  }) : (index, index, index, index, index, index) -> ()
  func.return %count : index
}

// -----

// Host code must not store to device memory (convert-parallel-loops-to-gpu puts such
// stores into kernels): a located error.

func.func @host_store(%a: memref<f32>) {
  %x = arith.constant 1.0 : f32
  // expected-error @+1 {{'memref.store' op stores to device memory from host code}}
  memref.store %x, %a[] : memref<f32>
  func.return
}

// -----

// A copy between different layouts has no memcpy: a located error.

func.func @strided_copy(%a: memref<4x4xf32>, %b: memref<2x2xf32>) {
  %v = memref.subview %a[0, 0] [2, 2] [1, 1] : memref<4x4xf32> to memref<2x2xf32, strided<[4, 1]>>
  // expected-error @+1 {{'memref.copy' op copies between different memref types; convert-parallel-loops-to-gpu makes such copies kernels}}
  "memref.copy"(%v, %b) : (memref<2x2xf32, strided<[4, 1]>>, memref<2x2xf32>) -> ()
  func.return
}
