import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The version in package.json. */
export const PARLEY_VERSION: string = (require('../package.json') as { version: string }).version;
