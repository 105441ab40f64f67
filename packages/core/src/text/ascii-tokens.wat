;; The tokenizer's scan of ASCII text, sixteen bytes at a time (see ascii-scanner.ts).
;;
;; Finds the runs of ASCII letters and digits in a text's UTF-8 bytes and writes each as a token
;; span in the layout of `TokenSpans` (start; end * 4 + flags; the token's last 12 characters
;; packed into three words, as `scanTokens` packs them). It stops, and leaves the rest to the
;; caller from there, at a token whose run ends at a joiner (' . , ; : - _) followed by a letter
;; or digit, which may be part of a longer token (don't, 3.5, covid-19: `scanTokens` decides by
;; its joiner rules); at a token whose run ends at a byte outside ASCII (an accent, a mark, an
;; Arabic letter may go on with it); and at the first byte outside ASCII between tokens (which
;; may be a token itself). Every other run is a whole token, as `scanTokens` would find it. Every
;; address is a byte offset. Compile with `node packages/core/scripts/build-kernels.mjs` (writes
;; generated/ascii-tokens.ts).
(module
  (import "env" "memory" (memory 1))

  ;; Scans the `len` bytes at `text` from byte `from` (not inside a token), appending spans of 20
  ;; bytes at `spans` after the `count` already there; returns the new count. Stores at `bail`
  ;; where the caller takes over (see above), or -1 when the text is done. Positions are byte
  ;; offsets from `text`, which the caller places so that they are the text's UTF-16 positions:
  ;; since the scan stops at the first byte outside ASCII, no byte before it differs from its
  ;; character in number.
  ;; The caller guarantees: the 16 bytes before `text + from` are readable, the 32 after the text
  ;; are zero (a non-word byte that ends the last run; the loads read up to 15 bytes past it),
  ;; the 256-byte `table` classes each byte (0 other, 1 letter or digit, 2 joiner, 3 outside
  ;; ASCII), and the spans have room for one more token than the text can hold (a span's last 4
  ;; bytes are written with the next one's first).
  (func (export "scan_ascii")
    (param $text i32) (param $len i32) (param $from i32) (param $spans i32) (param $count i32)
    (param $table i32) (param $bail i32) (result i32)
    (local $i i32) (local $start i32) (local $end i32) (local $bits i32) (local $v v128)
    (local $out i32) (local $length i32) (local $class i32) (local $high i32)
    (local.set $i (local.get $from))
    (local.set $out (i32.add (local.get $spans) (i32.mul (local.get $count) (i32.const 20))))
    (block $done
      (loop $tokens
        ;; The token's start: the first letter or digit from $i. A byte is one when (b | 0x20)
        ;; is in a..z or b is in 0..9, each tested as one unsigned comparison; a byte outside
        ;; ASCII (its top bit set, which bitmask reads as it is) stops the scan if it comes first.
        (block $found
          (loop $seek
            (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
            (local.set $v (v128.load (i32.add (local.get $text) (local.get $i))))
            (local.set $high (i8x16.bitmask (local.get $v)))
            (local.set $bits (i32.or (local.get $high) (i8x16.bitmask (v128.or
              (i8x16.lt_u
                (i8x16.sub (v128.or (local.get $v) (i8x16.splat (i32.const 0x20))) (i8x16.splat (i32.const 0x61)))
                (i8x16.splat (i32.const 26)))
              (i8x16.lt_u (i8x16.sub (local.get $v) (i8x16.splat (i32.const 0x30))) (i8x16.splat (i32.const 10)))))))
            (br_if $found (local.get $bits))
            (local.set $i (i32.add (local.get $i) (i32.const 16)))
            (br $seek)))
        (local.set $bits (i32.ctz (local.get $bits)))
        (local.set $start (i32.add (local.get $i) (local.get $bits)))
        (br_if $done (i32.ge_u (local.get $start) (local.get $len)))
        (if (i32.and (i32.shr_u (local.get $high) (local.get $bits)) (i32.const 1))
          (then
            (i32.store (local.get $bail) (local.get $start))
            (return (local.get $count))))
        ;; Its end: the first byte from $start that is neither (the zero padding ends the last).
        (local.set $i (local.get $start))
        (block $ended
          (loop $run
            (local.set $v (v128.load (i32.add (local.get $text) (local.get $i))))
            (local.set $bits (i32.xor (i32.const 0xffff) (i8x16.bitmask (v128.or
              (i8x16.lt_u
                (i8x16.sub (v128.or (local.get $v) (i8x16.splat (i32.const 0x20))) (i8x16.splat (i32.const 0x61)))
                (i8x16.splat (i32.const 26)))
              (i8x16.lt_u (i8x16.sub (local.get $v) (i8x16.splat (i32.const 0x30))) (i8x16.splat (i32.const 10)))))))
            (br_if $ended (local.get $bits))
            (local.set $i (i32.add (local.get $i) (i32.const 16)))
            (br $run)))
        (local.set $end (i32.add (local.get $i) (i32.ctz (local.get $bits))))
        ;; A run that ends outside ASCII, or at a joiner followed by a letter, a digit or a byte
        ;; outside ASCII (classes 1 and 3): the caller scans this token.
        (local.set $class
          (i32.load8_u (i32.add (local.get $table) (i32.load8_u (i32.add (local.get $text) (local.get $end))))))
        (if (i32.or
              (i32.eq (local.get $class) (i32.const 3))
              (i32.and
                (i32.eq (local.get $class) (i32.const 2))
                (i32.load8_u
                  (i32.add (local.get $table) (i32.load8_u offset=1 (i32.add (local.get $text) (local.get $end)))))))
          (then
            (i32.store (local.get $bail) (local.get $start))
            (return (local.get $count))))
        ;; The span: a token longer than 12 characters is not packed (flag 2, NOT_PACKED).
        (local.set $length (i32.sub (local.get $end) (local.get $start)))
        (i32.store (local.get $out) (local.get $start))
        (i32.store offset=4 (local.get $out)
          (i32.or (i32.shl (local.get $end) (i32.const 2))
            (select (i32.const 2) (i32.const 0) (i32.gt_u (local.get $length) (i32.const 12)))))
        ;; Its packed words: the 16 bytes before $end reversed, so that as little-endian words the
        ;; last character is the low byte of the first, and those before the token masked to zero.
        (v128.store offset=8 (local.get $out)
          (v128.and
            (i8x16.swizzle
              (v128.load (i32.sub (i32.add (local.get $text) (local.get $end)) (i32.const 16)))
              (v128.const i8x16 15 14 13 12 11 10 9 8 7 6 5 4 3 2 1 0))
            (i8x16.gt_u
              (i8x16.splat (select (local.get $length) (i32.const 16) (i32.lt_u (local.get $length) (i32.const 16))))
              (v128.const i8x16 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15))))
        (local.set $out (i32.add (local.get $out) (i32.const 20)))
        (local.set $count (i32.add (local.get $count) (i32.const 1)))
        (local.set $i (local.get $end))
        (br $tokens)))
    (i32.store (local.get $bail) (i32.const -1))
    (local.get $count))
)
