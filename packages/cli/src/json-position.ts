/**
 * Where a JSON text stops being valid. Node's own `JSON.parse` messages name a position only for
 * some mistakes, so a small scanner finds the first offending character and says what was
 * expected there.
 */
export interface JsonSyntaxProblem {
  /** 0-based offset of the offending character (the text's length at an unexpected end). */
  offset: number;
  /** 1-based line and column of the offset. */
  line: number;
  column: number;
  /** What was found and what was expected, for example `expected a value, found '}'`. */
  message: string;
}

class Stop {
  constructor(
    readonly offset: number,
    readonly message: string,
  ) {}
}

/** The first syntax error of `text` as JSON, or undefined when it is valid JSON. */
export function findJsonSyntaxError(text: string): JsonSyntaxProblem | undefined {
  let at = 0;
  const found = () => (at >= text.length ? 'the end of the text' : `'${text[at]}'`);
  const fail = (expected: string): never => {
    throw new Stop(at, `expected ${expected}, found ${found()}`);
  };
  const space = () => {
    while (at < text.length && ' \t\n\r'.includes(text[at] as string)) at++;
  };
  const literal = (word: string) => {
    for (let i = 0; i < word.length; i++, at++) {
      if (text[at] !== word[i]) fail(`'${word}'`);
    }
  };
  const string = () => {
    at++; // the opening quote
    while (true) {
      if (at >= text.length) fail('a closing quote');
      const char = text[at] as string;
      if (char === '"') {
        at++;
        return;
      }
      if (char === '\\') {
        at++;
        const escaped = text[at];
        if (escaped === 'u') {
          at++;
          for (let i = 0; i < 4; i++, at++) if (!/[0-9a-fA-F]/.test(text[at] ?? '')) fail('a hex digit');
        } else if (escaped !== undefined && '"\\/bfnrt'.includes(escaped)) at++;
        else fail('an escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)');
      } else if (char < ' ') {
        throw new Stop(at, 'a control character (a raw line break?) inside a string; write it as \\n');
      } else at++;
    }
  };
  const digits = () => {
    if (!/[0-9]/.test(text[at] ?? '')) fail('a digit');
    while (/[0-9]/.test(text[at] ?? '')) at++;
  };
  const number = () => {
    if (text[at] === '-') at++;
    if (text[at] === '0') at++;
    else digits();
    if (text[at] === '.') {
      at++;
      digits();
    }
    if (text[at] === 'e' || text[at] === 'E') {
      at++;
      if (text[at] === '+' || text[at] === '-') at++;
      digits();
    }
  };
  const value = (depth: number): void => {
    if (depth > 512) throw new Stop(at, 'nesting deeper than 512 levels');
    space();
    const char = text[at];
    if (char === '{') {
      at++;
      space();
      if (text[at] === '}') {
        at++;
        return;
      }
      while (true) {
        space();
        if (text[at] !== '"') fail(`a property name in double quotes`);
        string();
        space();
        if (text[at] !== ':') fail(`':' after the property name`);
        at++;
        value(depth + 1);
        space();
        if (text[at] === ',') {
          at++;
          continue;
        }
        if (text[at] === '}') {
          at++;
          return;
        }
        fail(`',' or '}'`);
      }
    }
    if (char === '[') {
      at++;
      space();
      if (text[at] === ']') {
        at++;
        return;
      }
      while (true) {
        value(depth + 1);
        space();
        if (text[at] === ',') {
          at++;
          continue;
        }
        if (text[at] === ']') {
          at++;
          return;
        }
        fail(`',' or ']'`);
      }
    }
    if (char === '"') {
      string();
      return;
    }
    if (char === 't') {
      literal('true');
      return;
    }
    if (char === 'f') {
      literal('false');
      return;
    }
    if (char === 'n') {
      literal('null');
      return;
    }
    if (char === '-' || (char !== undefined && char >= '0' && char <= '9')) {
      number();
      return;
    }
    if (char === "'") throw new Stop(at, 'found a single quote: JSON strings take double quotes');
    fail('a value (an object, array, string, number, true, false or null)');
  };
  try {
    value(0);
    space();
    if (at < text.length) fail('the end of the text');
    return undefined;
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    return { offset: error.offset, ...lineAndColumn(text, error.offset), message: error.message };
  }
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === '\n') {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * The problem as text: the position, the message, and the offending line with a caret under the
 * position (long lines are cut around it).
 */
export function describeJsonProblem(text: string, problem: JsonSyntaxProblem): string {
  const lines = text.split('\n');
  const source = (lines[problem.line - 1] ?? '').replace(/\t/g, ' ').replace(/\r$/, '');
  let start = 0;
  const width = 70;
  if (source.length > width && problem.column > width - 10) start = problem.column - (width - 10);
  const shown = `${start > 0 ? '…' : ''}${source.slice(start, start + width)}${start + width < source.length ? '…' : ''}`;
  const caret = ' '.repeat(problem.column - 1 - start + (start > 0 ? 1 : 0));
  const where =
    lines.length > 1
      ? `position ${problem.offset} (line ${problem.line}, column ${problem.column})`
      : `position ${problem.offset}`;
  return `${where}: ${problem.message}\n  ${shown}\n  ${caret}^`;
}

/**
 * `JSON.parse`, but a syntax error becomes `onError(description)` with the position and a caret
 * line (see `describeJsonProblem`).
 */
export function parseJsonAt(text: string, onError: (description: string) => never): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const problem = findJsonSyntaxError(text);
    if (problem === undefined) {
      return onError(error instanceof Error ? error.message : String(error));
    }
    return onError(describeJsonProblem(text, problem));
  }
}
