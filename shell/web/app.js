// The booking page: wires the MCP client, the question forms (the red mark), the day view of
// the floor, the tool caller and the sign-in together, and says every error in words.

import { McpClient, McpFailure, resultText } from './mcp.js';
import { el, renderFields, firstControl } from './form.js';
import { FloorView } from './floor.js';
import { UTC, today, isDay, hhmm, lengths, lengthText } from './time.js';
import { SignInFailure, pageClientId, signIn, finishSignIn, tokenSubject } from './signin.js';

/** Wire log entries kept, and characters shown of each. */
const MAX_WIRE_ENTRIES = 60;
const MAX_WIRE_CHARS = 4000;
const TOKEN_KEY = 'redmark.token';
/** The issuer the token in TOKEN_KEY was signed in at (none: a pasted token). */
const ISSUER_KEY = 'redmark.token.issuer';

const $ = (id) => document.getElementById(id);
const client = new McpClient('/mcp');
let tools = [];
let toolForm = null;
let floor = null;
/** Whether the day shown was chosen (in the address, the date field, a booking, or a first
 * load); until then the grid opens on today on the floor's clock, once the server names it. */
let dayChosen = false;

// ---- saying things ------------------------------------------------------------------------

function say(text) {
  $('status').textContent = text;
  $('error').hidden = true;
  $('error').textContent = '';
}

function fail(e) {
  const text = e instanceof McpFailure || e instanceof SignInFailure
    ? e.message : `Something went wrong in the page: ${e.message || e}`;
  $('status').textContent = '';
  $('error').textContent = text;
  $('error').hidden = false;
  if (e instanceof McpFailure && e.kind === 'auth') {
    $('signin-h').scrollIntoView();
    $('token').focus();
    // A 401 may name the metadata (WWW-Authenticate: Bearer resource_metadata="…").
    const named = /resource_metadata="([^"]+)"/.exec(e.detail || '');
    if (named) {
      try {
        const u = new URL(named[1], location.href);
        if (u.origin === location.origin) oauthNotice([u.pathname], true);
      } catch {
        // Not a URL: the usual places were tried at start.
      }
    }
  }
}

client.onWire = (dir, text) => {
  const list = $('wire');
  const shown = text.length > MAX_WIRE_CHARS ? `${text.slice(0, MAX_WIRE_CHARS)}…` : text;
  list.prepend(el('li', {}, el('code', { text: `${dir} ${shown}` })));
  while (list.children.length > MAX_WIRE_ENTRIES) list.lastElementChild.remove();
};

// ---- the questions ------------------------------------------------------------------------

/**
 * An answerer for one tool call: renders each question with Accept, Decline and Cancel and
 * resolves once every question of the round has an answer. A re-ask keeps the last answers.
 */
function makeAsker() {
  const previous = {};
  return (questions) => new Promise((resolve) => {
    const section = $('ask');
    const forms = $('ask-forms');
    forms.replaceChildren();
    const answers = {};
    let pending = questions.length;
    let focusTarget = null;
    for (const q of questions) {
      const msgId = `q-${q.key}-message`;
      const form = el('form', { class: 'question', 'aria-labelledby': msgId, 'data-key': q.key, novalidate: true });
      const fields = el('div', { class: 'fields' });
      const reader = renderFields(fields, q.schema, previous[q.key] || {}, `q-${q.key}`);
      const button = (action, label, type = 'button') => el('button', { type, class: `act ${action}`, 'data-action': action, text: label });
      const accept = button('accept', 'Accept', 'submit');
      const decline = button('decline', 'Decline');
      const cancel = button('cancel', 'Cancel');
      const done = (action) => {
        if (form.dataset.answered) return;
        form.dataset.answered = action;
        if (action === 'accept') {
          const content = reader.read();
          previous[q.key] = content;
          answers[q.key] = { action, content };
        } else {
          answers[q.key] = { action };
        }
        for (const c of form.querySelectorAll('input, select, textarea, button')) c.disabled = true;
        if (--pending === 0) {
          section.hidden = true;
          forms.replaceChildren();
          resolve(answers);
        }
      };
      form.addEventListener('submit', (e) => { e.preventDefault(); done('accept'); });
      decline.addEventListener('click', () => done('decline'));
      cancel.addEventListener('click', () => done('cancel'));
      form.addEventListener('keydown', (e) => { if (e.key === 'Escape') { e.preventDefault(); done('cancel'); } });
      form.append(el('p', { class: 'message', id: msgId, text: q.message }), fields,
        el('div', { class: 'actions' }, accept, decline, cancel),
        el('p', { class: 'hint', text: 'Accept sends the answer; Decline says no; Cancel (or Esc) drops the whole request.' }));
      forms.append(form);
      if (!focusTarget && reader.firstMarked) focusTarget = firstControl(reader.firstMarked);
      if (!focusTarget) focusTarget = firstControl(form);
    }
    section.hidden = false;
    say('The server has a question for you: answer it below.');
    section.scrollIntoView({ block: 'nearest' });
    (focusTarget || $('ask-h')).focus();
  });
}

// ---- calling tools ------------------------------------------------------------------------

/** Whether a call is under way (its question may be open): one at a time. */
let calling = false;

async function runTool(name, args) {
  if (calling) {
    say('A call is still open: answer or cancel its question first.');
    return;
  }
  calling = true;
  const back = document.activeElement;
  document.body.setAttribute('aria-busy', 'true');
  $('call').disabled = true;
  say(`Calling ${name}…`);
  try {
    const result = await client.callTool(name, args, makeAsker());
    show(name, result);
    await remember(name, result);
  } catch (e) {
    $('ask').hidden = true;
    $('ask-forms').replaceChildren();
    fail(e);
  } finally {
    calling = false;
    document.body.removeAttribute('aria-busy');
    $('call').disabled = false;
    // The control used, else (a grid redrawn without it) the result's heading.
    const heading = $('result').querySelector('h3');
    if (back && back.isConnected && !back.disabled) back.focus();
    else if (heading) heading.focus();
  }
}

function show(name, result) {
  const text = resultText(result) || '(no text)';
  const out = $('result');
  out.replaceChildren(el('h3', { tabindex: '-1', text: `${name}: ${result.isError ? 'the tool reported an error' : 'done'}` }),
    el('p', { class: result.isError ? 'error-text' : '', text }));
  if (result.structuredContent) {
    out.append(el('details', {}, el('summary', { text: 'structuredContent' }),
      el('pre', { text: JSON.stringify(result.structuredContent, null, 2) })));
  }
  if (result.isError) fail(new McpFailure('tool', `The tool reported an error: ${text}`));
  else say(text);
}

/** Keeps the floor in step with what a call did (on the day it booked). */
async function remember(name, result) {
  const s = result.structuredContent || {};
  let day = $('day').value;
  if (name === 'book_room' && s.booked && s.booking) day = s.booking.day;
  if (floor && !['list_rooms', 'list_bookings', 'day_schedule'].includes(name)) {
    $('day').value = day;
    dayChosen = true;
    await refreshFloor();
  }
}

function pickTool() {
  const tool = tools.find((t) => t.name === $('tool').value);
  const args = $('tool-args');
  args.replaceChildren();
  if (!tool) { toolForm = null; return; }
  $('tool-desc').textContent = tool.description || '';
  const values = {};
  // The day shown on the grid, whatever form the tool's `day` takes (a date, or a text that
  // also reads "thursday").
  const day = ((tool.inputSchema && tool.inputSchema.properties) || {}).day;
  if (day && day.type === 'string') values.day = $('day').value;
  toolForm = renderFields(args, tool.inputSchema || {}, values, 'arg');
}

// ---- the floor ----------------------------------------------------------------------------

/**
 * The grid's day is the page's day: the tool form's `day` argument follows it (so "Call a
 * tool" books the day shown, not the day the page was loaded on), and so does the address (a
 * reload shows the same day).
 */
function followDay(day) {
  const field = $('tool-args').querySelector('[data-field=day] input');
  if (field) field.value = day;
  const url = new URL(location.href);
  if (url.searchParams.get('day') !== day) {
    url.searchParams.set('day', day);
    history.replaceState(null, '', url);
  }
}

// ---- live updates ---------------------------------------------------------------------------

/** Rooms one live stream follows (the server's bound on a subscriptions/listen stream). */
const MAX_FOLLOWED = 32;
/** How long the page waits before following again after its stream ended. */
const FOLLOW_AGAIN_MS = 5000;
/** Whether the server tells changes (server/discover's resources.subscribe). */
let subscribes = false;
/** The open stream: the day it follows and how to end it. */
let live = null;
/** A re-read of the grid already asked for by an update. */
let rereading = null;

/** Follows the grid's day on the server's live stream: another client's booking then redraws
 * the grid without a reload (one stream for the day shown, moved when the day changes). */
function followLive(day) {
  if (!subscribes || !floor || !floor.rooms || (live && live.day === day)) return;
  if (live) live.stop.abort();
  const stop = new AbortController();
  live = { day, stop };
  const uris = floor.rooms.slice(0, MAX_FOLLOWED).map((r) => `redmark://rooms/${r.id}/${day}`);
  const again = () => {
    if (!live || live.stop !== stop) return;
    live = null;
    delete $('grid').dataset.live;
    if (!stop.signal.aborted) setTimeout(() => followLive($('day').value || day), FOLLOW_AGAIN_MS);
  };
  client.listen(uris, () => {
    rereading = rereading || setTimeout(() => { rereading = null; refreshFloor(); }, 50);
  }, stop.signal).then((s) => {
    // The day the grid follows live (the tests wait for it).
    if (live && live.stop === stop) $('grid').dataset.live = day;
    return s.ended.then(again);
  }, again);
}

async function refreshFloor() {
  const day = $('day').value || today(floor ? floor.clock.zone : UTC);
  if (dayChosen || !floor) followDay(day);
  if (!floor) return;
  $('grid').setAttribute('aria-busy', 'true');
  try {
    const shown = await floor.load(dayChosen ? day : null);
    if (shown && !dayChosen) {
      dayChosen = true;
      $('day').value = shown;
      followDay(shown);
    }
    if (shown) followLive(shown);
  } catch (e) {
    $('grid').replaceChildren(el('p', { class: 'error-text', text: `The floor could not be read: ${e.message}` }));
    if (e instanceof McpFailure) fail(e);
  } finally {
    $('grid').removeAttribute('aria-busy');
  }
}

/** The floor's clock as day_schedule said it: the day field names the zone, and the lengths
 * offered for a booking made on the grid are whole steps of its grid, at most its longest
 * booking (the one chosen kept if still offered, else an hour, else the nearest below). */
function useClock(clock) {
  $('day-label').textContent = `Day (${floor ? floor.zoneText() : clock.named})`;
  const offered = lengths(clock.grid, clock.max || 120);
  if (!offered.length) return;
  const select = $('length');
  const was = Number(select.value);
  select.replaceChildren(...offered.map((m) => el('option', { value: m, text: lengthText(m) })));
  const pick = offered.includes(was) ? was : offered.includes(60) ? 60 : offered.filter((m) => m < 60).pop() || offered[0];
  select.value = String(pick);
}

// ---- signing in ---------------------------------------------------------------------------

async function useToken(token, issuer = null) {
  client.token = token || null;
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
  if (token && issuer) sessionStorage.setItem(ISSUER_KEY, issuer);
  else sessionStorage.removeItem(ISSUER_KEY);
  const sub = token && issuer ? tokenSubject(token) : null;
  $('who').textContent = !token
    ? 'No token sent. A server on this machine without --tokens lets you in as is: on Linux as yourself (your terminal\'s bookings are yours here), elsewhere as one anonymous user.'
    : issuer ? `Signed in${sub ? ` as ${sub}` : ''} at ${issuer} (the token is kept in this tab only).`
      : 'Using the bearer token you pasted (kept in this tab only).';
  $('signout').hidden = !(token && issuer);
  if (token && issuer) $('oauth').hidden = true;
}

/** Where a server publishes its OAuth protected-resource metadata (RFC 9728): the endpoint's
 * path-suffixed well-known URI first, then the root one, as MCP clients look for it. */
const RESOURCE_METADATA = ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource'];

/** If the server publishes OAuth protected-resource metadata, says what the user must do: press
 * Sign in where the server names the page's client id (`--page-client-id`), else paste a token. */
async function oauthNotice(paths = RESOURCE_METADATA, focus = false) {
  let meta = null;
  for (const path of paths) {
    try {
      const r = await fetch(path, { cache: 'no-store' });
      if (r.status === 200) { meta = await r.json(); break; }
    } catch {
      // Not published there (or not JSON): try the next place, else say nothing.
    }
  }
  if (!meta || typeof meta !== 'object') return;
  const servers = Array.isArray(meta.authorization_servers) ? meta.authorization_servers : [];
  const scopes = Array.isArray(meta.scopes_supported) ? meta.scopes_supported.join(' ') : '';
  const box = $('oauth');
  const clientId = servers.length ? await pageClientId() : null;
  if (clientId) {
    const button = el('button', { type: 'button', id: 'signin-button', text: 'Sign in' });
    button.addEventListener('click', () => {
      say(`Signing in at ${servers[0]}…`);
      signIn(meta, clientId, $('day').value).catch(fail);
    });
    box.replaceChildren(el('p', { text: `This server signs people in at ${servers[0]}: ` +
      'Sign in takes you to its login page and back here, or paste an access token below.' }), button);
    box.hidden = false;
    if (focus) button.focus();
    return;
  }
  box.replaceChildren(
    el('p', { text: 'This server signs people in with OAuth. This page does not run the sign-in itself: ' +
      `get an access token for ${meta.resource || 'this server'}` +
      `${scopes ? ` (scopes: ${scopes})` : ''} from its authorization server, then paste it below as the bearer token.` }),
    el('ul', {}, servers.map((s) => el('li', {}, el('a', { href: s, rel: 'noreferrer', text: s })))));
  box.hidden = false;
}

// ---- start --------------------------------------------------------------------------------

async function start() {
  // Back from the identity provider's sign-in (`?code=…&state=…`): the token it gives.
  let refused = null;
  const back = await finishSignIn().catch((e) => { refused = e; return null; });
  const q = new URLSearchParams(location.search);
  dayChosen = isDay(q.get('day'));
  $('day').value = dayChosen ? q.get('day') : today(UTC);
  $('day-label').textContent = `Day (${UTC})`;
  if (back) await useToken(back.token, back.issuer);
  else await useToken(sessionStorage.getItem(TOKEN_KEY), sessionStorage.getItem(ISSUER_KEY));
  $('declare-form').addEventListener('change', (e) => { client.declareForm = e.target.checked; });
  $('token-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    await useToken($('token').value.trim());
    $('token').value = '';
    await connect();
  });
  $('forget').addEventListener('click', async () => { await useToken(null); say('The token is forgotten.'); });
  $('signout').addEventListener('click', async () => {
    await useToken(null);
    say('Signed out in this tab (the identity provider\'s own session stays).');
    await connect();
  });
  $('day-form').addEventListener('submit', (e) => { e.preventDefault(); refreshFloor(); });
  $('day').addEventListener('change', () => { if ($('day').value) { dayChosen = true; refreshFloor(); } });
  $('tool').addEventListener('change', pickTool);
  $('tool-form').addEventListener('submit', (e) => {
    e.preventDefault();
    if (toolForm) runTool($('tool').value, toolForm.read());
  });
  if (!client.token) oauthNotice();
  await connect();
  // Said last, so that the server's 401 does not hide why the sign-in did not work.
  if (refused) fail(refused);
}

/** server/discover, tools/list, then the floor. */
async function connect() {
  try {
    const d = await client.discover();
    const info = (d._meta && d._meta['io.modelcontextprotocol/serverInfo']) || {};
    subscribes = Boolean(d.capabilities && d.capabilities.resources && d.capabilities.resources.subscribe);
    $('server-info').textContent = `${info.name || 'server'} ${info.version || ''} · protocol ${(d.supportedVersions || []).join(', ')}`;
    tools = await client.listTools();
  } catch (e) {
    $('server-info').textContent = 'Not connected.';
    $('grid').replaceChildren(el('p', { text: 'The floor is shown once the server answers.' }));
    fail(e);
    return;
  }
  const select = $('tool');
  const chosen = select.value;
  select.replaceChildren(...tools.map((t) => el('option', { value: t.name, text: t.title ? `${t.title} (${t.name})` : t.name })));
  if (tools.some((t) => t.name === chosen)) select.value = chosen;
  pickTool();
  say('Connected.');
  if (tools.some((t) => t.name === 'list_rooms') && tools.some((t) => t.name === 'book_room')) {
    floor = floor || new FloorView(client, $('grid'), {
      listsBookings: tools.some((t) => t.name === 'list_bookings'),
      hasDaySchedule: tools.some((t) => t.name === 'day_schedule'),
      onClock: useClock,
      // The day the grid shows (not the one the page loaded on), from the step pressed, for
      // the length chosen above the grid.
      onBook: (room, day, start) => runTool('book_room',
        { day, start: hhmm(start), minutes: Number($('length').value) || 60, room_id: room.id }),
      onCancel: (b) => runTool('cancel_booking', { booking_id: b.id }),
    });
    await refreshFloor();
  } else {
    $('grid').replaceChildren(el('p', { text: 'This server has no booking tools (list_rooms, book_room): use “Call a tool” below.' }));
  }
}

start().catch(fail);
