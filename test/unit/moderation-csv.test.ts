import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { csvCells, decodeUtf8, parseCsv } from '../../src/domain/moderation/csv.js';

const rows = (text: string) => {
  const result = parseCsv(text);
  assert.ok(result.ok, JSON.stringify(result));
  return result.rows;
};

const failure = (text: string) => {
  const result = parseCsv(text);
  assert.ok(!result.ok, `parsed ${JSON.stringify(result)}`);
  return result;
};

describe('parseCsv', () => {
  it('reads fields separated by commas and records by CRLF, LF or CR', () => {
    assert.deepEqual(rows('a,b\r\nc,d\r\n'), [
      ['a', 'b'],
      ['c', 'd'],
    ]);
    assert.deepEqual(rows('a,b\nc,d'), [
      ['a', 'b'],
      ['c', 'd'],
    ]);
    assert.deepEqual(rows('a\rb\r'), [['a'], ['b']]);
  });

  it('reads an empty text as no rows, and keeps empty fields and empty lines as empty fields', () => {
    assert.deepEqual(rows(''), []);
    assert.deepEqual(rows('a,,b\n\nc'), [['a', '', 'b'], [''], ['c']]);
    assert.deepEqual(rows('a,'), [['a', '']]);
  });

  it('removes the quotes of a quoted field, which may hold commas, line breaks and doubled quotes', () => {
    assert.deepEqual(rows('"a,b",c'), [['a,b', 'c']]);
    assert.deepEqual(rows('"say ""hi""",x'), [['say "hi"', 'x']]);
    assert.deepEqual(rows('"two\r\nlines",y\r\nz'), [['two\r\nlines', 'y'], ['z']]);
    assert.deepEqual(rows('""'), [['']]);
    assert.deepEqual(rows('"a"'), [['a']]);
  });

  it('skips a UTF-8 byte order mark', () => {
    assert.deepEqual(rows('\ufeff"a",b'), [['a', 'b']]);
  });

  it('ignores spaces and tabs around a quoted field, and keeps them in an unquoted one', () => {
    assert.deepEqual(rows('a, "b, c" ,\t"d"'), [['a', 'b, c', 'd']]);
    assert.deepEqual(rows(' a , b'), [[' a ', ' b']]);
  });

  it('refuses a quoted field that is not closed, naming the line it starts on', () => {
    const result = failure('a\nb,"c\nd\ne');
    assert.equal(result.line, 2);
    assert.match(result.problem, /not closed/);
  });

  it('refuses a quote inside an unquoted field, with its line', () => {
    const result = failure('ok\r\nalso ok\r\nab"c');
    assert.equal(result.line, 3);
    assert.match(result.problem, /quote inside a field/);
  });

  it('refuses text after a closing quote, counting the line breaks inside quoted fields', () => {
    const result = failure('"x\ny",1\n"z"w');
    assert.equal(result.line, 3);
    assert.match(result.problem, /follows a closing quote/);
  });
});

describe('csvCells', () => {
  it('gives every non-empty cell of every row, trimmed, in order', () => {
    assert.deepEqual(csvCells('a, b ,\n\n"c, d",  \n e'), { ok: true, cells: ['a', 'b', 'c, d', 'e'] });
  });

  it('passes a parse failure on', () => {
    assert.deepEqual(csvCells('"a'), { ok: false, line: 1, problem: 'a quoted field is not closed (a " is missing)' });
  });
});

describe('decodeUtf8', () => {
  it('decodes UTF-8, keeping a byte order mark for the parser', () => {
    assert.equal(decodeUtf8(Buffer.from('\ufeffé,ü', 'utf8')), '\ufeffé,ü');
  });

  it('refuses bytes that are not UTF-8', () => {
    assert.equal(decodeUtf8(Buffer.from([0x61, 0xff, 0x62])), undefined);
  });
});
