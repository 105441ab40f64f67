import { describe, expect, it } from 'vitest';
import { tokenize } from './tokenizer.js';

const lucene = { mode: 'lucene' } as const;

describe('tokenize', () => {
  it('returns nothing for empty or punctuation-only text', () => {
    expect(tokenize('')).toEqual([]);
    expect(tokenize('   \n\t')).toEqual([]);
    expect(tokenize('--- ... !!! ??? () [] {} / \\ @ # % & * + = < > | ~ ^ `')).toEqual([]);
  });

  it('splits on spaces and punctuation and keeps the original case', () => {
    expect(tokenize('Hello, World! How are you?')).toEqual(['Hello', 'World', 'How', 'are', 'you']);
    expect(tokenize('(parenthesised) "quoted" [bracketed]; semi:colon')).toEqual([
      'parenthesised',
      'quoted',
      'bracketed',
      'semi',
      'colon',
    ]);
  });

  it('keeps decimal numbers and thousands separators in one token', () => {
    expect(tokenize('Pi is 3.14, about 3.5; 1,000 and 1.000.000,50 items.')).toEqual([
      'Pi',
      'is',
      '3.14',
      'about',
      '3.5',
      '1,000',
      'and',
      '1.000.000,50',
      'items',
    ]);
    expect(tokenize('version 2.0.1 and v1.2')).toEqual(['version', '2.0.1', 'and', 'v1.2']);
  });

  it('keeps letters and digits together', () => {
    expect(tokenize('x86 mp3 5kg 3D A4')).toEqual(['x86', 'mp3', '5kg', '3D', 'A4']);
  });

  it('keeps alphanumeric hyphenated codes whole', () => {
    expect(tokenize('covid-19 GPT-4 x86-64 B-52 utf-8 iso-8859-1 gpt-3.5 IL-6')).toEqual([
      'covid-19',
      'GPT-4',
      'x86-64',
      'B-52',
      'utf-8',
      'iso-8859-1',
      'gpt-3.5',
      'IL-6',
    ]);
  });

  it('splits plain hyphenated words, numeric ranges and compounds after a code', () => {
    expect(tokenize('state-of-the-art')).toEqual(['state', 'of', 'the', 'art']);
    expect(tokenize('well-known e-mail')).toEqual(['well', 'known', 'e', 'mail']);
    expect(tokenize('pages 10-20, 2020-2021')).toEqual(['pages', '10', '20', '2020', '2021']);
    expect(tokenize('covid-19-related 5-year mp3-player')).toEqual([
      'covid-19',
      'related',
      '5',
      'year',
      'mp3',
      'player',
    ]);
    expect(tokenize('trailing- -leading -- x')).toEqual(['trailing', 'leading', 'x']);
  });

  it('removes English possessives like Lucene', () => {
    expect(tokenize("John's book and JAMES'S car")).toEqual(['John', 'book', 'and', 'JAMES', 'car']);
    expect(tokenize("it's the students' books")).toEqual(['it', 'the', 'students', 'books']);
    expect(tokenize('John’s and John＇s')).toEqual(['John', 'and', 'John']);
    expect(tokenize("the 1990's")).toEqual(['the', '1990']);
  });

  it('keeps apostrophes inside words and unifies their forms', () => {
    expect(tokenize("don't can't o'neill")).toEqual(["don't", "can't", "o'neill"]);
    expect(tokenize('don’t O’Neill')).toEqual(["don't", "O'Neill"]);
    expect(tokenize("'quoted' rock 'n' roll")).toEqual(['quoted', 'rock', 'n', 'roll']);
  });

  it('joins letters around dots (abbreviations, host names) and drops the final dot', () => {
    expect(tokenize('U.S.A. e.g. www.example.com end.')).toEqual(['U.S.A', 'e.g', 'www.example.com', 'end']);
  });

  it('keeps underscores between word characters', () => {
    expect(tokenize('snake_case __init__ _x')).toEqual(['snake_case', 'init', 'x']);
  });

  it('tokenizes Arabic, keeping diacritics inside the word', () => {
    expect(tokenize('مرحبا بالعالم! إِسْلَامِيَّة، والكتاب.')).toEqual(['مرحبا', 'بالعالم', 'إِسْلَامِيَّة', 'والكتاب']);
    expect(tokenize('الرقم ٣٫٥ و١٢٣')).toEqual(['الرقم', '٣٫٥', 'و١٢٣']);
  });

  it('tokenizes mixed Arabic and English text', () => {
    expect(tokenize('Search البحث engines محركات (2024)')).toEqual([
      'Search',
      'البحث',
      'engines',
      'محركات',
      '2024',
    ]);
  });

  it('handles other scripts and combining marks', () => {
    expect(tokenize('Привет, мир! Γειά σου κόσμε')).toEqual(['Привет', 'мир', 'Γειά', 'σου', 'κόσμε']);
    expect(tokenize('naïve cafe\u0301 देवनागरी')).toEqual(['naïve', 'cafe\u0301', 'देवनागरी']);
    expect(tokenize('col·lecció')).toEqual(['col·lecció']);
  });

  it('splits Han and Hiragana into characters and keeps Katakana runs', () => {
    expect(tokenize('東京は日本の首都です。カタカナ')).toEqual([
      '東',
      '京',
      'は',
      '日',
      '本',
      'の',
      '首',
      '都',
      'で',
      'す',
      'カタカナ',
    ]);
  });

  it('handles characters outside the Basic Multilingual Plane', () => {
    expect(tokenize('𝒳𝒴 𠀀𠀁')).toEqual(['𝒳𝒴', '𠀀', '𠀁']);
  });

  it('ignores emoji and drops invisible format characters', () => {
    expect(tokenize('I 😀 love 👍🏽 pizza 🇮🇹 🍕!')).toEqual(['I', 'love', 'pizza']);
    expect(tokenize('soft\u00ADhyphen zero\u200Bwidth')).toEqual(['softhyphen', 'zero', 'width']);
  });

  it('never emits empty tokens or punctuation', () => {
    const tokens = tokenize("a - b -- c ... d's 'e' f-1 _ __ ' ’ \u00AD \u200D");
    expect(tokens).toEqual(['a', 'b', 'c', 'd', 'e', 'f-1']);
  });

  describe("mode 'lucene'", () => {
    it('splits at every hyphen, as StandardTokenizer does', () => {
      expect(tokenize('covid-19 x86-64 state-of-the-art', lucene)).toEqual([
        'covid',
        '19',
        'x86',
        '64',
        'state',
        'of',
        'the',
        'art',
      ]);
    });

    it('joins a colon between letters and keeps apostrophes as written', () => {
      expect(tokenize('a:b 10:30', lucene)).toEqual(['a:b', '10', '30']);
      expect(tokenize('don’t', lucene)).toEqual(['don’t']);
      expect(tokenize("the 1990's", lucene)).toEqual(['the', '1990', 's']);
    });

    it('shares the other rules', () => {
      expect(tokenize("John's 3.5 1,000 U.S.A.", lucene)).toEqual(['John', '3.5', '1,000', 'U.S.A']);
    });
  });
});
