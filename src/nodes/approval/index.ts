import { defineNode, keyTemplates } from '../types.ts';
import { ANY } from '../valueSchemas.ts';
import { answerOutput, answerSchemaOf, answerSchemaProblems } from './answers.ts';

export const approval = defineNode({
  type: 'approval',
  schema: 'ApprovalNode',
  label: 'approval',
  docs: 'waits for a person: the run pauses until its answer (typed by `answer_schema`) comes or it times out; its output is the answer',
  templates: keyTemplates('message'),
  output: (config) => (config.on_error === 'continue' ? ANY : answerOutput(answerSchemaOf(config))),
  configProblems: answerSchemaProblems,
  routable: true,
  // A run waits at its own graph's nodes: a map's item or a called workflow has no run to pause.
  graphProblems: (_node, graph) =>
    (graph.limits.depth ?? 0) > 0
      ? [{ pointer: '', message: "an approval node waits in a workflow's own graph, not inside a map body" }]
      : [],
});
