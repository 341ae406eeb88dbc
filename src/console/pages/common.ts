import type { Request, RequestHandler, Response } from 'express';
import type { AppContext } from '../../context.ts';
import { Problem } from '../../shared/errors.ts';
import type { Html } from '../../html/html.ts';
import { csrfToken, csrfValid } from '../../accounts/session.ts';
import { findUserById } from '../../accounts/users.ts';
import type { PageUser } from '../views/format.ts';
import type { FormProblem } from '../views/form.ts';
import { messagePage } from '../views/message.ts';

/** Every settings page is personal: never cached. */
export function sendPage(res: Response, status: number, page: Html): void {
  res.status(status).set('Cache-Control', 'no-store').type('html').send(String(page));
}

export async function pageUser(ctx: AppContext, req: Request): Promise<PageUser> {
  const user = await findUserById(ctx, req.webSession!.uid!);
  if (!user) throw new Error('session user vanished');
  return { id: user.id, login: user.login, csrf: await csrfToken(ctx, req) };
}

export function csrfProtect(ctx: AppContext): RequestHandler {
  return async (req, res, next) => {
    if (req.method !== 'POST' || (await csrfValid(ctx, req))) return next();
    sendPage(
      res,
      403,
      messagePage({
        title: 'Form expired',
        message: 'The form expired or did not come from this site. Go back, reload the page and try again.',
        error: true,
      }),
    );
  };
}

export function field(req: Request, name: string): string {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.trim() : '';
}

/** A repeated form field (checkboxes): the urlencoded parser gives a string for one, an array for more. */
export function fields(req: Request, name: string): string[] {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return values.filter((v): v is string => typeof v === 'string');
}

/** The success messages a redirect after an action names (`?done=app-deleted`): a fixed catalogue, so a link cannot make the page say anything else. */
const DONE_MESSAGES: Record<string, string> = {
  'app-deleted': 'Application deleted. Its client credentials and every token it was granted no longer work.',
  'app-updated': 'Application updated.',
  'app-already-registered':
    'This form was already submitted, so the application was registered once. Its client secret was shown then; if you did not copy it, generate a new one below and delete the old one.',
  'org-created': 'Organization created. You are its owner: add members below.',
  'member-added': 'Member added. They can now create access tokens in this namespace.',
  'member-removed': 'Member removed. Their access tokens in this namespace no longer work.',
  'org-left': 'You left the organization. Your access tokens in its namespace no longer work.',
  'secret-deleted': 'Client secret deleted. Clients presenting it are refused from now on.',
  'token-deleted':
    'Access token deleted. Calls with it, and with proxy tokens minted from it, are refused from now on.',
  'password-changed': 'Password changed. Every other browser session of yours has ended; this one goes on.',
  'workflow-deleted': 'Workflow deleted. Its queued and running runs were cancelled.',
  'workflow-saved': 'Workflow saved. Runs from now on use this version; earlier runs keep the graph they ran.',
  'run-cancelled': 'Run cancelled. A node that was working stops; nothing after it runs.',
  'run-ended-first': 'The run had already ended, so there was nothing to cancel.',
  'app-revoked': "Access revoked. The application's tokens no longer work; it must ask you again.",
  'callback-enabled': 'Callback re-enabled. The run ends it missed while paused are being delivered.',
  'run-resumed': 'Answer sent. The run goes on from it.',
  'budget-set': 'Monthly budget set. New runs are refused once this month has cost that much.',
  'budget-removed': 'Monthly budget removed. Runs are no longer limited by their cost.',
  'mcp-tool-on': 'The workflow is now a tool of your MCP server: connected assistants list it and can run it.',
  'mcp-tool-off': 'The workflow is no longer a tool: assistants no longer see it or run it.',
};

export const doneMessage = (req: Request): string | undefined =>
  typeof req.query.done === 'string' ? DONE_MESSAGES[req.query.done] : undefined;

export const notFoundPage = (user: PageUser, what: string) =>
  messagePage({ title: 'Not found', message: `No such ${what}.`, user });

/** The Problem of one of the expected statuses; anything else is rethrown (a 500). */
export function refusedWith(err: unknown, ...statuses: number[]): Problem {
  if (err instanceof Problem && statuses.includes(err.status)) return err;
  throw err;
}

/** A refused form's problems: each item of the problem about the field its pointer names (`/name`), else the problem's message. */
export function formProblemsOf(err: Problem): FormProblem[] {
  if (!err.errors?.length) return [{ message: err.message }];
  return err.errors.map((e) => ({
    field: e.pointer.slice(1) || undefined,
    message: e.message.charAt(0).toUpperCase() + e.message.slice(1) + '.',
  }));
}
