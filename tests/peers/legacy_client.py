"""A 2025-11-25 MCP host built on the official Python SDK 1.x (driven by tests/tests/legacy_python.rs).

usage: legacy_client.py (stdio CMD ARG... | http URL) ANSWER DAY
ANSWER: accept (picks studio-b) | decline | cancel | none (no elicitation capability).
Calls book_room(day, hour 9, "the big room"), then list_rooms(day, hour 9); prints one JSON
object: the negotiated version, the questions it was asked, both results.
"""

import asyncio
import json
import sys

import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client


async def main():
    args = sys.argv[1:]
    day, answer = args[-1], args[-2]
    kind, target = args[0], args[1:-2]
    asked = []

    async def on_elicit(context, params):
        asked.append({"message": params.message, "schema": params.requestedSchema})
        if answer == "accept":
            return types.ElicitResult(action="accept", content={"room_id": "studio-b"})
        return types.ElicitResult(action=answer)

    callback = None if answer == "none" else on_elicit

    async def run(read, write):
        async with ClientSession(read, write, elicitation_callback=callback) as s:
            init = await s.initialize()
            try:
                booked = await s.call_tool(
                    "book_room",
                    {"day": day, "hour": 9, "room_hint": "the big room"},
                )
                booked = booked.model_dump(mode="json", exclude_none=True)
            except Exception as e:  # an McpError: the JSON-RPC error the server sent
                err = getattr(e, "error", None)
                booked = {"error": err.model_dump(mode="json", exclude_none=True) if err else str(e)}
            rooms = await s.call_tool("list_rooms", {"day": day, "hour": 9})
            print(json.dumps({
                "version": init.protocolVersion,
                "server": init.serverInfo.name,
                "asked": asked,
                "book": booked,
                "rooms": rooms.model_dump(mode="json", exclude_none=True),
            }))

    if kind == "stdio":
        params = StdioServerParameters(command=target[0], args=target[1:])
        async with stdio_client(params) as (read, write):
            await run(read, write)
    else:
        async with streamablehttp_client(target[0]) as (read, write, _):
            await run(read, write)


asyncio.run(main())
