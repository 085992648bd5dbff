#!/usr/bin/env python3
"""Load figures for `redmark serve` (release build) on loopback: TCP and HTTP request rates,
durable bookings per second, and memory at rest and with 4000 open TCP connections.

    cargo build --release -p redmark && python3 bench/serve-load.py target/release/redmark

Every loop is bounded; the server is started on ephemeral loopback ports and ended here.
"""
import json, multiprocessing, os, re, resource, shutil, socket, subprocess, sys, tempfile, threading, time

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/redmark"
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}


def start(*flags):
    data = tempfile.mkdtemp(prefix="redmark-load-")
    env = dict(os.environ, REDMARK_KEY="00" * 32, REDMARK_LOG="warn")
    p = subprocess.Popen([BIN, "serve", "--data", data, *flags], env=env,
                         stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    addrs, want = {}, sum(1 for f in flags if f in ("--tcp", "--http"))
    deadline = time.time() + 20
    while len(addrs) < want and time.time() < deadline:
        m = re.match(r"redmark: listening (\w+) ([\d.]+):(\d+)", p.stderr.readline().decode())
        if m:
            addrs[m.group(1)] = (m.group(2), int(m.group(3)))
    return p, data, addrs


def stop(p, data):
    p.terminate()
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
    shutil.rmtree(data, ignore_errors=True)


def memory(p):
    st = open(f"/proc/{p.pid}/status").read()
    return {l.split(":")[0]: l.split(":")[1].strip() for l in st.splitlines() if l.startswith(("VmRSS", "VmHWM"))}


def discover(i):
    return json.dumps({"jsonrpc": "2.0", "id": i, "method": "server/discover", "params": {"_meta": META}}).encode() + b"\n"


def book(i, room, n):
    day, month = 1 + (n // 24) % 28, 1 + n // (24 * 28)
    args = {"day": f"2030-{month:02d}-{day:02d}", "hour": n % 24, "room_id": room}
    return json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                       "params": {"name": "book_room", "arguments": args, "_meta": META}}).encode() + b"\n"


def rate(addr, make, n, clients):
    """`clients` lock-step clients, each in a process of its own (threads would share one GIL
    and measure the driver rather than the server)."""
    ctx = multiprocessing.get_context("fork")
    go = ctx.Event()

    def worker(k):
        s = socket.create_connection(addr)
        f = s.makefile("rb")
        go.wait(30)
        for i in range(n):
            s.sendall(make(i, k))
            line = f.readline()
            assert b'"result"' in line, line
        s.close()
    procs = [ctx.Process(target=worker, args=(k,)) for k in range(clients)]
    for x in procs:
        x.start()
    time.sleep(0.2)  # every client connected and waiting
    t = time.time()
    go.set()
    for x in procs:
        x.join()
    dt = time.time() - t
    assert all(x.exitcode == 0 for x in procs), "a client failed"
    return clients * n / dt


def http_rate(addr, n):
    s = socket.create_connection(addr)
    f = s.makefile("rb")
    body = discover(1)[:-1]
    req = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
           f"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\n"
           f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    t = time.time()
    for _ in range(n):
        s.sendall(req)
        length = 0
        while True:
            line = f.readline()
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
            if line == b"\r\n":
                break
        f.read(length)
    return n / (time.time() - t)


p, data, addrs = start("--tcp", "127.0.0.1:0", "--http", "127.0.0.1:0")
try:
    print("memory at rest:", memory(p))
    print("tcp server/discover, 1 client: %.0f req/s" % rate(addrs["tcp"], lambda i, k: discover(i), 3000, 1))
    print("tcp server/discover, 8 clients: %.0f req/s" % rate(addrs["tcp"], lambda i, k: discover(i), 1000, 8))
    rooms = ["atrium", "studio-b", "nook"]
    print("tcp book_room (durable commit each), 1 client: %.0f bookings/s" % rate(addrs["tcp"], lambda i, k: book(i, rooms[0], i), 500, 1))
    print("tcp book_room (durable commit each), 3 clients: %.0f bookings/s" % rate(addrs["tcp"], lambda i, k: book(i, rooms[k], 500 + i), 500, 3))
    print("http server/discover keep-alive, 1 client: %.0f req/s" % http_rate(addrs["http"], 3000))
finally:
    stop(p, data)

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 16384), hard))
p, data, addrs = start("--tcp", "127.0.0.1:0", "--max-connections", "5000")
try:
    conns = [socket.create_connection(addrs["tcp"]) for _ in range(4000)]
    for i, c in enumerate(conns):
        c.sendall(discover(i))
    for c in conns:
        c.makefile("rb").readline()
    print("4000 open TCP connections:", memory(p))
    for c in conns:
        c.close()
finally:
    stop(p, data)
