"""The Python SDK 2.3 as a host that renders no forms (it declares no elicitation): calls
book_room with the JSON arguments given, reads the candidates and the argument to call again
with from the answer's text as a model would, plays the user by picking the candidate whose
title starts with the given words, calls again with it and the arguments the text names (their
values its own, as a model's are in its context), lists the bookings, and prints it all as
JSON."""

import asyncio
import json
import re
import sys

from mcp.client import Client

URL, ARGS, PICK = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]


def text_of(result):
    """The result's first text block and whether it is an error."""
    return {"isError": bool(result.is_error), "text": result.content[0].text}


async def main():
    async with Client(URL) as client:
        first = text_of(await client.call_tool("book_room", ARGS))
        text = first["text"]
        # What a model reads: the candidates, the argument, which of its own to send again.
        candidates = dict((t, v) for v, t in re.findall(r'^- "([^"]+)": (.+)$', text, re.M))
        arg = re.search(r"again with (\w+) set to", text).group(1)
        kept = re.search(r"as before \(([^)]*)\)\.$", text, re.M).group(1).split(", ")
        picked = next(v for t, v in candidates.items() if t.startswith(PICK))
        again = {**{k: ARGS[k] for k in kept}, arg: picked}
        second = text_of(await client.call_tool("book_room", again))
        mine = text_of(await client.call_tool("list_bookings", {}))
        print(json.dumps({
            "first": first,
            "candidates": candidates,
            "arg": arg,
            "picked": picked,
            "second": second,
            "bookings": mine,
        }))


asyncio.run(main())
