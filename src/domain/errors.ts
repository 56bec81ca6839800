import { ERROR_CATALOGUE, type ErrorCode } from './error-codes.js';

export type ErrorDetails = Record<string, string>;

export interface AppErrorOptions {
  /** Values for the `{name}` placeholders of the catalogue message. */
  params?: Record<string, string | number>;
  /** Replaces the catalogue message entirely. */
  message?: string;
  /** Field-level details, field name → problem. */
  details?: ErrorDetails;
  cause?: unknown;
  /** Seconds the client should wait before retrying (sent as Retry-After). */
  retryAfter?: number;
}

/** The one error type services throw. Its status always comes from the catalogue. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetails | undefined;
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    const entry = ERROR_CATALOGUE[code];
    super(options.message ?? fillMessage(entry.message, options.params), { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = entry.status;
    this.details = options.details;
    this.retryAfter = options.retryAfter;
  }
}

function fillMessage(template: string, params: Record<string, string | number> | undefined): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = params?.[name];
    return value === undefined ? whole.replace(/[{}]/g, '') : String(value);
  });
}

/** The answer for one uid of a bulk call that refused it. */
export function uidFailure(error: AppError): { success: false; error: { code: string; message: string } } {
  return { success: false, error: { code: error.code, message: error.message } };
}

/** A field-level validation failure: ERR_BAD_REQUEST with details. */
export function badRequest(details: ErrorDetails, message?: string): AppError {
  const fields = Object.entries(details)
    .map(([field, problem]) => `${field} ${problem}`)
    .join('; ');
  return new AppError('ERR_BAD_REQUEST', { details, message: message ?? `The request is not valid: ${fields}.` });
}
