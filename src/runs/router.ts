// Routes of /api/workflows/{workflow_id}/run and .../runs (openapi.yaml: runWorkflow, listRuns, retryRun,
// getRun, cancelRun). The contract validator has authenticated the API key and checked params and
// body; handlers map HTTP to service.ts.
import type { Request, Response } from 'express';
import type { operations } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import type { Operations } from '../http/operations.ts';
import type { SharedRateLimiter } from '../http/sharedRateLimiter.ts';
import { pageOf, paginationLinks, searchOf } from '../http/pagination.ts';
import * as service from './service.ts';
import type { RunDetail } from './service.ts';
import { isTerminal } from './store.ts';
import { preferredWait, readRunWhenEnded, type RunEndListener } from './waiting.ts';
import { streamRunEvents as streamEvents } from './eventStream.ts';
import { startDeliveredRun, type DeliveryKey } from './deliveryStarts.ts';
import { principalOf } from '../http/principal.ts';
import { runIdOf, runsPath, userOf, workflowIdOf } from './routeParams.ts';
import { retryRun as retry } from './retry.ts';

type JsonOf<
  Op extends keyof operations,
  Status extends keyof operations[Op]['responses'],
> = operations[Op]['responses'][Status] extends { content: { 'application/json': infer Body } } ? Body : never;

type ListQuery = NonNullable<operations['listRuns']['parameters']['query']>;
type RunBody = operations['runWorkflow']['requestBody']['content']['application/json'];
type RetryBody = NonNullable<operations['retryRun']['requestBody']>['content']['application/json'];

/** A request's `Prefer: wait`: its seconds, the listener to run ends begun for it, and the process's drain. */
interface Wait {
  seconds: number;
  listener: RunEndListener;
  /** Aborts when the process stops: the wait ends, answered with the run as it stands. */
  drained: AbortSignal;
}

/** The API key (access token id) a request came with, if any (a trigger URL's has none). */
const apiKeyOf = (req: Request) => (req.principal?.kind === 'apiKey' ? req.principal.accessTokenId : undefined);

/** What ends with a deleted workflow (deleteWorkflow's `onDeleted`): its queued and running runs. */
export function cancelRunsOfDeletedWorkflow(ctx: AppContext): (workflowId: string) => Promise<number> {
  return (workflowId) => service.cancelRunsOfDeletedWorkflow(ctx, workflowId);
}

/**
 * Answers with `answer`, given the request's wait: a listener to run ends if it asks to wait
 * (`Prefer: wait=N`), the queue can tell, and `userId` (and the request's API key, if any) hold
 * fewer waits than WAITS_PER_USER (WAITS_PER_KEY) on this process (waitSlots.ts), else undefined:
 * a declined wait is answered at once, as without one. The listener stops and the slot is freed
 * once the answer is done, however it ends.
 */
async function answerWithWait(
  ctx: AppContext,
  req: Request,
  userId: number,
  answer: (wait: Wait | undefined) => Promise<void>,
): Promise<void> {
  const seconds = preferredWait(req.get('Prefer'));
  const runs = ctx.runs;
  const keyId = apiKeyOf(req);
  const release = seconds === undefined || !runs ? undefined : runs.waits.tryTake(keyId, userId);
  let wait: Wait | undefined;
  try {
    if (release) wait = { seconds: seconds!, listener: await runs!.listenForRunEnds(), drained: runs!.waits.drained };
    await answer(wait);
  } finally {
    wait?.listener.stop();
    release?.();
  }
}

/** Waits for the end of `owner`'s run (waiting.ts readRunWhenEnded), until the wait is over or the client leaves. */
function waitForRun(
  res: Response,
  wait: Wait,
  runId: string,
  owner: { userId: number; workflowId: string },
  read: () => Promise<RunDetail>,
  queued?: { status: string },
): Promise<RunDetail> {
  res.setHeader('Preference-Applied', `wait=${wait.seconds}`);
  const gone = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) gone.abort(); // the client left before its answer
  });
  wait.listener.follow(runId);
  return readRunWhenEnded(
    wait.listener,
    wait.seconds,
    owner,
    read,
    AbortSignal.any([gone.signal, wait.drained]),
    queued,
  );
}

/**
 * Starts a run of `owner`'s workflow with `inputs` and answers as runWorkflow does: 202 with the
 * queued run, or with `Prefer: wait` the ended run (200). The API's start and a trigger URL's
 * (src/hooks) answer through it alike; `version` pins the workflow version (the API's only).
 * A trigger's `inputs` are read from its body only when a run is to start (not for a redelivery).
 */
export async function startRunAndAnswer(
  ctx: AppContext,
  req: Request,
  res: Response,
  owner: { userId: number; workflowId: string },
  inputs: service.RunInputs | (() => Promise<service.RunInputs>),
  runStarts: SharedRateLimiter,
  version?: number,
  delivery?: DeliveryKey,
): Promise<void> {
  const key = req.get('Idempotency-Key');
  const readInputs = typeof inputs === 'function' ? inputs : () => Promise.resolve(inputs);
  const keyId = apiKeyOf(req);
  // A client's own Idempotency-Key comes first; else a sender's delivery id (src/hooks) names the start.
  await answerStart(ctx, req, res, owner, () =>
    delivery && key === undefined
      ? startDeliveredRun(ctx, owner, readInputs, delivery, runStarts)
      : readInputs().then((read) =>
          service.startRun(ctx, owner.userId, owner.workflowId, read, key, runStarts, version, undefined, keyId),
        ),
  );
}

/** Starts a run with `start` (startRun, or retryRun's) and answers as runWorkflow does (startRunAndAnswer). */
async function answerStart(
  ctx: AppContext,
  req: Request,
  res: Response,
  owner: { userId: number; workflowId: string },
  start: () => Promise<{ run: service.Run; replayed: boolean }>,
): Promise<void> {
  const read = (runId: string) => () => service.getRun(ctx, owner.userId, owner.workflowId, runId);
  // Listening before the run is queued, its end cannot come unheard: a run just queued is not
  // read before a notice of its end (or the wait's end).
  await answerWithWait(ctx, req, owner.userId, async (wait) => {
    const { run, replayed } = await start();
    res.setHeader('Location', `${runsPath(run.workflow_id)}/${run.id}`);
    // Dify's blocking mode: the ended run in this answer when it ends within the wait.
    const waited = wait && (await waitForRun(res, wait, run.id, owner, read(run.id), replayed ? undefined : run));
    if (waited && isTerminal(waited.status)) {
      res.status(200).json({ data: waited });
      return;
    }
    // Both answers carry the logs (one schema for generated clients): none yet for a run just queued
    // (but a retry's, which starts with the steps it reuses).
    const detail = waited ?? (replayed || run.retry_of ? await read(run.id)() : { ...run, logs: [] });
    res.status(202).json({ data: detail });
  });
}

/** The run operations of openapi.yaml: runWorkflow, listRuns, getRun, streamRunEvents, cancelRun. */
export function runOperations(ctx: AppContext, runStarts: SharedRateLimiter): Operations {
  const withWait = (req: Request, answer: (wait: Wait | undefined) => Promise<void>) =>
    answerWithWait(ctx, req, userOf(req), answer);
  /** Waits for the end of the request's run (waiting.ts readRunWhenEnded); `queued`: the run this request queued after the listener began. */
  const waitFor = (
    req: Request,
    res: Response,
    wait: Wait,
    runId: string,
    queued?: { status: string },
  ): Promise<RunDetail> => {
    const owner = { userId: userOf(req), workflowId: workflowIdOf(req) };
    return waitForRun(res, wait, runId, owner, runReader(req, runId), queued);
  };

  /** Reads the request's run with its log. */
  const runReader = (req: Request, runId: string) => () => service.getRun(ctx, userOf(req), workflowIdOf(req), runId);

  async function runWorkflow(req: Request, res: Response<JsonOf<'runWorkflow', 202> | JsonOf<'runWorkflow', 200>>) {
    const owner = { userId: userOf(req), workflowId: workflowIdOf(req) };
    const body = req.body as RunBody;
    await startRunAndAnswer(ctx, req, res, owner, body.inputs, runStarts, body.version);
  }

  async function listRuns(req: Request, res: Response<JsonOf<'listRuns', 200>>) {
    const query = req.query as ListQuery;
    const search = searchOf(query);
    const page = await service.listRuns(ctx, userOf(req), workflowIdOf(req), {
      ...pageOf(query),
      ...(search ? { search } : {}),
    });
    res.setHeader('Link', paginationLinks(runsPath(workflowIdOf(req)), page.meta, { search }));
    res.status(200).json(page);
  }

  async function getRun(req: Request, res: Response<JsonOf<'getRun', 200>>) {
    const read = runReader(req, runIdOf(req));
    await withWait(req, async (wait) => {
      const run = (wait && (await waitFor(req, res, wait, runIdOf(req)))) ?? (await read());
      res.status(200).json({ data: run });
    });
  }

  /** Same auth, ownership and errors as getRun, then the run's events as Server-Sent Events. */
  async function streamRunEvents(req: Request, res: Response) {
    const read = () => service.getRun(ctx, userOf(req), workflowIdOf(req), runIdOf(req));
    const { accessTokenId: keyId, userId } = principalOf(req, 'apiKey');
    await streamEvents(ctx, req, res, runIdOf(req), read, { keyId, userId });
  }

  async function retryRun(req: Request, res: Response<JsonOf<'retryRun', 202> | JsonOf<'retryRun', 200>>) {
    const owner = { userId: userOf(req), workflowId: workflowIdOf(req) };
    const { version } = (req.body ?? {}) as RetryBody;
    const key = req.get('Idempotency-Key');
    await answerStart(ctx, req, res, owner, () =>
      retry(ctx, owner, runIdOf(req), key, runStarts, version, apiKeyOf(req)),
    );
  }

  async function cancelRun(req: Request, res: Response<JsonOf<'cancelRun', 200>>) {
    const run = await service.cancelRun(ctx, userOf(req), workflowIdOf(req), runIdOf(req));
    res.status(200).json({ data: run });
  }

  return {
    runWorkflow,
    listRuns,
    getRun,
    streamRunEvents,
    cancelRun,
    retryRun,
  };
}
