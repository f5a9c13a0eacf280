import type { FastifyBaseLogger } from 'fastify';
import type { Transporter } from 'nodemailer';

/** One email: plain text and HTML, and headers of its own (List-Unsubscribe on notifications). */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  headers?: Record<string, string>;
}

/** Where mail goes: an SMTP server, or (no SMTP_URL) the log. `send` throws when the mail was not accepted. */
export interface Mailer {
  readonly kind: 'smtp' | 'log';
  send(message: MailMessage): Promise<void>;
  close(): void;
}

/**
 * SMTP through nodemailer, from SMTP_URL (`smtp://user:pass@host:587`,
 * `smtps://…:465`; nodemailer reads the credentials and options from the
 * URL). A refusal or a broken connection throws: the outbox tries again.
 */
export function smtpMailer(url: string, from: string, timeoutMs = 30_000): Mailer {
  // Made at the first mail: most processes never send one, and nodemailer is large to load.
  let transport: Promise<Transporter> | undefined;
  const open = async () => {
    const { default: nodemailer } = await import('nodemailer');
    // Bounded: an SMTP server that hangs must not hold the outbox for nodemailer's default of minutes.
    return nodemailer.createTransport({ url, connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs }, { from });
  };
  // A failed open is tried again at the next mail (the outbox retries), not kept.
  const opened = () => (transport ??= open().catch((error: unknown) => {
    transport = undefined;
    throw error;
  }));
  return {
    kind: 'smtp',
    async send(message) {
      await (await opened()).sendMail({ from, to: message.to, subject: message.subject, text: message.text, html: message.html, headers: message.headers ?? {} });
    },
    close: () => void transport?.then((opened) => opened.close(), () => undefined),
  };
}

/** Without SMTP_URL: each mail written to the log, links included, so a laptop can sign in without a mail server. */
export function logMailer(logger: Pick<FastifyBaseLogger, 'info'>): Mailer {
  return {
    kind: 'log',
    async send(message) {
      logger.info({ mail_to: message.to, subject: message.subject }, `mail (SMTP_URL is unset, so it is written here):\n${message.text}`);
    },
    close: () => undefined,
  };
}
