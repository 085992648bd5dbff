#!/usr/bin/env python3
"""The networked door panel's scripted exchange for bench/panel-budget.sh.

Drives the panel (under QEMU, its HTTP and TCP ports forwarded to loopback) through the
same kinds of messages as the UART exchange, over HTTP and over TCP, so its stack
high-water mark covers them; then times one tools/call over HTTP (keep-alive, 200 calls)
and prints one line with the median and the 90th percentile.

    panel-net-exchange.py HTTP_PORT TCP_PORT
"""

import json
import socket
import statistics
import sys
import time

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}
NOCAPS = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
TIMEOUT = 30


def fail(why):
    print(why)
    sys.exit(1)


class Http:
    """One keep-alive HTTP/1.1 connection to the panel."""

    def __init__(self, port):
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        self.buf = b""
        self.next_id = 0

    def raw(self, data):
        self.sock.sendall(data)
        while b"\r\n\r\n" not in self.buf:
            self.more()
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        status = int(lines[0].split(" ")[1])
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        while len(self.buf) < length:
            self.more()
        body, self.buf = self.buf[:length], self.buf[length:]
        return status, body.decode()

    def more(self):
        got = self.sock.recv(65536)
        if not got:
            fail("the panel closed the HTTP connection")
        self.buf += got

    def rpc(self, method, params):
        self.next_id += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nContent-Type: application/json\r\n"
            f"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n"
        )
        if "name" in params:
            head += f"Mcp-Name: {params['name']}\r\n"
        head += f"Content-Length: {len(body)}\r\n\r\n"
        status, text = self.raw(head.encode() + body.encode())
        return status, json.loads(text) if text else None


def call(name, args, meta=META, responses=None, state=None):
    p = {"name": name, "arguments": args, "_meta": meta}
    if responses is not None:
        p["inputResponses"] = responses
    if state is not None:
        p["requestState"] = state
    return p


def expect(cond, what, got):
    if not cond:
        fail(f"expected {what}: {str(got)[:300]}")


def exchange(h, tcp_port):
    big = {"day": "2026-09-17", "hour": 9, "room_hint": "the big room"}
    big10 = dict(big, hour=10)
    _, r = h.rpc("server/discover", {"_meta": META})
    expect("supportedVersions" in json.dumps(r), "supportedVersions", r)
    _, r = h.rpc("tools/list", {"_meta": META})
    expect("book_room" in json.dumps(r), "book_room", r)
    _, r = h.rpc("tools/call", call("book_room", big))
    st = r["result"]["requestState"]
    room = {"room": {"action": "accept", "content": {"room_id": "studio-b"}}}
    _, r = h.rpc("tools/call", call("book_room", big, responses=room, state=st))
    expect('"booking"' in json.dumps(r), "a booking", r)
    for action in ("decline", "cancel"):
        _, r = h.rpc("tools/call", call("book_room", big10))
        st = r["result"]["requestState"]
        _, r = h.rpc("tools/call", call("book_room", big10, responses={"room": {"action": action}}, state=st))
        expect('"booked": false' in json.dumps(r), "not booked", r)
    _, r = h.rpc("tools/call", call("book_room", {"day": "2026-09-18", "hour": 14, "room_id": "nook"}))
    bk = r["result"]["structuredContent"]["booking"]["id"]
    _, r = h.rpc("tools/call", call("cancel_booking", {"booking_id": bk}))
    st = r["result"]["requestState"]
    yes = {"confirm": {"action": "accept", "content": {"confirm": True}}}
    _, r = h.rpc("tools/call", call("cancel_booking", {"booking_id": bk}, responses=yes, state=st))
    expect("cancelled" in json.dumps(r), "cancelled", r)
    _, r = h.rpc("tools/call", call("book_room", big10))
    st = r["result"]["requestState"]
    bad = st[:10] + ("B" if st[10] == "A" else "A") + st[11:]
    _, r = h.rpc("tools/call", call("book_room", big10, responses=room, state=bad))
    expect("Invalid requestState" in json.dumps(r), "Invalid requestState", r)
    status, r = h.rpc("tools/call", call("book_room", big10, meta=NOCAPS))
    expect(status == 400 and r["error"]["code"] == -32021, "-32021", r)
    status, _ = h.raw(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 7\r\n\r\ngarbage")
    expect(status == 400, "400 for garbage", status)
    frac = {"day": "2026-09-17", "hour": 9.5, "attendees": 2.25e1}
    _, r = h.rpc("tools/call", call("list_rooms", frac))
    expect("resultType" in json.dumps(r), "resultType", r)
    for i in range(40):
        h.rpc("tools/list", {"_meta": META})
        h.rpc("tools/call", call("list_rooms", {"day": "2026-09-17", "hour": i % 24}))
        h.rpc("tools/call", call("book_room", {"day": "2026-09-19", "hour": i % 24, "room_hint": "the big room"}))
    # The same over TCP, newline-delimited, and an over-long line.
    t = socket.create_connection(("127.0.0.1", tcp_port), timeout=TIMEOUT)
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call("book_room", big10)},
    ]
    data = "".join(json.dumps(m) + "\n" for m in msgs) + '{"pad":"' + "a" * 3000 + '"}\n'
    t.sendall(data.encode())
    got = b""
    while got.count(b"\n") < 3:
        more = t.recv(65536)
        if not more:
            fail("the panel closed the TCP connection")
        got += more
    expect(b"-32600" in got.split(b"\n")[2], "-32600 for the long line", got[-200:])
    t.close()


def round_trips(h, n=200):
    times = []
    for i in range(n):
        start = time.perf_counter()
        status, r = h.rpc("tools/call", call("list_rooms", {"day": "2026-09-17", "hour": i % 24}))
        times.append((time.perf_counter() - start) * 1000)
        expect(status == 200, "200", r)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.9)]


def main():
    http_port, tcp_port = int(sys.argv[1]), int(sys.argv[2])
    h = Http(http_port)
    exchange(h, tcp_port)
    med, p90 = round_trips(h)
    print(f"round trip of one tools/call (list_rooms) over HTTP under QEMU, keep-alive, 200 calls: "
          f"median {med:.2f} ms, p90 {p90:.2f} ms")


if __name__ == "__main__":
    main()
