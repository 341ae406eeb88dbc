// What an agent node's config says beyond its schema (openapi.yaml AgentNode, AgentTool): one
// object schema serves both kinds of tool, so which fields each kind takes is said here; tool
// names are unique (the model calls a tool by its name); `tool_choice` names a mode or a tool.
import type { ProblemItem } from '../../shared/errors.ts';
import { escapePointer } from '../../shared/jsonPointer.ts';
import type { CalledWorkflow } from '../types.ts';
import { isObject, schemaProblem } from '../valueSchemas.ts';

/** The `tool_choice` modes OpenAI defines; any other value names one of the node's tools. */
export const TOOL_CHOICE_MODES = ['auto', 'required', 'none'] as const;

/** The largest http tool body, as JSON text (as an http_request node's). */
const BODY_MAX_CHARS = 20_000;

const WORKFLOW_ONLY = ['workflow_id', 'version'];
const HTTP_ONLY = ['method', 'url', 'headers', 'body', 'parameters'];

/** Each kind of tool: the fields it needs, those it takes no part of, whether it calls a workflow. */
const KINDS: Record<string, { required: string[]; foreign: string[]; calls: boolean }> = {
  workflow: { required: WORKFLOW_ONLY, foreign: HTTP_ONLY, calls: true },
  http: { required: ['url'], foreign: WORKFLOW_ONLY, calls: false },
};

const kindOf = (tool: Record<string, unknown>) => (typeof tool.kind === 'string' ? KINDS[tool.kind] : undefined);

const toolsOf = (config: Record<string, unknown>): Record<string, unknown>[] =>
  Array.isArray(config.tools) ? config.tools.filter(isObject) : [];

function toolProblems(tool: Record<string, unknown>, at: string): ProblemItem[] {
  const problems: ProblemItem[] = [];
  const kind = kindOf(tool);
  if (!kind) return problems; // the schema reports it
  for (const field of kind.required)
    if (tool[field] === undefined)
      problems.push({ pointer: `${at}/${field}`, message: `is required for a ${String(tool.kind)} tool` });
  for (const field of kind.foreign)
    if (tool[field] !== undefined)
      problems.push({ pointer: `${at}/${field}`, message: `is not used by a ${String(tool.kind)} tool` });
  if (kind.calls) return problems;
  if (tool.body !== undefined) {
    const method = typeof tool.method === 'string' ? tool.method : 'GET';
    if (method === 'GET')
      problems.push({ pointer: `${at}/body`, message: 'is not sent with GET: use POST, PUT, PATCH or DELETE' });
    // As an http_request's: a secret goes only into the URL and headers, where the log names it.
    if (/\{[{%][^}]*\bsecrets\b/.test(JSON.stringify(tool.body)))
      problems.push({
        pointer: `${at}/body`,
        message: 'secrets may be sent only in url and headers, as {{ secrets.NAME }}',
      });
    if (JSON.stringify(tool.body).length > BODY_MAX_CHARS)
      problems.push({ pointer: `${at}/body`, message: `must be at most ${BODY_MAX_CHARS} characters as JSON` });
  }
  if (isObject(tool.parameters)) {
    const problem = schemaProblem(tool.parameters);
    if (problem) problems.push({ pointer: `${at}/parameters`, message: problem });
    else if (tool.parameters.type !== undefined && tool.parameters.type !== 'object')
      problems.push({ pointer: `${at}/parameters/type`, message: 'must be "object": the arguments are an object' });
  }
  return problems;
}

/** Each tool's fields for its kind, unique names, and a `tool_choice` that names a mode or a tool. */
export function agentProblems(config: Record<string, unknown>): ProblemItem[] {
  const problems: ProblemItem[] = [];
  const seen = new Set<string>();
  toolsOf(config).forEach((tool, i) => {
    problems.push(...toolProblems(tool, `/tools/${i}`));
    if (typeof tool.name !== 'string') return;
    if (seen.has(tool.name))
      problems.push({ pointer: `/tools/${i}/name`, message: `"${tool.name}" names another tool of this node` });
    seen.add(tool.name);
  });
  const choice = config.tool_choice;
  if (typeof choice === 'string' && !(TOOL_CHOICE_MODES as readonly string[]).includes(choice) && !seen.has(choice))
    problems.push({
      pointer: '/tool_choice',
      message: `must be auto, required, none or the name of one of its tools; it has no tool "${choice}"`,
    });
  return problems;
}

/** The workflows its tools call, each pinned; their arguments are the callee's inputs, so any callee's inputs fit. */
export const calledWorkflows = (config: Record<string, unknown>): CalledWorkflow[] =>
  toolsOf(config).flatMap((tool, i) =>
    kindOf(tool)?.calls && typeof tool.workflow_id === 'string'
      ? [
          {
            workflowId: tool.workflow_id,
            ...(Number.isInteger(tool.version) && { version: tool.version as number }),
            pointer: `/tools/${i}/workflow_id`,
            inputs: { named: [], passThrough: true, pointer: `/tools/${i}` },
          },
        ]
      : [],
  );

/** The Liquid texts its prompts hold (its http tools' templates read `args`, known only at run time). */
export const agentTemplates = (config: Record<string, unknown>): { source: string; pointer: string }[] =>
  ['system_prompt', 'prompt'].flatMap((key) =>
    typeof config[key] === 'string' ? [{ source: config[key], pointer: `/${escapePointer(key)}` }] : [],
  );
