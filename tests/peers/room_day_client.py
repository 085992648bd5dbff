"""The Python SDK 2.3 (a 2026-07-28 client) reading a room's day as an MCP resource, as the
holder of a bearer token: lists the resource templates, reads the room-day URI given, asks for
completions of the template's `room` (prefix ROOM) and `day` (prefix DAY, with the room as
context), and prints it all as one JSON object (tests/tests/room_resources.rs asserts on it).

usage: room_day_client.py URL TOKEN URI ROOM DAY
"""

import asyncio
import json
import sys

import mcp.types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

URL, TOKEN, URI, ROOM, DAY = sys.argv[1:6]
TEMPLATE = "redmark://rooms/{room}/{day}"


async def main():
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
    async with http:
        transport = streamable_http_client(URL, http_client=http)
        async with Client(transport) as c:
            templates = await c.list_resource_templates()
            read = await c.read_resource(URI)
            ref = types.ResourceTemplateReference(type="ref/resource", uri=TEMPLATE)
            rooms = await c.complete(ref, {"name": "room", "value": ROOM})
            days = await c.complete(ref, {"name": "day", "value": DAY}, {"room": "nook"})
            dump = lambda r: r.model_dump(mode="json", by_alias=True, exclude_none=True)
            print(json.dumps({
                "templates": dump(templates)["resourceTemplates"],
                "contents": dump(read)["contents"],
                "cache": [read.ttl_ms, str(read.cache_scope)],
                "rooms": rooms.completion.values,
                "days": days.completion.values,
            }))


asyncio.run(main())
