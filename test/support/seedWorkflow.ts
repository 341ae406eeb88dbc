import type { components } from '../../generated/api.d.ts';

type WorkflowNode = components['schemas']['WorkflowNode'];
type WorkflowEdge = components['schemas']['WorkflowEdge'];

/** The seed's example pipeline: text_input `ticket` -> llm_call -> text_output. */
export function seedGraph(
  model = 'echo',
  format: 'plain' | 'markdown' | 'json' = 'plain',
): { nodes: WorkflowNode[]; edges: WorkflowEdge[] } {
  return {
    nodes: [
      { id: 'input', type: 'text_input', config: { variable: 'ticket' } },
      { id: 'summarise', type: 'llm_call', config: { model, temperature: 0.2, max_tokens: 256 } },
      { id: 'result', type: 'text_output', config: { format } },
    ],
    edges: [
      { from: 'input', to: 'summarise' },
      { from: 'summarise', to: 'result' },
    ],
  };
}
