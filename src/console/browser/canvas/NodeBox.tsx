import { Handle, Position, type NodeProps } from '@xyflow/react';
import type { CanvasNode } from './flow.ts';

// A node on the canvas: its id and type, an input handle on the left (none on a run input), an
// output handle per case, branch or error route on the right, each labelled, and, while a run is
// watched, its status (and a switch's chosen case) as text, not colour alone.

function RunStatus({ run }: { run: NonNullable<CanvasNode['data']['run']> }) {
  return (
    <small className={`run-status status-${run.status}`} data-run-status={run.status}>
      {run.status}
      {run.case !== undefined ? ` · case ${run.case}` : ''}
    </small>
  );
}

export function NodeBox({ data, selected }: NodeProps<CanvasNode>) {
  const classes = ['canvas-node'];
  if (selected) classes.push('selected');
  if (data.current) classes.push('current');
  if (data.problems) classes.push('has-problem');
  if (data.run) classes.push(`status-${data.run.status}`);
  return (
    <div className={classes.join(' ')} data-canvas-node={data.label}>
      {data.input ? <Handle type="target" position={Position.Left} id="in" /> : null}
      <strong className="canvas-node-id">{data.label}</strong>
      <small className="canvas-node-type">{data.typeLabel}</small>
      {data.problems ? (
        <small className="problem-count">
          {data.problems} problem{data.problems > 1 ? 's' : ''}
        </small>
      ) : null}
      {data.run ? <RunStatus run={data.run} /> : null}
      {data.outputs.length ? (
        <ul className="canvas-outputs">
          {data.outputs.map((h) => (
            <li key={h.id} data-output={h.id}>
              {h.label ? <span className="canvas-output-label">{h.label}</span> : null}
              <Handle type="source" position={Position.Right} id={h.id} />
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
