import { SMTPServer } from 'smtp-server';
import type { Test } from 'tap';
import type { Mailer, MailMessage } from '../../src/infra/mail.js';

/** A mailer that keeps what it is given, refusing the first `refuse` attempts (in-process tests). */
export function captureMailer(refuse = 0): Mailer & { sent: MailMessage[]; attempts: number } {
  const mailer = {
    kind: 'smtp' as const,
    sent: [] as MailMessage[],
    attempts: 0,
    async send(message: MailMessage) {
      mailer.attempts += 1;
      if (mailer.attempts <= refuse) throw new Error('451 try again later');
      mailer.sent.push(message);
    },
    close: () => undefined,
  };
  return mailer;
}

export interface CaughtMail {
  to: string[];
  raw: string;
  /** The text of the message, quoted-printable undone (nodemailer folds long lines). */
  text: string;
}

/** Undoes quoted-printable folding and escapes, enough to read links back out of a message. */
export function unfold(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/**
 * A real SMTP server (the smtp-server package) on a free port, that refuses
 * the first `refuse` messages with 451 and keeps the rest.
 */
export async function smtpCatcher(t: Test, options: { refuse?: number; port?: number } = {}): Promise<{ url: string; port: number; mails: CaughtMail[]; refused: number; waitFor(count: number, timeoutMs?: number): Promise<CaughtMail[]>; close(): Promise<void> }> {
  const mails: CaughtMail[] = [];
  const state = { refused: 0 };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (state.refused < (options.refuse ?? 0)) {
          state.refused += 1;
          const error = Object.assign(new Error('Try again later'), { responseCode: 451 });
          return callback(error);
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw, text: unfold(raw) });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as { port: number }).port;
  let closed = false;
  const close = () => (closed ? Promise.resolve() : new Promise<void>((resolve) => { closed = true; server.close(() => resolve()); }));
  t.teardown(close);
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    mails,
    get refused() {
      return state.refused;
    },
    async waitFor(count, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (mails.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} mails, got ${mails.length}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return mails;
    },
    close,
  };
}

/** The first link to the service's path in a text. */
export function linkIn(text: string, path: string): string {
  const match = new RegExp(`https?://[^\\s"<>]+${path.replace(/[/?]/g, (c) => `\\${c}`)}\\?t=[A-Za-z0-9._-]+`).exec(text);
  if (!match) throw new Error(`no ${path} link in: ${text.slice(0, 500)}`);
  return match[0];
}
