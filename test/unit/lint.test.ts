import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, it } from 'node:test';

// The linter and the formatter (Biome, configured in biome.json) over src, test, bench and
// scripts, as part of `npm test`: `npx biome check --write` fixes what it can.
const require = createRequire(path.resolve('package.json'));
const BIOME = require.resolve('@biomejs/biome/bin/biome');

describe('lint and format', () => {
  it('biome check finds nothing to report', () => {
    const result = spawnSync(process.execPath, [BIOME, 'check', '--error-on-warnings', '--reporter=summary', '--max-diagnostics=50', '--colors=off'], { encoding: 'utf8' });
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
  });
});
