import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { cruise, type ICruiseResult, type IConfiguration } from 'dependency-cruiser';

// The architecture check (docs/architecture.md): the rules live in .dependency-cruiser.cjs
// (import cycles, layers importing upward, HTTP past the services, services reading route schemas,
// SQL outside repositories/ and db/).

// From the repository's root (the tests run from it, compiled into .build/ or not).
const require = createRequire(path.resolve('package.json'));
const config = require('./.dependency-cruiser.cjs') as IConfiguration;

async function check(paths: string[]): Promise<ICruiseResult> {
  const result = await cruise(paths, { ruleSet: config, ...config.options, validate: true }, undefined, { tsConfig: { fileName: 'tsconfig.json' } } as never);
  return result.output as ICruiseResult;
}

const violations = (result: ICruiseResult) => result.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}${v.cycle ? ` (${v.cycle.map((c) => c.name).join(' → ')})` : ''}`);

/** The tables whose writes make the message store's invariant (repositories/message-store/conversation-moves.ts). */
const STORE_WRITES = [
  /insert\s+into\s+(messages|conversations|user_conversations)\b/i,
  /insertInto\(\s*'(messages|conversations|user_conversations)'/,
  /update\s+conversations\b/i,
  /updateTable\(\s*'conversations'/,
  /\blast_message_id\s*=(?!=)/,
];

const sourceFiles = (dir: string): string[] =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? sourceFiles(path.join(dir, entry.name)) : [path.join(dir, entry.name)]));

/** Files under `root` outside repositories/message-store/ that insert messages or move a conversation. */
function strayStoreWrites(root: string): string[] {
  return sourceFiles(root)
    .filter((file) => file.endsWith('.ts') && !file.includes(`${path.sep}repositories${path.sep}message-store${path.sep}`))
    .filter((file) => {
      const text = fs.readFileSync(file, 'utf8');
      return STORE_WRITES.some((pattern) => pattern.test(text));
    })
    .map((file) => path.relative(root, file));
}

describe('architecture', () => {
  it('src has no import cycle, no layer importing upward or past the services, no SQL outside repositories/ and db/', async () => {
    const result = await check(['src']);
    assert.ok(result.summary.totalCruised > 100, `cruised ${result.summary.totalCruised} modules`);
    assert.deepEqual(violations(result), []);
  });

  it('the rules catch what they forbid', async () => {
    const result = await check(['test/fixtures/architecture']);
    const found = new Set(result.summary.violations.map((v) => v.rule.name));
    assert.deepEqual([...found].sort(), [
      'domain-is-pure',
      'http-goes-through-services',
      'no-cycles',
      'repositories-stay-below-services',
      'services-know-no-http',
      'services-know-no-route-schemas',
      'sql-only-in-repositories-and-db',
    ]);
  });

  it('inserts messages and moves conversations only in repositories/message-store/', () => {
    assert.deepEqual(strayStoreWrites('src'), []);
    assert.deepEqual(strayStoreWrites('test/fixtures/architecture/src'), [path.join('repositories', 'stray-message-write.repository.ts')]);
  });

  it('keeps every file of src and packages under 400 lines', () => {
    const long = [...sourceFiles('src'), ...sourceFiles('packages/client/src')]
      .filter((file) => file.endsWith('.ts'))
      .map((file) => ({ file, lines: fs.readFileSync(file, 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > 400);
    assert.deepEqual(long, []);
  });

  it('the client library (packages/client) imports only its own files: no Node module, no package, nothing of the server', () => {
    const imports = sourceFiles('packages/client/src')
      .filter((file) => file.endsWith('.ts'))
      .flatMap((file) => [...fs.readFileSync(file, 'utf8').matchAll(/\bfrom\s+'([^']+)'|\bimport\(\s*'([^']+)'/g)].map((match) => `${file}: ${match[1] ?? match[2]}`));
    assert.ok(imports.length > 5, imports.join('\n'));
    assert.deepEqual(
      imports.filter((line) => !/: \.\/[a-z-]+\.js$/.test(line)),
      [],
    );
  });
});
