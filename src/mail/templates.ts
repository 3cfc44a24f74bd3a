import type { Lang } from '../i18n/index.ts';
import type { MailMessage } from './mailer.ts';

/** Which mail: the e-mail confirmation after sign-up, or a password reset. */
export type MailKind = 'confirm' | 'reset';

const WORDS: Record<
  Lang,
  Record<MailKind, { subject: string; intro: string; action: string; outro: string }>
> = {
  en: {
    confirm: {
      subject: 'Confirm your e-mail',
      intro: 'Open this link to confirm your e-mail and start making API keys:',
      action: 'Confirm e-mail',
      outro: 'The link works once, for 48 hours. If you did not sign up, ignore this mail.',
    },
    reset: {
      subject: 'Reset your password',
      intro: 'Open this link to choose a new password:',
      action: 'Choose a new password',
      outro: 'The link works once, for 1 hour. If you did not ask for it, ignore this mail.',
    },
  },
  ru: {
    confirm: {
      subject: 'Подтвердите эл. почту',
      intro: 'Откройте ссылку, чтобы подтвердить эл. почту и создавать API-ключи:',
      action: 'Подтвердить эл. почту',
      outro:
        'Ссылка действует один раз в течение 48 часов. Если вы не регистрировались, не обращайте внимания на это письмо.',
    },
    reset: {
      subject: 'Сброс пароля',
      intro: 'Откройте ссылку, чтобы задать новый пароль:',
      action: 'Задать новый пароль',
      outro:
        'Ссылка действует один раз в течение 1 часа. Если вы не запрашивали сброс, не обращайте внимания на это письмо.',
    },
  },
};

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The message of one kind in one language, text and simple HTML, carrying `link`. */
export function mailOf(kind: MailKind, lang: Lang, to: string, link: string): MailMessage {
  const w = WORDS[lang][kind];
  const text = `${w.intro}\n\n${link}\n\n${w.outro}\n`;
  const html =
    `<!doctype html><html lang="${lang}"><body>` +
    `<p>${escapeHtml(w.intro)}</p>` +
    `<p><a href="${escapeHtml(link)}">${escapeHtml(w.action)}</a></p>` +
    `<p>${escapeHtml(link)}</p>` +
    `<p>${escapeHtml(w.outro)}</p></body></html>`;
  return { to, subject: w.subject, text, html, links: [link] };
}
