import crypto from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(crypto.scrypt) as (password: string, salt: Buffer, keylen: number, options: crypto.ScryptOptions) => Promise<Buffer>;

/** scrypt parameters: N=2^14, r=8, p=1 (about 16 MB and tens of ms per hash). */
const N = 16384;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;

/**
 * Group passwords, hashed with scrypt. scrypt runs on libuv's thread pool (4 threads unless
 * UV_THREADPOOL_SIZE says otherwise), which DNS lookups and file reads share: unbounded, an
 * import of many password groups fills it and every app's password joins wait behind it. So at
 * most `concurrency` hashes run at once, and a request's own hash or check (a join, a new or
 * changed group: `interactive`) goes before those of a bulk import, whatever their number.
 */
export class PasswordHasher {
  private running = 0;
  private readonly waiting: { interactive: Array<() => void>; bulk: Array<() => void> } = { interactive: [], bulk: [] };

  constructor(private readonly concurrency: number) {}

  /** A password hashed for storage: `scrypt$N$r$p$salt$hash` (base64 parts). */
  async hash(password: string, priority: 'interactive' | 'bulk' = 'interactive'): Promise<string> {
    const salt = crypto.randomBytes(16);
    const hash = await this.slot(priority, () => scrypt(password, salt, KEY_LENGTH, { N, r: R, p: P }));
    return ['scrypt', N, R, P, salt.toString('base64'), hash.toString('base64')].join('$');
  }

  /** Checks a password against a stored hash, in constant time. */
  async verify(password: string, stored: string): Promise<boolean> {
    const [kind, n, r, p, salt, hash] = stored.split('$');
    if (kind !== 'scrypt' || !salt || !hash) return false;
    const expected = Buffer.from(hash, 'base64');
    const actual = await this.slot('interactive', () => scrypt(password, Buffer.from(salt, 'base64'), expected.length, { N: Number(n), r: Number(r), p: Number(p) }));
    return crypto.timingSafeEqual(actual, expected);
  }

  private async slot<T>(priority: 'interactive' | 'bulk', work: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) await new Promise<void>((resolve) => this.waiting[priority].push(resolve));
    else this.running++;
    try {
      return await work();
    } finally {
      // The place passes to the next in line (interactive first), or is given up.
      const next = this.waiting.interactive.shift() ?? this.waiting.bulk.shift();
      if (next) next();
      else this.running--;
    }
  }
}
