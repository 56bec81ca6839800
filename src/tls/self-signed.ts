import crypto from 'node:crypto';
import net from 'node:net';

/**
 * A self-signed X.509 certificate (ECDSA P-256, SHA-256) for development and first runs.
 * Node can sign and parse certificates but not build one, so this encodes the few DER
 * structures a certificate needs; `crypto.X509Certificate` checks the result in the tests.
 */

// --- DER encoding -------------------------------------------------------------------------

function der(tag: number, content: Buffer): Buffer {
  const length = content.length;
  if (length < 0x80) return Buffer.concat([Buffer.from([tag, length]), content]);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return Buffer.concat([Buffer.from([tag, 0x80 | bytes.length, ...bytes]), content]);
}

const sequence = (...items: Buffer[]) => der(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => der(0x31, Buffer.concat(items));
const explicit = (n: number, content: Buffer) => der(0xa0 | n, content);
const octetString = (content: Buffer) => der(0x04, content);
const bitString = (content: Buffer) => der(0x03, Buffer.concat([Buffer.from([0]), content]));
const utf8 = (text: string) => der(0x0c, Buffer.from(text, 'utf8'));
const boolean = (value: boolean) => der(0x01, Buffer.from([value ? 0xff : 0]));

function integer(bytes: Buffer): Buffer {
  let content = bytes;
  while (content.length > 1 && content[0] === 0 && content[1]! < 0x80) content = content.subarray(1);
  if (content[0]! >= 0x80) content = Buffer.concat([Buffer.from([0]), content]);
  return der(0x02, content);
}

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const bytes = [40 * parts[0]! + parts[1]!];
  for (const part of parts.slice(2)) {
    const chunk: number[] = [part & 0x7f];
    for (let rest = part >> 7; rest > 0; rest >>= 7) chunk.unshift(0x80 | (rest & 0x7f));
    bytes.push(...chunk);
  }
  return der(0x06, Buffer.from(bytes));
}

function time(date: Date): Buffer {
  const iso = `${date.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`; // YYYYMMDDHHMMSSZ
  // UTCTime until 2049, GeneralizedTime after (RFC 5280 §4.1.2.5).
  return date.getUTCFullYear() < 2050 ? der(0x17, Buffer.from(iso.slice(2))) : der(0x18, Buffer.from(iso));
}

const OID = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
};

function name(commonName: string): Buffer {
  return sequence(set(sequence(oid(OID.organization), utf8('Parley self-signed'))), set(sequence(oid(OID.commonName), utf8(commonName))));
}

function subjectAltNames(names: string[]): Buffer {
  const entries = names.map((entry) => {
    if (net.isIPv4(entry)) return der(0x87, Buffer.from(entry.split('.').map(Number)));
    return der(0x82, Buffer.from(entry, 'ascii'));
  });
  return sequence(...entries);
}

function extension(id: string, value: Buffer, critical = false): Buffer {
  return sequence(oid(id), ...(critical ? [boolean(true)] : []), octetString(value));
}

// --- Certificate --------------------------------------------------------------------------

export interface SelfSignedCertificate {
  cert: string;
  key: string;
}

/**
 * Issues a certificate for the given DNS names and IPv4 addresses (the first name is the
 * subject's common name), valid from an hour ago for `days` days.
 */
export function createSelfSignedCertificate(names: string[], days = 825): SelfSignedCertificate {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const now = Date.now();
  const notBefore = new Date(now - 60 * 60 * 1000);
  const notAfter = new Date(now + days * 24 * 60 * 60 * 1000);
  const serial = crypto.randomBytes(16);
  serial[0]! &= 0x7f;
  const algorithm = sequence(oid(OID.ecdsaWithSha256));
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))), // v3
    integer(serial),
    algorithm,
    name(names[0]!),
    sequence(time(notBefore), time(notAfter)),
    name(names[0]!),
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(
      3,
      sequence(
        extension(OID.basicConstraints, sequence(), true), // not a CA
        extension(OID.keyUsage, der(0x03, Buffer.from([0x07, 0x80])), true), // digitalSignature
        extension(OID.extKeyUsage, sequence(oid(OID.serverAuth))),
        extension(OID.subjectAltName, subjectAltNames(names)),
      ),
    ),
  );
  const signature = crypto.sign('sha256', tbs, privateKey);
  const certificate = sequence(tbs, algorithm, bitString(signature));
  const base64 = certificate
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '');
  return {
    cert: `-----BEGIN CERTIFICATE-----\n${base64}\n-----END CERTIFICATE-----\n`,
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  };
}

/** The names Parley's own certificate covers: every app host of the region, and loopback. */
export function parleyCertificateNames(region: string, domain: string): string[] {
  return [`*.api-${region}.${domain}`, `api-${region}.${domain}`, `apimgmt.${domain}`, 'localhost', '127.0.0.1'];
}
