// REQUIRES: ptxas
// RUN: irgrad-opt -p irgrad-gpu -t ptx %s | filecheck %s
// RUN: irgrad-opt -p irgrad-gpu -t ptx %s -o %t.sm80.ptx
// RUN: ptxas -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin
// RUN: irgrad-opt -p irgrad-gpu -t ptx --gpu-arch sm_90 %s -o %t.sm90.ptx
// RUN: ptxas -arch=sm_90 %t.sm90.ptx -o %t.sm90.cubin
// RUN: filecheck %s --check-prefix=SM90 < %t.sm90.ptx
// RUN: irgrad-opt -p irgrad-gpu -t 'ptx{arch=sm_86}' %s | filecheck %s --check-prefix=SM86

// `irgrad-opt -p irgrad-gpu -t ptx` prints the PTX of a program's kernels (sm_80 unless
// --gpu-arch or the target's `arch` option says otherwise), which ptxas assembles. Here W4's
// fused elementwise map (tanh inline: fused multiply-adds and one approximate division, no
// IEEE div.rn sequence; one kernel reading and writing global memory) and a
// softmax over rows (exp from libdevice) followed by a sum to a scalar (a shared-memory
// tree: bar.sync between halving steps).

// CHECK:      .version 7.0
// CHECK:      .target sm_80
// CHECK:      .address_size 64
// CHECK:      .visible .entry w4_kernel0(
// CHECK-NEXT:   .param .u64 .ptr .global .align 1 w4_kernel0_param_0,
// CHECK:        mov.u32 %r{{[0-9]+}}, %ctaid.x;
// CHECK:        ld.global.{{[bf]}}32
// CHECK-NOT:    div.rn.f32
// CHECK:        fma.rn.f32
// CHECK-NOT:    div.rn.f32
// CHECK:        div.approx.f32
// CHECK-NOT:    div.rn.f32
// CHECK:        st.global.{{[bf]}}32
// CHECK:      .visible .entry softmax_sum_kernel
// CHECK:        .shared .align 4 .b8 __irgrad_shared_{{[0-9]+}}[1024];
// CHECK:        ex2.approx
// CHECK:        bar.sync 0;
// CHECK:        ld.shared.{{[bf]}}32
// SM90:       .target sm_90
// SM86:       .target sm_86

func.func @w4(%x: tensor<4096xf32>) -> tensor<4096xf32> {
  %half = nn.constant dense<0.5> : tensor<4096xf32>
  %t = nn.tanh %x : tensor<4096xf32>
  %a = nn.mul %t, %half : tensor<4096xf32>
  %s = nn.mul %x, %x : tensor<4096xf32>
  %y = nn.add %a, %s : tensor<4096xf32>
  func.return %y : tensor<4096xf32>
}

func.func @softmax_sum(%x: tensor<64x100xf32>) -> tensor<f32> {
  %m = nn.reduce_max %x axes = [1] : tensor<64x100xf32> -> tensor<64xf32>
  %mb = nn.broadcast_in_dim %m dims = [0] : tensor<64xf32> -> tensor<64x100xf32>
  %d = nn.sub %x, %mb : tensor<64x100xf32>
  %e = nn.exp %d : tensor<64x100xf32>
  %s = nn.reduce_sum %e axes = [0, 1] : tensor<64x100xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}
