"""A 2025-11-25 MCP server built on the official Python SDK 1.x (FastMCP), for
tests/tests/legacy_client.rs: its book_room tool pushes an elicitation/create asking which
room, then says what it booked (or that nothing was booked).

usage: legacy_server.py            (stdio)
       legacy_server.py http PORT  (Streamable HTTP at http://127.0.0.1:PORT/mcp)
"""

import sys

from pydantic import BaseModel, Field

from mcp.server.fastmcp import Context, FastMCP

server = FastMCP("py-legacy-floor", host="127.0.0.1", port=int(sys.argv[2]) if len(sys.argv) > 2 else 8000)


class Pick(BaseModel):
    room_id: str = Field(description="The room to book")


@server.tool()
async def book_room(day: str, hour: int, room_hint: str, ctx: Context) -> str:
    """Books a room for one hour, asking which room the hint means."""
    answer = await ctx.elicit(message=f"'{room_hint}' matches more than one room. Which did you mean?", schema=Pick)
    if answer.action == "accept":
        return f"Booked {answer.data.room_id} on {day} at {hour:02}:00."
    return f"Nothing booked ({answer.action})."


server.run("streamable-http" if sys.argv[1:2] == ["http"] else "stdio")
