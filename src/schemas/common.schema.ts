import { Type, type TSchema } from '@sinclair/typebox';
import { ID_MAX_LENGTH, ID_PATTERN, LIMITS, UNIX_SECONDS_MAX } from '../domain/normalize.js';

/** A uid, guid or role id as sent by a client (any case; stored lower-cased). */
export const Id = (description: string) => Type.String({ pattern: ID_PATTERN, minLength: 1, maxLength: ID_MAX_LENGTH, description });

export const Url = (description: string) => Type.String({ maxLength: LIMITS.urlLength, format: 'uri', description });

export const Tags = (description: string) => Type.Array(Type.String({ minLength: 1, maxLength: LIMITS.tagLength }), { maxItems: LIMITS.tagsPerEntity, description });

/** Any JSON object, kept as sent. */
export const JsonObject = (description: string) => Type.Object({}, { additionalProperties: true, description });

export const UnixTime = (description: string) => Type.Integer({ description });

/** Unix seconds sent by a client: bounded, so no value overflows a timestamp (or is Infinity). */
export const UnixTimeInput = (description: string) => Type.Integer({ minimum: 0, maximum: UNIX_SECONDS_MAX, description });

export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'Vendor error code, e.g. ERR_UID_NOT_FOUND.' }),
      message: Type.String(),
      devMessage: Type.Optional(Type.String()),
      details: Type.Optional(Type.Record(Type.String(), Type.String())),
    }),
  },
  { description: 'An error, in the vendor’s shape.' },
);

export const PaginationMeta = Type.Object({
  pagination: Type.Object({
    total: Type.Integer(),
    count: Type.Integer(),
    per_page: Type.Integer(),
    current_page: Type.Integer(),
    total_pages: Type.Integer(),
  }),
});

export const PageQuery = {
  perPage: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.perPageMax, default: LIMITS.perPageDefault, description: 'Items per page.' })),
  // Bounded: a huge page would overflow the offset (and `1e309` reads as Infinity).
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1.' })),
};

/** A list in a query: repeated (`a=1&a=2`) or comma-separated (`a=1,2`). */
export const ListQuery = <T extends TSchema>(item: T, description: string) => Type.Array(item, { maxItems: 100, description });

export const SuccessMessage = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
});

export const OnBehalfOfHeader = Type.String({
  description: 'UID of the user on whose behalf the action is performed.',
});

/** The error statuses every authenticated route can answer with. */
export const errorResponses = {
  400: ErrorResponse,
  401: ErrorResponse,
  403: ErrorResponse,
  404: ErrorResponse,
  413: ErrorResponse,
  415: ErrorResponse,
  429: ErrorResponse,
} as const;

export const Data = <T extends TSchema>(data: T) => Type.Object({ data });
export const DataWithMeta = <T extends TSchema, M extends TSchema>(data: T, meta: M) => Type.Object({ data, meta });
