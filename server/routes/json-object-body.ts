import type { Context } from 'koa';
import { type BodyReader, parseJson } from '../body.js';
import { HttpError } from '../http-error.js';

/**
 * The body of a small JSON request (sign-in, a new shared link) as an object: `application/json`
 * only (415 otherwise: a cross-site form cannot send that type without a preflight), valid JSON
 * (400 `INVALID_JSON`), an object (400 `VALIDATION_ERROR`). An empty body is `{}`.
 */
export async function readJsonObject(ctx: Context, read: BodyReader): Promise<Record<string, unknown>> {
  if (ctx.request.length !== undefined && ctx.request.length === 0) return {};
  if (!ctx.request.is('application/json')) throw new HttpError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json.');
  const text = await read(ctx, false);
  if (text.trim() === '') return {};
  const value = parseJson(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new HttpError('VALIDATION_ERROR', 'The body must be a JSON object.');
  return value as Record<string, unknown>;
}

/** A string field of a body, or a 400 naming it. */
export function stringField(body: Record<string, unknown>, name: string, options: { max: number; optional?: boolean }): string {
  const value = body[name];
  if (value === undefined && options.optional === true) return '';
  if (typeof value !== 'string' || value.length > options.max || (value === '' && options.optional !== true)) {
    throw new HttpError('VALIDATION_ERROR', `"${name}" must be a string of 1–${options.max} characters.`);
  }
  return value;
}
