"""The Python SDK 2.3 as a host of a floor in a time zone: calls book_room with the JSON
arguments given, answers each question with the next of the given values (the option whose
`const` it is), and prints what it was asked and the result as JSON."""

import asyncio
import json
import sys

import mcp.types as types
from mcp.client import Client

URL, ARGS, ANSWERS = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3:]
asked = []


async def answer(context, params):
    """Records the question and picks the next answer among its options."""
    field, schema = next(iter(params.requested_schema["properties"].items()))
    asked.append({"message": params.message, "options": schema.get("oneOf", [])})
    if len(asked) > len(ANSWERS):
        return types.ElicitResult(action="decline")
    return types.ElicitResult(action="accept", content={field: ANSWERS[len(asked) - 1]})


async def main():
    async with Client(URL, elicitation_callback=answer) as client:
        result = await client.call_tool("book_room", ARGS)
        print(json.dumps({
            "asked": asked,
            "isError": bool(result.is_error),
            "text": result.content[0].text,
            "structured": result.structured_content,
        }))


asyncio.run(main())
