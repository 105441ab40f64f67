/**
 * A deterministic candidate set with planted near-duplicates: base texts of random words, and
 * variants of some of them with a share of their words replaced, so that the variants' Jaccard
 * similarities to their sources spread on both sides of 0.85. Shared by the tests and the
 * benchmark suite.
 */
export function duplicateCorpus(count: number, seed = 42): string[] {
  const random = mulberry32(seed);
  const vocabulary = Array.from({ length: 4000 }, (_, i) => pseudoWord(i));
  const pick = () => vocabulary[Math.floor(random() * vocabulary.length)] as string;
  const texts: string[] = [];
  const variants = Math.floor(count / 4);
  for (let i = 0; i < count - variants; i++) {
    const length = 40 + Math.floor(random() * 160);
    texts.push(Array.from({ length }, pick).join(' '));
  }
  for (let i = 0; i < variants; i++) {
    const source = (texts[Math.floor(random() * texts.length)] as string).split(' ');
    const share = random() * 0.12;
    texts.push(source.map((word) => (random() < share ? pick() : word)).join(' '));
  }
  // Interleave so that variants do not all sit at the end.
  return texts
    .map((text) => ({ text, key: random() }))
    .sort((a, b) => a.key - b.key)
    .map((entry) => entry.text);
}

function pseudoWord(n: number): string {
  const consonants = 'bdfgklmnprstvz';
  const vowels = 'aeiou';
  let word = '';
  let value = n + 500;
  while (value > 0) {
    word +=
      (consonants[value % consonants.length] as string) + (vowels[Math.floor(value / 14) % 5] as string);
    value = Math.floor(value / 70);
  }
  return `${word}x`;
}

function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
