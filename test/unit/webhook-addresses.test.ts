/**
 * The private-address rule of the URLs Parley calls (webhooks, the moderation hook: docs/webhooks.md,
 * "URLs and server-side request forgery"): isNonPublicAddress on every spelling of the IPv6 forms
 * that carry an IPv4 address, and the URL checks around it (control characters anywhere).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hookUrlProblem } from '../../src/domain/moderation/hook.js';
import { isNonPublicAddress, urlControlProblem, webhookUrlProblem } from '../../src/domain/webhooks.js';

const REFUSED: Array<[string, string]> = [
  // IPv4 itself.
  ['127.0.0.1', 'loopback'],
  ['10.0.0.1', 'private'],
  ['169.254.169.254', 'link-local (cloud metadata)'],
  ['192.88.99.1', '6to4 relay anycast'],
  // ::/96, IPv4-compatible (deprecated): refused whatever it carries.
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['::127.0.0.1', 'IPv4-compatible loopback, dotted'],
  ['::7f00:1', 'IPv4-compatible loopback, hex'],
  ['::a00:1', 'IPv4-compatible 10.0.0.1'],
  ['0:0:0:0:0:0:a00:1', 'IPv4-compatible 10.0.0.1, in full'],
  ['::8.8.8.8', 'IPv4-compatible, even of a public address'],
  // ::ffff:0:0/96, IPv4-mapped, in every spelling node accepts.
  ['::ffff:127.0.0.1', 'mapped loopback, dotted'],
  ['::ffff:7f00:1', 'mapped loopback, hex'],
  ['::FFFF:7F00:0001', 'mapped loopback, upper case, padded'],
  ['0:0:0:0:0:ffff:7f00:1', 'mapped loopback, in full'],
  ['0000:0000:0000:0000:0000:ffff:127.0.0.1', 'mapped loopback, in full, dotted'],
  ['::ffff:10.0.0.1', 'mapped private, dotted'],
  ['::ffff:a00:1', 'mapped private, hex'],
  ['::ffff:a9fe:a9fe', 'mapped metadata address'],
  ['::ffff:192.168.1.1', 'mapped private'],
  ['::ffff:0.0.0.0', 'mapped unspecified'],
  // ::ffff:0:0:0/96, IPv4-translated.
  ['::ffff:0:127.0.0.1', 'translated loopback'],
  ['::ffff:0:a00:1', 'translated private'],
  // 64:ff9b::/96, NAT64, and its local-use 64:ff9b:1::/48.
  ['64:ff9b::10.0.0.1', 'NAT64 of a private address, dotted'],
  ['64:ff9b::a00:1', 'NAT64 of a private address, hex'],
  ['64:ff9b:0:0:0:0:7f00:1', 'NAT64 loopback, in full'],
  ['64:ff9b:1::8.8.8.8', 'local-use NAT64'],
  // 2002::/16, 6to4: bits 16-47 carry the IPv4 address.
  ['2002:7f00:1::', '6to4 of loopback'],
  ['2002:a00:1::1', '6to4 of 10.0.0.1'],
  ['2002:0a00:0001:0000:0000:0000:0000:0001', '6to4 of 10.0.0.1, in full'],
  ['2002:c0a8:101::1', '6to4 of 192.168.1.1'],
  ['2002:a9fe:a9fe::', '6to4 of the metadata address'],
  ['2002:ac10:1:ffff::', '6to4 of 172.16.0.1'],
  // Teredo (2001::/32), refused whole.
  ['2001::1', 'Teredo'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo (RFC 4380 example)'],
  // IPv6 ranges of their own.
  ['fe80::1%eth0', 'link-local with a zone'],
  ['fd00::1', 'unique local'],
  ['2001:db8::1', 'documentation'],
  ['3fff::1', 'documentation (RFC 9637)'],
  ['ff02::1', 'multicast'],
];

const PUBLIC: Array<[string, string]> = [
  ['8.8.8.8', 'public IPv4'],
  ['::ffff:8.8.8.8', 'mapped public, dotted'],
  ['::ffff:808:808', 'mapped public, hex'],
  ['64:ff9b::8.8.8.8', 'NAT64 of a public address'],
  ['64:ff9b::5db8:d822', 'NAT64 of a public address, hex'],
  ['2002:808:808::1', '6to4 of a public address'],
  ['2606:2800:220:1:248:1893:25c8:1946', 'public IPv6'],
  ['2a00:1450:4001:82b::200e', 'public IPv6'],
];

describe('isNonPublicAddress', () => {
  for (const [address, what] of REFUSED) {
    it(`refuses ${address} (${what})`, () => {
      assert.equal(isNonPublicAddress(address), true);
    });
  }
  for (const [address, what] of PUBLIC) {
    it(`accepts ${address} (${what})`, () => {
      assert.equal(isNonPublicAddress(address), false);
    });
  }
  it('answers false for what is not an address literal (a host name is checked when it resolves)', () => {
    assert.equal(isNonPublicAddress('example.com'), false);
  });
});

describe('the URL checks around it', () => {
  const literal = (address: string) => (address.includes(':') ? `[${address.replace(/%.*$/, '')}]` : address);

  it('refuses every such address as a webhook URL’s and a moderation hook URL’s host, in the spelling given', () => {
    for (const [address] of REFUSED) {
      const url = `https://${literal(address)}/hook`;
      assert.match(webhookUrlProblem(url, false) ?? '', /public host/, url);
      assert.match(hookUrlProblem(url, false) ?? '', /public host/, url);
      assert.equal(webhookUrlProblem(url, true), undefined, `${url} where the deployment allows private addresses`);
    }
    for (const [address] of PUBLIC) {
      const url = `https://${literal(address)}/hook`;
      assert.equal(webhookUrlProblem(url, false), undefined, url);
      assert.equal(hookUrlProblem(url, false), undefined, url);
    }
  });

  const CONTROLS = ['\u0000', '\u0001', '\t', '\n', '\r', '\u001b', '\u001f', '\u007f', '\u0080', '\u0085', '\u009f'];

  it('refuses control characters (C0, DEL, C1) anywhere in the URL as given: the ends, the user info, the host, the path, the query, the fragment', () => {
    for (const control of CONTROLS) {
      for (const url of [
        `${control}https://hooks.example.com/in`,
        `https://hooks.example.com/in${control}`,
        `https://us${control}er@hooks.example.com/in`,
        `https://hooks.exa${control}mple.com/in`,
        `https://hooks.example.com/i${control}n`,
        `https://hooks.example.com/in?a=${control}`,
        `https://hooks.example.com/in#${control}`,
      ]) {
        assert.equal(urlControlProblem(url), 'must not hold control characters', JSON.stringify(url));
        assert.equal(webhookUrlProblem(url, true), 'must not hold control characters', JSON.stringify(url));
        assert.equal(hookUrlProblem(url, true), 'must not hold control characters', JSON.stringify(url));
      }
    }
  });

  it('lets other characters through to the other rules', () => {
    assert.equal(urlControlProblem('https://hooks.example.com/caf\u00e9?q=\u00a0'), undefined);
    assert.equal(webhookUrlProblem('https://hooks.example.com/caf\u00e9', false), undefined);
  });
});
