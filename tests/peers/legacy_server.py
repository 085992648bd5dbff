"""A 2025-11-25 MCP server built on the official Python SDK 1.x (FastMCP, stdio), for
tests/tests/legacy_client.rs: its book_room tool pushes an elicitation/create asking which
room, then says what it booked (or that nothing was booked)."""

from pydantic import BaseModel, Field

from mcp.server.fastmcp import Context, FastMCP

server = FastMCP("py-legacy-floor")


class Pick(BaseModel):
    room_id: str = Field(description="The room to book")


@server.tool()
async def book_room(day: str, hour: int, room_hint: str, ctx: Context) -> str:
    """Books a room for one hour, asking which room the hint means."""
    answer = await ctx.elicit(message=f"'{room_hint}' matches more than one room. Which did you mean?", schema=Pick)
    if answer.action == "accept":
        return f"Booked {answer.data.room_id} on {day} at {hour:02}:00."
    return f"Nothing booked ({answer.action})."


server.run()
