/**
 * The architecture check (docs/architecture.md), run by `npm test` (test/unit/architecture.test.ts):
 * routes → services → repositories, no import cycles, no SQL outside repositories/ and db/.
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
      to: { path: '(^|/)src/(services|http|import)/|(^|/)src/(app|server|cli|container)\\.ts$' },
    },
    {
      name: 'services-know-no-http',
      comment: 'Services take a request context, never an HTTP request or reply.',
      severity: 'error',
      from: { path: '(^|/)src/services/' },
      to: { path: '(^|/)src/(http|import)/|(^|/)src/(app|server|cli)\\.ts$|^node_modules/(fastify|@fastify)/' },
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
