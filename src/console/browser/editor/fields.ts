import type { FieldSchema } from '../../editorTypes.ts';
import { make } from '../dom.ts';

// The workflow editor's config forms: one form per node type, built from the JSON Schema of its
// config as openapi.yaml states it (the page carries the schemas), so a node type added to the
// contract gets its form with no change here. What a field holds is what the JSON holds: a blank
// optional field removes its key.

type Json = Record<string, unknown>;
type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
/** Receives a field's new value (undefined: unset). */
type Set = (value: unknown) => void;
/** Receives a field's local problem, or null when it has none. */
type Invalid = (message: string | null) => void;

export const typeOf = (schema: FieldSchema): string | undefined =>
  Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
const escapeKey = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The value at `path` in `object`, set (or, for undefined, removed: an emptied object goes too). */
export function setAt(object: Json, path: readonly string[], value: unknown): void {
  const [key, ...rest] = path;
  if (key === undefined) return;
  if (!rest.length) {
    if (value === undefined) delete object[key];
    else object[key] = value;
    return;
  }
  const inner = isObject(object[key]) ? object[key] : {};
  setAt(inner, rest, value);
  if (Object.keys(inner).length) object[key] = inner;
  else delete object[key];
}

/** A first value for a required field of a new node: the contract's example, else the simplest valid-looking one. */
export function initial(schema: FieldSchema): unknown {
  if (schema.example !== undefined) return schema.example;
  if (schema.enum) return schema.enum[0];
  const type = typeOf(schema);
  if (type === 'object')
    return Object.fromEntries((schema.required ?? []).map((k) => [k, initial(schema.properties?.[k] ?? {})]));
  const simplest: Record<string, unknown> = {
    string: '',
    number: schema.minimum ?? 0,
    integer: schema.minimum ?? 0,
    boolean: false,
    array: [],
  };
  return (type && simplest[type]) ?? '';
}

/** A choice of the schema's values (an enum, or true and false). */
function choiceControl(schema: FieldSchema, id: string, value: unknown, required: boolean, set: Set): Control {
  const values = schema.enum ?? [true, false];
  const select = make(
    'select',
    { id },
    ...(required ? [] : [make('option', { value: '', text: '(not set)' })]),
    ...values.map((v, i) => make('option', { value: String(i), text: String(v), selected: v === value })),
  );
  if (value === undefined && !required) select.value = '';
  select.addEventListener('change', () => set(select.value === '' ? undefined : values[Number(select.value)]));
  return select;
}

function numberControl(schema: FieldSchema, id: string, value: unknown, set: Set): Control {
  const integer = typeOf(schema) === 'integer';
  const input = make('input', {
    id,
    type: 'number',
    inputmode: integer ? 'numeric' : 'decimal',
    step: integer ? '1' : 'any',
    min: schema.minimum,
    max: schema.maximum,
    value: typeof value === 'number' ? String(value) : '',
  });
  input.addEventListener('input', () => {
    if (input.value.trim() === '') return set(undefined);
    const n = Number(input.value);
    if (Number.isFinite(n)) set(n);
  });
  return input;
}

function textControl(schema: FieldSchema, id: string, value: unknown, required: boolean, set: Set): Control {
  const long = (schema.maxLength ?? 0) > 200;
  const input = long
    ? make('textarea', { id, rows: '3', spellcheck: 'false', className: 'code', maxlength: schema.maxLength })
    : make('input', { id, type: 'text', maxlength: schema.maxLength, spellcheck: 'false' });
  input.value = typeof value === 'string' ? value : '';
  input.addEventListener('input', () => set(input.value === '' && !required ? undefined : input.value));
  return input;
}

/** Anything else (a list, a free-form object, a choice of shapes): its JSON, set once it parses. */
function jsonControl(id: string, value: unknown, set: Set, invalid: Invalid): Control {
  const area = make('textarea', { id, rows: '3', spellcheck: 'false', className: 'code' });
  area.value = value === undefined ? '' : JSON.stringify(value, null, 2);
  area.addEventListener('input', () => {
    if (area.value.trim() === '') {
      invalid(null);
      return set(undefined);
    }
    try {
      const parsed: unknown = JSON.parse(area.value);
      invalid(null);
      set(parsed);
    } catch {
      invalid('Not JSON yet: the graph keeps the last value that was.');
    }
  });
  return area;
}

/** The control for one value. */
function control(
  schema: FieldSchema,
  id: string,
  value: unknown,
  required: boolean,
  set: Set,
  invalid: Invalid,
): Control {
  const type = typeOf(schema);
  if (schema.enum || type === 'boolean') return choiceControl(schema, id, value, required, set);
  if (type === 'number' || type === 'integer') return numberControl(schema, id, value, set);
  if (type === 'string') return textControl(schema, id, value, required, set);
  return jsonControl(id, value, set, invalid);
}

/** Called with the changed property's path inside the config, and its new value. */
export type OnChange = (path: string[], value: unknown) => void;

/** What a node's form adds to its top-level fields, by key: a control of its own (the model menu), elements after one (a template's offers and preview). */
export interface FieldExtras {
  control?(key: string, id: string, value: unknown, set: Set): { control: Control; after: HTMLElement[] } | null;
  decorate?(key: string, input: Control, id: string, pointer: string): HTMLElement[];
}

/**
 * The fields of `schema`'s properties for `value` (an object), in the contract's order. `pointer`:
 * the JSON pointer of `value` in the graph (`/nodes/2/config`), kept on each field as
 * data-pointer, so a problem the API names by pointer is shown at its field.
 */
export function fields(
  schema: FieldSchema,
  value: Json,
  pointer: string,
  onChange: OnChange,
  idPrefix: string,
  path: string[] = [],
  extras: FieldExtras = {},
): HTMLElement[] {
  const required = schema.required ?? [];
  return Object.entries(schema.properties ?? {}).map(([key, prop]) => {
    const at = [...path, key];
    const id = `${idPrefix}-${at.join('-')}`;
    const fieldPointer = `${pointer}/${escapeKey(key)}`;
    const isRequired = required.includes(key);
    const current = value[key];
    const hint = prop.description ? make('p', { className: 'hint', id: `${id}-hint`, text: prop.description }) : null;
    if (typeOf(prop) === 'object' && prop.properties) {
      return make(
        'fieldset',
        { className: 'config-group', 'data-pointer': fieldPointer },
        make('legend', { text: key + (isRequired ? ' (required)' : '') }),
        hint,
        ...fields(prop, isObject(current) ? current : {}, fieldPointer, onChange, idPrefix, at),
      );
    }
    const local = make('p', { className: 'field-error', id: `${id}-local`, hidden: true });
    const invalid: Invalid = (message) => {
      local.hidden = !message;
      local.textContent = message ?? '';
    };
    const set: Set = (v) => onChange(at, v);
    const own = path.length ? null : (extras.control?.(key, id, current, set) ?? null);
    const input = own?.control ?? control(prop, id, current, isRequired, set, invalid);
    const after = [
      ...(own?.after ?? []),
      ...(path.length ? [] : (extras.decorate?.(key, input, id, fieldPointer) ?? [])),
    ];
    input.setAttribute('data-pointer', fieldPointer);
    const described = [hint?.id, ...after.filter((e) => e.classList.contains('template-preview')).map((e) => e.id)];
    if (described.some(Boolean)) input.setAttribute('aria-describedby', described.filter(Boolean).join(' '));
    if (isRequired) input.setAttribute('aria-required', 'true');
    return make(
      'div',
      { className: 'config-field' },
      make('label', { for: id }, key, isRequired ? make('small', { text: ' (required)' }) : null),
      hint,
      input,
      local,
      ...after,
    );
  });
}
