import { mock } from 'node:test';
import { silentLogger } from '../../src/domain/context.js';

/** The usage error the CLI's commands throw in tests (the CLI prints it and exits 2). */
export class UsageError extends Error {}

/** What cli.ts hands a command (a context per app, its usage error), for in-process tests. */
export const cliIo = {
  context: (appId: string) => ({ appId, requestId: 'cli', log: silentLogger }),
  usage: (message: string) => new UsageError(message),
};

/** Matches a usage error whose message matches `message`. */
export const isUsage = (message: RegExp) => (error: unknown) => error instanceof UsageError && message.test(error.message);

/** What a command printed on stdout, and its exit code (thrown errors are thrown). */
export async function run(command: () => Promise<number>): Promise<{ code: number; stdout: string }> {
  const lines: string[] = [];
  const log = mock.method(console, 'log', (...args: unknown[]) => lines.push(args.join(' ')));
  const error = mock.method(console, 'error', (...args: unknown[]) => lines.push(`stderr: ${args.join(' ')}`));
  try {
    const code = await command();
    return { code, stdout: lines.join('\n') };
  } finally {
    log.mock.restore();
    error.mock.restore();
  }
}
