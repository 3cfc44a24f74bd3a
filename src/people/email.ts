import { domainToASCII } from 'node:url';
import { errors } from '../errors.ts';

/** Longest e-mail address (RFC 5321's path limit less the brackets). */
export const EMAIL_MAX = 254;

// A sane check, not RFC 5322: one `@`, no spaces or brackets, a domain with a dot (or `localhost`).
const EMAIL = /^[^\s@<>()[\]\\,;:"]+@(?:[a-z0-9-]+\.)+[a-z0-9-]{2,}$|^[^\s@<>()[\]\\,;:"]+@localhost$/;

/**
 * Control and format characters (a soft hyphen, a zero-width space, a right-to-left override): invisible
 * or reordering, they would make an address that reads exactly like another person's.
 */
const INVISIBLE = /\p{C}/u;

/**
 * The form an address is stored and looked up in: trimmed, lowercased and in Unicode NFC (RFC 6532 §3.1),
 * so `é` typed as one character or as `e` and a combining accent is one address, not two that read alike.
 * A domain typed in Unicode (`exämple.com`) takes its ASCII form (`xn--exmple-cua.com`), the one browsers
 * send from an e-mail field and mail is routed by; one holding invisible characters is left for the check.
 */
export function emailKey(input: string): string {
  const email = input.trim().toLowerCase().normalize('NFC');
  const at = email.lastIndexOf('@');
  const domain = email.slice(at + 1);
  if (at < 0 || INVISIBLE.test(domain) || /^[ -~]*$/.test(domain)) return email;
  const ascii = domainToASCII(domain);
  return ascii === '' ? email : `${email.slice(0, at + 1)}${ascii}`;
}

/** The address in its stored form (`emailKey`), or 422 invalid_request. */
export function normalizeEmail(input: string): string {
  const email = emailKey(input);
  if (email.length > EMAIL_MAX || !EMAIL.test(email) || INVISIBLE.test(email)) {
    throw errors.invalidRequest({
      en: `email: not a valid e-mail address (at most ${EMAIL_MAX} characters).`,
      ru: `email: это не адрес эл. почты (не длиннее ${EMAIL_MAX} символов).`,
    });
  }
  return email;
}
