;; Exact float32 scan kernels for Zerda's in-memory vector store.
;;
;; Vectors are rows of `stride` float32 values (stride a multiple of 4; the store pads each row
;; with zeros), stored contiguously in the imported memory. Every address is a byte offset. The
;; module also holds the skip loop of top-k selection over the scans' float32 scores.
;; Compile with `node packages/core/scripts/build-kernels.mjs`, which writes generated/dot-f32.ts.
(module
  (import "env" "memory" (memory 1))

  ;; Dot product of the query and one row, with four independent f32x4 accumulators so that the
  ;; adds do not wait on each other (one accumulator would be bound by the add latency).
  (func $dot (param $q i32) (param $p i32) (param $strideBytes i32) (result f32)
    (local $mainEnd i32) (local $end i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local.set $end (i32.add (local.get $p) (local.get $strideBytes)))
    ;; 64 bytes (16 floats) per step while they last, then 16 bytes per step.
    (local.set $mainEnd (i32.add (local.get $p) (i32.and (local.get $strideBytes) (i32.const -64))))
    (block $mainDone
      (loop $main
        (br_if $mainDone (i32.ge_u (local.get $p) (local.get $mainEnd)))
        (local.set $a0 (f32x4.add (local.get $a0)
          (f32x4.mul (v128.load (local.get $p)) (v128.load (local.get $q)))))
        (local.set $a1 (f32x4.add (local.get $a1)
          (f32x4.mul (v128.load offset=16 (local.get $p)) (v128.load offset=16 (local.get $q)))))
        (local.set $a2 (f32x4.add (local.get $a2)
          (f32x4.mul (v128.load offset=32 (local.get $p)) (v128.load offset=32 (local.get $q)))))
        (local.set $a3 (f32x4.add (local.get $a3)
          (f32x4.mul (v128.load offset=48 (local.get $p)) (v128.load offset=48 (local.get $q)))))
        (local.set $p (i32.add (local.get $p) (i32.const 64)))
        (local.set $q (i32.add (local.get $q) (i32.const 64)))
        (br $main)))
    (block $tailDone
      (loop $tail
        (br_if $tailDone (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $a0 (f32x4.add (local.get $a0)
          (f32x4.mul (v128.load (local.get $p)) (v128.load (local.get $q)))))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (local.set $q (i32.add (local.get $q) (i32.const 16)))
        (br $tail)))
    (local.set $a0 (f32x4.add (f32x4.add (local.get $a0) (local.get $a1))
                              (f32x4.add (local.get $a2) (local.get $a3))))
    (f32.add
      (f32.add (f32x4.extract_lane 0 (local.get $a0)) (f32x4.extract_lane 1 (local.get $a0)))
      (f32.add (f32x4.extract_lane 2 (local.get $a0)) (f32x4.extract_lane 3 (local.get $a0)))))

  ;; out[i] = query . row[i] for the `count` rows starting at `base`. The body of $dot is written
  ;; out here rather than called: the call costs about a third of the time when rows sit in cache.
  (func (export "dot_f32_all")
    (param $q i32) (param $base i32) (param $count i32) (param $stride i32) (param $out i32)
    (local $strideBytes i32) (local $end i32)
    (local $p i32) (local $qp i32) (local $mainEnd i32) (local $rowEnd i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local.set $strideBytes (i32.shl (local.get $stride) (i32.const 2)))
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $count) (i32.const 2))))
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (local.set $p (local.get $base))
        (local.set $qp (local.get $q))
        (local.set $rowEnd (i32.add (local.get $p) (local.get $strideBytes)))
        (local.set $mainEnd (i32.add (local.get $p) (i32.and (local.get $strideBytes) (i32.const -64))))
        (local.set $a0 (v128.const i64x2 0 0)) (local.set $a1 (v128.const i64x2 0 0))
        (local.set $a2 (v128.const i64x2 0 0)) (local.set $a3 (v128.const i64x2 0 0))
        (block $mainDone
          (loop $main
            (br_if $mainDone (i32.ge_u (local.get $p) (local.get $mainEnd)))
            (local.set $a0 (f32x4.add (local.get $a0)
              (f32x4.mul (v128.load (local.get $p)) (v128.load (local.get $qp)))))
            (local.set $a1 (f32x4.add (local.get $a1)
              (f32x4.mul (v128.load offset=16 (local.get $p)) (v128.load offset=16 (local.get $qp)))))
            (local.set $a2 (f32x4.add (local.get $a2)
              (f32x4.mul (v128.load offset=32 (local.get $p)) (v128.load offset=32 (local.get $qp)))))
            (local.set $a3 (f32x4.add (local.get $a3)
              (f32x4.mul (v128.load offset=48 (local.get $p)) (v128.load offset=48 (local.get $qp)))))
            (local.set $p (i32.add (local.get $p) (i32.const 64)))
            (local.set $qp (i32.add (local.get $qp) (i32.const 64)))
            (br $main)))
        (block $tailDone
          (loop $tail
            (br_if $tailDone (i32.ge_u (local.get $p) (local.get $rowEnd)))
            (local.set $a0 (f32x4.add (local.get $a0)
              (f32x4.mul (v128.load (local.get $p)) (v128.load (local.get $qp)))))
            (local.set $p (i32.add (local.get $p) (i32.const 16)))
            (local.set $qp (i32.add (local.get $qp) (i32.const 16)))
            (br $tail)))
        (local.set $a0 (f32x4.add (f32x4.add (local.get $a0) (local.get $a1))
                                  (f32x4.add (local.get $a2) (local.get $a3))))
        (f32.store (local.get $out) (f32.add
          (f32.add (f32x4.extract_lane 0 (local.get $a0)) (f32x4.extract_lane 1 (local.get $a0)))
          (f32.add (f32x4.extract_lane 2 (local.get $a0)) (f32x4.extract_lane 3 (local.get $a0)))))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $base (i32.add (local.get $base) (local.get $strideBytes)))
        (br $rows))))

  ;; Loads one word per 64-byte line of the first `rowBytes` bytes of rows list[0 .. count), the
  ;; rows `strideBytes` apart from `base`, and returns their xor: a software prefetch for the
  ;; re-scoring kernels. Their rows are scattered, and one row's dot product waits on its lines a
  ;; few misses at a time; a group's loads, independent of each other, have all its misses in
  ;; flight at once (re-scoring 100 scattered rows of 1,536 bytes: 40 to 51 us against 60 to 74).
  ;; The caller stores the result where it writes a score next, so the loads are kept. (The same function is in dot-i8.wat.)
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

  ;; out[j] = query . row[list[j]] for the `count` row numbers (i32) at `list`: for candidate
  ;; re-scoring and for filters that select few rows. Rows go in groups of 16 (24 KB at 384
  ;; dimensions, in cache), each touched first (see $touch).
  (func (export "dot_f32_list")
    (param $q i32) (param $base i32) (param $list i32) (param $count i32) (param $stride i32) (param $out i32)
    (local $strideBytes i32) (local $end i32) (local $groupEnd i32)
    (local.set $strideBytes (i32.shl (local.get $stride) (i32.const 2)))
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $count) (i32.const 2))))
    (block $done
      (loop $groups
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (local.set $groupEnd (select (local.get $end) (i32.add (local.get $out) (i32.const 64))
          (i32.lt_u (i32.sub (local.get $end) (local.get $out)) (i32.const 64))))
        (i32.store (local.get $out)
          (call $touch (local.get $base) (local.get $list)
            (i32.shr_u (i32.sub (local.get $groupEnd) (local.get $out)) (i32.const 2))
            (local.get $strideBytes) (local.get $strideBytes)))
        (loop $rows
          (f32.store (local.get $out)
            (call $dot
              (local.get $q)
              (i32.add (local.get $base) (i32.mul (i32.load (local.get $list)) (local.get $strideBytes)))
              (local.get $strideBytes)))
          (local.set $out (i32.add (local.get $out) (i32.const 4)))
          (local.set $list (i32.add (local.get $list) (i32.const 4)))
          (br_if $rows (i32.lt_u (local.get $out) (local.get $groupEnd))))
        (br $groups))))

  ;; The first position from `from` (below `count`) whose score at `scores` (float32) is at least
  ;; `threshold`, or `count`: the loop in which top-k selection skips the scores below its heap's
  ;; worst. NaN is never at least anything (f32x4.ge and f32.ge say false). Sixteen scores a step
  ;; while a whole step remains, then one at a time; the step holding a match is walked one at a
  ;; time too, to find the first. Positions, not addresses, are compared, so no sum wraps.
  (func (export "first_at_least")
    (param $scores i32) (param $from i32) (param $count i32) (param $threshold f32) (result i32)
    (local $i i32) (local $p i32) (local $t v128)
    (local.set $t (f32x4.splat (local.get $threshold)))
    (local.set $i (local.get $from))
    (block $found
      (loop $steps
        (br_if $found (i32.gt_u (i32.add (local.get $i) (i32.const 16)) (local.get $count)))
        (local.set $p (i32.add (local.get $scores) (i32.shl (local.get $i) (i32.const 2))))
        (br_if $found (v128.any_true (v128.or
          (v128.or (f32x4.ge (v128.load (local.get $p)) (local.get $t))
                   (f32x4.ge (v128.load offset=16 (local.get $p)) (local.get $t)))
          (v128.or (f32x4.ge (v128.load offset=32 (local.get $p)) (local.get $t))
                   (f32x4.ge (v128.load offset=48 (local.get $p)) (local.get $t))))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $steps)))
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (br_if $done (f32.ge
          (f32.load (i32.add (local.get $scores) (i32.shl (local.get $i) (i32.const 2))))
          (local.get $threshold)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $each)))
    (local.get $i))
)
