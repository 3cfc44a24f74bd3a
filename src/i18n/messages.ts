import type { ErrorCode, MessageParams, TaskFailureCode } from '../errors.ts';

export type MessageKey = ErrorCode | TaskFailureCode;
/** A message template: interpolates `{name}` from the error's params. */
export type Catalog = Readonly<Record<MessageKey, string>>;

/** Fills `{name}` placeholders; an unknown placeholder stays as written. */
export function format(template: string, params: MessageParams): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
    params[name] === undefined ? whole : String(params[name]),
  );
}
