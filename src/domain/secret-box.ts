import crypto from 'node:crypto';

/** What a sealed value starts with: the format's version. */
const PREFIX = 'v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretBoxError extends Error {
  override name = 'SecretBoxError';
}

/**
 * Provider secrets at rest (docs/notifications.md): AES-256-GCM under the deployment's key, each
 * value bound to where it belongs (`context`, e.g. the app id and the secret's kind), so a sealed
 * value copied to another app's row or another field does not open. A sealed value is
 * `v1:` + base64url(iv | tag | ciphertext).
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(secret: Buffer) {
    if (secret.length < 32) throw new SecretBoxError('the secret key must have at least 32 bytes');
    // One derived key for this use, whatever else the deployment's secret may serve.
    this.key = Buffer.from(crypto.hkdfSync('sha256', secret, Buffer.alloc(0), 'parley provider secrets v1', 32));
  }

  seal(plain: string, context: string): string {
    const iv = crypto.randomBytes(IV_BYTES);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** The plain value; throws SecretBoxError when it was sealed under another key or context, or altered. */
  open(sealed: string, context: string): string {
    if (!sealed.startsWith(PREFIX)) throw new SecretBoxError('not a sealed value');
    const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64url');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new SecretBoxError('a sealed value too short');
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError('the sealed value does not open with this key (another deployment key, or altered)');
    }
  }
}
