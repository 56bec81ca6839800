import crypto from 'node:crypto';

/**
 * The signature of a webhook delivery (docs/webhooks.md), as Stream and Sendbird sign theirs:
 * `X-Parley-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, one `v1` per
 * signing secret in use (two while a rotated secret's overlap lasts).
 */
export function signatureHeader(secrets: readonly string[], timestamp: number, body: string): string {
  return [`t=${timestamp}`, ...secrets.map((secret) => `v1=${hmac(secret, timestamp, body)}`)].join(',');
}

/**
 * Whether `header` signs `body` with `secret`, at a time within `toleranceSeconds` of `now`
 * (unix seconds): what a receiver checks. Constant-time comparison.
 */
export function verifySignature(header: string, secret: string, body: string, now: number, toleranceSeconds = 300): boolean {
  const parts = header.split(',').map((part) => part.trim().split('='));
  const timestamp = Number(parts.find(([key]) => key === 't')?.[1]);
  if (!Number.isInteger(timestamp) || Math.abs(now - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(hmac(secret, timestamp, body), 'hex');
  return parts.some(([key, value]) => {
    if (key !== 'v1' || !value || value.length !== expected.length * 2) return false;
    return crypto.timingSafeEqual(Buffer.from(value, 'hex'), expected);
  });
}

function hmac(secret: string, timestamp: number, body: string): string {
  return crypto.createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}
