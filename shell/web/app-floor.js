// The floor inside the chat: the MCP App's own code, after the booking page's time.js, form.js
// and floor.js in one module (shell/web/app-floor.html). It speaks the MCP Apps postMessage
// protocol (2026-01-26) with the host that shows it: ui/initialize, then every tools/call through
// the host, which holds the connection to redmark. A question (book_room's "which room?",
// cancel_booking's confirmation) is the host's to ask: its elicitation form, red mark and all
// (forms inside apps, SEP-3118, is still open); the app sees the call's final result.

/** The MCP Apps protocol version this app speaks. */
const APPS_PROTOCOL = '2026-01-26';

/** The text of a CallToolResult's text content (as the page's mcp.js says it). */
function resultText(result) {
  return ((result && result.content) || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

/** The host across postMessage: requests with their answers, notifications, and the host's
 * own requests (ping, teardown) answered at once. */
const host = {
  next: 1,
  pending: new Map(),
  onToolInput: null,
  send(message) {
    window.parent.postMessage({ jsonrpc: '2.0', ...message }, '*');
  },
  request(method, params) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.send({ id, method, params });
    });
  },
  notify(method, params) {
    this.send({ method, params });
  },
  receive(m) {
    if (!m || m.jsonrpc !== '2.0') return;
    if (m.method === undefined && this.pending.has(m.id)) {
      const { resolve, reject } = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (m.error) reject(new Error(m.error.message || `The chat app refused (${m.error.code}).`));
      else resolve(m.result);
    } else if (m.method && m.id !== undefined) {
      this.send({ id: m.id, result: {} });
    } else if (m.method === 'ui/notifications/tool-input' && this.onToolInput) {
      this.onToolInput((m.params && m.params.arguments) || {});
    }
  },
};
window.addEventListener('message', (e) => {
  if (e.source === window.parent) host.receive(e.data);
});

/** FloorView's client: each tool called through the host. */
const client = {
  async callTool(name, args) {
    return host.request('tools/call', { name, arguments: args });
  },
};

const $ = (id) => document.getElementById(id);
const busy = (on) => (on ? document.body.setAttribute('aria-busy', 'true') : document.body.removeAttribute('aria-busy'));
function say(text) {
  $('status').textContent = text;
  $('error').hidden = true;
}
function fail(e) {
  $('error').textContent = e && e.message ? e.message : String(e);
  $('error').hidden = false;
}

let floor;
let shown = null;

/** Draws `day` (null: today on the floor's clock). */
async function show(day) {
  busy(true);
  try {
    const drawn = await floor.load(day);
    if (drawn) {
      shown = drawn;
      $('day').value = drawn;
    }
  } catch (e) {
    fail(e);
  } finally {
    busy(false);
    host.notify('ui/notifications/size-changed', { width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight });
  }
}

/** Calls `name` with `args` through the host, says what came of it and redraws the day. */
async function act(name, args) {
  busy(true);
  say(name === 'book_room' ? 'Booking… (your chat app asks if the server has a question)' : 'Cancelling…');
  try {
    const r = await client.callTool(name, args);
    say(resultText(r));
    if (r.isError) fail(new Error(resultText(r)));
  } catch (e) {
    fail(e);
  }
  await show(shown);
}

const minutes = () => Number($('minutes').value) || 60;

async function start() {
  let init;
  try {
    init = await host.request('ui/initialize', {
      appInfo: { name: 'redmark-floor', version: '1' },
      appCapabilities: { availableDisplayModes: ['inline'] },
      protocolVersion: APPS_PROTOCOL,
    });
  } catch (e) {
    fail(e);
    return;
  }
  host.notify('ui/notifications/initialized', {});
  if (!init || !init.hostCapabilities || !init.hostCapabilities.serverTools) {
    fail(new Error('This chat app does not let its apps call tools, so the floor cannot be shown here.'));
    return;
  }
  floor = new FloorView(client, $('grid'), {
    listsBookings: true,
    hasDaySchedule: true,
    onBook: (room, day, m) => act('book_room', { day, start: hhmm(m), minutes: minutes(), room_id: room.id }),
    onCancel: (b) => act('cancel_booking', { booking_id: b.id }),
    onClock: ({ grid, max }) => {
      const was = minutes();
      $('minutes').replaceChildren(...lengths(grid, max || 8 * 60).map((m) => el('option', { value: m, text: lengthText(m), selected: m === was })));
    },
  });
  host.onToolInput = (args) => show(isDay(args.day) ? args.day : null);
  await show(null);
}

$('day').addEventListener('change', () => isDay($('day').value) && show($('day').value));
/** Books the room described, at the time given (no form element: a host's sandbox may not
 * allow forms). */
function bookDescribed() {
  const hint = $('hint').value.trim();
  const at = $('start').value.trim();
  if (!hint || !at || !shown) {
    fail(new Error('Say which room (e.g. "the big room") and when (e.g. 09:00).'));
    return;
  }
  act('book_room', { day: shown, start: at, minutes: minutes(), room_hint: hint });
}
$('describe-book').addEventListener('click', bookDescribed);
for (const id of ['hint', 'start']) {
  $(id).addEventListener('keydown', (e) => e.key === 'Enter' && bookDescribed());
}
start();
