;; Quantised (int8) scan kernels for Zerda's in-memory vector store.
;;
;; Rows are `strideBytes` int8 codes (a multiple of 16; the store pads with zeros), stored
;; contiguously; each row has a float32 scale. The query is given as int16 values (its int8
;; codes, widened once per query so the loop widens only the rows). Every address is a byte
;; offset. Compile with `node packages/core/scripts/build-kernels.mjs` (writes generated/dot-i8.ts).
;;
;; Integer sums cannot overflow: |code| <= 127, so a row of up to 2^17 dimensions stays below 2^31.
(module
  (import "env" "memory" (memory 1))

  ;; Integer dot product of the widened query and one row of codes. Each 8 codes are loaded and
  ;; sign-extended to i16x8 in one instruction (v128.load8x8_s), then multiplied-and-paired with
  ;; the query by i32x4.dot_i16x8_s: three instructions per 8 codes, against four when 16 codes
  ;; are loaded and their halves extended separately. Two accumulators, so the adds overlap.
  ;; `strideBytes` is a positive multiple of 16.
  (func $dot (param $q i32) (param $p i32) (param $strideBytes i32) (result i32)
    (local $end i32) (local $a0 v128) (local $a1 v128)
    (local.set $end (i32.add (local.get $p) (local.get $strideBytes)))
    (loop $codes
      (local.set $a0 (i32x4.add (local.get $a0)
        (i32x4.dot_i16x8_s (v128.load8x8_s (local.get $p)) (v128.load (local.get $q)))))
      (local.set $a1 (i32x4.add (local.get $a1)
        (i32x4.dot_i16x8_s (v128.load8x8_s offset=8 (local.get $p)) (v128.load offset=16 (local.get $q)))))
      (local.set $p (i32.add (local.get $p) (i32.const 16)))
      (local.set $q (i32.add (local.get $q) (i32.const 32)))
      (br_if $codes (i32.lt_u (local.get $p) (local.get $end))))
    (local.set $a0 (i32x4.add (local.get $a0) (local.get $a1)))
    (i32.add
      (i32.add (i32x4.extract_lane 0 (local.get $a0)) (i32x4.extract_lane 1 (local.get $a0)))
      (i32.add (i32x4.extract_lane 2 (local.get $a0)) (i32x4.extract_lane 3 (local.get $a0)))))

  ;; out[i] = (query . codes[i]) * scales[i] for the `count` rows starting at `base`. The body of
  ;; $dot is written out here rather than called, which is faster when rows sit in cache.
  (func (export "dot_i8_all")
    (param $q i32) (param $base i32) (param $count i32) (param $strideBytes i32) (param $scales i32)
    (param $out i32)
    (local $end i32) (local $p i32) (local $qp i32) (local $rowEnd i32)
    (local $a0 v128) (local $a1 v128)
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $count) (i32.const 2))))
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (local.set $p (local.get $base))
        (local.set $qp (local.get $q))
        (local.set $rowEnd (i32.add (local.get $p) (local.get $strideBytes)))
        (local.set $a0 (v128.const i64x2 0 0))
        (local.set $a1 (v128.const i64x2 0 0))
        (loop $codes
          (local.set $a0 (i32x4.add (local.get $a0)
            (i32x4.dot_i16x8_s (v128.load8x8_s (local.get $p)) (v128.load (local.get $qp)))))
          (local.set $a1 (i32x4.add (local.get $a1)
            (i32x4.dot_i16x8_s (v128.load8x8_s offset=8 (local.get $p)) (v128.load offset=16 (local.get $qp)))))
          (local.set $p (i32.add (local.get $p) (i32.const 16)))
          (local.set $qp (i32.add (local.get $qp) (i32.const 32)))
          (br_if $codes (i32.lt_u (local.get $p) (local.get $rowEnd))))
        (local.set $a0 (i32x4.add (local.get $a0) (local.get $a1)))
        (f32.store (local.get $out)
          (f32.mul
            (f32.convert_i32_s
              (i32.add
                (i32.add (i32x4.extract_lane 0 (local.get $a0)) (i32x4.extract_lane 1 (local.get $a0)))
                (i32.add (i32x4.extract_lane 2 (local.get $a0)) (i32x4.extract_lane 3 (local.get $a0)))))
            (f32.load (local.get $scales))))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $scales (i32.add (local.get $scales) (i32.const 4)))
        (local.set $base (i32.add (local.get $base) (local.get $strideBytes)))
        (br $rows))))

  ;; Loads one word per 64-byte line of the first `rowBytes` bytes of rows list[0 .. count), the
  ;; rows `strideBytes` apart from `base`, and returns their xor: a software prefetch for the
  ;; re-scoring kernels. Their rows are scattered, and one row's dot product waits on its lines a
  ;; few misses at a time; a group's loads, independent of each other, have all its misses in
  ;; flight at once (re-scoring 100 scattered rows of 1,536 bytes: 40 to 51 us against 60 to 74).
  ;; The caller stores the result where it writes a score next, so the loads are kept. (The same function is in dot-f32.wat.)
  (func $touch (param $base i32) (param $list i32) (param $count i32) (param $strideBytes i32)
    (param $rowBytes i32) (result i32)
    (local $end i32) (local $p i32) (local $rowEnd i32) (local $acc i32)
    (local.set $end (i32.add (local.get $list) (i32.shl (local.get $count) (i32.const 2))))
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $list) (local.get $end)))
        (local.set $p (i32.add (local.get $base) (i32.mul (i32.load (local.get $list)) (local.get $strideBytes))))
        (local.set $rowEnd (i32.add (local.get $p) (local.get $rowBytes)))
        (loop $lines
          (local.set $acc (i32.xor (local.get $acc) (i32.load (local.get $p))))
          (local.set $p (i32.add (local.get $p) (i32.const 64)))
          (br_if $lines (i32.lt_u (local.get $p) (local.get $rowEnd))))
        (local.set $list (i32.add (local.get $list) (i32.const 4)))
        (br $rows)))
    (local.get $acc))

  ;; out[j] = (query . codes[list[j]]) * scales[list[j]] for a float32 query (at $q, `stride`
  ;; values, a multiple of 4, zero-padded): re-scores a shortlist when no float32 rows are kept,
  ;; so only the rows' quantisation error remains, not the query's. Four codes at a time, widened
  ;; to float32; only the first `stride` codes of a row are read (the rest are zero padding). Rows
  ;; go in groups of 16, each touched first (see $touch).
  (func (export "dot_f32_i8_list")
    (param $q i32) (param $base i32) (param $list i32) (param $count i32) (param $stride i32)
    (param $strideBytes i32) (param $scales i32) (param $out i32)
    (local $end i32) (local $groupEnd i32) (local $row i32) (local $p i32) (local $qp i32) (local $rowEnd i32)
    (local $a0 v128)
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $count) (i32.const 2))))
    (block $done
      (loop $groups
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (local.set $groupEnd (select (local.get $end) (i32.add (local.get $out) (i32.const 64))
          (i32.lt_u (i32.sub (local.get $end) (local.get $out)) (i32.const 64))))
        (i32.store (local.get $out)
          (call $touch (local.get $base) (local.get $list)
            (i32.shr_u (i32.sub (local.get $groupEnd) (local.get $out)) (i32.const 2))
            (local.get $strideBytes) (local.get $stride)))
        (loop $rows
          (local.set $row (i32.load (local.get $list)))
          (local.set $p (i32.add (local.get $base) (i32.mul (local.get $row) (local.get $strideBytes))))
          (local.set $rowEnd (i32.add (local.get $p) (local.get $stride)))
          (local.set $qp (local.get $q))
          (local.set $a0 (v128.const i64x2 0 0))
          (loop $codes
            (local.set $a0 (f32x4.add (local.get $a0)
              (f32x4.mul
                (f32x4.convert_i32x4_s
                  (i32x4.extend_low_i16x8_s (i16x8.extend_low_i8x16_s (v128.load32_zero (local.get $p)))))
                (v128.load (local.get $qp)))))
            (local.set $p (i32.add (local.get $p) (i32.const 4)))
            (local.set $qp (i32.add (local.get $qp) (i32.const 16)))
            (br_if $codes (i32.lt_u (local.get $p) (local.get $rowEnd))))
          (f32.store (local.get $out)
            (f32.mul
              (f32.add
                (f32.add (f32x4.extract_lane 0 (local.get $a0)) (f32x4.extract_lane 1 (local.get $a0)))
                (f32.add (f32x4.extract_lane 2 (local.get $a0)) (f32x4.extract_lane 3 (local.get $a0))))
              (f32.load (i32.add (local.get $scales) (i32.shl (local.get $row) (i32.const 2))))))
          (local.set $out (i32.add (local.get $out) (i32.const 4)))
          (local.set $list (i32.add (local.get $list) (i32.const 4)))
          (br_if $rows (i32.lt_u (local.get $out) (local.get $groupEnd))))
        (br $groups))))

  ;; out[j] = (query . codes[list[j]]) * scales[list[j]] for the `count` row numbers at `list`.
  (func (export "dot_i8_list")
    (param $q i32) (param $base i32) (param $list i32) (param $count i32) (param $strideBytes i32)
    (param $scales i32) (param $out i32)
    (local $end i32) (local $row i32)
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $count) (i32.const 2))))
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (local.set $row (i32.load (local.get $list)))
        (f32.store (local.get $out)
          (f32.mul
            (f32.convert_i32_s
              (call $dot
                (local.get $q)
                (i32.add (local.get $base) (i32.mul (local.get $row) (local.get $strideBytes)))
                (local.get $strideBytes)))
            (f32.load (i32.add (local.get $scales) (i32.shl (local.get $row) (i32.const 2))))))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $list (i32.add (local.get $list) (i32.const 4)))
        (br $rows))))
)
