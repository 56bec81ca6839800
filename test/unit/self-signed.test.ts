import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import { createSelfSignedCertificate, parleyCertificateNames } from '../../src/tls/self-signed.js';

describe('self-signed certificate', () => {
  const names = parleyCertificateNames('eu', 'chat.example.com');
  const { cert, key } = createSelfSignedCertificate(names, 30);
  const x509 = new crypto.X509Certificate(cert);

  it('is signed by its own key', () => {
    assert.ok(x509.verify(x509.publicKey));
    assert.ok(x509.checkPrivateKey(crypto.createPrivateKey(key)));
  });

  it('covers every app host of the region, the management API, and loopback', () => {
    assert.equal(x509.checkHost('myapp.api-eu.chat.example.com'), '*.api-eu.chat.example.com');
    assert.equal(x509.checkHost('apimgmt.chat.example.com'), 'apimgmt.chat.example.com');
    assert.equal(x509.checkHost('myapp.api-us.chat.example.com'), undefined);
    assert.equal(x509.checkHost('localhost'), 'localhost');
    assert.equal(x509.checkIP('127.0.0.1'), '127.0.0.1');
    assert.match(x509.subject, /CN=\*\.api-eu\.chat\.example\.com/);
  });

  it('is valid now and for the days asked, and is not a CA', () => {
    const from = new Date(x509.validFrom).getTime();
    const to = new Date(x509.validTo).getTime();
    assert.ok(from <= Date.now() && Date.now() < to);
    assert.ok(Math.abs(to - Date.now() - 30 * 86_400_000) < 120_000);
    assert.equal(x509.ca, false);
  });

  it('gets a new key and serial each time', () => {
    const other = new crypto.X509Certificate(createSelfSignedCertificate(names).cert);
    assert.notEqual(other.serialNumber, x509.serialNumber);
    assert.notEqual(other.fingerprint256, x509.fingerprint256);
  });
});
