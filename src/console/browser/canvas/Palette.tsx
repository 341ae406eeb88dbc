import { useId, useState, type KeyboardEvent } from 'react';
import type { NodeTypeSpec } from '../../editorTypes.ts';

// The searchable node palette: a filter field over every node type the contract has (by label,
// type and description), arrow keys to move through the matches, Enter (or a click) to add the
// chosen one. A combobox with a listbox, as the ARIA practices write one.

const matches = (t: NodeTypeSpec, words: string[]) => {
  const text = `${t.label} ${t.type} ${t.description ?? ''}`.toLowerCase();
  return words.every((w) => text.includes(w));
};

/** Matches by name before matches by description: "swi" puts Switch first. */
const rank = (t: NodeTypeSpec, words: string[]) => {
  const name = `${t.label} ${t.type}`.toLowerCase();
  return words.every((w) => name.includes(w)) ? 0 : 1;
};

export function Palette({ types, onAdd }: { types: NodeTypeSpec[]; onAdd: (type: string) => void }) {
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(0);
  const id = useId();
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const shown = types.filter((t) => matches(t, words)).sort((a, b) => rank(a, words) - rank(b, words));
  const at = Math.min(active, shown.length - 1);
  const add = (type: string | undefined) => {
    if (!type) return;
    onAdd(type);
    setQuery('');
    setActive(0);
  };
  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      const step = event.key === 'ArrowDown' ? 1 : -1;
      setActive((Math.max(at, 0) + step + shown.length) % Math.max(shown.length, 1));
    } else if (event.key === 'Enter') {
      event.preventDefault(); // not the form's submit
      add(shown[at]?.type);
    } else if (event.key === 'Escape') setQuery('');
  };
  return (
    <div className="canvas-palette">
      <label htmlFor={`${id}-search`}>Add a node</label>
      <input
        id={`${id}-search`}
        type="search"
        role="combobox"
        autoComplete="off"
        placeholder="Search node types"
        aria-expanded={shown.length > 0}
        aria-controls={`${id}-list`}
        aria-activedescendant={shown[at] ? `${id}-${shown[at].type}` : undefined}
        data-canvas-palette
        value={query}
        onChange={(event) => {
          setQuery(event.target.value);
          setActive(0);
        }}
        onKeyDown={onKeyDown}
      />
      <ul id={`${id}-list`} role="listbox" aria-label="Node types" className="canvas-palette-list">
        {shown.map((t, i) => (
          <li
            key={t.type}
            id={`${id}-${t.type}`}
            role="option"
            aria-selected={i === at}
            data-palette-type={t.type}
            title={t.description}
            onMouseDown={(event) => event.preventDefault() /* keeps the focus in the field */}
            onClick={() => add(t.type)}
          >
            {t.label}
          </li>
        ))}
      </ul>
    </div>
  );
}
