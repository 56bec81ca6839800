import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { SecretBoxError } from './domain/secret-box.js';

/**
 * The deployment's secret key: PARLEY_SECRET_KEY when set (at least 32 characters), else the
 * one kept in the data dir (`secret.key`, made on first start, readable by the owner only).
 * Every node of a deployment must have the same key (set PARLEY_SECRET_KEY on each).
 */
export function loadSecretKey(options: { secretKey: string | undefined; dataDir: string }): { key: Buffer; source: 'environment' | 'file' | 'generated'; file?: string } {
  if (options.secretKey !== undefined) {
    if (options.secretKey.length < 32) throw new SecretBoxError('PARLEY_SECRET_KEY must have at least 32 characters');
    return { key: Buffer.from(options.secretKey, 'utf8'), source: 'environment' };
  }
  const file = path.join(options.dataDir, 'secret.key');
  if (fs.existsSync(file)) {
    const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64url');
    if (key.length < 32) throw new SecretBoxError(`${file} holds no usable key (at least 32 bytes, base64url)`);
    return { key, source: 'file', file };
  }
  const key = crypto.randomBytes(32);
  fs.mkdirSync(options.dataDir, { recursive: true });
  // wx: two processes starting at once do not overwrite each other's key.
  try {
    fs.writeFileSync(file, `${key.toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return loadSecretKey(options);
    throw error;
  }
  return { key, source: 'generated', file };
}
