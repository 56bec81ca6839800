import crypto from 'node:crypto';

/** Keys and tokens are stored as SHA-256 hex digests; the plain value is shown once. */
export function sha256Hex(value: string): string {
  return crypto.createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Constant-time comparison of two hex digests. */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && crypto.timingSafeEqual(left, right);
}

/** An API key as the vendor issues them: 40 hex characters. */
export function newApiKey(): string {
  return crypto.randomBytes(20).toString('hex');
}

const MASK = '*';

/**
 * What listings show instead of a secret: its first 8 and last 4 characters, with the middle
 * masked. The hint is unique per app (or per user for tokens), so it can also name the
 * secret in a path.
 */
export function maskSecret(secret: string, keepStart = 8, keepEnd = 4): string {
  return secret.slice(0, keepStart) + MASK.repeat(secret.length - keepStart - keepEnd) + secret.slice(-keepEnd);
}

export function isMasked(value: string): boolean {
  return value.includes(MASK);
}

/** An auth token as the vendor issues them: `<uid>_<unix seconds><40 hex>`. */
export function newAuthToken(uid: string, now: Date): string {
  return `${uid}_${Math.floor(now.getTime() / 1000)}${crypto.randomBytes(20).toString('hex')}`;
}

/** The masked form of an auth token keeps the uid and timestamp readable. */
export function maskAuthToken(token: string, uid: string): string {
  return maskSecret(token, uid.length + 1 + 10 + 4, 4);
}
