// Renders a requestedSchema (or a tool's inputSchema) as labelled form controls and reads the
// answer back; on a re-ask, draws the red mark the server put on the field that was wrong.
//
// Every field kind form mode allows: text (format, length), number and integer (bounds),
// boolean, single-select (enum, oneOf with titles, legacy enumNames), multi-select (items.enum,
// items.anyOf), defaults and required. The page judges nothing itself (no browser validation):
// the server is the one judge of an answer, and its red mark is what the user sees.

/** Single-select fields with at most this many options are radio buttons, else a list box. */
const MAX_RADIO_OPTIONS = 5;

let counter = 0;
const uid = (p) => `${p}-${++counter}`;

/** Makes an element with attributes and children (strings become text). */
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c !== null && c !== undefined) e.append(c);
  }
  return e;
}

/** Appends the children that are there (null and undefined are left out). */
function add(parent, ...children) {
  parent.append(...children.filter((c) => c !== null && c !== undefined));
}

/**
 * The red mark in a field's description, as redmark writes it on a re-ask
 * ("<description> — last answer: <problem>"): { description, reason }.
 */
export function parseMark(description) {
  const text = description || '';
  const at = text.lastIndexOf('last answer: ');
  if (at < 0) return { description: text, reason: null };
  const before = text.slice(0, at).replace(/\s*—\s*$/, '');
  return { description: before, reason: text.slice(at + 'last answer: '.length) };
}

/** The options of a single- or multi-select schema as [{ value, title }], or null. */
function optionsOf(s) {
  const titled = Array.isArray(s.oneOf) ? s.oneOf : s.anyOf;
  if (Array.isArray(titled)) return titled.map((o) => ({ value: o.const, title: o.title ?? o.const }));
  if (Array.isArray(s.enum)) {
    const names = Array.isArray(s.enumNames) ? s.enumNames : [];
    return s.enum.map((v, i) => ({ value: v, title: names[i] ?? v }));
  }
  return null;
}

/** What kind of control a property schema gets. */
function kindOf(s) {
  if (s.type === 'array' && s.items) {
    if (Array.isArray(s.items.anyOf)) return 'multi';
    if (Array.isArray(s.items.enum)) return 'multi';
  }
  if (s.type === 'string' && optionsOf(s)) return 'single';
  if (s.type === 'string') return 'text';
  if (s.type === 'integer' || s.type === 'number') return 'number';
  if (s.type === 'boolean') return 'boolean';
  return 'json';
}

/** The constraints of a schema, in words, for the hint under its label. */
function constraints(s, kind) {
  const out = [];
  if (kind === 'text') {
    if (s.format) out.push({ email: 'an email address', uri: 'a URI', date: 'a date', 'date-time': 'a date and time' }[s.format] || s.format);
    if (s.minLength != null && s.maxLength != null) out.push(`${s.minLength} to ${s.maxLength} characters`);
    else if (s.minLength != null) out.push(`at least ${s.minLength} characters`);
    else if (s.maxLength != null) out.push(`up to ${s.maxLength} characters`);
  }
  if (kind === 'number') {
    out.push(s.type === 'integer' ? 'a whole number' : 'a number');
    if (s.minimum != null && s.maximum != null) out.push(`${s.minimum} to ${s.maximum}`);
    else if (s.minimum != null) out.push(`at least ${s.minimum}`);
    else if (s.maximum != null) out.push(`at most ${s.maximum}`);
  }
  if (kind === 'multi') {
    if (s.minItems != null) out.push(`pick at least ${s.minItems}`);
    if (s.maxItems != null) out.push(`pick at most ${s.maxItems}`);
  }
  if (kind === 'json') out.push('JSON');
  return out.join(', ');
}

/** "2026-07-28T09:30:00Z" → the local "2026-07-28T11:30" a datetime-local input shows. */
function toLocalInput(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** One field: its wrapper and how to read its value (undefined: leave it out). */
function field(name, s, required, value, prefix) {
  const kind = kindOf(s);
  const id = uid(prefix);
  const { description, reason } = parseMark(s.description);
  const title = s.title || name;
  const hintText = [description, constraints(s, kind)].filter(Boolean).join(' — ');
  const hintId = hintText ? `${id}-hint` : null;
  const markId = reason ? `${id}-mark` : null;
  const describedBy = [hintId, markId].filter(Boolean).join(' ') || null;
  const initial = value !== undefined ? value : s.default;
  const labelText = [title, required ? el('span', { class: 'req', text: ' (required)' }) : null];
  const common = { 'aria-describedby': describedBy, 'aria-invalid': reason ? 'true' : null, 'aria-required': required ? 'true' : null };
  const wrap = el('div', { class: `field field-${kind}${reason ? ' marked' : ''}`, 'data-field': name });
  const hint = hintText ? el('p', { class: 'hint', id: hintId, text: hintText }) : null;
  const mark = reason ? el('p', { class: 'mark', id: markId }, el('span', { class: 'mark-sign', 'aria-hidden': 'true', text: '✗ ' }), reason) : null;
  let read;

  if (kind === 'single' || kind === 'multi') {
    const opts = kind === 'multi' ? optionsOf(s.items) : optionsOf(s);
    const chosen = new Set(kind === 'multi' ? (Array.isArray(initial) ? initial : []) : (initial != null ? [initial] : []));
    if (kind === 'single' && opts.length > MAX_RADIO_OPTIONS) {
      const select = el('select', { id, name, ...common },
        el('option', { value: '', text: '— choose —' }),
        opts.map((o) => el('option', { value: o.value, text: o.title, selected: chosen.has(o.value) })));
      add(wrap, el('label', { for: id }, ...labelText), hint, select, mark);
      read = () => (select.value === '' ? undefined : select.value);
    } else {
      const type = kind === 'multi' ? 'checkbox' : 'radio';
      const boxes = opts.map((o, i) => {
        const oid = `${id}-${i}`;
        const input = el('input', { type, id: oid, name: id, value: o.value, checked: chosen.has(o.value) });
        return { input, row: el('div', { class: 'option' }, input, el('label', { for: oid, text: o.title })) };
      });
      const set = el('fieldset', { class: 'choices', ...common, role: kind === 'single' ? 'radiogroup' : null },
        el('legend', {}, ...labelText), hint, boxes.map((b) => b.row));
      add(wrap, set, mark);
      read = kind === 'multi'
        ? () => { const v = boxes.filter((b) => b.input.checked).map((b) => b.input.value); return v.length ? v : undefined; }
        : () => boxes.find((b) => b.input.checked)?.input.value;
    }
  } else if (kind === 'boolean') {
    const input = el('input', { type: 'checkbox', id, name, checked: initial === true, ...common });
    add(wrap, el('div', { class: 'option' }, input, el('label', { for: id }, ...labelText)), hint, mark);
    read = () => input.checked;
  } else if (kind === 'json') {
    const area = el('textarea', { id, name, rows: 3, spellcheck: 'false', ...common });
    area.value = initial !== undefined ? JSON.stringify(initial) : '';
    add(wrap, el('label', { for: id }, ...labelText), hint, area, mark);
    read = () => {
      if (area.value.trim() === '') return undefined;
      try { return JSON.parse(area.value); } catch { return area.value; }
    };
  } else {
    const number = kind === 'number';
    const type = number ? 'number'
      : { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' }[s.format] || 'text';
    const input = el('input', {
      type, id, name, ...common,
      step: number ? (s.type === 'integer' ? '1' : 'any') : null,
      inputmode: number ? (s.type === 'integer' ? 'numeric' : 'decimal') : null,
      autocomplete: 'off',
    });
    if (initial !== undefined && initial !== null) input.value = type === 'datetime-local' ? toLocalInput(initial) : String(initial);
    add(wrap, el('label', { for: id }, ...labelText), hint, input, mark);
    read = () => {
      const v = input.value;
      if (v === '') return undefined;
      if (number) return Number(v);
      if (type === 'datetime-local') { const d = new Date(v); return Number.isNaN(d.getTime()) ? v : d.toISOString(); }
      return v;
    };
  }
  return { wrap, read, marked: !!reason };
}

/**
 * Renders `schema`'s properties into `container`, prefilled from `values` (the last answers,
 * else the schema's defaults). Returns { read, firstMarked }: `read()` is the content object.
 */
export function renderFields(container, schema, values = {}, prefix = 'f') {
  const props = (schema && schema.properties) || {};
  const required = new Set((schema && schema.required) || []);
  const fields = Object.entries(props).map(([name, s]) => ({ name, ...field(name, s || {}, required.has(name), values[name], prefix) }));
  for (const f of fields) container.append(f.wrap);
  return {
    read() {
      const content = {};
      for (const f of fields) {
        const v = f.read();
        if (v !== undefined) content[f.name] = v;
      }
      return content;
    },
    firstMarked: fields.find((f) => f.marked)?.wrap || null,
  };
}

/** The first control in `root` a keyboard user should land on. */
export function firstControl(root) {
  return root.querySelector('input:not([type=hidden]), select, textarea, button');
}
