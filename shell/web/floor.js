// The floor at a glance: one day of rooms × time steps, each booking a block at its real start
// and length (yours with its title, anyone else's with its title when the floor's titles are
// public, else "Booked"), free steps to press and book, steps that have begun marked past. When
// rooms are busy (and others' titles) comes from day_schedule (one call a day) when the server
// has it, else from list_rooms span by span; which are yours from list_bookings. The floor's zone, grid and longest booking come with day_schedule (UTC, 15
// minutes and no bound known without it); every time goes through time.js.

import { el } from './form.js';
import { resultText } from './mcp.js';
import { UTC, DAY_MINUTES, hhmm, parseTime, minuteOf, nowMinute, today, knownZone } from './time.js';

/** The first and last hour the day view always shows (the floor has no opening hours yet);
 * any other hour is shown when a booking touches it. */
export const FIRST_HOUR = 7;
export const LAST_HOUR = 20;
/** Minutes a row stands for when the server does not say the floor's grid (the default grid).
 * A booking that starts or ends between rows makes the rows as fine as it needs. */
export const STEP = 15;
/** Grids a floor may have (minutes): a day_schedule saying another is read as [`STEP`]. */
const GRIDS = [5, 10, 15, 30, 60];
/** Pages of list_bookings read for one day at most (a server's page is 8 bookings). */
const MAX_PAGES = 50;

const gcd = (a, b) => (b ? gcd(b, a % b) : a);

/** The parts of the runs `[from, to)` not covered by `holes`. */
function subtract(runs, holes) {
  let out = runs;
  for (const [hf, ht] of holes) {
    out = out.flatMap(([f, t]) => [[f, Math.min(t, hf)], [Math.max(f, ht), t]].filter(([a, b]) => a < b));
  }
  return out;
}

/** Runs `[from, to)` of minutes merged where they touch or overlap, earliest first. */
function merge(runs) {
  const out = [];
  for (const [f, t] of [...runs].sort((a, b) => a[0] - b[0])) {
    const last = out[out.length - 1];
    if (last && f <= last[1]) last[1] = Math.max(last[1], t);
    else out.push([f, t]);
  }
  return out;
}

/**
 * What the grid shows, from the rooms, when each is busy (`busy`: room id → [[from, to)]
 * minutes of the day), the caller's own bookings (`mine`: [{ booking, room, from, to }]), the
 * minute it is now, the floor's grid (minutes) and others' bookings whose titles the server
 * showed (`titled`: room id → [{ from, to, title }]): `{ step, rows, cells }`, where `rows` are
 * the start minutes of the rows and `cells[r][i]` the cell of room `r` in row `i`:
 * `{ kind: 'free' | 'past' }`, a block `{ kind: 'block', from, to, rows, booking, title, past }`
 * (booking: the caller's, else null; title: another's shown title, else null), or undefined
 * for a row a block above covers.
 */
export function plan(rooms, busy, mine, now, grid = STEP, titled = new Map()) {
  const blocks = rooms.map((room) => {
    const own = mine.filter((m) => m.room === room.id)
      .map((m) => ({ from: m.from, to: m.to, booking: m.booking, title: null }));
    const named = (titled.get(room.id) || [])
      .filter((t) => !own.some((o) => o.from < t.to && t.from < o.to))
      .map((t) => ({ from: t.from, to: t.to, booking: null, title: t.title }));
    const others = subtract(busy.get(room.id) || [], [...own, ...named].map((o) => [o.from, o.to]))
      .map(([from, to]) => ({ from, to, booking: null, title: null }));
    return [...own, ...named, ...others];
  });
  let step = grid;
  const hours = new Set();
  for (let h = FIRST_HOUR; h <= LAST_HOUR; h++) hours.add(h);
  for (const b of blocks.flat()) {
    step = gcd(gcd(step, b.from), b.to);
    for (let h = Math.floor(b.from / 60); h * 60 < b.to; h++) hours.add(h);
  }
  const rows = [...hours].sort((a, b) => a - b)
    .flatMap((h) => Array.from({ length: 60 / step }, (_, k) => h * 60 + k * step));
  const cells = blocks.map((list) => {
    const at = new Map(list.map((b) => [b.from, b]));
    let covered = -1;
    return rows.map((m) => {
      const b = at.get(m);
      if (b) {
        covered = b.to;
        return { kind: 'block', ...b, rows: (b.to - b.from) / step, past: b.to <= now };
      }
      if (m < covered) return undefined;
      return { kind: m <= now ? 'past' : 'free' };
    });
  });
  return { step, rows, cells };
}

/**
 * The day view: renders into `root`; calls `onBook(room, day, start minute)` for a free step
 * and `onCancel(booking)` for one of the caller's. `listsBookings`: the server has
 * list_bookings (else no block is marked yours); `hasDaySchedule`: it has day_schedule.
 */
export class FloorView {
  /** `onClock({ zone, named, grid, max })`: day_schedule said the floor's zone (`zone`, the one
   * the page reads "now" on; `named`, the server's name for it), grid and longest booking. */
  constructor(client, root, { onBook, onCancel, listsBookings, hasDaySchedule, onClock }) {
    Object.assign(this, { client, root, onBook, onCancel, listsBookings, hasDaySchedule, onClock });
    this.rooms = null;
    this.loads = 0;
    /** On a site (day_schedule names its buildings): the building and level asked for, and
     * the buildings with the one shown. */
    this.place = { building: null, level: null };
    this.site = null;
    /** The floor's clock: UTC on the default grid until day_schedule says otherwise. */
    this.clock = { zone: UTC, named: UTC, grid: STEP, max: null, told: false };
  }

  /** Reads the rooms, when they are busy and which bookings are yours on `day` (null: today on
   * the floor's clock), then draws the grid (unless a later load began meanwhile: the last day
   * asked for is the one drawn). Returns the day drawn (undefined if none). Throws McpFailure
   * or Error. */
  async load(day) {
    const ticket = ++this.loads;
    if (!this.rooms) {
      const r = await this.client.callTool('list_rooms', {}, noQuestions);
      if (r.isError) throw new Error(resultText(r));
      this.rooms = (r.structuredContent && r.structuredContent.rooms) || [];
    }
    let read = null;
    if (day === null && this.hasDaySchedule && !this.clock.told) {
      // The zone comes with a day's schedule: read UTC's today, keep it if the floor's is the same.
      const guess = today(UTC);
      read = await this.schedule(guess);
      if (today(this.clock.zone) !== guess) read = null;
    }
    if (day === null) day = today(this.clock.zone);
    const [{ busy, titled }, mine] = await Promise.all([
      read || (this.hasDaySchedule ? this.schedule(day) : this.busyByListRooms(day)), this.yours(day)]);
    if (ticket !== this.loads) return undefined;
    this.draw(day, plan(this.rooms, busy, mine, nowMinute(day, this.clock.zone), this.clock.grid, titled));
    return day;
  }

  /** Takes the floor's zone, grid and longest booking from a day_schedule answer `s`. A zone
   * this browser does not know is still named, but "now" is then read on UTC. */
  learn(s) {
    const named = typeof s.time_zone === 'string' && s.time_zone ? s.time_zone : UTC;
    const grid = GRIDS.includes(s.grid_minutes) ? s.grid_minutes : STEP;
    const max = Number.isInteger(s.max_minutes) && s.max_minutes >= grid ? s.max_minutes : null;
    const zone = knownZone(named) ? named : UTC;
    const was = this.clock;
    this.clock = { zone, named, grid, max, told: true };
    if (this.onClock && (!was.told || was.named !== named || was.grid !== grid || was.max !== max)) {
      this.onClock(this.clock);
    }
  }

  /** The zone as the page names it: the server's name (and the one "now" is read on, if this
   * browser does not know it). */
  zoneText() {
    const { zone, named } = this.clock;
    return zone === named ? named : `${named}; this browser reads now on ${zone}`;
  }

  /** When each room is busy on `day`, from day_schedule (of the building and level chosen, on
   * a site): `{ busy, titled }`, busy: room id → [[from, to)]; titled: room id →
   * [{ from, to, title }], others' bookings whose titles the server showed (a floor with public
   * titles). */
  async schedule(day) {
    const args = { day };
    if (this.place.building) args.building = this.place.building;
    if (this.place.level) args.level = this.place.level;
    const r = await this.client.callTool('day_schedule', args, noQuestions);
    if (r.isError) throw new Error(resultText(r));
    const s = r.structuredContent || {};
    this.learn(s);
    if (Array.isArray(s.buildings)) {
      // A site: the rooms drawn are the building's (and level's) this answer shows.
      this.rooms = (s.rooms || []).map(({ booked, meetings, ...room }) => room);
      this.site = { buildings: s.buildings, building: s.building && s.building.id };
    }
    const busy = new Map();
    const titled = new Map();
    for (const room of (r.structuredContent && r.structuredContent.rooms) || []) {
      const runs = (room.booked || []).map((b) => [parseTime(b.start), parseTime(b.end)])
        .filter(([f, t]) => f !== null && t !== null && f < t);
      busy.set(room.id, runs);
      titled.set(room.id, (room.meetings || [])
        .filter((m) => !m.yours && typeof m.title === 'string' && m.title)
        .map((m) => ({ from: parseTime(m.start), to: parseTime(m.end), title: m.title }))
        .filter(({ from, to }) => from !== null && to !== null && from < to));
    }
    return { busy, titled };
  }

  /**
   * When each room is busy on `day`, for a server without day_schedule: list_rooms for each
   * whole hour still to come, then step by step within the hours found busy (and the hour under
   * way). Steps that have begun are not asked (list_rooms calls them taken): they show as past.
   * A floor whose grid is coarser than a step refuses the step: that hour counts as busy.
   * `{ busy, titled }` as [`schedule`] says, with no titles.
   */
  async busyByListRooms(day) {
    const now = nowMinute(day, this.clock.zone);
    const taken = async (start, minutes) => {
      const r = await this.client.callTool('list_rooms', { day, start: hhmm(start), minutes }, noQuestions);
      if (r.isError) return null;
      return ((r.structuredContent && r.structuredContent.rooms) || []).filter((x) => x.free === false).map((x) => x.id);
    };
    const all = this.rooms.map((r) => r.id);
    const hours = Array.from({ length: 24 }, (_, h) => h).filter((h) => (h + 1) * 60 - STEP > now);
    const found = await Promise.all(hours.map(async (h) => {
      if (h * 60 <= now) return all;
      const rooms = await taken(h * 60, 60);
      if (rooms === null) throw new Error(`list_rooms could not say which rooms are free on ${day} at ${hhmm(h * 60)}.`);
      return rooms;
    }));
    const runs = new Map(all.map((id) => [id, []]));
    await Promise.all(hours.flatMap((h, i) => (found[i].length ? [h] : [])).map(async (h) => {
      const steps = Array.from({ length: 60 / STEP }, (_, k) => h * 60 + k * STEP).filter((m) => m > now);
      const each = await Promise.all(steps.map((m) => taken(m, STEP)));
      steps.forEach((m, k) => {
        const rooms = each[k] || found[hours.indexOf(h)];
        for (const id of rooms) if (runs.has(id)) runs.get(id).push([m, m + STEP]);
      });
    }));
    return { busy: new Map([...runs].map(([id, r]) => [id, merge(r)])), titled: new Map() };
  }

  /** The caller's bookings that take up some of `day`, as the server lists them:
   * [{ booking, room, from, to }] in minutes of the day (cut at its midnights). */
  async yours(day) {
    const mine = [];
    this.released = [];
    if (!this.listsBookings) return mine;
    const args = { day };
    for (let page = 0; page < MAX_PAGES; page++) {
      const r = await this.client.callTool('list_bookings', args, noQuestions);
      if (r.isError) throw new Error(resultText(r));
      const s = r.structuredContent || {};
      for (const b of s.bookings || []) {
        // Released for want of a check-in: its time is free again, and the page says so below.
        if (b.status === 'released') { this.released.push(b); continue; }
        const from = Math.max(0, minuteOf(b.start, day) ?? -1);
        const to = Math.min(DAY_MINUTES, minuteOf(b.end, day) ?? -1);
        if (from < to) mine.push({ booking: b, room: b.room_id, from, to });
      }
      if (!s.next) break;
      args.after = s.next;
    }
    return mine;
  }

  draw(day, { step, rows, cells }) {
    const zone = this.zoneText();
    const head = el('tr', {}, el('th', { scope: 'col', text: `Time (${zone})` }),
      this.rooms.map((r) => el('th', { scope: 'col' }, r.name, el('span', { class: 'seats', text: ` ${r.seats} seats` }))));
    const body = rows.map((m, i) => {
      const gap = i > 0 && rows[i - 1] !== m - step;
      const cls = [m % 60 === 0 ? 'hour' : 'part', gap ? 'gap' : ''].join(' ').trim();
      return el('tr', { class: cls, 'data-start': hhmm(m) }, el('th', { scope: 'row', text: hhmm(m) }),
        this.rooms.map((room, r) => (cells[r][i] ? this.cell(day, room, m, cells[r][i]) : null)));
    });
    const table = el('table', { class: 'grid' },
      el('caption', { text: `Rooms on ${day}, in ${step}-minute rows (${zone}): ${hhmm(FIRST_HOUR * 60)}–${hhmm((LAST_HOUR + 1) * 60)} and any other hour with a booking. Each booking is one block from its start to its end.` }),
      el('thead', {}, head), el('tbody', {}, body));
    const released = (this.released || []).length ? el('p', { class: 'released', role: 'status',
      text: `Released (not checked in): ${this.released.map((b) => `${b.id} ${b.room_name || b.room_id} ${b.start.slice(11, 16)}`).join(', ')}` }) : null;
    this.root.replaceChildren(...[this.chooser(day), table, released].filter(Boolean));
  }

  /** On a site, the building and level shown, chosen above the grid (a change redraws it). */
  chooser(day) {
    if (!this.site) return null;
    const { buildings } = this.site;
    const shown = buildings.find((b) => b.id === this.site.building) || buildings[0];
    const pick = (label, id, options, value, choose) => {
      const select = el('select', { id }, options.map(([v, text]) => el('option', { value: v, text, selected: v === value })));
      select.addEventListener('change', () => {
        this.place = choose(select.value);
        this.load(day).catch((e) => this.root.prepend(el('p', { class: 'error', role: 'alert', text: e.message })));
      });
      return el('label', {}, `${label} `, select);
    };
    const levels = [['', 'Every level'], ...(shown.levels || []).map((l) => [l, l])];
    return el('div', { class: 'place' },
      pick('Building', 'building', buildings.map((b) => [b.id, `${b.name} (${b.time_zone})`]), shown.id,
        (id) => ({ building: id, level: null })),
      pick('Level', 'level', levels, this.place.level || '', (level) => ({ building: shown.id, level: level || null })));
  }

  cell(day, room, m, c) {
    const td = (cls, state, attrs, ...kids) => el('td', { class: cls, 'data-room': room.id, 'data-start': hhmm(m), 'data-state': state, ...attrs }, ...kids);
    if (c.kind === 'past') {
      return td('past', 'past', {}, el('span', { class: 'sr', text: `${room.name} at ${hhmm(m)}: past` }));
    }
    if (c.kind === 'free') {
      const b = el('button', { type: 'button', class: 'cell free', 'aria-label': `Book ${room.name} from ${hhmm(m)} on ${day} (free)` },
        el('span', { class: 'when', 'aria-hidden': 'true', text: hhmm(m) }));
      b.addEventListener('click', () => this.onBook(room, day, m));
      return td('free', 'free', {}, b);
    }
    const span = `${hhmm(c.from)}–${hhmm(c.to)}`;
    const over = c.past ? ' (over)' : '';
    const state = c.booking ? 'own' : 'booked';
    const cls = `block ${state}${c.past ? ' past' : ''}`;
    const attrs = { rowspan: c.rows > 1 ? c.rows : null, 'data-end': hhmm(c.to), 'data-past': c.past ? 'true' : null };
    if (!c.booking) {
      attrs['data-title'] = c.title || null;
      return td(cls, state, attrs, el('div', { class: 'cell booked' },
        el('span', { class: 'sr', text: `${room.name} ${span}${over}: ` }),
        el('span', { class: 'what', text: c.title || 'Booked' }), el('span', { class: 'when', 'aria-hidden': 'true', text: ` ${span}` })));
    }
    const b = c.booking;
    const named = b.title ? `, “${b.title}”` : '';
    const face = [el('span', { class: 'what', 'aria-hidden': 'true', text: b.title || 'Yours' }),
      el('span', { class: 'when', 'aria-hidden': 'true', text: ` ${span} · ${b.id}` })];
    Object.assign(attrs, { 'data-id': b.id, 'data-title': b.title || null });
    if (c.past) {
      return td(cls, state, attrs, el('div', { class: 'cell own' },
        el('span', { class: 'sr', text: `Your booking ${b.id}${named}, ${room.name} ${span}${over}: ` }), ...face));
    }
    const button = el('button', { type: 'button', class: 'cell own', 'aria-label': `Your booking ${b.id}${named}: ${room.name} ${span} on ${day}. Press to cancel it` }, ...face);
    button.addEventListener('click', () => this.onCancel(b));
    return td(cls, state, attrs, button);
  }
}

/** list_rooms, day_schedule and list_bookings never ask; if a server's did, the page would say
 * so rather than hang. */
function noQuestions() {
  return Promise.resolve(null).then(() => { throw new Error('The server asked a question to show the floor; the floor view cannot answer it.'); });
}
