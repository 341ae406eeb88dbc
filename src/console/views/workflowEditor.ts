import type { ProblemItem } from '../../shared/errors.ts';
import type { Workflow } from '../../workflows/service.ts';
import type { WorkflowModelList } from '../../workflows/models.ts';
import { html, raw, type Html } from '../../html/html.ts';
import type { EditorPreview } from '../editorTypes.ts';
import { editorSchemas } from '../nodeTypes.ts';
import type { PageUser } from './format.ts';
import { fieldError, invalidAttrs, type FormProblem } from './form.ts';
import { graphSvg } from './graphSvg.ts';
import { layout } from '../../html/layout.ts';
import { WORKFLOWS_NAV } from './workflows.ts';

// The workflow editor: name, description and the graph as JSON (the API's own shape, so what is
// written here can be sent to POST /api/workflows as is, and back), the graph drawn as saved or as
// last written, and every problem the API would answer with 422 listed at the node and field it
// points to, the node's box marked. Saving an edit sends the version it started from (If-Match):
// a save by someone else in between is a conflict, said as such, never overwritten silently.

export interface EditorModel {
  user: PageUser;
  /** The workflow being edited; undefined for a new one. */
  workflow?: Workflow | undefined;
  name: string;
  description: string;
  graph: string;
  /** The version the edit started from (If-Match). */
  version?: number | undefined;
  problems: ProblemItem[];
  /** Set when the save was refused because the workflow moved on to this version. */
  conflictVersion?: number | undefined;
  /** The models a node may name (the `model` menu); none: the menu offers what the graph names. */
  models?: WorkflowModelList | undefined;
}

type ParsedNode = { id?: unknown; type?: unknown };
type ParsedEdge = { from?: unknown; to?: unknown; branch?: unknown };

/** The graph as written, when it is well enough formed to draw (ids, types, edge ends as strings). */
function drawable(
  text: string,
): { nodes: { id: string; type: string }[]; edges: { from: string; to: string; branch?: string }[] } | undefined {
  try {
    const { nodes, edges } = JSON.parse(text) as { nodes?: ParsedNode[]; edges?: ParsedEdge[] };
    if (!Array.isArray(nodes) || !Array.isArray(edges ?? [])) return undefined;
    if (!nodes.every((n) => n && typeof n.id === 'string' && typeof n.type === 'string')) return undefined;
    if (!(edges ?? []).every((e) => e && typeof e.from === 'string' && typeof e.to === 'string')) return undefined;
    return {
      nodes: nodes as { id: string; type: string }[],
      edges: (edges ?? []) as { from: string; to: string; branch?: string }[],
    };
  } catch {
    return undefined;
  }
}

/** Where a problem points, in words: `node "page", config.model`, `edge 2 (a → b), branch`, `the graph`. */
export function problemPlace(pointer: string, graph: string): { label: string; nodeId?: string } {
  const parts = pointer.split('/').slice(1);
  let parsed: { nodes?: ParsedNode[]; edges?: ParsedEdge[] } = {};
  try {
    parsed = JSON.parse(graph) as typeof parsed;
  } catch {
    // a problem of the text itself
  }
  const rest = parts.slice(2).join('.');
  if (parts[0] === 'nodes' && parts[1] !== undefined) {
    const node = Array.isArray(parsed.nodes) ? parsed.nodes[Number(parts[1])] : undefined;
    const id = typeof node?.id === 'string' ? node.id : undefined;
    return {
      label: `${id ? `node "${id}"` : `node ${Number(parts[1]) + 1}`}${rest ? `, ${rest}` : ''}`,
      ...(id ? { nodeId: id } : {}),
    };
  }
  if (parts[0] === 'edges' && parts[1] !== undefined) {
    const edge = Array.isArray(parsed.edges) ? parsed.edges[Number(parts[1])] : undefined;
    const ends =
      edge && typeof edge.from === 'string' && typeof edge.to === 'string' ? ` (${edge.from} → ${edge.to})` : '';
    return { label: `edge ${Number(parts[1]) + 1}${ends}${rest ? `, ${rest}` : ''}` };
  }
  if (parts[0] === 'nodes' || parts[0] === 'edges') return { label: `the ${parts[0]}` };
  if (parts[0] === 'name' || parts[0] === 'description') return { label: parts[0] };
  return { label: 'the graph' };
}

/**
 * The node types and their config schemas from openapi.yaml, for /assets/editor.js to build its
 * palette and forms from: a data block (never run, so the CSP's script-src 'self' stands), its
 * `<`, `>` and `&` escaped so no text in the contract can close the element.
 */
const editorSchemasScript = (models?: WorkflowModelList): Html =>
  raw(
    `<script type="application/json" id="editor-schemas" data-editor-schemas>${JSON.stringify({ ...editorSchemas(), models: models?.data, acceptsOtherModels: models?.accepts_other_models }).replace(/[<>&]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}</script>`,
  );

const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** What the editor's live preview shows for a graph as written: the picture and every problem, placed. */
export function editorPreview(graph: string, problems: ProblemItem[]): EditorPreview {
  const places = problems.map((p) => ({ ...p, ...problemPlace(p.pointer, graph) }));
  const drawn = drawable(graph);
  const marked = new Map(places.flatMap((p) => (p.nodeId ? [[p.nodeId, 'failed'] as const] : [])));
  const title = `The graph as written${marked.size ? ', nodes with problems marked failed' : ''}`;
  // Each box links to its node's form in the builder (#edit-node-ID), so the picture selects by keyboard too.
  const picture = drawn
    ? graphSvg(drawn.nodes as Workflow['nodes'], drawn.edges as Workflow['edges'], {
        title,
        statuses: marked,
        nodeHref: (id) => `#edit-node-${id}`,
      })
    : null;
  return { graph: picture ? String(picture) : null, problems: places };
}

export function editorPage(m: EditorModel): Html {
  const action = m.workflow ? `/workflows/${m.workflow.id}/edit` : '/workflows/new';
  const places = m.problems.map((p) => ({ ...p, ...problemPlace(p.pointer, m.graph) }));
  // Name and description problems sit at their fields; every other at the graph's.
  const atField = (p: ProblemItem) => p.pointer === '/name' || p.pointer === '/description';
  const inGraph = places.filter((p) => !atField(p)).length;
  const formProblems: FormProblem[] = [
    ...places.filter(atField).map((p) => ({ field: p.pointer.slice(1), message: `${capital(p.message)}.` })),
    ...(inGraph
      ? [
          {
            field: 'graph',
            message: `${inGraph} ${inGraph === 1 ? 'problem' : 'problems'} in the graph, listed above by node and field.`,
          },
        ]
      : []),
  ];
  const drawn = drawable(m.graph);
  const marked = new Map(places.flatMap((p) => (p.nodeId ? [[p.nodeId, 'failed'] as const] : [])));
  const title = m.workflow ? `Edit ${m.workflow.name}` : 'New workflow';
  const first = formProblems[0]?.field ?? 'name';
  return layout(
    {
      title,
      user: m.user,
      current: WORKFLOWS_NAV,
      mainAction: { id: first, label: m.problems.length ? 'the first problem' : 'the form' },
    },
    html`<p class="crumbs"><a href="/workflows">Workflows</a> /${m.workflow ? html` <a href="/workflows/${m.workflow.id}">${m.workflow.name}</a> /` : ''}</p><h1>${title}</h1>
${
  m.conflictVersion !== undefined
    ? html`<div class="error" role="alert"><p><strong>Not saved: someone else saved this workflow meanwhile</strong> (it is now version ${m.conflictVersion}; you started from version ${m.version ?? '?'}). Your text is below as you wrote it. <a href="/workflows/${m.workflow!.id}" target="_blank">Open the current version</a> to compare; saving again replaces version ${m.conflictVersion} with your text.</p></div>`
    : ''
}${
      places.length
        ? html`<div class="error" role="alert"><p>Not saved: ${places.length} ${places.length === 1 ? 'problem' : 'problems'}, as the API would answer (422).</p><ul class="problems">${places.map((p) => html`<li${p.nodeId ? html` data-node="${p.nodeId}"` : ''}><strong>${capital(p.label)}</strong>: ${p.message} <small><code>${p.pointer}</code></small></li>`)}</ul></div>`
        : ''
    }
<form method="post" action="${action}" class="editor"><input type="hidden" name="csrf_token" value="${m.user.csrf}">${m.workflow ? html`<input type="hidden" name="version" value="${m.conflictVersion ?? m.version}">` : ''}
<label for="name">Name</label><input type="text" id="name" name="name" value="${m.name}" required maxlength="200" data-previewed${invalidAttrs(formProblems, 'name')}>${fieldError(formProblems, 'name')}
<label for="description">Description <small>(optional)</small></label><textarea id="description" name="description" rows="2" data-previewed${invalidAttrs(formProblems, 'description')}>${m.description}</textarea>${fieldError(formProblems, 'description')}
<div id="builder" data-builder data-preview="/workflows/editor/preview${m.workflow ? html`?workflow=${m.workflow.id}` : ''}"></div>${m.workflow ? html`<section id="editor-run" data-editor-run="/workflows/${m.workflow.id}" hidden></section>` : ''}
<section id="preview" aria-labelledby="preview-heading"><h2 id="preview-heading">Preview</h2><div id="preview-graph" data-preview-graph>${drawn ? graphSvg(drawn.nodes as Workflow['nodes'], drawn.edges as Workflow['edges'], { title: `The graph as written${marked.size ? ', nodes with problems marked failed' : ''}`, statuses: marked }) : html`<p><small>The graph is drawn once its JSON is well formed.</small></p>`}</div><div id="live-problems" aria-live="polite" data-live-problems></div></section>
<h2>JSON</h2><label for="graph">Graph <small>(JSON: <code>nodes</code> and <code>edges</code>, as the API takes them; node types and their settings are in the <a href="/docs#tag/workflows">API reference</a>)</small></label>
<textarea id="graph" name="graph" rows="22" spellcheck="false" class="code" data-graph-json${invalidAttrs(formProblems, 'graph')}>${m.graph}</textarea>${fieldError(formProblems, 'graph')}
<button type="submit" class="primary" id="save-workflow">${m.workflow ? 'Save' : 'Create workflow'}</button>${m.workflow ? html` <a href="/workflows/${m.workflow.id}">Cancel</a>` : ''}</form>
${editorSchemasScript(m.models)}<script src="/assets/editor.js" defer></script>`,
  );
}
