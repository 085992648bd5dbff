// A 2025-11-25 MCP host built on the official TypeScript SDK 1.x (@modelcontextprotocol/sdk,
// pinned by scripts/legacy-peers.sh), driven by tests/tests/legacy_typescript.rs.
//
// usage: node legacy_client.cjs NODE_DIR ANSWER DAY (CMD ARG... | http://…/mcp)
// NODE_DIR holds node_modules; a URL means Streamable HTTP, anything else a stdio command; ANSWER: accept (studio-b) | decline | cancel | none (no
// elicitation capability). Calls book_room(DAY, 9, "the big room") then list_rooms(DAY, 9) and
// prints one JSON object, the same shape as legacy_client.py prints.
const path = require("node:path");
const { createRequire } = require("node:module");

const [nodeDir, answer, day, command, ...args] = process.argv.slice(2);
const sdk = createRequire(path.join(path.resolve(nodeDir), "package.json"));
const { Client } = sdk("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = sdk("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = sdk("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { ElicitRequestSchema } = sdk("@modelcontextprotocol/sdk/types.js");

async function main() {
  const asked = [];
  const capabilities = answer === "none" ? {} : { elicitation: {} };
  const client = new Client({ name: "ts-host", version: "1.0.0" }, { capabilities });
  if (answer !== "none") {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push({ message: req.params.message, schema: req.params.requestedSchema });
      if (answer === "accept") return { action: "accept", content: { room_id: "studio-b" } };
      return { action: answer };
    });
  }
  const http = command.startsWith("http://");
  const transport = http
    ? new StreamableHTTPClientTransport(new URL(command))
    : new StdioClientTransport({ command, args, stderr: "inherit" });
  let version = null;
  // The SDK hands the negotiated version to a transport that wants it.
  const setVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (v) => {
    version = v;
    if (setVersion) setVersion(v);
  };
  await client.connect(transport);
  let book;
  try {
    book = await client.callTool({ name: "book_room", arguments: { day, hour: 9, room_hint: "the big room" } });
  } catch (e) {
    book = { error: { code: e.code, message: e.message } };
  }
  const rooms = await client.callTool({ name: "list_rooms", arguments: { day, hour: 9 } });
  console.log(JSON.stringify({
    version,
    server: client.getServerVersion()?.name,
    asked,
    book,
    rooms,
  }));
  if (http) await transport.terminateSession();
  await client.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
