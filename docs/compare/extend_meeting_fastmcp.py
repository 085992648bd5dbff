# extend_meeting in the official Python SDK: FastMCP (@mcp.tool, type hints + pydantic Field for
# the arguments) and ctx.elicit(schema=...) with a pydantic model for the question. For
# comparison only: not run here; written against the SDK's documented API.
from typing import Annotated

from mcp.server.fastmcp import Context, FastMCP
from pydantic import BaseModel, Field

mcp = FastMCP("door-panel")
ROOM = "room-4"
meeting = {"title": "Design review", "ends": 600, "next_starts": None}


class Confirm(BaseModel):
    confirm: bool = Field(True, title="Yes, extend it")


def hhmm(m: int) -> str:
    return f"{m // 60:02}:{m % 60:02}"


@mcp.tool(title="Extend the meeting")
async def extend_meeting(
    room: Annotated[str, Field(max_length=24, description="The room whose panel this is")],
    minutes: Annotated[int, Field(ge=5, le=120, description="How many minutes longer")],
    ctx: Context,
) -> str:
    """Extends this room's meeting by some minutes, once the user has confirmed the new end time."""
    if room != ROOM:
        raise ValueError(f"This is the panel of '{ROOM}', not of '{room}'.")
    title, start = meeting["title"], meeting["ends"]
    to, limit = start + minutes, meeting["next_starts"] or 24 * 60
    if to > limit:
        raise ValueError(f"'{title}' can run until {hhmm(limit)} at most, not {hhmm(to)}.")
    # The request stays open while the user answers: the quote lives in this coroutine.
    answer = await ctx.elicit(message=f"Extend '{title}' until {hhmm(to)}?", schema=Confirm)
    if answer.action != "accept" or not answer.data.confirm:
        return f"Not extended: '{title}' still ends at {hhmm(meeting['ends'])}."
    if meeting["ends"] != start:
        raise ValueError(f"'{title}' changed: it now ends at {hhmm(meeting['ends'])}. Not extended.")
    meeting["ends"] = to
    return f"Extended '{title}' until {hhmm(to)}."
