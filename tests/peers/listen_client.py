"""The Python SDK 2.3 following a room's day: listens at the first URL for the resource URI
given, books that room's day through the second URL (another instance) and then another room,
and prints as JSON the subscription it held and the first event it got."""

import asyncio
import json
import sys

from mcp.client import Client
from mcp.shared.subscriptions import ResourceUpdated

LISTEN_URL, BOOK_URL, URI, ROOM, OTHER, DAY = sys.argv[1:7]


async def book(client, room, hour):
    """Books `room` at `hour` of DAY; fails loudly if it did not."""
    result = await client.call_tool("book_room", {"day": DAY, "hour": hour, "room_id": room})
    assert not result.is_error, result.content[0].text


async def main():
    async with Client(LISTEN_URL) as listener, Client(BOOK_URL) as booker:
        async with listener.listen(resource_subscriptions=[URI]) as sub:
            await book(booker, OTHER, 9)
            await book(booker, ROOM, 10)
            event = await asyncio.wait_for(sub.__anext__(), 20)
            print(json.dumps({
                "subscription": sub.subscription_id,
                "honored": list(sub.honored.resource_subscriptions or []),
                "updated": event.uri if isinstance(event, ResourceUpdated) else repr(event),
            }))


asyncio.run(main())
