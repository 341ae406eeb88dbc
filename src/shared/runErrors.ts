// Why a run failed: stored as a run's or step's `error`, never an HTTP answer. Part of the
// catalogue that src/shared/errors.ts exports.
import type { components } from '../../generated/api.d.ts';
import type { OutboundFailure } from '../outbound/errors.ts';

// --- Why a run failed: `error.code` of a run (openapi.yaml RunError), what clients branch on -----

export type RunErrorCode =
  | 'cancelled'
  | 'timeout'
  | 'model_unavailable'
  | 'internal_error'
  | 'worker_lost'
  | 'store_unavailable'
  | 'queue_unavailable'
  | 'provider_error'
  | 'rate_limited'
  | 'provider_timeout'
  | 'provider_bad_response'
  | 'template_error'
  | 'invalid_json'
  | 'schema_violation' // the last two: typed values
  | 'compute_limit'
  | 'output_too_large'
  | OutboundFailure
  | 'http_status'
  | 'http_invalid_json'
  | 'secret_not_found' // an http_request node's
  | 'too_many_steps'
  | 'too_many_events' // a run's fan-out caps (RUN_MAX_STEPS, RUN_MAX_EVENTS; RUN_MAX_ITEMS is too_many_items)
  | 'too_many_items'
  | 'invalid_items'
  | 'workflow_not_found'
  | 'workflow_depth' // split, map and workflow nodes'
  | 'subworkflow_inputs_mismatch' // a called workflow's inputs no longer fit the caller's mapping
  | 'unexpected_tool_calls' // an llm_call's model answered with tool calls
  | 'agent_max_iterations' // an agent's model still asked for tools at its last iteration
  | 'tool_timeout' // an agent's tool call passed its timeout_seconds (a step's error, told to the model)
  | 'approval_timeout' // an approval node's answer did not come in time
  | 'approval_unavailable'; // an approval node inside a called workflow, where no run waits

type ProviderAnswer = NonNullable<components['schemas']['RunError']['provider']>;

/** Why a node (and so the run) failed: stored as the run's or step's `error`, never an HTTP answer. */
export class RunFailure extends Error {
  readonly code: RunErrorCode;
  readonly nodeId: string | null;
  /** A model provider's error answer as it sent it (status, code, type, request id), when one failed. */
  readonly provider: ProviderAnswer | undefined;
  /**
   * An llm_call's answer that was not JSON or broke its schema, as the model sent it, and the tokens
   * it used: kept on the failed step (its `error.raw_output`, its `usage`) so the answer can be
   * inspected and its cost is counted. Not part of toJSON: the run's own `error` stays small.
   */
  rawOutput?: string;
  usage?: components['schemas']['Usage'];
  constructor(code: RunErrorCode, message: string, nodeId: string | null = null, provider?: ProviderAnswer) {
    super(message);
    this.code = code;
    this.nodeId = nodeId;
    this.provider = provider;
  }
  toJSON(): components['schemas']['RunError'] & { code: RunErrorCode } {
    return {
      code: this.code,
      message: this.message,
      node_id: this.nodeId,
      ...(this.provider ? { provider: this.provider } : {}),
    };
  }
}
