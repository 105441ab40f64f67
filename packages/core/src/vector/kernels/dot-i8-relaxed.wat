;; The int8 full scan with relaxed SIMD's 8-bit dot product, for runtimes that have it (V8 from
;; 11.4: Chrome 114 and Node 21 onwards); `kernels.ts` uses it in place of dot-i8.wat's `dot_i8_all`
;; (same arguments) only after a probe of its results.
;;
;; i32x4.relaxed_dot_i8x16_i7x16_add_s multiplies 16 signed codes by 16 values and adds the
;; products in fours to an i32x4, in one instruction where the SIMD128 kernel (dot-i8.wat) needs
;; six for 16 codes. Its result is defined only when the second operand's values lie in [0, 127],
;; so the query block holds, after the 7-bit codes (in [-63, 63]) widened to int16 that the SIMD128
;; kernel reads, the same codes plus 64 as unsigned bytes, and each row's sum of codes (int32)
;; takes the offset back off: query . row = (query + 64) . row - 64 sum.
;; The result is the same integer as the SIMD128 kernel's over the same 7-bit codes, so a store
;; ranks alike on every runtime. Codes are in [-127, 127], so no pair of products saturates the
;; 16-bit sums of x86's pmaddubsw (2 * 127 * 127 < 2^15).
(module
  (import "env" "memory" (memory 1))

  ;; out[i] = (query . codes[i]) * scales[i] for the `count` rows starting at `base`; the query's
  ;; offset codes are at $q + 2 strideBytes, the rows' code sums at $sums. Two accumulators
  ;; over 32 codes an iteration, so the dot products overlap; `strideBytes` is a multiple of 16,
  ;; so a row with an odd number of 16-code blocks ends with one block alone.
  (func (export "dot_i8_all")
    (param $q i32) (param $base i32) (param $count i32) (param $strideBytes i32) (param $scales i32)
    (param $out i32) (param $sums i32)
    (local $end i32) (local $p i32) (local $qp i32) (local $rowEnd i32) (local $pairsEnd i32)
    (local $a0 v128) (local $a1 v128)
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $count) (i32.const 2))))
    (local.set $q (i32.add (local.get $q) (i32.shl (local.get $strideBytes) (i32.const 1))))
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (local.set $p (local.get $base))
        (local.set $qp (local.get $q))
        (local.set $rowEnd (i32.add (local.get $p) (local.get $strideBytes)))
        (local.set $pairsEnd (i32.add (local.get $p) (i32.and (local.get $strideBytes) (i32.const -32))))
        (local.set $a0 (v128.const i64x2 0 0))
        (local.set $a1 (v128.const i64x2 0 0))
        (block $pairsDone
          (loop $pairs
            (br_if $pairsDone (i32.ge_u (local.get $p) (local.get $pairsEnd)))
            (local.set $a0 (i32x4.relaxed_dot_i8x16_i7x16_add_s
              (v128.load (local.get $p)) (v128.load (local.get $qp)) (local.get $a0)))
            (local.set $a1 (i32x4.relaxed_dot_i8x16_i7x16_add_s
              (v128.load offset=16 (local.get $p)) (v128.load offset=16 (local.get $qp)) (local.get $a1)))
            (local.set $p (i32.add (local.get $p) (i32.const 32)))
            (local.set $qp (i32.add (local.get $qp) (i32.const 32)))
            (br $pairs)))
        (if (i32.lt_u (local.get $p) (local.get $rowEnd))
          (then
            (local.set $a0 (i32x4.relaxed_dot_i8x16_i7x16_add_s
              (v128.load (local.get $p)) (v128.load (local.get $qp)) (local.get $a0)))))
        (local.set $a0 (i32x4.add (local.get $a0) (local.get $a1)))
        (f32.store (local.get $out)
          (f32.mul
            (f32.convert_i32_s
              (i32.sub
                (i32.add
                  (i32.add (i32x4.extract_lane 0 (local.get $a0)) (i32x4.extract_lane 1 (local.get $a0)))
                  (i32.add (i32x4.extract_lane 2 (local.get $a0)) (i32x4.extract_lane 3 (local.get $a0))))
                (i32.shl (i32.load (local.get $sums)) (i32.const 6))))
            (f32.load (local.get $scales))))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $scales (i32.add (local.get $scales) (i32.const 4)))
        (local.set $sums (i32.add (local.get $sums) (i32.const 4)))
        (local.set $base (i32.add (local.get $base) (local.get $strideBytes)))
        (br $rows))))

  ;; out[i] = the sum of the codes of row i, for the `count` rows starting at `base`: what
  ;; dot_i8_all takes back off, computed once per row (on write, and for every row of a
  ;; store opened from a snapshot). Pairs of codes are added to i16 lanes and widened to i32
  ;; every 16 codes, so no lane overflows whatever the row's length.
  (func (export "code_sums")
    (param $base i32) (param $count i32) (param $strideBytes i32) (param $out i32)
    (local $end i32) (local $p i32) (local $rowEnd i32) (local $a v128)
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $count) (i32.const 2))))
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (local.set $p (local.get $base))
        (local.set $rowEnd (i32.add (local.get $p) (local.get $strideBytes)))
        (local.set $a (v128.const i64x2 0 0))
        (loop $codes
          (local.set $a (i32x4.add (local.get $a)
            (i32x4.extadd_pairwise_i16x8_s (i16x8.extadd_pairwise_i8x16_s (v128.load (local.get $p))))))
          (local.set $p (i32.add (local.get $p) (i32.const 16)))
          (br_if $codes (i32.lt_u (local.get $p) (local.get $rowEnd))))
        (i32.store (local.get $out)
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $a)) (i32x4.extract_lane 1 (local.get $a)))
            (i32.add (i32x4.extract_lane 2 (local.get $a)) (i32x4.extract_lane 3 (local.get $a)))))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $base (i32.add (local.get $base) (local.get $strideBytes)))
        (br $rows))))
)
