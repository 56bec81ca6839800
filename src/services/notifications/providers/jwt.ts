import crypto from 'node:crypto';

/**
 * A compact JWS (RFC 7515) of `header` and `claims`, signed with a PEM private key: RS256
 * (RSASSA-PKCS1-v1_5 with SHA-256, FCM's service-account assertion) or ES256 (ECDSA P-256 with
 * SHA-256, APNs' provider token). node:crypto signs; no JWT library is needed for two claims sets.
 * Throws when the key cannot be read or does not fit the algorithm (the caller reports it).
 */
export function signJwt(algorithm: 'RS256' | 'ES256', header: Record<string, string>, claims: Record<string, unknown>, privateKeyPem: string): string {
  const input = `${base64url(JSON.stringify(Object.assign({ alg: algorithm }, header)))}.${base64url(JSON.stringify(claims))}`;
  const key = crypto.createPrivateKey(privateKeyPem);
  if (key.asymmetricKeyType !== (algorithm === 'RS256' ? 'rsa' : 'ec')) throw new Error(`the key is ${key.asymmetricKeyType ?? 'not asymmetric'}, not ${algorithm === 'RS256' ? 'RSA' : 'EC'}`);
  // ES256 wants the raw r‖s signature (RFC 7518 §3.4), not DER.
  const signature = crypto.sign('sha256', Buffer.from(input), algorithm === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' } : key);
  return `${input}.${base64url(signature)}`;
}

function base64url(value: string | Buffer): string {
  return (typeof value === 'string' ? Buffer.from(value, 'utf8') : value).toString('base64url');
}
