import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import fastJsonStringify from 'fast-json-stringify';
import { ImportCallLimiter } from '../../src/http/plugins/import-limits.js';
import { dataImportRoutes } from '../../src/http/routes/data-import/index.js';
import { managementRoutes } from '../../src/http/routes/mgmt/index.js';
import { v3Routes } from '../../src/http/routes/v3/index.js';
import { validatorCompiler } from '../../src/schemas/validator.js';
import { createTestApp, TEST_DOMAIN, TEST_REGION, type TestApp } from '../helpers/app.js';

// The app compiles a route's validators and response serializers when a request first needs
// them (schemas/validator.ts, schemas/serializer.ts), so a schema that cannot compile would
// surface only at that request. Here every route's schemas are compiled at once, with the same
// compilers, as Fastify would at start: each must compile.

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

describe('route schemas', () => {
  it('every route’s request and response schemas compile', async () => {
    const scratch = Fastify();
    let validators = 0;
    let serializers = 0;
    scratch.setValidatorCompiler((route) => {
      const validate = validatorCompiler(route);
      validate(null); // compiles it
      validators++;
      return validate;
    });
    scratch.setSerializerCompiler((route) => {
      const serialize = fastJsonStringify(route.schema as never);
      serializers++;
      return serialize;
    });
    const tenancy = { region: TEST_REGION, domain: TEST_DOMAIN };
    await scratch.register(v3Routes, { prefix: '/v3', services: t.services, tenancy });
    await scratch.register(managementRoutes, { prefix: '/mgmt', services: t.services, tenancy, vendorHost: false });
    const importCalls = new ImportCallLimiter({ perServer: 1, perApp: 1 });
    await scratch.register(dataImportRoutes, { prefix: '/v3/data_import', services: t.services, tenancy, bodyLimit: 1, hidden: false, importCalls });
    await scratch.ready();
    await scratch.close();
    // The route table is large: a registration that compiled nothing would show here.
    assert.ok(validators > 150, `${validators} validators compiled`);
    assert.ok(serializers > 300, `${serializers} serializers compiled`);
  });
});
