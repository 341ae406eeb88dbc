import type { FieldSchema } from '../../editorTypes.ts';
import { make } from '../dom.ts';
import { writeJson } from './changes.ts';
import { typeOf } from './fields.ts';
import { caseNamesOf, type Editor, type GraphEdge, type GraphNode } from './model.ts';

// A node's list of cases (its type's `caseList`: a switch's `cases`) as rows of fields instead of
// a JSON box: one field per property of an item, in the contract's order, a choice where the
// schema lists the values (the operators). A case's name is what its edges pick, so the edges
// follow it as it is typed.

type Json = Record<string, unknown>;

/** A value of any JSON type, written as text: JSON when it reads as JSON (1000, ["a", "b"], "5"), else the text itself. */
const readLoose = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
};
const writeLoose = (value: unknown): string => {
  if (value === undefined) return '';
  if (typeof value === 'string' && readLoose(value) === value) return value;
  return JSON.stringify(value);
};

/** The control of one property of a case. */
function caseControl(schema: FieldSchema, id: string, value: unknown, set: (value: unknown) => void): HTMLElement {
  if (schema.enum) {
    const values = schema.enum;
    const select = make(
      'select',
      { id },
      ...values.map((v, i) => make('option', { value: String(i), text: String(v), selected: v === value })),
    );
    select.addEventListener('change', () => set(values[Number(select.value)]));
    return select;
  }
  const loose = typeOf(schema) === undefined;
  const input = make('input', { id, type: 'text', spellcheck: 'false', maxlength: schema.maxLength });
  input.value = loose ? writeLoose(value) : typeof value === 'string' ? value : '';
  input.addEventListener('input', () => {
    if (input.value === '') return set(undefined);
    set(loose ? readLoose(input.value) : input.value);
  });
  return input;
}

/** A name no case of `cases` has: case_1, case_2... */
function freshName(cases: unknown[]): string {
  const names = caseNamesOf(cases);
  for (let n = 1; ; n++) if (!names.includes(`case_${n}`)) return `case_${n}`;
}

/** Where a case editor works: its node, the list's key and JSON pointer, and the list (made when absent). */
interface CaseList {
  editor: Editor;
  node: GraphNode;
  key: string;
  pointer: string;
  props: [string, FieldSchema][];
  cases(): Json[];
}

/** The fields of case `i`, and its Remove button. */
function caseRow(list: CaseList, c: Json, i: number): HTMLElement {
  const { editor, node, key, pointer, props, cases } = list;
  const fields = props.map(([prop, propSchema]) => {
    const id = `cfg-${key}-${i}-${prop}`;
    // A renamed case takes its edges along: those that named it when the typing began (by
    // identity, so a name another case has on the way merges nothing).
    let following: GraphEdge[] = [];
    const input = caseControl(propSchema, id, c[prop], (value) => {
      const target = cases()[i];
      if (!target) return;
      if (value === undefined) delete target[prop];
      else target[prop] = value;
      if (prop === 'name') for (const e of following) e.case = typeof value === 'string' ? value : '';
      writeJson(editor);
      if (prop === 'name') editor.renderLists();
    });
    if (prop === 'name')
      input.addEventListener('focus', () => {
        const name = cases()[i]?.name;
        following = (editor.state.graph?.edges ?? []).filter((e) => e.from === node.id && e.case === name);
      });
    input.setAttribute('data-pointer', `${pointer}/${i}/${prop}`);
    // Each property is described once, above the rows; every row's field points there.
    if (propSchema.description) input.setAttribute('aria-describedby', `cfg-${key}-${prop}-hint`);
    return make('div', { className: 'case-field' }, make('label', { for: id, text: prop }), input);
  });
  const remove = make('button', { type: 'button', className: 'danger' }, `Remove case ${i + 1}`);
  remove.addEventListener('click', () => {
    cases().splice(i, 1);
    writeJson(editor);
    editor.render();
    editor.root.querySelector<HTMLElement>(`#cfg-${key}-add`)?.focus();
  });
  return make(
    'li',
    { className: 'case-row' },
    make('fieldset', {}, make('legend', { text: `Case ${i + 1}` }), ...fields, remove),
  );
}

/** The case editor of `node`'s list `key` (whose schema is `schema`); `pointer`: the list's JSON pointer in the graph. */
export function caseEditor(
  editor: Editor,
  node: GraphNode,
  key: string,
  schema: FieldSchema,
  pointer: string,
  required: boolean,
): HTMLElement {
  const item = schema.items ?? {};
  const props = Object.entries(item.properties ?? {});
  const cases = (): Json[] => {
    if (!Array.isArray(node.config[key])) node.config[key] = [];
    return node.config[key] as Json[];
  };
  const rows = cases().map((c, i) => caseRow({ editor, node, key, pointer, props, cases }, c, i));
  const add = make('button', { type: 'button', id: `cfg-${key}-add` }, 'Add case');
  add.addEventListener('click', () => {
    const list = cases();
    // A name of its own, and the first value of each required choice (a switch's first operator).
    const fresh: Json = { name: freshName(list) };
    for (const [prop, s] of props) if (s.enum && item.required?.includes(prop)) fresh[prop] = s.enum[0];
    list.push(fresh);
    writeJson(editor);
    editor.render();
    editor.root.querySelector<HTMLElement>(`#cfg-${key}-${list.length - 1}-name`)?.focus();
  });
  return make(
    'fieldset',
    { className: 'config-group case-editor', 'data-pointer': pointer },
    make('legend', { text: key + (required ? ' (required)' : '') }),
    schema.description ? make('p', { className: 'hint', text: schema.description }) : null,
    make('p', {
      className: 'hint',
      text: 'Checked in order: the first case that holds is taken, else the edges marked default. A value reads as JSON when it is JSON (1000, ["a", "b"], "5"), else as text.',
    }),
    make(
      'dl',
      { className: 'case-hints' },
      ...props.flatMap(([prop, propSchema]) =>
        propSchema.description
          ? [
              make('dt', { text: prop }),
              make('dd', { className: 'hint', id: `cfg-${key}-${prop}-hint`, text: propSchema.description }),
            ]
          : [],
      ),
    ),
    rows.length ? make('ol', { className: 'case-list' }, ...rows) : null,
    add,
  );
}
