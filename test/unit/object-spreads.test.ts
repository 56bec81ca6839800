import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { extended } from '../../src/domain/objects.js';

// The code that runs per request or per row (route files only register routes and call a service).
const CHECKED = ['src/domain', 'src/http/plugins', 'src/repositories', 'src/services'];

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? sourceFiles(path.join(dir, entry.name)) : entry.name.endsWith('.ts') ? [path.join(dir, entry.name)] : []));
}

/** `file:line: text` of each object literal that begins with a spread and has more properties. */
function spreadFirstLiterals(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isObjectLiteralExpression(node) && node.properties.length > 1 && ts.isSpreadAssignment(node.properties[0]!)) {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart());
      found.push(`${file}:${line + 1}: ${node.getText().replace(/\s+/g, ' ').slice(0, 80)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('object spreads', () => {
  it('extended() is { ...base, ...extra } as a new object', () => {
    const base = { a: 1, b: 2 };
    const result = extended(base, { b: 3, c: 4 });
    assert.deepEqual(result, { a: 1, b: 3, c: 4 });
    assert.deepEqual(Object.keys(result), ['a', 'b', 'c']);
    assert.deepEqual(base, { a: 1, b: 2 });
  });

  it('no literal on the request path begins with a spread and adds properties (see src/domain/objects.ts)', () => {
    const found = CHECKED.flatMap((dir) => sourceFiles(dir)).flatMap(spreadFirstLiterals);
    assert.deepEqual(found, [], `use extended() or name the fields:\n${found.join('\n')}`);
  });
});
