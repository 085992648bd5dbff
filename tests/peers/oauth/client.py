"""A 2026-07-28 MCP host on the official Python SDK 2.3 (`mcp`, pinned by scripts/oauth-peer.sh)
presenting an OAuth access token (driven by tests/tests/oauth.rs).

usage: client.py URL TOKEN DAY
Calls book_room(day, hour 9, "the big room") answering the question with studio-b, then
list_rooms(day, hour 9); prints one JSON object: the questions asked and both results.
"""

import asyncio
import json
import sys

import mcp.types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main():
    url, token, day = sys.argv[1:4]
    asked = []

    async def on_elicit(context, params):
        asked.append({"message": params.message})
        return types.ElicitResult(action="accept", content={"room_id": "studio-b"})

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, elicitation_callback=on_elicit) as c:
            booked = await c.call_tool("book_room", {"day": day, "hour": 9, "room_hint": "the big room"})
            rooms = await c.call_tool("list_rooms", {"day": day, "hour": 9})
            print(json.dumps({
                "asked": asked,
                "book": booked.model_dump(mode="json", by_alias=True, exclude_none=True),
                "rooms": rooms.model_dump(mode="json", by_alias=True, exclude_none=True),
            }))


asyncio.run(main())
