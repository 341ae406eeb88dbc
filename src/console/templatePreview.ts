import type { AppContext } from '../context.ts';
import { Problem } from '../shared/errors.ts';
import { getRun, latestRuns } from '../runs/service.ts';
import { evaluateExpression, renderTemplate, type TemplateScope } from '../workflows/templates.ts';
import { editorSchemas } from './nodeTypes.ts';
import type { EditorPreview } from './editorTypes.ts';

// The editor's live preview of its template fields: each rendered by the service's own template
// engine (workflows/templates.ts, as a run renders it) over the values of the workflow's last run,
// its inputs and each node's output as logged, so what a prompt will say is seen as it is typed.
// Nothing is sent anywhere: a template reading `secrets` renders them empty.

/** The most characters of a rendered text the editor shows (it is a preview, not the run). */
const SHOWN_CHARS = 600;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The graph's template and expression fields (as the editor marks them, by the registry's `templates`), with their pointers. */
function templateTexts(nodes: unknown[]): { pointer: string; source: string; expression: boolean }[] {
  const specs = new Map(editorSchemas().nodeTypes.map((t) => [t.type, t]));
  return nodes.flatMap((node, i) => {
    if (!isObject(node) || !isObject(node.config) || typeof node.type !== 'string') return [];
    const config = node.config;
    const spec = specs.get(node.type);
    const keys = [
      ...(spec?.templateFields ?? []).map((key) => ({ key, expression: false })),
      ...(spec?.expressionFields ?? []).map((key) => ({ key, expression: true })),
    ];
    return keys.flatMap(({ key, expression }) =>
      typeof config[key] === 'string' && config[key] !== ''
        ? [{ pointer: `/nodes/${i}/config/${key}`, source: config[key], expression }]
        : [],
    );
  });
}

/** An expression's value as the preview shows it: text as it is, anything else as its JSON. */
async function evaluated(source: string, scope: TemplateScope): Promise<string> {
  const value = await evaluateExpression(source, scope);
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

/** The last run of the workflow as a template sees it, or null when it has none. */
async function lastRunScope(
  ctx: AppContext,
  userId: number,
  workflowId: string,
): Promise<{ scope: TemplateScope; from: string } | null> {
  const latest = (await latestRuns(ctx, userId, [workflowId])).get(workflowId);
  if (!latest) return null;
  const run = await getRun(ctx, userId, workflowId, latest.id);
  const nodes: TemplateScope['nodes'] = {};
  // A map's items log as `id[n]`, a called workflow's nodes as `id.inner`: a template reads the node's own step.
  for (const step of run.logs ?? [])
    if (/^[A-Za-z0-9_-]+$/.test(step.node_id) && step.status === 'completed')
      nodes[step.node_id] = { output: 'output_value' in step ? step.output_value : step.output };
  return {
    scope: {
      inputs: run.input_values ?? run.inputs ?? {},
      nodes,
      run: { id: run.id, created_at: run.created_at },
      workflow: { id: workflowId, version: run.workflow_version ?? 1 },
    },
    from: `run ${run.id} of ${run.created_at.slice(0, 16).replace('T', ' ')} UTC`,
  };
}

/** Each template field of the graph as written, rendered with the last run's values. */
export async function renderedTemplates(
  ctx: AppContext,
  userId: number,
  workflowId: string | undefined,
  graph: string,
): Promise<Pick<EditorPreview, 'rendered' | 'renderedFrom'>> {
  let nodes: unknown;
  try {
    nodes = (JSON.parse(graph) as { nodes?: unknown } | null)?.nodes;
  } catch {
    return {};
  }
  const texts = Array.isArray(nodes) ? templateTexts(nodes) : [];
  // A run that went away in between (its workflow deleted and purged) is no run to render with.
  const last =
    workflowId && texts.length
      ? await lastRunScope(ctx, userId, workflowId).catch((err: unknown) => {
          if (err instanceof Problem) return null;
          throw err;
        })
      : null;
  if (!last) return { rendered: {}, renderedFrom: null };
  const rendered: NonNullable<EditorPreview['rendered']> = {};
  for (const { pointer, source, expression } of texts) {
    try {
      const text = expression ? await evaluated(source, last.scope) : await renderTemplate(source, last.scope);
      rendered[pointer] = { text: text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}…` : text };
    } catch (err) {
      rendered[pointer] = { error: (err as Error).message };
    }
  }
  return { rendered, renderedFrom: last.from };
}
