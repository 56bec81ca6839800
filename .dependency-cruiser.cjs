/**
 * The architecture check (docs/architecture.md), run by `npm test` (test/unit/architecture.test.ts):
 * routes → services → repositories, no import cycles, no SQL outside repositories/ and db/.
 * src/schemas/ holds the HTTP layer's TypeBox schemas (the wire shapes of requests and answers,
 * their validator and serializer): HTTP, as far as the layers go.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'An import cycle ties modules together: neither can be understood or changed alone.',
      severity: 'error',
      from: { path: '(^|/)src/' },
      to: { circular: true },
    },
    {
      name: 'repositories-stay-below-services',
      comment: 'Repositories hold the SQL; they know nothing of the rules above them or of HTTP.',
      severity: 'error',
      from: { path: '(^|/)src/(repositories|db)/' },
      to: { path: '(^|/)src/(services|http|schemas|import)/|(^|/)src/(app|server|cli|container)\\.ts$' },
    },
    {
      name: 'http-goes-through-services',
      comment:
        'Routes and plugins call services, which own the rules, permissions, transactions and events; a route ' +
        'reading a repository or the database would skip them. Types too: what a repository returns is its own ' +
        'shape, which a service may change without HTTP noticing.',
      severity: 'error',
      from: { path: '(^|/)src/http/' },
      to: { path: '(^|/)src/(repositories|db)/' },
    },
    {
      name: 'services-know-no-http',
      comment: 'Services take a request context, never an HTTP request or reply.',
      severity: 'error',
      from: { path: '(^|/)src/services/' },
      to: { path: '(^|/)src/(http|import)/|(^|/)src/(app|server|cli)\\.ts$|^node_modules/(fastify|@fastify)/' },
    },
    {
      name: 'services-know-no-route-schemas',
      comment:
        'Route schemas (src/schemas/) are the wire shapes of requests and answers, which routes validate and ' +
        'serialize; a service takes its own input types and answers domain values. Allowed: the data import ' +
        "(services/import-records.ts, message-import.service.ts) validates each record itself against the record " +
        "schemas of data-import.schema.ts with schemas/validator.ts, because the vendor answers every record on its " +
        'own (a bad record is that record\'s error, never the call\'s), so those schemas are the service\'s input ' +
        'contract. Moving them out of src/schemas/ would split one wire format over two places.',
      severity: 'error',
      from: { path: '(^|/)src/services/' },
      to: { path: '(^|/)src/schemas/', pathNot: '(^|/)src/schemas/(data-import\\.schema|validator)\\.ts$' },
    },
    {
      name: 'domain-is-pure',
      comment: 'The domain (rules, ids, errors, pure mappers) depends on nothing of ours but itself.',
      severity: 'error',
      from: { path: '(^|/)src/domain/' },
      to: { path: '(^|/)src/(db|repositories|services|http|schemas|import)/' },
    },
    {
      name: 'sql-only-in-repositories-and-db',
      comment: 'SQL is written in repositories/ (and db/ for the engine itself): nothing else builds or runs a query.',
      severity: 'error',
      from: { path: '(^|/)src/', pathNot: '(^|/)src/(repositories|db)/' },
      to: { path: '^node_modules/(kysely|pg|@electric-sql/pglite)/', dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
    moduleSystems: ['es6'],
  },
};
