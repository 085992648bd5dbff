// The page's one place for time: the floor's zone (UTC until day_schedule names another),
// days as YYYY-MM-DD, and a time of day as wall-clock minutes since the shown day's midnight.
// "Today", "now" and "past" are read on the floor's wall clock with the browser's Intl API.

/** The zone a server that does not name one (no day_schedule) books in. */
export const UTC = 'UTC';
/** Minutes in the shown day. */
export const DAY_MINUTES = 24 * 60;

const MS_PER_MINUTE = 60 * 1000;
const MS_PER_DAY = DAY_MINUTES * MS_PER_MINUTE;

/** The instant (ms) the date `day` (YYYY-MM-DD) begins in UTC: day arithmetic's ruler. */
function midnight(day) {
  const [y, m, d] = day.split('-').map(Number);
  return Date.UTC(y, m - 1, d);
}

/** Whether this browser knows the IANA zone `zone` (Intl throws RangeError for one it does not). */
export function knownZone(zone) {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const formats = new Map();

/** The wall clock of `zone` at the instant `now` (ms): `{ day: 'YYYY-MM-DD', minute }`. */
export function wallClock(zone = UTC, now = Date.now()) {
  let f = formats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric',
      month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit' });
    formats.set(zone, f);
  }
  const p = Object.fromEntries(f.formatToParts(new Date(now)).map((x) => [x.type, x.value]));
  return { day: `${p.year.padStart(4, '0')}-${p.month}-${p.day}`, minute: (Number(p.hour) % 24) * 60 + Number(p.minute) };
}

/** Today's date in `zone`, YYYY-MM-DD. */
export function today(zone = UTC, now = Date.now()) {
  return wallClock(zone, now).day;
}

/** The day `n` days after `day` (before it, for a negative `n`), YYYY-MM-DD. */
export function addDays(day, n) {
  return new Date(midnight(day) + n * MS_PER_DAY).toISOString().slice(0, 10);
}

/** Whether `text` is a day the page can show (YYYY-MM-DD, a real date). */
export function isDay(text) {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text || '')) return false;
  return addDays(text, 0) === text;
}

/** Minute `m` of the day as the tools write a time of day: 570 → "09:30", 1440 → "24:00". */
export function hhmm(m) {
  return `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}

/** A time of day as `day_schedule` writes it ("09:30", "24:00") → minutes, or null. */
export function parseTime(text) {
  const t = /^(\d{1,2}):(\d{2})$/.exec(text || '');
  if (!t) return null;
  const m = Number(t[1]) * 60 + Number(t[2]);
  return Number(t[2]) < 60 && m <= DAY_MINUTES ? m : null;
}

/** An instant as the tools write it (RFC 3339 with the floor's offset, "2026-09-24T09:30:00+02:00")
 * → its wall-clock minutes from the start of `day` (below 0 or past [`DAY_MINUTES`] when it
 * falls on another day), or null. The wall clock is read as written, so a floor in any zone
 * shows its own times without the page converting them. */
export function minuteOf(instant, day) {
  const t = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})/.exec(instant || '');
  if (!t) return null;
  const days = Math.round((midnight(t[1]) - midnight(day)) / MS_PER_DAY);
  return days * DAY_MINUTES + Number(t[2]) * 60 + Number(t[3]);
}

/** The wall-clock minute of `day` in `zone` it is now: below 0 before the day, [`DAY_MINUTES`]
 * or more after it. */
export function nowMinute(day, zone = UTC, now = Date.now()) {
  const w = wallClock(zone, now);
  return Math.round((midnight(w.day) - midnight(day)) / MS_PER_DAY) * DAY_MINUTES + w.minute;
}

/** Whether a start at minute `m` of `day` in `zone` has come (a start that has come cannot be
 * booked). */
export function started(day, m, zone = UTC, now = Date.now()) {
  return m <= nowMinute(day, zone, now);
}

/** The lengths a booking made on the grid may have: whole steps of the floor's grid of `grid`
 * minutes, at most `max`, from the usual ones (and the longest itself). */
export function lengths(grid, max) {
  const usual = [grid, 15, 30, 45, 60, 90, 120, 180, 240, 360, 480, max];
  return [...new Set(usual)].filter((m) => m > 0 && m % grid === 0 && m <= max).sort((a, b) => a - b);
}

/** A length in words: 45 → "45 minutes", 60 → "1 hour", 90 → "1½ hours", 100 → "1 h 40 min". */
export function lengthText(m) {
  const h = Math.floor(m / 60);
  if (h === 0) return `${m} minutes`;
  if (m % 60 === 0) return h === 1 ? '1 hour' : `${h} hours`;
  if (m % 60 === 30) return `${h}½ hours`;
  return `${h} h ${m % 60} min`;
}
