// RUN: irgrad-opt %s | filecheck %s
// RUN: irgrad-opt %s | irgrad-opt | filecheck %s
// RUN: irgrad-opt --print-op-generic %s | irgrad-opt | filecheck %s
// RUN: irgrad-opt --print-op-generic %s | filecheck %s --check-prefix=GENERIC

// MLIR's index dialect syntax prints back the same, in custom and in generic form.

func.func @ops(%a: index, %b: index, %x: i32) -> (index, i1, i1, index, index, i32, index) {
  %c = index.constant -42
  %t = index.bool.constant true
  %0 = index.add %a, %b
  %1 = index.ceildivs %0, %c
  %2 = index.floordivs %1, %b {tag}
  %3 = index.cmp ult(%2, %b)
  %4 = index.casts %x : i32 to index
  %5 = index.castu %2 : index to i32
  %6 = index.sizeof
  func.return %4, %3, %t, %2, %1, %5, %6 : index, i1, i1, index, index, i32, index
}

// CHECK-LABEL: func.func @ops
// CHECK-NEXT:    %c = index.constant -42
// CHECK-NEXT:    %t = index.bool.constant true
// CHECK-NEXT:    %0 = index.add %a, %b
// CHECK-NEXT:    %1 = index.ceildivs %0, %c
// CHECK-NEXT:    %2 = index.floordivs %1, %b {tag}
// CHECK-NEXT:    %3 = index.cmp ult(%2, %b)
// CHECK-NEXT:    %4 = index.casts %x : i32 to index
// CHECK-NEXT:    %5 = index.castu %2 : index to i32
// CHECK-NEXT:    %6 = index.sizeof
// CHECK-NEXT:    func.return

// GENERIC: "index.constant"() <{value = -42 : index}> : () -> index
// GENERIC: "index.bool.constant"() <{value = true}> : () -> i1
// GENERIC: "index.cmp"(%{{.*}}, %b) <{pred = #index<cmp_predicate ult>}> : (index, index) -> i1
