#!/usr/bin/env python3
"""What the 2025-11-25 bridge (shell/src/legacy/) costs: round trips of `tools/call list_rooms`
over TCP from a 2026-07-28 connection and from a 2025-11-25 one (after `initialize`), on one
server, alternating, in the same run.

    cargo build --release -p redmark && python3 bench/legacy-overhead.py target/release/redmark

Prints the median and minimum microseconds per round trip of 5 rounds of N (default 1000).
"""
import json, os, re, socket, subprocess, sys, tempfile, time

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/redmark"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}

data = tempfile.mkdtemp(prefix="redmark-legacy-")
env = dict(os.environ, REDMARK_KEY="00" * 32, REDMARK_LOG="warn")
server = subprocess.Popen([BIN, "serve", "--data", data, "--tcp", "127.0.0.1:0"], env=env,
                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
try:
    deadline = time.time() + 60
    port = None
    while port is None and time.time() < deadline:
        m = re.search(rb"listening tcp 127\.0\.0\.1:(\d+)", server.stderr.readline())
        port = m and int(m.group(1))
    assert port, "the server did not say where it listens"

    def conn():
        s = socket.create_connection(("127.0.0.1", port), timeout=60)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return s, s.makefile("rb")

    def rt(c, msg):
        c[0].sendall((json.dumps(msg) + "\n").encode())
        return json.loads(c[1].readline())

    modern, legacy = conn(), conn()
    rt(legacy, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}})
    legacy[0].sendall(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    times = {"2026-07-28": [], "2025-11-25": []}
    for _ in range(5):
        for kind, c in (("2026-07-28", modern), ("2025-11-25", legacy)):
            t = time.perf_counter()
            for i in range(N):
                p = {"name": "list_rooms", "arguments": {}}
                if c is modern:
                    p["_meta"] = META
                r = rt(c, {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": p})
                assert "result" in r, r
            times[kind].append((time.perf_counter() - t) / N * 1e6)
    for kind, v in times.items():
        v.sort()
        print(f"{kind} client: median {v[2]:.1f} us, min {v[0]:.1f} us per round trip (5 x {N})")
finally:
    server.kill()
    server.wait()
