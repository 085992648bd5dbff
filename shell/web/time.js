// The page's one place for time: which zone it shows and books in, days as YYYY-MM-DD, and a
// time of day as minutes since the shown day's midnight. The booking tools speak UTC today;
// when a floor names its zone, this file is what changes (a day of 23 or 25 hours included).

/** The zone every time on the page is in, as the captions and labels name it. */
export const ZONE = 'UTC';
/** Minutes in the shown day. */
export const DAY_MINUTES = 24 * 60;

const MS_PER_MINUTE = 60 * 1000;

/** The instant (ms) the day `day` (YYYY-MM-DD) begins, in [`ZONE`]. */
function midnight(day) {
  const [y, m, d] = day.split('-').map(Number);
  return Date.UTC(y, m - 1, d);
}

/** Today's date in [`ZONE`], YYYY-MM-DD. */
export function today(now = Date.now()) {
  return new Date(now).toISOString().slice(0, 10);
}

/** The day `n` days after `day` (before it, for a negative `n`), YYYY-MM-DD. */
export function addDays(day, n) {
  return new Date(midnight(day) + n * DAY_MINUTES * MS_PER_MINUTE).toISOString().slice(0, 10);
}

/** Whether `text` is a day the page can show (YYYY-MM-DD, a real date). */
export function isDay(text) {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text || '')) return false;
  return today(midnight(text)) === text;
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
 * shows its own times without the page knowing the zone. */
export function minuteOf(instant, day) {
  const t = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})/.exec(instant || '');
  if (!t) return null;
  const days = Math.round((midnight(t[1]) - midnight(day)) / (DAY_MINUTES * MS_PER_MINUTE));
  return days * DAY_MINUTES + Number(t[2]) * 60 + Number(t[3]);
}

/** The minute of `day` now is in: below 0 before the day, [`DAY_MINUTES`] or more after it. */
export function nowMinute(day, now = Date.now()) {
  return Math.floor((now - midnight(day)) / MS_PER_MINUTE);
}

/** Whether a start at minute `m` of `day` has come (a start that has come cannot be booked). */
export function started(day, m, now = Date.now()) {
  return m <= nowMinute(day, now);
}
