import { describe, expect, it } from 'vitest';
import { porterStem } from './porter-stemmer.js';

// Word -> stem pairs of the original Porter algorithm (the paper's examples and Martin Porter's
// reference vocabulary), as his reference implementation and Lucene's PorterStemmer produce them.
const PAIRS = `
caresses caress | ponies poni | ties ti | caress caress | cats cat | feed feed | agreed agre
plastered plaster | bled bled | motoring motor | sing sing | conflated conflat | troubled troubl
sized size | hopping hop | tanned tan | falling fall | hissing hiss | fizzed fizz | failing fail
filing file | happy happi | sky sky | relational relat | conditional condit | rational ration
valenci valenc | hesitanci hesit | digitizer digit | conformabli conform | radicalli radic
differentli differ | vileli vile | analogousli analog | vietnamization vietnam | predication predic
operator oper | feudalism feudal | decisiveness decis | hopefulness hope | callousness callous
formaliti formal | sensitiviti sensit | sensibiliti sensibl | triplicate triplic | formative form
formalize formal | electriciti electr | electrical electr | hopeful hope | goodness good
revival reviv | allowance allow | inference infer | airliner airlin | gyroscopic gyroscop
adjustable adjust | defensible defens | irritant irrit | replacement replac | adjustment adjust
dependent depend | adoption adopt | homologou homolog | communism commun | activate activ
angulariti angular | homologous homolog | effective effect | bowdlerize bowdler | probate probat
rate rate | cease ceas | controlling control | rolling roll | generalizations gener
oscillators oscil | meetings meet | meeting meet | mating mate | matting mat | milling mill
messing mess | agreement agreement | retrieval retriev | retrieving retriev | information inform
systems system | libraries librari | library librari | classification classif | indexing index
documents document | abilities abil | abated abat | abbreviation abbrevi | consign consign
consigned consign | consigning consign | consignment consign | consisted consist
consistency consist | consistent consist | consistently consist | consisting consist
consolation consol | consolatory consolatori | consoled consol | consolidate consolid
consolidating consolid | consoling consol
`;

function pairs(list: string): Array<[string, string]> {
  return list
    .split(/[|\n]/)
    .map((pair) => pair.trim())
    .filter((pair) => pair.length > 0)
    .map((pair) => pair.split(/\s+/) as [string, string]);
}

describe('porterStem', () => {
  it.each(pairs(PAIRS))('%s -> %s', (word, stem) => {
    expect(porterStem(word)).toBe(stem);
  });

  it('has a good number of reference pairs', () => {
    expect(pairs(PAIRS).length).toBeGreaterThanOrEqual(100);
  });

  // Where the reference implementation (and Lucene) departs from the 1980 paper.
  it.each([
    ['possibly', 'possibl'], // -bli -> -ble, not -abli -> -able
    ['irresistibly', 'irresist'],
    ['archaeology', 'archaeolog'], // -logi -> -log
    ['methodologies', 'methodolog'],
    ['analogy', 'analog'],
  ])('keeps the reference departure: %s -> %s', (word, stem) => {
    expect(porterStem(word)).toBe(stem);
  });

  it('leaves words of one or two characters alone, as Lucene does', () => {
    for (const word of ['a', 'as', 'is', 'us', 'ms', 's']) expect(porterStem(word)).toBe(word);
  });

  it('passes digits, codes and other scripts through safely', () => {
    expect(porterStem('1990s')).toBe('1990');
    expect(porterStem('covid-19')).toBe('covid-19');
    expect(porterStem("don't")).toBe("don't");
    expect(porterStem('кошки')).toBe('кошки');
    expect(porterStem('')).toBe('');
  });

  it('handles long words (buffer growth)', () => {
    expect(porterStem(`${'ab'.repeat(100)}ations`)).toBe('ab'.repeat(100));
    expect(porterStem('relational')).toBe('relat');
  });
});
