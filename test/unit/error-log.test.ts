import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { AppError } from '../../src/domain/errors.js';
import { installErrorHandling } from '../../src/http/plugins/error-handler.js';

// How the one error handler logs (src/http/plugins/error-handler.ts): a 503 the server gives of
// its own accord (busy, shutting down: one per reconnecting client in a storm) is one warning
// line without a stack; a 503 caused by a failure, and any other 5xx, keep the error's stack.

async function logsOf(error: () => Error): Promise<{ status: number; lines: Array<Record<string, any>> }> {
  const lines: Array<Record<string, any>> = [];
  const log = pino({ level: 'info' }, new Writable({ write: (chunk, _encoding, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  const app = Fastify({ loggerInstance: log, disableRequestLogging: true }) as unknown as FastifyInstance;
  installErrorHandling(app, { bodyLimit: 1024 });
  app.get('/x', async () => {
    throw error();
  });
  try {
    const response = await app.inject({ method: 'GET', url: '/x' });
    return { status: response.statusCode, lines: lines.filter((line) => line.level >= 40) };
  } finally {
    await app.close();
  }
}

describe('the error log', () => {
  it("logs a refusal 503 in one line without a stack, and a failure's 503 and a 500 with theirs", async () => {
    const refusal = await logsOf(() => new AppError('ERR_MISSION_FAILED', { message: 'The server is shutting down. Retry the request.', retryAfter: 1 }));
    assert.equal(refusal.status, 503);
    assert.equal(refusal.lines.length, 1);
    assert.equal(refusal.lines[0]!.level, 40, 'a warning');
    assert.equal(refusal.lines[0]!.msg, 'The server is shutting down. Retry the request.');
    assert.equal(refusal.lines[0]!.code, 'ERR_MISSION_FAILED');
    assert.equal(refusal.lines[0]!.err, undefined, 'no error object, so no stack');
    assert.ok(!JSON.stringify(refusal.lines[0]).includes('    at '), 'no stack anywhere in the line');

    const timedOut = await logsOf(() => new AppError('ERR_MISSION_FAILED', { cause: new Error('connection timeout') }));
    assert.equal(timedOut.status, 503);
    assert.equal(timedOut.lines.length, 1);
    assert.match(timedOut.lines[0]!.err.stack, /connection timeout/);

    const broken = await logsOf(() => new TypeError('x is not a function'));
    assert.equal(broken.status, 500);
    assert.equal(broken.lines.length, 1);
    assert.equal(broken.lines[0]!.level, 50, 'an error');
    assert.match(broken.lines[0]!.err.stack, /TypeError: x is not a function\n\s+at /);
  });
});
