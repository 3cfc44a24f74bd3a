export { createMailer, type Mailer, type MailMessage, OutboxMailer, SmtpMailer } from './mailer.ts';
export { type MailKind, mailOf } from './templates.ts';
