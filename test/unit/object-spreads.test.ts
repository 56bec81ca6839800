import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
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

const WRITES = new Set(['values', 'set', 'doUpdateSet']);

/**
 * `file:line: text` of each row write (Kysely's values, set, doUpdateSet) in `file` that takes
 * columns from a value handed to its function as a whole: `{ app_id, ...input }`,
 * `extended(changes, {...})`. A request body may hold more fields than its type names, so such a
 * write lets a request choose columns (an API key's body once moved the key into another app).
 */
function wholesaleWrites(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const parametersAround = (node: ts.Node): Set<string> => {
    const names = new Set<string>();
    for (let at: ts.Node | undefined = node; at; at = at.parent) {
      if (ts.isFunctionLike(at)) for (const p of at.parameters) if (ts.isIdentifier(p.name)) names.add(p.name.text);
    }
    return names;
  };
  const passedIn = (expression: ts.Expression, parameters: Set<string>) => ts.isIdentifier(expression) && parameters.has(expression.text);
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && WRITES.has(node.expression.name.text) && node.arguments[0]) {
      const parameters = parametersAround(node);
      const inside = (child: ts.Node): void => {
        const spread = ts.isSpreadAssignment(child) && passedIn(child.expression, parameters);
        const merged = ts.isCallExpression(child) && ts.isIdentifier(child.expression) && child.expression.text === 'extended' && child.arguments.some((arg) => passedIn(arg, parameters));
        if (spread || merged) {
          const { line } = source.getLineAndCharacterOfPosition(child.getStart());
          found.push(`${file}:${line + 1}: ${child.getText().replace(/\s+/g, ' ').slice(0, 80)}`);
        }
        if (!ts.isFunctionLike(child)) ts.forEachChild(child, inside);
      };
      inside(node.arguments[0]);
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

  it('no write in src/repositories takes its columns from a value handed in whole: columns are named one by one', () => {
    const found = sourceFiles('src/repositories').flatMap(wholesaleWrites);
    assert.deepEqual(found, [], `name each column:\n${found.join('\n')}`);
  });

  it('the check above finds a spread or extended() of a parameter in values, set and doUpdateSet', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'spreads-')), 'repo.ts');
    fs.writeFileSync(
      file,
      [
        'function a(tx: any, appId: string, input: object) { return tx.insertInto("t").values({ app_id: appId, ...input }); }',
        'function b(tx: any, changes: object) { return tx.updateTable("t").set(extended(changes, { updated_at: 1 })); }',
        'function c(tx: any, limits: object) { return tx.insertInto("t").values({ a: 1 }).onConflict((oc: any) => oc.doUpdateSet({ ...limits })); }',
        'function d(tx: any, name: string) { const set = { name }; return tx.updateTable("t").set(extended(set, { b: 1 })); }',
      ].join('\n'),
    );
    assert.deepEqual(
      wholesaleWrites(file).map((line) => line.split(':')[1]),
      ['1', '2', '3'],
    );
  });
});
