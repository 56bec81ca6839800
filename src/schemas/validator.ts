import AjvModule, { type ErrorObject, type ValidateFunction } from 'ajv';
import type { ErrorDetails } from '../domain/errors.js';
import addFormatsModule from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';

// ajv and ajv-formats are CommonJS with a default export.
const Ajv = AjvModule.default ?? AjvModule;
const addFormats = addFormatsModule.default ?? addFormatsModule;

function newAjv(coerceTypes: false | 'array') {
  const ajv = new Ajv({ coerceTypes, useDefaults: true, removeAdditional: false, allErrors: false, strict: false });
  addFormats(ajv);
  return ajv;
}

/** JSON bodies are validated as sent: a number is not a string. */
const strict = newAjv(false);
/** Query strings, path params and headers arrive as text and are coerced to the schema's types. */
const coercing = newAjv('array');

/**
 * A validator compiled when it first validates. Compiling a schema costs milliseconds (the ~150
 * routes' and the import records' ~1 s of CPU together on a slow machine), paid by every process
 * that loads the app: a server at its start, each CLI command, each test file. Compiled on first
 * use, a route or record kind that a process never sees costs it nothing. `errors` is the
 * compiled function's, as ajv sets it after each call.
 */
function compiledOnFirstUse(compile: () => ValidateFunction): ValidateFunction {
  let compiled: ValidateFunction | undefined;
  const validate = ((data: unknown) => {
    compiled ??= compile();
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  }) as ValidateFunction;
  validate.errors = null;
  return validate;
}

/** Validates one record against a body schema: the rules of the REST path, for the import path too. */
export function compileBodyValidator<T extends TSchema>(schema: T): ValidateFunction {
  return compiledOnFirstUse(() => strict.compile(schema));
}

/** Names of the array-typed properties of an object schema. */
// biome-ignore lint/suspicious/noExplicitAny: a JSON schema, as Fastify passes it
function arrayProperties(schema: Record<string, any>): string[] {
  const properties = (schema.properties ?? {}) as Record<string, { type?: string }>;
  return Object.entries(properties)
    .filter(([, property]) => property.type === 'array')
    .map(([name]) => name);
}

/**
 * Fastify's validator compiler. Array query values may come repeated (`tags=a&tags=b`) or
 * comma-separated (`tags=a,b`, the vendor's `explode: false` style); both become one list
 * before validation.
 */
// biome-ignore lint/suspicious/noExplicitAny: a JSON schema, as Fastify passes it
export function validatorCompiler({ schema, httpPart }: { schema: Record<string, any>; httpPart?: string }) {
  if (httpPart === 'body') return compiledOnFirstUse(() => strict.compile(schema));
  const validate = compiledOnFirstUse(() => coercing.compile(schema));
  const lists = httpPart === 'querystring' ? arrayProperties(schema) : [];
  if (lists.length === 0) return validate;
  const wrapped = (data: Record<string, unknown> | null) => {
    if (data) {
      for (const name of lists) {
        const value = data[name];
        if (value === undefined) continue;
        const items = (Array.isArray(value) ? value : [value]).flatMap((item) =>
          typeof item === 'string'
            ? item
                .split(',')
                .map((part) => part.trim())
                .filter(Boolean)
            : [item],
        );
        data[name] = items;
      }
    }
    const valid = validate(data);
    wrapped.errors = validate.errors as ErrorObject[] | null | undefined;
    return valid;
  };
  wrapped.errors = null as ErrorObject[] | null | undefined;
  return wrapped;
}

/**
 * The details of a failed validation, a problem per field (the first one found for it): the
 * REST path's (error-handler.ts) and each import record's (import-records.ts) alike. `whole`
 * names what failed when the error is about no field of it.
 */
export function validationDetails(errors: ReadonlyArray<Pick<ErrorObject, 'instancePath' | 'params' | 'message' | 'keyword'>>, whole: string): ErrorDetails {
  const details: ErrorDetails = {};
  for (const error of errors) {
    const missing = (error.params as { missingProperty?: string }).missingProperty;
    const field = [error.instancePath.replace(/^\//, '').replace(/\//g, '.'), missing].filter(Boolean).join('.') || whole;
    // The timestamps are unions: integer or string of digits (the other unions are enums). The
    // union's own error comes after its branches' and says it best.
    if (error.keyword === 'anyOf') {
      details[field] = field.endsWith('At') ? 'must be unix seconds (at most 10 digits), as an integer or a string of digits' : 'is not one of the allowed values';
    } else details[field] ??= missing ? 'is required' : (error.message ?? 'is not valid');
  }
  return details;
}
