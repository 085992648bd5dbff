// The floor at a glance: a day of rooms × hours (free, booked, yours, past) read with the
// booking tools' list_rooms, and the bookings this user made, remembered per principal.

import { el } from './form.js';

/** The first and last start hour (UTC) the day view shows. */
export const FIRST_HOUR = 7;
export const LAST_HOUR = 20;
/** Bookings remembered per principal at most (the oldest are forgotten first). */
const MAX_REMEMBERED = 200;

const hh = (h) => `${String(h).padStart(2, '0')}:00`;

/** Today's date in UTC, YYYY-MM-DD (slots are UTC, the server's clock). */
export function todayUtc() {
  return new Date().toISOString().slice(0, 10);
}

/** Whether the slot `day` `hour` (UTC) has started by the browser's clock. */
function started(day, hour) {
  const [y, m, d] = day.split('-').map(Number);
  return Date.UTC(y, m - 1, d, hour) <= Date.now();
}

/**
 * The bookings this user made (from book_room results), kept in localStorage under a key
 * naming the principal (anonymous, or a SHA-256 prefix of the token, never the token), so
 * another tab of the same user knows them too. The server remains the judge: a remembered
 * booking whose slot list_rooms shows free is forgotten.
 */
export class OwnBookings {
  constructor() { this.key = null; this.memory = []; }

  /** Chooses whose bookings these are. */
  async use(token) {
    if (!token) { this.key = 'redmark.own.anonymous'; return; }
    if (!(globalThis.crypto && crypto.subtle)) { this.key = null; this.memory = []; return; }
    const d = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(token)));
    this.key = `redmark.own.${Array.from(d.slice(0, 8), (b) => b.toString(16).padStart(2, '0')).join('')}`;
  }

  all() {
    if (!this.key) return this.memory;
    try { return JSON.parse(localStorage.getItem(this.key) || '[]'); } catch { return []; }
  }

  save(list) {
    const kept = list.slice(-MAX_REMEMBERED);
    if (!this.key) { this.memory = kept; return; }
    try { localStorage.setItem(this.key, JSON.stringify(kept)); } catch { this.memory = kept; }
  }

  add(b) { this.save([...this.all().filter((o) => o.id !== b.id), { id: b.id, room_id: b.room_id, day: b.day, hour: b.hour }]); }

  remove(id) { this.save(this.all().filter((o) => o.id !== id)); }

  at(day, hour, room) { return this.all().find((o) => o.day === day && o.hour === hour && o.room_id === room); }
}

/** The day view: renders into `root`, calls `onBook(room, day, hour)` / `onCancel(booking)`. */
export class FloorView {
  constructor(client, own, root, { onBook, onCancel }) {
    Object.assign(this, { client, own, root, onBook, onCancel });
    this.rooms = null;
  }

  /** Reads the rooms and each hour of `day`, then draws the grid. Throws McpFailure. */
  async load(day) {
    if (!this.rooms) {
      const r = await this.client.callTool('list_rooms', {}, noQuestions);
      this.rooms = (r.structuredContent && r.structuredContent.rooms) || [];
    }
    const hours = [];
    for (let h = FIRST_HOUR; h <= LAST_HOUR; h++) hours.push(h);
    const free = await Promise.all(hours.map(async (hour) => {
      if (started(day, hour)) return null;
      const r = await this.client.callTool('list_rooms', { day, hour }, noQuestions);
      if (r.isError) throw new Error((r.content || []).map((c) => c.text).join(' '));
      return new Map(((r.structuredContent && r.structuredContent.rooms) || []).map((x) => [x.id, x.free]));
    }));
    // A remembered booking whose slot is free again was cancelled elsewhere: forget it.
    for (const o of this.own.all()) {
      const i = hours.indexOf(o.hour);
      if (o.day === day && i >= 0 && free[i] && free[i].get(o.room_id) === true) this.own.remove(o.id);
    }
    this.draw(day, hours, free);
  }

  draw(day, hours, free) {
    const head = el('tr', {}, el('th', { scope: 'col', text: 'Hour (UTC)' }),
      this.rooms.map((r) => el('th', { scope: 'col' }, r.name, el('span', { class: 'seats', text: ` ${r.seats} seats` }))));
    const rows = hours.map((hour, i) => el('tr', {}, el('th', { scope: 'row', text: hh(hour) }),
      this.rooms.map((room) => this.cell(day, hour, room, free[i]))));
    const table = el('table', { class: 'grid' },
      el('caption', { text: `Rooms on ${day}, one-hour slots in UTC` }),
      el('thead', {}, head), el('tbody', {}, rows));
    this.root.replaceChildren(table);
  }

  cell(day, hour, room, free) {
    const at = `${room.name} at ${hh(hour)}`;
    if (!free) return el('td', { class: 'past', 'data-room': room.id, 'data-hour': hour, 'data-state': 'past' }, el('span', { class: 'sr', text: `${at}: past` }), el('span', { 'aria-hidden': 'true', text: '–' }));
    const state = free.get(room.id);
    const mine = this.own.at(day, hour, room.id);
    const td = (s, ...kids) => el('td', { class: s, 'data-room': room.id, 'data-hour': hour, 'data-state': s }, ...kids);
    if (state === true) {
      const b = el('button', { type: 'button', class: 'cell free', 'aria-label': `Book ${at} on ${day} (free)`, text: 'Free' });
      b.addEventListener('click', () => this.onBook(room, day, hour));
      return td('free', b);
    }
    if (mine) {
      const b = el('button', { type: 'button', class: 'cell own', 'aria-label': `Your booking ${mine.id}, ${at} on ${day}: cancel it`, text: `Yours · ${mine.id}` });
      b.addEventListener('click', () => this.onCancel(mine));
      return td('own', b);
    }
    return td('booked', el('span', { class: 'sr', text: `${at}: ` }), 'Booked');
  }
}

/** list_rooms never asks; if a server's did, the page would say so rather than hang. */
function noQuestions() {
  return Promise.resolve(null).then(() => { throw new Error('list_rooms asked a question; the floor view cannot answer it.'); });
}
