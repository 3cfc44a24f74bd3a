import type { Catalog } from './messages.ts';

export const en: Catalog = {
  invalid_api_key:
    'The API key is missing, malformed, unknown or revoked. Send Authorization: Bearer <API_KEY>.',
  invalid_admin_token: 'The operator token is missing or wrong.',
  insufficient_funds:
    'The balance is too low: the run costs {amount} {amount|kopeck|kopecks}, {available} {available|is|are} available. No task was created.',
  model_not_allowed_for_key: 'This API key may not use model "{model}".',
  key_daily_limit_exceeded:
    'The daily spending limit of this key ({limit} {limit|kopeck|kopecks}, {spent} spent today, Moscow time) does not cover this run. No task was created.',
  model_not_found: 'There is no model "{model}". GET /v1/models lists the models.',
  task_not_found: 'There is no task "{id}".',
  artifact_expired: 'The files of task "{id}" are past their storage period and no longer available.',
  artifact_not_found: 'Task "{id}" has no result file with index {index}.',
  account_not_found: 'There is no account "{id}".',
  key_not_found: 'There is no API key "{id}".',
  channel_not_found: 'There is no channel "{name}".',
  file_not_found: 'There is no file "{id}".',
  record_not_found: 'There is no library record "{id}".',
  webhook_not_found: 'There is no webhook endpoint "{id}".',
  delivery_not_found: 'There is no webhook delivery "{id}".',
  topup_not_found: 'There is no top-up "{id}".',
  not_found: 'Nothing lives at {method} {path}. See the links in docs, openapi and llms.',
  method_not_allowed: 'This address does not accept {method}. Allowed: {allow}.',
  idempotency_conflict: 'A request with other parameters was already made under this Idempotency-Key.',
  request_in_progress:
    'The request under this Idempotency-Key is still being processed; repeat it in a few seconds.',
  element_name_taken: 'You already have an element named "{name}".',
  persona_exists: 'A persona from this song version is already saved.',
  invalid_credentials: 'The e-mail or the password is wrong.',
  email_not_confirmed: 'Confirm your e-mail first: open the link in the confirmation mail.',
  csrf_failed:
    'The CSRF token is missing or wrong: send the X-CSRF-Token header of your session with cookie-authenticated changes.',
  email_taken: 'An account with this e-mail exists already; sign in or reset the password.',
  account_has_email: 'Account "{id}" has an e-mail already.',
  invalid_token: 'The link is unknown, used already or expired; ask for a new one.',
  too_many_keys: 'The account already has {limit} active keys; revoke one first.',
  too_many_webhooks: 'The account already has {limit} webhook endpoints; delete one first.',
  too_many_records: 'This library already holds {limit} of your records; delete one first.',
  credit_reference_conflict:
    'Reference "{reference}" already credited {amount} {amount|kopeck|kopecks}; a credit under it with another amount is refused. Use a new reference.',
  task_not_cancelable: 'The task is already {status} and cannot be canceled.',
  voice_not_verifiable: 'The voice is not waiting for a recording.',
  voice_not_retryable: 'Only a failed voice can be retried.',
  request_timeout:
    'The request did not arrive in time: its headers or body stalled or came too slowly. Send it again on a new connection.',
  storage_quota_exceeded:
    "This file does not fit in the account's upload storage ({used} MB of {quota} MB in use). Delete uploads you no longer need.",
  request_too_large: 'The request body is larger than {limit} KB.',
  file_too_large: 'The file in {field} is larger than {limit} MB.',
  precondition_failed: "The file's ETag is not one that If-Match names.",
  range_not_satisfiable: 'The requested byte range is outside the file.',
  invalid_settings: 'The settings do not match the mode.',
  unknown_setting: 'A setting is not listed for the chosen mode.',
  invalid_request: 'The request is malformed.',
  file_type: 'The file in {field} is of a type that is not accepted here.',
  file_empty: 'The file in {field} is empty.',
  element_not_found: 'Element "{id}" is unknown, deleted or not yours. No money was reserved.',
  persona_not_found: 'Persona "{id}" is unknown, deleted or not yours. No money was reserved.',
  voice_not_found: 'Voice "{id}" is unknown, deleted or not yours. No money was reserved.',
  voice_not_ready: 'Voice "{id}" is not ready yet. No money was reserved.',
  style_not_found: 'Style "{id}" is unknown, deleted or not yours. No money was reserved.',
  style_not_ready:
    'Style "{id}" is not ready: it is still training, or its training failed. No money was reserved.',
  character_not_found: 'Character "{id}" is unknown, deleted or not yours. No money was reserved.',
  rate_limited: 'Too many requests; retry after the time in Retry-After.',
  too_many_active:
    'Model "{model}" takes at most {limit} unfinished {limit|task|tasks} of an account at once, and yours have reached it; wait for one to finish.',
  internal_error: 'Something went wrong on our side; retry later.',
  element_create_failed: 'The generator did not accept the element; check the files and retry.',
  persona_create_failed: 'The generator could not save the persona; retry in about a minute.',
  library_create_failed: 'The generator did not accept or save the record; check the files and retry.',
  helper_failed:
    'The generator did not answer this helper call; it was not counted against the hourly limit. Change the input or retry later.',
  model_unavailable: 'Model "{model}" is switched off for now; retry later.',
  sg_unavailable: 'The generation server is unavailable; retry later.',
  not_ready: 'The service is not ready: the database or the storage does not answer.',
  payments_unavailable: 'Top-ups are unavailable right now; nothing was paid. Retry later.',
  generation_failed: 'The generator could not produce a result. No money was charged.',
  content_refused:
    'The generator refused the content (for example a well-known track by others). No money was charged.',
  timeout: 'The generation took too long and was stopped. No money was charged.',
  input_unavailable:
    'An input of the task (a file or a library record) is no longer available. No money was charged.',
};
