// The floor at a glance: a day of rooms × hours (free, booked, yours, past) read with the
// booking tools: list_rooms says what is free, list_bookings which of the rest are yours.
// The working hours are always shown, and any other hour of the day that has a booking.

import { el } from './form.js';
import { resultText } from './mcp.js';

/** The first and last start hour (UTC) the day view always shows (the floor has no opening
 * hours yet); other hours are shown when they have a booking. */
export const FIRST_HOUR = 7;
export const LAST_HOUR = 20;
/** Start hours of a day: 0–23 (UTC), as the booking tools take them. */
const DAY_HOURS = Array.from({ length: 24 }, (_, h) => h);
/** Pages of list_bookings read for one day at most (a server's page is 8 bookings). */
const MAX_PAGES = 50;

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
 * The day view: renders into `root`, calls `onBook(room, day, hour)` / `onCancel(booking)`.
 * `listsBookings`: the server has list_bookings (else no cell is marked yours).
 */
export class FloorView {
  constructor(client, root, { onBook, onCancel, listsBookings }) {
    Object.assign(this, { client, root, onBook, onCancel, listsBookings });
    this.rooms = null;
    this.mine = new Map();
    this.loads = 0;
  }

  /** Reads the rooms and every hour of `day`, then draws the grid (unless a later load began
   * meanwhile: the last day asked for is the one drawn). Throws McpFailure. */
  async load(day) {
    const ticket = ++this.loads;
    if (!this.rooms) {
      const r = await this.client.callTool('list_rooms', {}, noQuestions);
      this.rooms = (r.structuredContent && r.structuredContent.rooms) || [];
    }
    const [free, mine] = await Promise.all([Promise.all(DAY_HOURS.map(async (hour) => {
      if (started(day, hour)) return null;
      const r = await this.client.callTool('list_rooms', { day, hour }, noQuestions);
      if (r.isError) throw new Error(resultText(r));
      return new Map(((r.structuredContent && r.structuredContent.rooms) || []).map((x) => [x.id, x.free]));
    })), this.yours(day)]);
    if (ticket !== this.loads) return;
    this.mine = mine;
    const booked = (hour) => (free[hour] && [...free[hour].values()].some((f) => f === false))
      || [...mine.values()].some((b) => b.hour === hour);
    const hours = DAY_HOURS.filter((h) => (h >= FIRST_HOUR && h <= LAST_HOUR) || booked(h));
    this.draw(day, hours, hours.map((h) => free[h]));
  }

  /** The caller's bookings on `day`, as the server lists them: "hour room" → booking. */
  async yours(day) {
    const mine = new Map();
    if (!this.listsBookings) return mine;
    const args = { day };
    for (let page = 0; page < MAX_PAGES; page++) {
      const r = await this.client.callTool('list_bookings', args, noQuestions);
      if (r.isError) throw new Error(resultText(r));
      const s = r.structuredContent || {};
      for (const b of s.bookings || []) mine.set(`${b.hour} ${b.room_id}`, b);
      if (!s.next) break;
      args.after = s.next;
    }
    return mine;
  }

  draw(day, hours, free) {
    const head = el('tr', {}, el('th', { scope: 'col', text: 'Hour (UTC)' }),
      this.rooms.map((r) => el('th', { scope: 'col' }, r.name, el('span', { class: 'seats', text: ` ${r.seats} seats` }))));
    const rows = hours.map((hour, i) => el('tr', {}, el('th', { scope: 'row', text: hh(hour) }),
      this.rooms.map((room) => this.cell(day, hour, room, free[i]))));
    const table = el('table', { class: 'grid' },
      el('caption', { text: `Rooms on ${day}, one-hour slots in UTC: ${hh(FIRST_HOUR)}–${hh(LAST_HOUR)} and any other hour with a booking` }),
      el('thead', {}, head), el('tbody', {}, rows));
    this.root.replaceChildren(table);
  }

  cell(day, hour, room, free) {
    const at = `${room.name} at ${hh(hour)}`;
    if (!free) return el('td', { class: 'past', 'data-room': room.id, 'data-hour': hour, 'data-state': 'past' }, el('span', { class: 'sr', text: `${at}: past` }), el('span', { 'aria-hidden': 'true', text: '–' }));
    const state = free.get(room.id);
    const mine = this.mine.get(`${hour} ${room.id}`);
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

/** list_rooms and list_bookings never ask; if a server's did, the page would say so rather than hang. */
function noQuestions() {
  return Promise.resolve(null).then(() => { throw new Error('The server asked a question to show the floor; the floor view cannot answer it.'); });
}
