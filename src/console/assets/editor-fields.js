// The workflow editor's config forms (/assets/editor-fields.js, for /assets/editor.js): one form
// per node type, built from the JSON Schema of its config as openapi.yaml states it (the page
// carries the schemas), so a node type added to the contract gets its form with no change here.
// What a field holds is what the JSON holds: a blank optional field removes its key.
{
  const make = (tag, props = {}, ...children) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'text') e.textContent = v;
      else if (k === 'className') e.className = v;
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    e.append(...children.filter((c) => c !== null && c !== undefined));
    return e;
  };
  const typeOf = (schema) => (Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type);
  const escapeKey = (key) => key.replace(/~/g, '~0').replace(/\//g, '~1');

  /** The value at `path` in `object`, set (or, for undefined, removed: an emptied object goes too). */
  const setAt = (object, path, value) => {
    const [key, ...rest] = path;
    if (!rest.length) {
      if (value === undefined) delete object[key];
      else object[key] = value;
      return;
    }
    const inner =
      typeof object[key] === 'object' && object[key] !== null && !Array.isArray(object[key]) ? object[key] : {};
    setAt(inner, rest, value);
    if (Object.keys(inner).length) object[key] = inner;
    else delete object[key];
  };

  /** A first value for a required field of a new node: the contract's example, else the simplest valid-looking one. */
  const initial = (schema) => {
    if (schema.example !== undefined) return schema.example;
    if (schema.enum) return schema.enum[0];
    const type = typeOf(schema);
    if (type === 'object')
      return Object.fromEntries((schema.required ?? []).map((k) => [k, initial(schema.properties?.[k] ?? {})]));
    return (
      { string: '', number: schema.minimum ?? 0, integer: schema.minimum ?? 0, boolean: false, array: [] }[type] ?? ''
    );
  };

  /** The control for one value; `set` receives the new value (undefined: unset), `invalid` a local problem or null. */
  function control(schema, id, value, required, set, invalid) {
    const type = typeOf(schema);
    if (schema.enum || type === 'boolean') {
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
    if (type === 'number' || type === 'integer') {
      const input = make('input', {
        id,
        type: 'number',
        inputmode: type === 'integer' ? 'numeric' : 'decimal',
        step: type === 'integer' ? '1' : 'any',
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
    if (type === 'string') {
      const long = (schema.maxLength ?? 0) > 200;
      const input = long
        ? make('textarea', { id, rows: '3', spellcheck: 'false', className: 'code', maxlength: schema.maxLength })
        : make('input', { id, type: 'text', maxlength: schema.maxLength, spellcheck: 'false' });
      input.value = typeof value === 'string' ? value : '';
      input.addEventListener('input', () => set(input.value === '' && !required ? undefined : input.value));
      return input;
    }
    // Anything else (a list, a free-form object, a choice of shapes): its JSON, set once it parses.
    const area = make('textarea', { id, rows: '3', spellcheck: 'false', className: 'code' });
    area.value = value === undefined ? '' : JSON.stringify(value, null, 2);
    area.addEventListener('input', () => {
      if (area.value.trim() === '') return (invalid(null), set(undefined));
      try {
        const parsed = JSON.parse(area.value);
        invalid(null);
        set(parsed);
      } catch {
        invalid('Not JSON yet: the graph keeps the last value that was.');
      }
    });
    return area;
  }

  /**
   * The fields of `schema`'s properties for `value` (an object), in the contract's order. `pointer`:
   * the JSON pointer of `value` in the graph (`/nodes/2/config`), kept on each field as
   * data-pointer, so a problem the API names by pointer is shown at its field. `onChange(path,
   * value)` is called with the changed property's path inside the config.
   */
  function fields(schema, value, pointer, onChange, idPrefix, path = []) {
    const required = schema.required ?? [];
    return Object.entries(schema.properties ?? {}).map(([key, prop]) => {
      const at = [...path, key];
      const id = `${idPrefix}-${at.join('-')}`;
      const fieldPointer = `${pointer}/${escapeKey(key)}`;
      const isRequired = required.includes(key);
      const current = value?.[key];
      const hint = prop.description ? make('p', { className: 'hint', id: `${id}-hint`, text: prop.description }) : null;
      if (typeOf(prop) === 'object' && prop.properties) {
        return make(
          'fieldset',
          { className: 'config-group', 'data-pointer': fieldPointer },
          make('legend', { text: key + (isRequired ? ' (required)' : '') }),
          hint,
          ...fields(prop, current ?? {}, fieldPointer, onChange, idPrefix, at),
        );
      }
      const local = make('p', { className: 'field-error', id: `${id}-local`, hidden: true });
      const invalid = (message) => {
        local.hidden = !message;
        local.textContent = message ?? '';
      };
      const input = control(prop, id, current, isRequired, (v) => onChange(at, v), invalid);
      input.setAttribute('data-pointer', fieldPointer);
      if (hint) input.setAttribute('aria-describedby', hint.id);
      if (isRequired) input.setAttribute('aria-required', 'true');
      return make(
        'div',
        { className: 'config-field' },
        make('label', { for: id }, key, isRequired ? make('small', { text: ' (required)' }) : null),
        hint,
        input,
        local,
      );
    });
  }

  globalThis.editorFields = { fields, initial, setAt, make, typeOf };
}
