/**
 * The settings and records are typed from the OpenAPI document: `npm run typecheck` compiles this file, and
 * each `@ts-expect-error` line fails the check if the types ever stop catching its mistake.
 */
import { test } from 'node:test';
import type { ErrorCode as ServiceErrorCode } from '../../src/errors.ts';
import type { Client, ErrorCode } from '../src/index.ts';

/** Codes only the operator API, the dashboard or /readyz answer: an API key never meets them. */
type NotForApiKeys =
  | 'invalid_admin_token'
  | 'invalid_credentials'
  | 'email_not_confirmed'
  | 'csrf_failed'
  | 'account_not_found'
  | 'key_not_found'
  | 'channel_not_found'
  | 'too_many_keys'
  | 'email_taken'
  | 'account_has_email'
  | 'credit_reference_conflict'
  | 'invalid_token'
  | 'not_ready';
/** Every code the service answers API keys with is in the client's ErrorCode union (compile-time). */
export const everyApiCode = (code: Exclude<ServiceErrorCode, NotForApiKeys>): ErrorCode => code;

/** Never called: only compiled. */
export async function typed(c: Client): Promise<void> {
  await c.tasks.create({ model: 'image', settings: { prompt: 'a fox', size: '1024x1024', n: 2 } });
  // @ts-expect-error: not one of the image sizes
  await c.tasks.create({ model: 'image', settings: { prompt: 'a fox', size: '10x10' } });
  // @ts-expect-error: the image model takes a prompt
  await c.price({ model: 'image', settings: { text: 'a fox' } });
  // A model this client does not know yet: settings are free-form.
  await c.tasks.create({ model: 'future-model', settings: { anything: 1 } });
  const personas = await c.libraries('music', 'personas').list();
  personas.personas[0]?.song_title.toUpperCase();
  // @ts-expect-error: a persona's creation names its source task
  await c.libraries('music', 'personas').create({ name: 'x' });
  const lyrics = await c.helpers.lyrics({ prompt: 'rain' });
  lyrics.variants[0]?.title.toUpperCase();
  // An endpoint always has its description, null when none was given; null may be sent as none.
  const endpoint = await c.webhooks.create({
    url: 'https://example.com/hook',
    events: ['task.succeeded'],
    description: null,
  });
  const description: string | null = endpoint.description;
  description?.toUpperCase();
}

test('typing checks compile (see npm run typecheck)', () => {});
