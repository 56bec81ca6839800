/**
 * Conformance with the vendor's OpenAPI documents (../shared/reference): every vendor operation
 * is either routed by Parley, under the vendor's operationId, or listed in
 * docs/compatibility.md with a reason. For routed operations, the vendor's query parameters
 * and body properties are accepted (or listed there as not supported yet), and the fields of its
 * response examples are returned (or listed there as not yet returned).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';

const REFERENCE = path.resolve('../shared/reference');
const SPECS = [
  { file: 'cometchat-chat-apis.json', prefixes: ['/v3'] },
  { file: 'cometchat-data-import-apis.json', prefixes: ['/v3', '/v3.0'] },
  // The management API: its paths on apimgmt.<domain>, and under /mgmt on any host.
  { file: 'cometchat-management-apis.json', prefixes: ['', '/mgmt'] },
];
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const available = fs.existsSync(path.join(REFERENCE, SPECS[0]!.file));

interface VendorOperation {
  operationId: string;
  method: string;
  path: string;
  prefixes: string[];
  operation: any;
}

function vendorOperations(): VendorOperation[] {
  return SPECS.flatMap(({ file, prefixes }) => {
    const spec = JSON.parse(fs.readFileSync(path.join(REFERENCE, file), 'utf8'));
    return Object.entries(spec.paths as Record<string, any>).flatMap(([route, ops]) =>
      METHODS.filter((method) => ops[method]).map((method) => ({
        operationId: ops[method].operationId as string,
        method,
        path: route,
        prefixes,
        operation: ops[method],
      })),
    );
  });
}

/** Rows of the markdown table under a heading of docs/compatibility.md: first column → the rest. */
function tableRows(heading: string): Array<string[]> {
  const doc = fs.readFileSync('docs/compatibility.md', 'utf8');
  const start = doc.indexOf(`## ${heading}`);
  assert.ok(start >= 0, `docs/compatibility.md has a "## ${heading}" section`);
  const section = doc.slice(start).split(/\n## /)[0]!.split('\n');
  return section
    .filter((line) => /^\|\s*`?[a-z0-9-]+`?\s*\|/.test(line))
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim().replace(/^`|`$/g, '')),
    );
}

/** The vendor example's data fields: the keys of `data`, or of its items. */
function exampleFields(operation: any): string[] {
  const example = operation.responses?.['200']?.content?.['application/json']?.example;
  const data = example?.data;
  if (Array.isArray(data)) return [...new Set(data.flatMap((item) => (item && typeof item === 'object' ? Object.keys(item) : [])))];
  if (data && typeof data === 'object') return Object.keys(data);
  return [];
}

function schemaFields(schema: any): Set<string> {
  const data = schema?.properties?.data;
  const target = data?.type === 'array' ? data.items : data;
  return new Set(Object.keys(target?.properties ?? {}));
}

describe('vendor conformance', { skip: !available && 'needs ../shared/reference (the vendor specs), present in CI' }, () => {
  let t: TestApp;
  let ours: Map<string, { method: string; path: string; operation: any }>;
  before(async () => {
    t = await createTestApp();
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    ours = new Map();
    for (const [route, ops] of Object.entries(doc.paths as Record<string, any>)) {
      for (const method of METHODS) {
        if (ops[method]) ours.set(`${method} ${route}`, { method, path: route, operation: ops[method] });
      }
    }
  });
  after(async () => {
    await t?.close();
  });

  it('routes every vendor operation or lists it as unsupported, with a reason', () => {
    const unsupported = new Map(tableRows('Operations not supported').map((row) => [row[0]!, row]));
    // Two vendor operations on one method and path: the route carries the first one's operationId.
    const servedBy = new Map(tableRows('Operations served by another operation').map((row) => [row[0]!, row[1]!]));
    const missing: string[] = [];
    const stale: string[] = [];
    for (const vendor of vendorOperations()) {
      const other = servedBy.get(vendor.operationId);
      if (other !== undefined) {
        const route = `${vendor.prefixes[0]}${vendor.path}`.replace(/\{(\w+)\}/g, ':$1');
        assert.ok(t.app.hasRoute({ method: vendor.method.toUpperCase() as 'GET', url: route }), `${vendor.operationId} is routed`);
        assert.ok(
          [...ours.values()].some((op) => op.method === vendor.method && op.operation.operationId === other),
          `${vendor.operationId} is served by ${other}, which is routed`,
        );
        continue;
      }
      const routed = vendor.prefixes.every((prefix) => t.app.hasRoute({ method: vendor.method.toUpperCase() as 'GET', url: `${prefix}${vendor.path}`.replace(/\{(\w+)\}/g, ':$1') }));
      const listed = unsupported.get(vendor.operationId);
      if (routed) {
        const documented = ours.get(`${vendor.method} ${vendor.prefixes[0]}${vendor.path}`);
        assert.equal(documented?.operation.operationId, vendor.operationId, `${vendor.operationId} is documented under the vendor's operationId`);
        if (listed) stale.push(vendor.operationId);
      } else if (!listed) {
        missing.push(`${vendor.operationId} (${vendor.method.toUpperCase()} ${vendor.path})`);
      } else {
        assert.ok((listed[2] ?? '').length > 10, `${vendor.operationId} has a reason`);
      }
    }
    assert.deepEqual(missing, [], 'operations neither routed nor listed in docs/compatibility.md');
    assert.deepEqual(stale, [], 'operations routed but still listed as unsupported');
  });

  it('routes nothing outside the vendor surface but the documented extras', () => {
    const vendorRoutes = new Set(vendorOperations().flatMap((op) => op.prefixes.map((prefix) => `${op.method} ${prefix}${op.path}`)));
    const extras = new Set(tableRows('Parley extensions').map((row) => row[0]!));
    for (const [key, route] of ours) {
      if (vendorRoutes.has(key)) continue;
      assert.ok(extras.has(route.operation.operationId), `${key} (${route.operation.operationId}) is in the vendor specs or listed under "Parley extensions"`);
    }
  });

  it("accepts the vendor's query parameters and body properties on routed operations", () => {
    const refused = new Set(tableRows('Query parameters not supported yet').map((row) => `${row[0]} ${row[1]}`));
    for (const vendor of vendorOperations()) {
      const route = ours.get(`${vendor.method} ${vendor.prefixes[0]}${vendor.path}`);
      if (!route) continue;
      const ourQuery = new Set((route.operation.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => p.name));
      for (const parameter of vendor.operation.parameters ?? []) {
        if (parameter.in !== 'query') continue;
        const name = `${vendor.operationId} ${parameter.name}`;
        if (refused.has(name)) assert.ok(!ourQuery.has(parameter.name), `${name} is accepted: remove it from "Query parameters not supported yet"`);
        else assert.ok(ourQuery.has(parameter.name), `${vendor.operationId} accepts ?${parameter.name}`);
      }
      const vendorBody = vendor.operation.requestBody?.content?.['application/json']?.schema?.properties ?? {};
      const ourBody = route.operation.requestBody?.content?.['application/json']?.schema?.properties ?? {};
      for (const property of Object.keys(vendorBody)) {
        assert.ok(property in ourBody, `${vendor.operationId} accepts body.${property}`);
      }
    }
  });

  it("returns the fields of the vendor's response examples, or lists them as not yet returned", () => {
    const gaps = new Set(tableRows('Response fields not returned yet').map((row) => `${row[0]} ${row[1]}`));
    const missing: string[] = [];
    for (const vendor of vendorOperations()) {
      const route = ours.get(`${vendor.method} ${vendor.prefixes[0]}${vendor.path}`);
      if (!route) continue;
      const fields = schemaFields(route.operation.responses?.['200']?.content?.['application/json']?.schema);
      for (const field of exampleFields(vendor.operation)) {
        if (!fields.has(field) && !gaps.has(`${vendor.operationId} ${field}`)) missing.push(`${vendor.operationId}: ${field}`);
      }
    }
    assert.deepEqual(missing, []);
  });
});
