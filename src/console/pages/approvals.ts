// GET/POST /approvals/{token}: an approval node's single-use link, for a reviewer without an API
// key (the random token is the credential; only its hash is stored). The form carries the CSRF
// token of the visitor's session, as the login form does. A used link is a 409 page, an expired one
// a 410, an unknown one a 404; an answer that does not fit is the form again, its fields marked.
import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { AppContext } from '../../context.ts';
import { csrfToken } from '../../accounts/session.ts';
import type { AnswerSchema } from '../../nodes/approval/answers.ts';
import { answerByLink, approvalOfLink, type LinkState } from '../../runs/approvals.ts';
import type { ApprovalRow } from '../../runs/approvalsStore.ts';
import { Problem } from '../../shared/errors.ts';
import { approvalPage } from '../views/approval.ts';
import type { FormProblem } from '../views/form.ts';
import { messagePage } from '../views/message.ts';
import { sendPage } from './common.ts';

const REFUSED = {
  unknown: [404, 'Not found', 'This approval link does not exist.'],
  used: [409, 'Already answered', 'This approval was already answered (or its run ended): the link works once.'],
  expired: [410, 'Link expired', 'This approval link has expired: the run no longer waits for it.'],
} as const;

function refused(res: Response, why: keyof typeof REFUSED): void {
  const [status, title, message] = REFUSED[why];
  sendPage(res, status, messagePage({ title, message, error: true }));
}

/** The form's fields as the answer's types: a boolean's choice, a number, a text; blank is absent. */
export function answerOf(schema: AnswerSchema, body: Record<string, unknown>): Record<string, unknown> {
  const answer: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(schema.properties)) {
    const value = typeof body[name] === 'string' ? body[name] : '';
    if (value === '') continue;
    if (field.type === 'boolean') answer[name] = value === 'true' ? true : value === 'false' ? false : value;
    else if (field.type === 'number' || field.type === 'integer')
      answer[name] = Number.isFinite(Number(value)) ? Number(value) : value;
    else answer[name] = value;
  }
  return answer;
}

async function page(ctx: AppContext, req: Request, res: Response, approval: ApprovalRow, problems?: FormProblem[]) {
  sendPage(
    res,
    problems?.length ? 400 : 200,
    approvalPage({
      action: req.originalUrl.split('?')[0]!,
      message: approval.message,
      schema: JSON.parse(approval.answer_schema) as AnswerSchema,
      csrf: await csrfToken(ctx, req),
      expiresAt: new Date(Number(approval.expires_at)).toISOString(),
      ...(problems ? { problems } : {}),
    }),
  );
}

export function approvalLinksRouter(ctx: AppContext, session: RequestHandler, csrf: RequestHandler): Router {
  const router = Router();
  const opened = async (req: Request, res: Response): Promise<ApprovalRow | undefined> => {
    const state: LinkState = await approvalOfLink(ctx, String(req.params.token));
    if ('approval' in state) return state.approval;
    refused(res, state.refused);
    return undefined;
  };
  router.get('/approvals/:token', session, async (req, res) => {
    res.set('Cache-Control', 'no-store').set('Referrer-Policy', 'no-referrer');
    const approval = await opened(req, res);
    if (approval) await page(ctx, req, res, approval);
  });
  router.post('/approvals/:token', session, csrf, async (req, res) => {
    res.set('Cache-Control', 'no-store').set('Referrer-Policy', 'no-referrer');
    const approval = await opened(req, res);
    if (!approval) return;
    const answer = answerOf(JSON.parse(approval.answer_schema) as AnswerSchema, req.body as Record<string, unknown>);
    try {
      const problems = await answerByLink(ctx, approval, answer);
      if (problems.length)
        return page(
          ctx,
          req,
          res,
          approval,
          problems.map((p) => ({ field: p.pointer.slice(1), message: p.message })),
        );
    } catch (err) {
      if (err instanceof Problem && err.code === 'run_not_waiting') return refused(res, 'used');
      throw err;
    }
    sendPage(res, 200, messagePage({ title: 'Answer sent', message: 'Thank you: the run goes on with your answer.' }));
  });
  return router;
}
