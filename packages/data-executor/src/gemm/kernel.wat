;; The f32 GEMM kernel of @kb/data-executor: C (m x n) = op(A) (m x k) @ op(B) (k x n) [+ C].
;;
;; Hand-written WebAssembly text, assembled by generate-kernel.mjs (wabt) into kernel-wasm.ts;
;; kernel-wasm.test.ts checks that the committed bytes are this file assembled.
;;
;; Blocked the GotoBLAS way: for each NC-column block of B and each KC-deep slice of k, the
;; KC x NC block of B is packed into 16-column panels (stays in L2/L3), then for each MC-row block
;; of A the MC x KC block is packed into 2-row panels (stays in L2), and the micro-kernel computes
;; 2 x 16 tiles of C from one A panel and one B panel (the B panel, KC x 16 floats, stays in L1).
;;
;; The micro-kernel keeps the 2 x 16 tile in 8 f32x4 accumulators. Wasm SIMD is 128 bits wide and
;; Node 20 has no fused multiply-add (relaxed SIMD is behind a flag), so every step is a mul then an
;; add; V8 on x64 gives wasm 15 xmm registers, and tiles with more than 8 accumulators (4x12,
;; 6x8, 8x8) spilled and ran at about half the speed (packages/data-executor/README.md, "GEMM speed").
;;
;; Summation order, hence every rounding, is fixed by KC alone: C(i, j) is the f32 sum over KC-deep
;; slices, each slice summed in k order from 0. Wasm float arithmetic is IEEE binary32 without
;; contraction, so results are bit-identical on every machine.
;;
;; Addresses are byte offsets in the imported memory; a call's workspace (WORKSPACE_BYTES) holds the
;; edge-tile scratch and both packed blocks, so threads sharing the memory each need their own.
(module
  (import "env" "memory" (memory 1 65536 shared))

  ;; Micro-tile rows and columns, and the block sizes (measured best on Zen 5; any L2 of 512 KiB and
  ;; up gives the same within noise).
  (global (export "MR") i32 (i32.const 2))
  (global (export "NR") i32 (i32.const 16))
  (global $KC (export "KC") i32 (i32.const 256))
  (global $MC (export "MC") i32 (i32.const 128))
  (global $NC (export "NC") i32 (i32.const 2048))
  ;; 256 bytes of edge-tile scratch, the packed A block (MC x KC floats), the packed B block (KC x NC).
  (global $PACK_A_OFFSET i32 (i32.const 256))
  (global $PACK_B_OFFSET i32 (i32.const 131328))
  (global (export "WORKSPACE_BYTES") i32 (i32.const 2228480))

  ;; One 2 x 16 tile: C[0..2, 0..16] (=|+=) A panel (kc x 2) @ B panel (kc x 16).
  ;; $a: kc pairs [A(0, p), A(1, p)]; $b: kc rows of 16 floats; $c: the tile's first element;
  ;; $ldc: C's row stride in bytes; $store: overwrite C (1) or add to it (0). kc >= 1.
  (func $micro_kernel (param $kc i32) (param $a i32) (param $b i32) (param $c i32) (param $ldc i32)
    (param $store i32)
    (local $c00 v128) (local $c01 v128) (local $c02 v128) (local $c03 v128)
    (local $c10 v128) (local $c11 v128) (local $c12 v128) (local $c13 v128)
    (local $b0 v128) (local $b1 v128) (local $b2 v128) (local $b3 v128)
    (local $x v128) (local $end i32)
    (local.set $end (i32.add (local.get $a) (i32.shl (local.get $kc) (i32.const 3))))
    ;; Tested at the top, not with a br_if at the bottom: V8 (Node 20) ran the bottom-tested loop
    ;; about 20% slower (45 instead of 55 GFLOP/s).
    (block $done
      (loop $step
        (br_if $done (i32.ge_u (local.get $a) (local.get $end)))
        (local.set $b0 (v128.load offset=0 (local.get $b)))
        (local.set $b1 (v128.load offset=16 (local.get $b)))
        (local.set $b2 (v128.load offset=32 (local.get $b)))
        (local.set $b3 (v128.load offset=48 (local.get $b)))
        (local.set $x (v128.load32_splat offset=0 (local.get $a)))
        (local.set $c00 (f32x4.add (local.get $c00) (f32x4.mul (local.get $x) (local.get $b0))))
        (local.set $c01 (f32x4.add (local.get $c01) (f32x4.mul (local.get $x) (local.get $b1))))
        (local.set $c02 (f32x4.add (local.get $c02) (f32x4.mul (local.get $x) (local.get $b2))))
        (local.set $c03 (f32x4.add (local.get $c03) (f32x4.mul (local.get $x) (local.get $b3))))
        (local.set $x (v128.load32_splat offset=4 (local.get $a)))
        (local.set $c10 (f32x4.add (local.get $c10) (f32x4.mul (local.get $x) (local.get $b0))))
        (local.set $c11 (f32x4.add (local.get $c11) (f32x4.mul (local.get $x) (local.get $b1))))
        (local.set $c12 (f32x4.add (local.get $c12) (f32x4.mul (local.get $x) (local.get $b2))))
        (local.set $c13 (f32x4.add (local.get $c13) (f32x4.mul (local.get $x) (local.get $b3))))
        (local.set $a (i32.add (local.get $a) (i32.const 8)))
        (local.set $b (i32.add (local.get $b) (i32.const 64)))
        (br $step)))
    (if (local.get $store)
      (then
        (v128.store offset=0 (local.get $c) (local.get $c00))
        (v128.store offset=16 (local.get $c) (local.get $c01))
        (v128.store offset=32 (local.get $c) (local.get $c02))
        (v128.store offset=48 (local.get $c) (local.get $c03))
        (local.set $c (i32.add (local.get $c) (local.get $ldc)))
        (v128.store offset=0 (local.get $c) (local.get $c10))
        (v128.store offset=16 (local.get $c) (local.get $c11))
        (v128.store offset=32 (local.get $c) (local.get $c12))
        (v128.store offset=48 (local.get $c) (local.get $c13)))
      (else
        (v128.store offset=0 (local.get $c)
          (f32x4.add (v128.load offset=0 (local.get $c)) (local.get $c00)))
        (v128.store offset=16 (local.get $c)
          (f32x4.add (v128.load offset=16 (local.get $c)) (local.get $c01)))
        (v128.store offset=32 (local.get $c)
          (f32x4.add (v128.load offset=32 (local.get $c)) (local.get $c02)))
        (v128.store offset=48 (local.get $c)
          (f32x4.add (v128.load offset=48 (local.get $c)) (local.get $c03)))
        (local.set $c (i32.add (local.get $c) (local.get $ldc)))
        (v128.store offset=0 (local.get $c)
          (f32x4.add (v128.load offset=0 (local.get $c)) (local.get $c10)))
        (v128.store offset=16 (local.get $c)
          (f32x4.add (v128.load offset=16 (local.get $c)) (local.get $c11)))
        (v128.store offset=32 (local.get $c)
          (f32x4.add (v128.load offset=32 (local.get $c)) (local.get $c12)))
        (v128.store offset=48 (local.get $c)
          (f32x4.add (v128.load offset=48 (local.get $c)) (local.get $c13))))))

  ;; Packs the mc x kc block of A whose element (i, p) is at $src + i*$rs + p*$cs (bytes) into
  ;; 2-row panels: per panel, kc pairs [A(i, p), A(i + 1, p)]; the missing row of an odd mc is 0.
  (func $pack_a (param $mc i32) (param $kc i32) (param $src i32) (param $rs i32) (param $cs i32)
    (param $dst i32)
    (local $i i32) (local $p i32) (local $r0 i32) (local $r1 i32)
    (block $done
      (loop $panel
        (br_if $done (i32.ge_u (local.get $i) (local.get $mc)))
        (local.set $r0 (i32.add (local.get $src) (i32.mul (local.get $i) (local.get $rs))))
        (local.set $r1 (i32.add (local.get $r0) (local.get $rs)))
        (local.set $p (i32.const 0))
        (if (i32.lt_u (i32.add (local.get $i) (i32.const 1)) (local.get $mc))
          (then
            (loop $pair
              (f32.store offset=0 (local.get $dst) (f32.load (local.get $r0)))
              (f32.store offset=4 (local.get $dst) (f32.load (local.get $r1)))
              (local.set $r0 (i32.add (local.get $r0) (local.get $cs)))
              (local.set $r1 (i32.add (local.get $r1) (local.get $cs)))
              (local.set $dst (i32.add (local.get $dst) (i32.const 8)))
              (br_if $pair
                (i32.lt_u (local.tee $p (i32.add (local.get $p) (i32.const 1))) (local.get $kc)))))
          (else
            (loop $single
              (f32.store offset=0 (local.get $dst) (f32.load (local.get $r0)))
              (f32.store offset=4 (local.get $dst) (f32.const 0))
              (local.set $r0 (i32.add (local.get $r0) (local.get $cs)))
              (local.set $dst (i32.add (local.get $dst) (i32.const 8)))
              (br_if $single
                (i32.lt_u (local.tee $p (i32.add (local.get $p) (i32.const 1))) (local.get $kc))))))
        (local.set $i (i32.add (local.get $i) (i32.const 2)))
        (br $panel))))

  ;; Packs the kc x nc block of B whose element (p, j) is at $src + p*$rs + j*$cs (bytes) into
  ;; 16-column panels: per panel, kc rows of 16 floats; the missing columns of the last panel are 0.
  ;; Full panels of a row-major B (cs = 4) are copied four vectors a row.
  (func $pack_b (param $nc i32) (param $kc i32) (param $src i32) (param $rs i32) (param $cs i32)
    (param $dst i32)
    (local $j i32) (local $p i32) (local $width i32) (local $row i32) (local $from i32) (local $x i32)
    (block $done
      (loop $panel
        (br_if $done (i32.ge_u (local.get $j) (local.get $nc)))
        (local.set $width
          (select (i32.const 16) (i32.sub (local.get $nc) (local.get $j))
            (i32.le_u (i32.add (local.get $j) (i32.const 16)) (local.get $nc))))
        (local.set $row (i32.add (local.get $src) (i32.mul (local.get $j) (local.get $cs))))
        (local.set $p (i32.const 0))
        (if (i32.and (i32.eq (local.get $cs) (i32.const 4)) (i32.eq (local.get $width) (i32.const 16)))
          (then
            (loop $vectors
              (v128.store offset=0 (local.get $dst) (v128.load offset=0 (local.get $row)))
              (v128.store offset=16 (local.get $dst) (v128.load offset=16 (local.get $row)))
              (v128.store offset=32 (local.get $dst) (v128.load offset=32 (local.get $row)))
              (v128.store offset=48 (local.get $dst) (v128.load offset=48 (local.get $row)))
              (local.set $row (i32.add (local.get $row) (local.get $rs)))
              (local.set $dst (i32.add (local.get $dst) (i32.const 64)))
              (br_if $vectors
                (i32.lt_u (local.tee $p (i32.add (local.get $p) (i32.const 1))) (local.get $kc)))))
          (else
            (loop $rows
              (local.set $from (local.get $row))
              (local.set $x (i32.const 0))
              (loop $columns
                (f32.store (local.get $dst)
                  (if (result f32) (i32.lt_u (local.get $x) (local.get $width))
                    (then (f32.load (local.get $from)))
                    (else (f32.const 0))))
                (local.set $from (i32.add (local.get $from) (local.get $cs)))
                (local.set $dst (i32.add (local.get $dst) (i32.const 4)))
                (br_if $columns
                  (i32.lt_u (local.tee $x (i32.add (local.get $x) (i32.const 1))) (i32.const 16))))
              (local.set $row (i32.add (local.get $row) (local.get $rs)))
              (br_if $rows
                (i32.lt_u (local.tee $p (i32.add (local.get $p) (i32.const 1))) (local.get $kc))))))
        (local.set $j (i32.add (local.get $j) (i32.const 16)))
        (br $panel))))

  ;; C[0..mc, 0..nc] (=|+=) packed A block @ packed B block, tile by tile: 16-column panels outside
  ;; (the B panel stays in L1), 2-row panels inside. Edge tiles are computed whole into $scratch
  ;; (the packed zeros make the extra rows and columns 0) and only their valid part is merged.
  (func $macro_kernel (param $mc i32) (param $nc i32) (param $kc i32) (param $packA i32)
    (param $packB i32) (param $c i32) (param $ldc i32) (param $store i32) (param $scratch i32)
    (local $i0 i32) (local $j0 i32) (local $rows i32) (local $cols i32) (local $tile i32)
    (local $panelA i32) (local $panelB i32) (local $i i32) (local $j i32) (local $to i32) (local $from i32)
    (block $done_j
      (loop $next_j
        (br_if $done_j (i32.ge_u (local.get $j0) (local.get $nc)))
        (local.set $cols
          (select (i32.const 16) (i32.sub (local.get $nc) (local.get $j0))
            (i32.le_u (i32.add (local.get $j0) (i32.const 16)) (local.get $nc))))
        (local.set $panelB
          (i32.add (local.get $packB) (i32.shl (i32.mul (local.get $j0) (local.get $kc)) (i32.const 2))))
        (local.set $i0 (i32.const 0))
        (block $done_i
          (loop $next_i
            (br_if $done_i (i32.ge_u (local.get $i0) (local.get $mc)))
            (local.set $rows
              (select (i32.const 2) (i32.sub (local.get $mc) (local.get $i0))
                (i32.le_u (i32.add (local.get $i0) (i32.const 2)) (local.get $mc))))
            (local.set $panelA
              (i32.add (local.get $packA) (i32.shl (i32.mul (local.get $i0) (local.get $kc)) (i32.const 2))))
            (local.set $tile
              (i32.add (local.get $c)
                (i32.add (i32.mul (local.get $i0) (local.get $ldc)) (i32.shl (local.get $j0) (i32.const 2)))))
            (if (i32.and (i32.eq (local.get $rows) (i32.const 2)) (i32.eq (local.get $cols) (i32.const 16)))
              (then
                (call $micro_kernel (local.get $kc) (local.get $panelA) (local.get $panelB) (local.get $tile)
                  (local.get $ldc) (local.get $store)))
              (else
                (call $micro_kernel (local.get $kc) (local.get $panelA) (local.get $panelB)
                  (local.get $scratch) (i32.const 64) (i32.const 1))
                (local.set $i (i32.const 0))
                (loop $merge_row
                  (local.set $j (i32.const 0))
                  (loop $merge_column
                    (local.set $to
                      (i32.add (local.get $tile)
                        (i32.add (i32.mul (local.get $i) (local.get $ldc)) (i32.shl (local.get $j) (i32.const 2)))))
                    (local.set $from
                      (i32.add (local.get $scratch)
                        (i32.shl (i32.add (i32.shl (local.get $i) (i32.const 4)) (local.get $j)) (i32.const 2))))
                    (f32.store (local.get $to)
                      (if (result f32) (local.get $store)
                        (then (f32.load (local.get $from)))
                        (else (f32.add (f32.load (local.get $to)) (f32.load (local.get $from))))))
                    (br_if $merge_column
                      (i32.lt_u (local.tee $j (i32.add (local.get $j) (i32.const 1))) (local.get $cols))))
                  (br_if $merge_row
                    (i32.lt_u (local.tee $i (i32.add (local.get $i) (i32.const 1))) (local.get $rows))))))
            (local.set $i0 (i32.add (local.get $i0) (i32.const 2)))
            (br $next_i)))
        (local.set $j0 (i32.add (local.get $j0) (i32.const 16)))
        (br $next_j))))

  ;; The whole GEMM. Element (i, p) of op(A) is at $a + 4*(i*lda + p), or 4*(p*lda + i) when
  ;; transposed; likewise B and C. $flags: 1 = transA, 2 = transB, 4 = accumulate into C.
  ;; $work: this call's workspace (WORKSPACE_BYTES). The caller checks the arguments.
  (func $gemm (export "gemm") (param $m i32) (param $n i32) (param $k i32) (param $a i32)
    (param $lda i32) (param $b i32) (param $ldb i32) (param $c i32) (param $ldc i32) (param $flags i32)
    (param $work i32)
    (local $rsA i32) (local $csA i32) (local $rsB i32) (local $csB i32) (local $store i32)
    (local $jc i32) (local $pc i32) (local $ic i32) (local $nc i32) (local $kc i32) (local $mc i32)
    (local $i i32)
    (if (i32.or (i32.eqz (local.get $m)) (i32.eqz (local.get $n))) (then (return)))
    (local.set $lda (i32.shl (local.get $lda) (i32.const 2)))
    (local.set $ldb (i32.shl (local.get $ldb) (i32.const 2)))
    (local.set $ldc (i32.shl (local.get $ldc) (i32.const 2)))
    (if (i32.eqz (local.get $k))
      (then
        ;; An empty sum: C = 0, or C unchanged when accumulating.
        (if (i32.eqz (i32.and (local.get $flags) (i32.const 4)))
          (then
            (loop $zero_row
              (memory.fill (i32.add (local.get $c) (i32.mul (local.get $i) (local.get $ldc)))
                (i32.const 0) (i32.shl (local.get $n) (i32.const 2)))
              (br_if $zero_row
                (i32.lt_u (local.tee $i (i32.add (local.get $i) (i32.const 1))) (local.get $m))))))
        (return)))
    (if (i32.and (local.get $flags) (i32.const 1))
      (then (local.set $rsA (i32.const 4)) (local.set $csA (local.get $lda)))
      (else (local.set $rsA (local.get $lda)) (local.set $csA (i32.const 4))))
    (if (i32.and (local.get $flags) (i32.const 2))
      (then (local.set $rsB (i32.const 4)) (local.set $csB (local.get $ldb)))
      (else (local.set $rsB (local.get $ldb)) (local.set $csB (i32.const 4))))
    (block $done_jc
      (loop $next_jc
        (br_if $done_jc (i32.ge_u (local.get $jc) (local.get $n)))
        (local.set $nc
          (select (global.get $NC) (i32.sub (local.get $n) (local.get $jc))
            (i32.le_u (i32.add (local.get $jc) (global.get $NC)) (local.get $n))))
        (local.set $pc (i32.const 0))
        (block $done_pc
          (loop $next_pc
            (br_if $done_pc (i32.ge_u (local.get $pc) (local.get $k)))
            (local.set $kc
              (select (global.get $KC) (i32.sub (local.get $k) (local.get $pc))
                (i32.le_u (i32.add (local.get $pc) (global.get $KC)) (local.get $k))))
            ;; The first k slice overwrites C unless accumulating; later slices add to it.
            (local.set $store
              (i32.and (i32.eqz (local.get $pc)) (i32.eqz (i32.and (local.get $flags) (i32.const 4)))))
            (call $pack_b (local.get $nc) (local.get $kc)
              (i32.add (local.get $b)
                (i32.add (i32.mul (local.get $pc) (local.get $rsB)) (i32.mul (local.get $jc) (local.get $csB))))
              (local.get $rsB) (local.get $csB) (i32.add (local.get $work) (global.get $PACK_B_OFFSET)))
            (local.set $ic (i32.const 0))
            (block $done_ic
              (loop $next_ic
                (br_if $done_ic (i32.ge_u (local.get $ic) (local.get $m)))
                (local.set $mc
                  (select (global.get $MC) (i32.sub (local.get $m) (local.get $ic))
                    (i32.le_u (i32.add (local.get $ic) (global.get $MC)) (local.get $m))))
                (call $pack_a (local.get $mc) (local.get $kc)
                  (i32.add (local.get $a)
                    (i32.add (i32.mul (local.get $ic) (local.get $rsA)) (i32.mul (local.get $pc) (local.get $csA))))
                  (local.get $rsA) (local.get $csA) (i32.add (local.get $work) (global.get $PACK_A_OFFSET)))
                (call $macro_kernel (local.get $mc) (local.get $nc) (local.get $kc)
                  (i32.add (local.get $work) (global.get $PACK_A_OFFSET))
                  (i32.add (local.get $work) (global.get $PACK_B_OFFSET))
                  (i32.add (local.get $c)
                    (i32.add (i32.mul (local.get $ic) (local.get $ldc)) (i32.shl (local.get $jc) (i32.const 2))))
                  (local.get $ldc) (local.get $store) (local.get $work))
                (local.set $ic (i32.add (local.get $ic) (global.get $MC)))
                (br $next_ic)))
            (local.set $pc (i32.add (local.get $pc) (global.get $KC)))
            (br $next_pc)))
        (local.set $jc (i32.add (local.get $jc) (global.get $NC)))
        (br $next_jc))))

  ;; Runs $count GEMMs described in a table of 12-int (48-byte) records at $table: m, n, k, a, lda,
  ;; b, ldb, c, ldc, flags and two unused ints; all share the workspace $work.
  (func (export "run_tasks") (param $table i32) (param $count i32) (param $work i32)
    (local $end i32)
    (local.set $end (i32.add (local.get $table) (i32.mul (local.get $count) (i32.const 48))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $table) (local.get $end)))
        (call $gemm
          (i32.load offset=0 (local.get $table)) (i32.load offset=4 (local.get $table))
          (i32.load offset=8 (local.get $table)) (i32.load offset=12 (local.get $table))
          (i32.load offset=16 (local.get $table)) (i32.load offset=20 (local.get $table))
          (i32.load offset=24 (local.get $table)) (i32.load offset=28 (local.get $table))
          (i32.load offset=32 (local.get $table)) (i32.load offset=36 (local.get $table))
          (local.get $work))
        (local.set $table (i32.add (local.get $table) (i32.const 48)))
        (br $next)))))
