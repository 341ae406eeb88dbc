// The bodies a trigger URL takes (openapi.yaml runHook): what webhook senders send, JSON of any
// shape, a form or text, each within BODY_LIMIT_BYTES as every API body is. These parsers run
// before the app's own for /hooks paths only, and keep the bytes as sent: a `string` input gets the
// body's text exactly (not JSON re-serialised), and a sender's signature is over those bytes.
import type { IncomingMessage } from 'node:http';
import express, { type Request, type RequestHandler } from 'express';

export type HookBodyKind = 'json' | 'form' | 'text';

/** A trigger URL's body: how it came, its parsed value, and its text as sent. */
export interface HookBody {
  kind: HookBodyKind;
  value: unknown;
  text: string;
  raw: Buffer;
  /** Its request's headers by lower-case name (a repeated one joined by ", ") and query fields. */
  headers: Record<string, string>;
  query: Record<string, string>;
}

const rawBodies = new WeakMap<IncomingMessage, { raw: Buffer; text: string }>();

const keep = (req: IncomingMessage, _res: unknown, buf: Buffer, encoding: string) => {
  rawBodies.set(req, { raw: buf, text: buf.toString(Buffer.isEncoding(encoding) ? encoding : 'utf8') });
};

const JSON_TYPES = ['application/json', 'application/*+json'];

/** The parsers of a trigger URL's body; any JSON value (not only the objects and arrays body-parser takes elsewhere). */
export function hookBodyParsers(limit: number): RequestHandler[] {
  return [
    express.json({ limit, strict: false, type: JSON_TYPES, verify: keep }),
    express.urlencoded({ extended: false, limit, verify: keep }),
    express.text({ limit, type: 'text/plain', verify: keep }),
  ];
}

/** The body of a request the parsers above read (the contract validator has let only these types through). */
export function hookBodyOf(req: Request): HookBody {
  const kept = rawBodies.get(req) ?? { raw: Buffer.alloc(0), text: '' };
  const kind: HookBodyKind = req.is(JSON_TYPES)
    ? 'json'
    : req.is('application/x-www-form-urlencoded')
      ? 'form'
      : 'text';
  const headers = Object.fromEntries(
    Object.entries(req.headers).flatMap(([name, v]) =>
      v === undefined ? [] : [[name, Array.isArray(v) ? v.join(', ') : v]],
    ),
  );
  // A text body's own charset decoded it (body-parser); the kept text is its UTF-8 reading.
  const text = kind === 'text' && typeof req.body === 'string' ? req.body : kept.text;
  return { kind, value: req.body as unknown, ...kept, text, headers, query: req.query as Record<string, string> };
}
