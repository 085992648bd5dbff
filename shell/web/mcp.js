// The page's MCP 2026-07-28 client over Streamable HTTP: per-request _meta, the Mcp-* headers,
// a new id on every request, and the MRTR loop that retries with the same arguments, the
// inputResponses and the requestState echoed byte for byte.

export const PROTOCOL_VERSION = '2026-07-28';
const CLIENT_INFO = { name: 'redmark-page', version: '0.1.0' };
/** Requests one tools/call may take before the page gives up (questions asked in a row). */
export const MAX_ROUNDS = 8;
/** Pages of tools/list read at most. */
const MAX_LIST_PAGES = 20;

/** Why a request did not come back with a result; `message` is in words, for people. */
export class McpFailure extends Error {
  constructor(kind, message, detail) {
    super(message);
    this.kind = kind; // 'connection' | 'http' | 'auth' | 'rpc' | 'protocol'
    this.detail = detail;
  }
}

/** A JSON-RPC error object, said in words. */
export function describeError(err, method) {
  const code = err && err.code;
  const msg = (err && err.message) || 'no message';
  const data = (err && err.data) || {};
  switch (code) {
    case -32021: {
      const caps = Object.keys(data.requiredCapabilities || {}).join(', ') || 'a capability';
      return `The server needs a client capability this page did not declare: ${caps}. ` +
        `Turn on “Declare form elicitation” under Client settings and try again. (${msg}, error -32021)`;
    }
    case -32022:
      return `The server does not speak protocol ${PROTOCOL_VERSION}; it speaks ` +
        `${(data.supported || []).join(', ') || 'something else'}. (${msg}, error -32022)`;
    case -32020:
      return `The server found the request's Mcp-* headers and body disagreeing: ${msg} (error -32020)`;
    case -32601:
      return `The server has no method ${method || ''}: ${msg} (error -32601)`;
    case -32602:
      return `The server refused the request's parameters: ${msg} (error -32602)`;
    case -32600:
      return `The server could not read the request: ${msg} (error -32600)`;
    case -32603:
      return `The server failed inside: ${msg} (error -32603)`;
    default:
      return `${msg} (error ${code})`;
  }
}

/** A header value as the spec wants it: plain printable ASCII, else =?base64?…?= of UTF-8. */
export function headerValue(v) {
  const plain = /^[\x20-\x7e]*$/.test(v) && v.trim() === v && !v.startsWith('=?');
  if (plain) return v;
  let bin = '';
  for (const b of new TextEncoder().encode(v)) bin += String.fromCharCode(b);
  return `=?base64?${btoa(bin)}?=`;
}

/**
 * The raw JSON text of the member at `path` (keys from the top object down) in `text`, or
 * null: how requestState is kept exactly as the server wrote it, escapes and all.
 */
export function rawMember(text, path) {
  let i = 0;
  const fail = () => { throw new McpFailure('protocol', 'The server sent JSON this page cannot read.'); };
  const ws = () => { while (i < text.length && ' \t\r\n'.includes(text[i])) i++; };
  const string = () => {
    const start = i++;
    while (text[i] !== '"') {
      if (i >= text.length) fail();
      i += text[i] === '\\' ? 2 : 1;
    }
    i++;
    return text.slice(start, i);
  };
  const skip = () => {
    ws();
    if (text[i] === '"') { string(); return; }
    if (text[i] === '{' || text[i] === '[') {
      let depth = 0;
      do {
        if (i >= text.length) fail();
        const c = text[i];
        if (c === '"') { string(); continue; }
        if (c === '{' || c === '[') depth++;
        if (c === '}' || c === ']') depth--;
        i++;
      } while (depth > 0);
      return;
    }
    while (i < text.length && !',}] \t\r\n'.includes(text[i])) i++;
  };
  const find = (depth) => {
    ws();
    if (depth === path.length) { const s = i; skip(); return text.slice(s, i); }
    if (text[i] !== '{') return null;
    i++;
    for (;;) {
      ws();
      if (text[i] === '}') return null;
      const key = JSON.parse(string());
      ws();
      if (text[i++] !== ':') fail();
      if (key === path[depth]) return find(depth + 1);
      skip();
      ws();
      if (text[i] === ',') { i++; continue; }
      return null;
    }
  };
  return find(0);
}

/** The messages of a text/event-stream body, as their data texts. */
function sseMessages(body) {
  const out = [];
  let data = [];
  for (const line of body.split(/\r\n|\r|\n/)) {
    if (line === '') {
      if (data.length) out.push(data.join('\n'));
      data = [];
    } else if (line.startsWith('data:')) {
      data.push(line.slice(5).replace(/^ /, ''));
    }
  }
  if (data.length) out.push(data.join('\n'));
  return out;
}

/** One 2026-07-28 client of the server at `endpoint`. */
export class McpClient {
  constructor(endpoint = '/mcp') {
    this.endpoint = endpoint;
    this.nextId = 1;
    this.token = null;
    this.declareForm = true;
    this.onWire = () => {};
  }

  /** The _meta every request carries. */
  meta() {
    const caps = this.declareForm ? { elicitation: { form: {} } } : {};
    return {
      'io.modelcontextprotocol/protocolVersion': PROTOCOL_VERSION,
      'io.modelcontextprotocol/clientCapabilities': caps,
      'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
    };
  }

  /**
   * POSTs one request (`params` gets _meta; `rawState`, if any, is spliced in verbatim as
   * params.requestState) and returns { msg, text } of its response.
   */
  async request(method, params, name, rawState) {
    const id = this.nextId++;
    let p = JSON.stringify({ ...params, _meta: this.meta() });
    if (rawState != null) p = `${p.slice(0, -1)},"requestState":${rawState}}`;
    const body = `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)},"params":${p}}`;
    const headers = {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': PROTOCOL_VERSION,
      'Mcp-Method': method,
    };
    if (name != null) headers['Mcp-Name'] = headerValue(name);
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    this.onWire('→', body);
    let resp;
    let text;
    try {
      resp = await fetch(this.endpoint, { method: 'POST', headers, body, cache: 'no-store' });
      text = await resp.text();
    } catch (e) {
      throw new McpFailure('connection',
        `The connection to the server dropped before it answered (${e.message}). ` +
        'Is redmark serve still running? Try again once it is.');
    }
    const ctype = (resp.headers.get('content-type') || '').split(';')[0].trim().toLowerCase();
    if (resp.status === 401) {
      const how = resp.headers.get('www-authenticate') || 'Bearer';
      throw new McpFailure('auth', this.token
        ? 'The server did not accept your bearer token: check it, or paste another under Sign in.'
        : 'The server needs a bearer token: sign in, or paste yours, under Sign in.', how);
    }
    if (resp.status === 403) {
      throw new McpFailure('http', `The server refused this page's origin (HTTP 403): ${text.trim()}`);
    }
    let texts;
    if (ctype === 'text/event-stream') texts = sseMessages(text);
    else if (ctype === 'application/json') texts = [text];
    else throw new McpFailure('http', `The server answered HTTP ${resp.status}: ${text.trim() || resp.statusText}`);
    for (const t of texts) {
      let msg;
      try { msg = JSON.parse(t); } catch { continue; }
      this.onWire('←', t);
      const isAnswer = 'result' in msg || 'error' in msg;
      if (isAnswer && (msg.id === id || (msg.id == null && msg.error))) {
        if (msg.jsonrpc !== '2.0') throw new McpFailure('protocol', 'The answer is not JSON-RPC 2.0.');
        return { msg, text: t };
      }
    }
    throw new McpFailure('protocol', `The server's answer (HTTP ${resp.status}) holds no response to request ${id}.`);
  }

  /** A request whose error, if any, is thrown in words; returns the result. */
  async call(method, params = {}, name) {
    const { msg } = await this.request(method, params, name);
    if (msg.error) throw new McpFailure('rpc', describeError(msg.error, method), msg.error);
    return msg.result;
  }

  discover() { return this.call('server/discover'); }

  /**
   * Opens a subscriptions/listen stream for the resources `uris` and calls `onUpdate(uri)` for
   * each notifications/resources/updated on it, until `signal` aborts it or the server ends it.
   * Resolves once the server acknowledged it, with a promise of its end; throws McpFailure.
   */
  async listen(uris, onUpdate, signal) {
    const id = this.nextId++;
    const params = { notifications: { resourceSubscriptions: uris }, _meta: this.meta() };
    const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params });
    const headers = {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': PROTOCOL_VERSION,
      'Mcp-Method': 'subscriptions/listen',
    };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    this.onWire('→', body);
    let resp;
    try {
      resp = await fetch(this.endpoint, { method: 'POST', headers, body, cache: 'no-store', signal });
    } catch (e) {
      throw new McpFailure('connection', `The live updates could not start (${e.message}).`);
    }
    const ctype = (resp.headers.get('content-type') || '').split(';')[0].trim().toLowerCase();
    if (ctype !== 'text/event-stream' || !resp.body) {
      const text = await resp.text().catch(() => '');
      let msg = null;
      try { msg = JSON.parse(text); } catch { /* not JSON */ }
      throw new McpFailure('rpc', msg && msg.error ? describeError(msg.error, 'subscriptions/listen')
        : `The server answered HTTP ${resp.status} to subscriptions/listen.`);
    }
    const reader = resp.body.getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    let acked = false;
    /** The next message of the stream (null at its end), keep-alive comments skipped. */
    const next = async () => {
      for (;;) {
        const end = buffered.search(/\r?\n\r?\n/);
        if (end >= 0) {
          const event = buffered.slice(0, end);
          buffered = buffered.slice(end).replace(/^\r?\n\r?\n/, '');
          const [data] = sseMessages(`${event}\n\n`);
          if (data == null) continue;
          this.onWire('←', data);
          try { return JSON.parse(data); } catch { continue; }
        }
        const { value, done } = await reader.read();
        if (done) return null;
        buffered += decoder.decode(value, { stream: true });
      }
    };
    const first = await next();
    if (!first || first.method !== 'notifications/subscriptions/acknowledged') {
      reader.cancel().catch(() => {});
      throw new McpFailure('protocol', 'The server did not acknowledge the live updates.');
    }
    acked = true;
    const ended = (async () => {
      for (;;) {
        const msg = await next();
        if (!msg || msg.id === id) return;
        if (msg.method === 'notifications/resources/updated' && msg.params) onUpdate(msg.params.uri);
      }
    })().catch(() => {});
    return { acked, ended };
  }

  /** Every tool, following nextCursor a bounded number of pages. */
  async listTools() {
    const tools = [];
    let cursor;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const r = await this.call('tools/list', cursor ? { cursor } : {});
      tools.push(...(r.tools || []));
      if (!r.nextCursor) return tools;
      cursor = r.nextCursor;
    }
    throw new McpFailure('protocol', `tools/list went on for more than ${MAX_LIST_PAGES} pages.`);
  }

  /**
   * Calls a tool and answers every InputRequiredResult with `answer(questions, round)`, which
   * resolves to { key: ElicitResult }. Returns the complete CallToolResult.
   */
  async callTool(name, args, answer) {
    let responses = null;
    let state = null;
    for (let round = 1; round <= MAX_ROUNDS; round++) {
      const params = { name, arguments: args };
      if (responses) params.inputResponses = responses;
      const { msg, text } = await this.request('tools/call', params, name, state);
      if (msg.error) throw new McpFailure('rpc', describeError(msg.error, 'tools/call'), msg.error);
      const result = msg.result;
      if (!result || typeof result !== 'object') throw new McpFailure('protocol', 'The answer has no result.');
      const type = result.resultType;
      if (type === undefined || type === 'complete') return result;
      if (type !== 'input_required') {
        throw new McpFailure('protocol', `The server sent resultType ${JSON.stringify(type)}, which this page does not know.`);
      }
      state = rawMember(text, ['result', 'requestState']);
      if (state != null && !state.startsWith('"')) {
        throw new McpFailure('protocol', 'The server sent a requestState that is not a string.');
      }
      const questions = [];
      for (const [key, req] of Object.entries(result.inputRequests || {})) {
        const mode = req.params && req.params.mode;
        if (req.method !== 'elicitation/create' || (mode && mode !== 'form')) {
          throw new McpFailure('protocol',
            `The server asked '${key}' with ${req.method}${mode ? ` (${mode} mode)` : ''}, which this page did not declare.`);
        }
        questions.push({ key, message: req.params.message || '', schema: req.params.requestedSchema || {} });
      }
      if (!questions.length && state == null) {
        throw new McpFailure('protocol', 'The server asked for input but sent neither a question nor a state.');
      }
      responses = questions.length ? await answer(questions, round) : null;
    }
    throw new McpFailure('protocol', `The server was still asking after ${MAX_ROUNDS} rounds; the page stopped.`);
  }
}

/** The text of a CallToolResult's text content. */
export function resultText(result) {
  return (result.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}
