#!/usr/bin/env python3
"""The user-visible figures: `redmark serve` on stdio against a canned stub (the ceiling of the
machine, the pipe and this driver) and an rmcp 3.11 server with the same tools, then redmark's
TCP, HTTP and durable-booking figures. Run it through bench/compare.sh, which builds the three.

    python3 bench/compare.py --redmark BIN --stub BIN --rmcp BIN [--quick]

Per stdio server: pipelined `tools/list` req/s (N requests written without waiting while a
reader drains), lock-step req/s and p50, MRTR round trips/s and p50 (ambiguous `book_room` ->
`input_required` -> retry declining -> `complete`), peak RSS (VmHWM) at rest and through an
N-request pipelined flood whose reader stalls, and startup (spawn to first answer; redmark's
on an empty store and on one of FLOOR_BOOKINGS bookings, booked through its TCP listener before
the run and shut down cleanly, as a floor's store is between two starts). The stub's answers
are captured from redmark at the start of the run, so it carries the same bytes.
The servers are measured interleaved (startups alternate; rate figures are medians of rounds,
each round running every server once; a ratio is the median of the rounds' own ratios, printed
with the lowest and highest) so a drift in the machine's load skews ratios less. The TCP/HTTP/
booking figures of redmark and of `--baseline` are interleaved the same way, with the stub
serving the HTTP rows too (`canned-stub TABLE --http`): the HTTP ceiling, so "stub ÷ baseline"
is the most any server could gain over the baseline on this machine. In the same rounds, the
booking round trip over Streamable HTTP as a client makes it (`booker --round-trip`: lock-step
clients, each `book_room` with an ambiguous hint answered `input_required`, then the retry
accepting a room, which books: on redmark a durable commit before the answer) at 16 and 64
connections, beside rmcp 3.11's (`rmcp-peer --http`, bookings in memory), with p50 and p99.

Every loop is bounded in count and in time; servers run on stdio or loopback and are stopped
here. Figures on a shared machine are indicative: compare columns of one run, not runs.
"""
import argparse
import multiprocessing, datetime, json, os, re, select, shutil, socket, subprocess, sys, tempfile
import statistics, threading, time

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}
META_ELICIT = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
ASK_ARGS = {"day": "2099-09-17", "hour": 9, "room_hint": "the big room"}
PREFIX = b'{"jsonrpc":"2.0","id":'
KEY = "00" * 32  # public and only for measuring
MiB = 1024 * 1024


def line(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def tools_list(i):
    return line({"jsonrpc": "2.0", "id": i, "method": "tools/list", "params": {"_meta": META}})


def ask(i):
    return line({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                 "params": {"name": "book_room", "arguments": ASK_ARGS, "_meta": META_ELICIT}})


def retry(i, state):
    # `state` is echoed byte for byte, as the JSON string's raw content.
    head = json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                       "params": {"name": "book_room", "arguments": ASK_ARGS,
                                  "inputResponses": {"room": {"action": "decline"}},
                                  "requestState": "@STATE@", "_meta": META_ELICIT}},
                      separators=(",", ":")).encode()
    return head.replace(b"@STATE@", state) + b"\n"


STATE_RE = re.compile(rb'"requestState":"((?:[^"\\]|\\.)*)"')


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class Timeout(Exception):
    pass


class Lines:
    """Newline-framed reads from a file descriptor, each bounded by a deadline."""

    def __init__(self, fd):
        self.fd, self.buf = fd, bytearray()

    def readline(self, timeout=10.0):
        deadline = time.monotonic() + timeout
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                out = bytes(self.buf[:i + 1])
                del self.buf[:i + 1]
                return out
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                raise Timeout("no answer within %.0f s" % timeout)
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                raise Timeout("server closed its stdout")
            self.buf += chunk


def vm(pid, field):
    """A /proc/PID/status figure in bytes (VmHWM: peak resident set; VmRSS: now)."""
    try:
        for l in open(f"/proc/{pid}/status"):
            if l.startswith(field + ":"):
                return int(l.split()[1]) * 1024
    except OSError:
        pass
    return None


class Stdio:
    """One stdio server process, on the CPUs `cpus` if given (else wherever the kernel puts
    it)."""

    def __init__(self, argv, env, cpus=None):
        pin = None if cpus is None else lambda: os.sched_setaffinity(0, cpus)
        self.p = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, bufsize=0, close_fds=True,
                                  preexec_fn=pin)
        self.w, self.r = self.p.stdin.fileno(), self.p.stdout.fileno()
        self.lines = Lines(self.r)

    def send(self, data):
        write_all(self.w, data)

    def call(self, data, timeout=10.0):
        self.send(data)
        return self.lines.readline(timeout)

    def stop(self):
        for f in (self.p.stdin, self.p.stdout):
            try:
                f.close()
            except OSError:
                pass
        try:
            self.p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            stop(self.p, 5)


def median(xs):
    """The middle value (the mean of the middle two for an even count), NaN for none."""
    return statistics.median(xs) if len(xs) else float("nan")


# ---------------------------------------------------------------------------------------------
# capture: redmark's answers, for the stub


def capture(server, table_path):
    """Sends the workload's distinct requests to redmark once; writes (request, answer) pairs
    with the ids cut out, the stub's table."""
    pairs = []

    def record(req):
        ans = server.call(req)
        assert req.startswith(PREFIX) and ans.startswith(PREFIX), (req, ans)
        cut = lambda b: re.sub(rb"^\d+", b"", b[len(PREFIX):].rstrip(b"\n"))
        pairs.append((cut(req), cut(ans)))
        return ans

    record(tools_list(1))
    first = record(ask(2))
    assert b'"input_required"' in first, first
    state = STATE_RE.search(first).group(1)
    done = record(retry(3, state))
    assert b'"complete"' in done and b'"result"' in done, done
    with open(table_path, "wb") as f:
        for req, ans in pairs:
            f.write(req + b"\n" + ans + b"\n")
    return pairs


# ---------------------------------------------------------------------------------------------
# stdio measurements


def pipelined(server, n, stall=0.0, deadline=180.0):
    """Writes n tools/list requests without waiting (a writer thread) while this thread reads;
    with `stall`, the reader sleeps that long first. Returns (req/s, answers, results, VmHWM)."""
    blob = b"".join(tools_list(i) for i in range(1, n + 1))
    failed = []

    def writer():
        try:
            view = memoryview(blob)
            for k in range(0, len(view), 1 << 16):
                write_all(server.w, view[k:k + (1 << 16)])
        except (OSError, ValueError) as e:
            failed.append(e)

    t0 = time.perf_counter()
    th = threading.Thread(target=writer, daemon=True)
    th.start()
    peak_rss = 0
    if stall:
        end = time.monotonic() + stall
        while time.monotonic() < end:
            peak_rss = max(peak_rss, vm(server.p.pid, "VmRSS") or 0)
            time.sleep(0.05)
    seen = results = 0
    tail = b""
    stop = time.monotonic() + deadline
    fd = server.r
    pending = server.lines.buf
    if pending:
        seen += pending.count(b"\n")
        server.lines.buf = bytearray()
    while seen < n:
        left = stop - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], min(left, 10.0))[0]:
            break
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        seen += chunk.count(b"\n")
        both = tail + chunk
        results += both.count(b'"result":')
        tail = chunk[-8:]
        if stall:
            peak_rss = max(peak_rss, vm(server.p.pid, "VmRSS") or 0)
    dt = time.perf_counter() - t0
    th.join(timeout=5)
    return n / dt if seen >= n else float("nan"), seen, results, vm(server.p.pid, "VmHWM"), peak_rss


def lockstep(server, n, timeout=60.0):
    lat = []
    end = time.monotonic() + timeout
    t0 = time.perf_counter()
    for i in range(1, n + 1):
        req = tools_list(i)
        a = time.perf_counter_ns()
        ans = server.call(req)
        lat.append(time.perf_counter_ns() - a)
        assert b'"result"' in ans, ans[:300]
        if time.monotonic() > end:
            break
    dt = time.perf_counter() - t0
    return len(lat) / dt, median(lat) / 1000, len(lat)


def mrtr(server, n, timeout=60.0):
    lat = []
    end = time.monotonic() + timeout
    t0 = time.perf_counter()
    for i in range(n):
        a = time.perf_counter_ns()
        first = server.call(ask(2 * i + 1))
        m = STATE_RE.search(first)
        assert m and b'"input_required"' in first, first[:300]
        done = server.call(retry(2 * i + 2, m.group(1)))
        lat.append(time.perf_counter_ns() - a)
        assert b'"result"' in done and b"Not booked" in done and b'"input_required"' not in done, done[:400]
        if time.monotonic() > end:
            break
    dt = time.perf_counter() - t0
    return len(lat) / dt, median(lat) / 1000, len(lat)


def startup(argv, env, times):
    """Spawn to first answer (tools/list written right after spawn), median of `times`."""
    out = []
    for i in range(times):
        t = time.perf_counter()
        s = Stdio(argv, env)
        try:
            ans = s.call(tools_list(1), timeout=20)
            out.append(time.perf_counter() - t)
            assert b'"result"' in ans, ans[:300]
        finally:
            s.stop()
    return median(out) * 1000


def rates(name, argv, env, a):
    """One round on a fresh process: peak RSS at rest, lock-step, MRTR, pipelined."""
    print(f"[{name}] lock-step, MRTR, pipelined ...", file=sys.stderr, flush=True)
    r = {}
    s = Stdio(argv, env)
    try:
        s.call(tools_list(0), timeout=20)
        time.sleep(0.2)
        r["rss_rest"] = vm(s.p.pid, "VmHWM")
        for _ in range(100):  # warm
            s.call(tools_list(0))
        r["lock_rps"], r["lock_p50"], r["lock_n"] = lockstep(s, a.lockstep)
        r["mrtr_rps"], r["mrtr_p50"], r["mrtr_n"] = mrtr(s, a.mrtr)
        r["pipe_rps"], _, ok, _, _ = pipelined(s, a.pipelined)
        r["pipe_ok"] = ok
    finally:
        s.stop()
    return r


# Where the kernel runs the driver and a lock-step server decides most of a round trip on a
# small VM: on one CPU a request is two context switches; on two, each direction wakes an idle
# CPU. Unpinned, the rounds land in either, which is most of their spread.
PLACEMENTS = (("one CPU (driver's)", 0), ("own CPU", 1))


def placed(name, argv, env, a):
    """Lock-step and MRTR with this driver pinned to CPU 0 and the server pinned to CPU 0 (the
    CPU cost of a request shows) and then to CPU 1 (the cross-CPU wake-ups show)."""
    print(f"[{name}] lock-step and MRTR, pinned ...", file=sys.stderr, flush=True)
    r = {}
    mine = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {0})
        for _, cpu in PLACEMENTS:
            s = Stdio(argv, env, {cpu})
            try:
                s.call(tools_list(0), timeout=20)
                for _ in range(100):  # warm
                    s.call(tools_list(0))
                r[f"lock_rps@{cpu}"], r[f"lock_p50@{cpu}"], _ = lockstep(s, a.lockstep)
                r[f"mrtr_rps@{cpu}"], r[f"mrtr_p50@{cpu}"], _ = mrtr(s, a.mrtr)
            finally:
                s.stop()
    finally:
        os.sched_setaffinity(0, mine)
    return r


def flood(name, argv, env, a):
    """VmHWM at rest, then through a pipelined flood whose reader stalls."""
    print(f"[{name}] flood with a reader stalled {a.stall:.0f} s ...", file=sys.stderr, flush=True)
    r = {}
    s = Stdio(argv, env)
    try:
        s.call(tools_list(0), timeout=20)
        time.sleep(0.2)
        r["flood_rest"] = vm(s.p.pid, "VmHWM")
        _, _, ok, r["flood_hwm"], _ = pipelined(s, a.pipelined, stall=a.stall)
        r["flood_ok"] = f"{ok}/{a.pipelined}"
    finally:
        s.stop()
    return r


def measure(servers, env, a, floor):
    """Interleaved, so a change in the machine's load between servers skews the ratios less:
    startups alternate between servers (and redmark on the store `floor` argv serves, its
    `startup_floor_ms`); each round runs every server once (in an order rotated per round) and
    the figures are the medians over the rounds."""
    res = {name: {} for name, _ in servers}
    print("startup ...", file=sys.stderr, flush=True)
    times = {name: [] for name, _ in servers + [("floor", None)]}
    for _ in range(a.startups):
        for name, argv in servers + [("floor", floor)]:
            times[name].append(startup(argv, env, 1))
    for name in res:
        res[name]["startup_ms"] = median(times[name])
        res[name]["startup_floor_ms"] = median(times["floor"]) if name == "redmark" else None
    rounds = {name: [] for name, _ in servers}
    for k in range(a.rounds):
        order = servers[k % len(servers):] + servers[:k % len(servers)]
        for name, argv in order:
            r = rates(name, argv, env, a)
            if a.placed:
                r.update(placed(name, argv, env, a))
            rounds[name].append(r)
    for name, rs in rounds.items():
        for key in rs[0]:
            res[name][key] = median([r[key] for r in rs])
        res[name]["pipe_ok"] = f"{sum(r['pipe_ok'] for r in rs)}/{a.pipelined * len(rs)}"
        res[name]["rounds"] = rs
    for name, argv in servers:
        res[name].update(flood(name, argv, env, a))
    return res


# ---------------------------------------------------------------------------------------------
# redmark on TCP and HTTP


def start_net(bin_, data, *flags):
    want = sum(1 for f in flags if f in ("--tcp", "--http"))
    return start_net_argv([bin_, "serve", "--data", data, *flags], want)


def start_net_argv(argv, want):
    """Starts `argv` (a `redmark serve` with `want` listeners, perhaps under a tool) and waits
    for the addresses it prints."""
    env = dict(os.environ, REDMARK_KEY=KEY, REDMARK_LOG="warn")
    p = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    addrs = {}
    err = Lines(p.stderr.fileno())
    deadline = time.monotonic() + 30
    while len(addrs) < want and time.monotonic() < deadline:
        l = err.readline(timeout=max(0.1, deadline - time.monotonic())).decode(errors="replace")
        m = re.match(r"(?:redmark|canned-stub|rmcp-peer): listening (\w+) ([\d.]+):(\d+)", l)
        if m:
            addrs[m.group(1)] = (m.group(2), int(m.group(3)))

    def drain():
        while os.read(p.stderr.fileno(), 1 << 16):
            pass
    threading.Thread(target=drain, daemon=True).start()
    return p, addrs


def tcp_lockstep(addr, n, clients, timeout=60.0):
    """`clients` lock-step TCP clients, each in a process of its own (threads would share one
    GIL, and 8 of them measured the driver rather than the server)."""
    ctx = multiprocessing.get_context("fork")
    go, errs = ctx.Event(), ctx.Queue()

    def worker(k):
        try:
            s = socket.create_connection(addr, timeout=10)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            f = s.makefile("rb")
            go.wait(timeout)
            end = time.monotonic() + timeout
            for i in range(n):
                s.sendall(tools_list(i))
                assert b'"result"' in f.readline()
                if time.monotonic() > end:
                    raise Timeout("tcp client over time")
            s.close()
        except Exception as e:  # noqa: BLE001 - reported below
            errs.put(repr(e))

    ps = [ctx.Process(target=worker, args=(k,)) for k in range(clients)]
    for x in ps:
        x.start()
    time.sleep(0.2)  # every client connected and waiting
    t = time.perf_counter()
    go.set()
    for x in ps:
        x.join(timeout + 10)
    dt = time.perf_counter() - t
    errors = []
    while not errs.empty():
        errors.append(errs.get())
    errors += [f"client exited {x.exitcode}" for x in ps if x.exitcode]
    return (clients * n / dt if not errors else float("nan")), errors


def http_lockstep(addr, n, timeout=60.0):
    s = socket.create_connection(addr, timeout=10)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    f = s.makefile("rb")
    lat = []
    end = time.monotonic() + timeout
    t0 = time.perf_counter()
    for i in range(n):
        body = tools_list(i)[:-1]
        req = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               f"Accept: application/json, text/event-stream\r\n"
               f"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body
        a = time.perf_counter_ns()
        s.sendall(req)
        status = f.readline()
        assert b" 200 " in status, status
        length = 0
        while True:
            l = f.readline()
            if l.lower().startswith(b"content-length:"):
                length = int(l.split(b":")[1])
            if l in (b"\r\n", b""):
                break
        assert b'"result"' in f.read(length)
        lat.append(time.perf_counter_ns() - a)
        if time.monotonic() > end:
            break
    dt = time.perf_counter() - t0
    s.close()
    return len(lat) / dt, median(lat) / 1000


def http_booker(booker, addr, secs, clients, load="--list"):
    """HTTP keep-alive lock-step `tools/list` (or with `load="--round-trip"`, booking round
    trips) from `bench/peers/booker` (a thread per connection, std-only Rust: far lighter than
    this driver). Returns (per second, p50 µs, p99 µs)."""
    out = subprocess.run([booker, load, str(secs), str(clients), f"{addr[0]}:{addr[1]}"],
                         capture_output=True, text=True, timeout=secs + 60)
    fields = out.stdout.split()
    if out.returncode != 0 or len(fields) != 4 or fields[1] != "0":
        print(f"  error: booker: {out.stdout.strip()} {out.stderr.strip()[:300]}", file=sys.stderr)
        return float("nan"), float("nan"), float("nan")
    return float(fields[0]), float(fields[2]), float(fields[3])


# The connection counts of the booking round trip over HTTP.
ROUND_TRIP_CLIENTS = (16, 64)


def round_trips(booker, addr, net, a):
    """The booking round trip rows, into `net`: `rt16`, `rt16_p50`, `rt16_p99`, ..."""
    for c in ROUND_TRIP_CLIENTS:
        net[f"rt{c}"], net[f"rt{c}_p50"], net[f"rt{c}_p99"] = http_booker(
            booker, addr, a.secs, c, "--round-trip")


def rmcp_http_figures(rmcp, a):
    """The booking round trip of rmcp 3.11 over Streamable HTTP (bookings in memory)."""
    print("[rmcp] HTTP booking round trips ...", file=sys.stderr, flush=True)
    net = {}
    p, addrs = start_net_argv([rmcp, "--http", "127.0.0.1:0"], 1)
    try:
        round_trips(a.booker, addrs["http"], net, a)
    finally:
        stop(p)
    return net


def net_figures(bin_, work, name, a):
    """redmark's TCP, HTTP and durable-booking figures for the binary `bin_`."""
    print(f"[{name}] TCP, HTTP, durable bookings ...", file=sys.stderr, flush=True)
    ndata = tempfile.mkdtemp(prefix="net-", dir=work)
    net = {}
    p, addrs = start_net(bin_, ndata, "--tcp", "127.0.0.1:0", "--http", "127.0.0.1:0")
    try:
        net["tcp1"], e1 = tcp_lockstep(addrs["tcp"], a.tcp, 1)
        net["tcp8"], e8 = tcp_lockstep(addrs["tcp"], a.tcp, 8)
        http_figures(addrs["http"], net, a)
        if a.booker:
            round_trips(a.booker, addrs["http"], net, a)
        net["books"], net["booked"], eb = durable_bookings(addrs["tcp"], a.books, 8)
        for e in e1 + e8 + eb[:3]:
            print("  error:", e, file=sys.stderr)
    finally:
        stop(p)
    return net


def http_figures(addr, net, a):
    """The HTTP lock-step rows, into `net`: this driver, then booker with 1 and 8 clients."""
    net["http"], net["http_p50"] = http_lockstep(addr, a.http)
    if a.booker:
        net["httpb1"], net["httpb1_p50"], _ = http_booker(a.booker, addr, a.secs, 1)
        net["httpb8"], net["httpb8_p50"], _ = http_booker(a.booker, addr, a.secs, 8)


def stub_http_figures(stub, table, a):
    """The HTTP rows of the canned stub serving `table` over HTTP: the ceiling of the machine,
    loopback TCP and the drivers, as its stdio figures are for stdio."""
    print("[stub] HTTP ...", file=sys.stderr, flush=True)
    net = {}
    p, addrs = start_net_argv([stub, table, "--http", "127.0.0.1:0"], 1)
    try:
        http_figures(addrs["http"], net, a)
    finally:
        stop(p)
    return net


def stop(p, grace=10):
    """Stops the server process `p`: SIGTERM, then SIGKILL after `grace` seconds."""
    p.terminate()
    try:
        p.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def slot(n):
    """The n-th distinct far-future slot: (room, day, hour)."""
    rooms = ("atrium", "studio-b", "nook")
    day = datetime.date(2099, 1, 1) + datetime.timedelta(days=n // (24 * len(rooms)))
    return rooms[n % len(rooms)], day.isoformat(), (n // len(rooms)) % 24


def book(i, n):
    room, day, hour = slot(n)
    return line({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                 "params": {"name": "book_room",
                            "arguments": {"day": day, "hour": hour, "room_id": room},
                            "_meta": META}})


FLOOR_BOOKINGS = 100_000  # in the store of the second startup row


def filled_floor(bin_, work, n, clients=8):
    """A data folder whose store holds `n` bookings, booked through `bin_`'s TCP listener
    (`durable_bookings`), the server then stopped cleanly (SIGTERM)."""
    print(f"booking {n} slots for the startup on a full store ...", file=sys.stderr, flush=True)
    data = tempfile.mkdtemp(prefix="floor-", dir=work)
    p, addrs = start_net(bin_, data, "--tcp", "127.0.0.1:0")
    try:
        _, booked, errors = durable_bookings(addrs["tcp"], n // clients, clients)
    finally:
        stop(p, grace=60)
    if booked != n // clients * clients or p.returncode != 0:
        raise SystemExit(f"filling a store: {booked} booked, exit {p.returncode}: {errors[:1]}")
    return data


def durable_bookings(addr, per, clients, timeout=120.0):
    """`clients` TCP connections, each pipelining `per` bookings of its own distinct slots."""
    errors, booked = [], [0] * clients

    def worker(k):
        try:
            s = socket.create_connection(addr, timeout=timeout)
            blob = b"".join(book(i, k * per + i) for i in range(per))
            w = threading.Thread(target=s.sendall, args=(blob,), daemon=True)
            w.start()
            f = s.makefile("rb")
            for _ in range(per):
                ans = f.readline()
                if b"Booked " in ans:
                    booked[k] += 1
                elif not errors:
                    errors.append(ans[:300])
            w.join(10)
            s.close()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    th = [threading.Thread(target=worker, args=(k,)) for k in range(clients)]
    t = time.perf_counter()
    for x in th:
        x.start()
    for x in th:
        x.join(timeout + 10)
    dt = time.perf_counter() - t
    return sum(booked) / dt, sum(booked), errors


# ---------------------------------------------------------------------------------------------
# the table


def fmt(v, kind):
    if v is None or v != v:
        return "—"
    if kind == "rate":
        return f"{v:,.0f}".replace(",", " ")
    if kind == "us":
        return f"{v:.1f} µs"
    if kind == "ms":
        return f"{v:.2f} ms"
    if kind == "mib":
        return f"{v / MiB:.2f} MiB"
    return str(v)


def ratio(a, b):
    if a is None or b is None or a != a or b != b or b == 0:
        return None
    return a / b


def paired(xs, ys, k):
    """Round by round ratios xs[i][k] / ys[i][k] (both measured minutes apart in round i):
    their median, lowest and highest, or None. A ratio of one round's pair follows the machine's
    load less than a ratio of medians taken from different minutes."""
    rs = sorted(r for r in (ratio(x.get(k), y.get(k)) for x, y in zip(xs, ys)) if r is not None)
    return (median(rs), rs[0], rs[-1]) if rs else None


def fmt_ratio(p):
    if p is None:
        return "—"
    m, lo, hi = p
    return f"{m:.2f}" if lo == hi else f"{m:.2f} ({lo:.2f}–{hi:.2f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--redmark", required=True)
    ap.add_argument("--stub", required=True)
    ap.add_argument("--rmcp", required=True)
    ap.add_argument("--quick", action="store_true", help="smaller counts, 2 s stall")
    ap.add_argument("--no-net", action="store_true", help="skip the TCP/HTTP/booking part")
    ap.add_argument("--rounds", type=int, help="rounds of the stdio rates and of the "
                    "TCP/HTTP/booking figures (medians); 3, quick 1")
    ap.add_argument("--booker", help="bench/peers booker binary: HTTP lock-step rows from it too")
    ap.add_argument("--baseline", help="an older redmark binary: its TCP/HTTP/booking figures "
                    "beside these, with the ratio (a change may cost at most 15 %% of any of them)")
    a = ap.parse_args()
    a.placed = len(os.sched_getaffinity(0) & {0, 1}) == 2
    if a.quick:
        a.pipelined, a.lockstep, a.mrtr, a.stall, a.startups = 20_000, 2_000, 1_000, 2.0, 5
        a.tcp, a.http, a.books, a.secs = 500, 2_000, 250, 2
        a.rounds = a.rounds or 1
    else:
        a.pipelined, a.lockstep, a.mrtr, a.stall, a.startups = 200_000, 20_000, 10_000, 10.0, 20
        a.tcp, a.http, a.books, a.secs = 3_000, 20_000, 1_000, 5
        a.rounds = a.rounds or 3

    work = tempfile.mkdtemp(prefix="redmark-compare-")
    try:
        data = os.path.join(work, "data")
        os.mkdir(data)
        env = dict(os.environ, REDMARK_KEY=KEY, REDMARK_LOG="warn")
        redmark = [a.redmark, "serve", "--data", data]
        table = os.path.join(work, "canned.table")

        print("capturing redmark's answers for the stub ...", file=sys.stderr, flush=True)
        s = Stdio(redmark, env)
        try:
            pairs = capture(s, table)
        finally:
            s.stop()
        print(f"  {len(pairs)} request/answer pairs, answers "
              + ", ".join(str(len(b)) for _, b in pairs) + " bytes", file=sys.stderr)

        servers = [("redmark", redmark), ("stub", [a.stub, table]), ("rmcp", [a.rmcp])]
        floor = filled_floor(a.redmark, work, FLOOR_BOOKINGS)
        res = measure(servers, env, a, [a.redmark, "serve", "--data", floor])
        report(res, a)

        if not a.no_net:
            # Interleaved like the stdio rounds: each round runs both binaries, in turn first.
            bins = [("redmark", a.redmark)] + ([("baseline", a.baseline)] if a.baseline else [])
            bins.append(("stub", None))
            if a.booker:
                bins.append(("rmcp", None))
            nets = {name: [] for name, _ in bins}
            for k in range(a.rounds):
                for name, bin_ in bins[k % len(bins):] + bins[:k % len(bins)]:
                    if name == "rmcp":
                        nets[name].append(rmcp_http_figures(a.rmcp, a))
                    elif bin_ is None:
                        nets[name].append(stub_http_figures(a.stub, table, a))
                    else:
                        nets[name].append(net_figures(bin_, work, name, a))
            report_net(nets, a)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(res, a):
    R, S, M = res["redmark"], res["stub"], res["rmcp"]

    def check_stub(k, frac):
        x = paired(R["rounds"], S["rounds"], k)
        return None if x is None else (x[0] >= frac, f"≥ {frac} × stub")

    def check_abs(v, limit, what):
        return None if v is None or v != v else (v <= limit, what)

    flat = lambda r: None if r["flood_hwm"] is None else r["flood_hwm"] - r["flood_rest"]
    for r in (R, S, M):
        r["flood_growth"] = flat(r)
        r["startup_over"] = r["startup_ms"] - S["startup_ms"]
    rows = [
        ("stdio pipelined tools/list, req/s", "pipe_rps", "rate", True, check_stub("pipe_rps", 0.75)),
        ("stdio lock-step tools/list, req/s", "lock_rps", "rate", True, check_stub("lock_rps", 0.9)),
        ("stdio lock-step p50", "lock_p50", "us", False, None),
        ("stdio MRTR round trips/s", "mrtr_rps", "rate", True, check_stub("mrtr_rps", 0.8)),
        ("stdio MRTR round trip p50", "mrtr_p50", "us", False, None),
        ("peak RSS at rest (VmHWM)", "rss_rest", "mib", False, check_abs(R["rss_rest"], 4 * MiB, "≤ 4 MiB")),
        (f"peak RSS through {a.pipelined} flood, {a.stall:.0f} s stall", "flood_hwm", "mib", False, None),
        ("  growth over rest", "flood_growth", "mib", False,
         check_abs(R["flood_growth"], 1 * MiB, "≤ 1 MiB (flat)")),
        ("startup, spawn to first answer (median)", "startup_ms", "ms", False,
         check_abs(R["startup_ms"], 5.0, "≤ 5 ms")),
        ("  over the stub's (spawn + pipe + driver)", "startup_over", "ms", False,
         check_abs(R["startup_over"], 2.0, "≤ 2 ms")),
        (f"startup on a store of {FLOOR_BOOKINGS} bookings (median)", "startup_floor_ms", "ms",
         False, check_abs(R["startup_floor_ms"], 10.0, "≤ 10 ms")),
    ]
    head = ["figure", "redmark", "stub", "rmcp 3.11", "redmark÷stub", "redmark÷rmcp", "target", "verdict"]
    out = []
    ahead_all = True
    for label, k, kind, hib, chk in rows:
        rs, rm = ratio(R[k], S[k]), ratio(R[k], M[k])
        by_round = paired(R["rounds"], S["rounds"], k) if k in R["rounds"][0] else None
        ahead = None if rm is None else (rm > 1 if hib else rm < 1)
        if k in ("flood_growth", "startup_over"):
            rs = rm = ahead = None  # differences: a ratio of them means nothing
        if ahead is not None:
            ahead_all &= ahead
        verdict, target = "", ""
        if chk:
            target = chk[1]
            verdict = "PASS" if chk[0] else "MISS"
        if k == "mrtr_rps":
            target += " and > rmcp"
            verdict = "PASS" if chk and chk[0] and ahead else "MISS"
        if k == "mrtr_p50":
            target, verdict = "< rmcp", "PASS" if ahead else "MISS"
        out.append([label, fmt(R[k], kind), fmt(S[k], kind), fmt(M[k], kind),
                    fmt_ratio(by_round) if by_round else "—" if rs is None else f"{rs:.2f}",
                    "—" if rm is None else f"{rm:.2f}",
                    target, verdict])
    out.append(["ahead of rmcp on every column", "", "", "", "", "", "all rows",
                "PASS" if ahead_all else "MISS"])
    widths = [max(len(str(r[i])) for r in [head] + out) for i in range(len(head))]
    print()
    print("stdio, one run (%s counts: pipelined %d, lock-step %d, MRTR %d, startups %d; "
          "medians of %d interleaved round(s))" % ("quick" if a.quick else "full", a.pipelined,
                                                  a.lockstep, a.mrtr, a.startups, a.rounds))
    print("| " + " | ".join(h.ljust(w) for h, w in zip(head, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in out:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |")
    print()
    print("answers with a result: pipelined " + ", ".join(f"{n} {res[n]['pipe_ok']}" for n in res)
          + "; flood " + ", ".join(f"{n} {res[n]['flood_ok']}" for n in res))
    print("rmcp MRTR: InputRequiredResult from CallToolResponse::InputRequired, requestState sealed "
          "by rmcp's RequestStateCodec (HMAC-SHA256) bound to the request; bookings in memory.")
    print("Startup includes the driver's spawn; the stub's is the floor, so the target applies "
          "to redmark's time over it.")
    print("redmark÷stub of a rate or p50: the median of the rounds' own ratios (lowest–highest "
          "round); the verdict uses that median.")
    print("Indicative: one run on a shared machine; the stub is the machine's, pipe's and "
          "driver's ceiling in the same run: compare columns, not runs.")
    if a.placed:
        report_placed(res, a)
    sys.stdout.flush()


def report_placed(res, a):
    """The pinned lock-step and MRTR figures of `placed`, each with its ratios."""
    R, S, M = res["redmark"], res["stub"], res["rmcp"]
    print()
    print("stdio pinned: this driver on CPU 0, the server on the CPU named (same rounds, "
          "medians); the unpinned rows above land in between")
    print("| server's CPU | figure | redmark | stub | rmcp 3.11 | redmark÷stub | redmark÷rmcp |")
    print("|---|---|---|---|---|---|---|")
    for where, cpu in PLACEMENTS:
        for label, k, kind in (("lock-step tools/list, req/s", "lock_rps", "rate"),
                               ("lock-step p50", "lock_p50", "us"),
                               ("MRTR round trips/s", "mrtr_rps", "rate"),
                               ("MRTR p50", "mrtr_p50", "us")):
            k = f"{k}@{cpu}"
            rm = ratio(R[k], M[k])
            print(f"| {where} | {label} | {fmt(R[k], kind)} | {fmt(S[k], kind)} | "
                  f"{fmt(M[k], kind)} | {fmt_ratio(paired(R['rounds'], S['rounds'], k))} | "
                  f"{'—' if rm is None else f'{rm:.2f}'} |")


def report_net(nets, a):
    """nets: per server, one dict of figures per round; figures are medians over the rounds,
    ratios the median of the rounds' own ratios. The stub has the HTTP rows only."""
    def medians(rounds):
        keys = [k for k in rounds[0] if isinstance(rounds[0][k], (int, float))]
        return {k: median([r[k] for r in rounds]) for k in keys}
    net = medians(nets["redmark"])
    base = medians(nets["baseline"]) if "baseline" in nets else None
    stub = medians(nets["stub"])
    rows = [
        ("TCP tools/list, 1 client", "tcp1", 0.85),
        ("TCP tools/list, 8 clients", "tcp8", 0.85),
        ("HTTP keep-alive tools/list, 1 client lock-step (this driver)", "http", 0.85),
    ]
    if a.booker:
        rows += [
            ("HTTP keep-alive tools/list, 1 client lock-step (booker)", "httpb1", 0.85),
            ("HTTP keep-alive tools/list, 8 clients lock-step (booker)", "httpb8", 0.85),
        ]
    rows.append((f"TCP book_room, 8 clients pipelining {a.books} distinct slots each", "books",
                 0.85))
    print()
    print("redmark on loopback (lock-step tools/list; bookings pipelined, durable commit each; "
          "medians of %d interleaved round(s)); the stub answers HTTP with redmark's bytes, "
          "a thread per connection, no HTTP library: the machine's ceiling" % a.rounds)
    head = ["workload", "redmark", "stub", "÷ stub"]
    if base is not None:
        head += ["baseline", "÷ baseline", "stub ÷ baseline", "target", "verdict"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for label, k, want in rows:
        fig = fmt(net.get(k), "rate") + (" bookings/s" if k == "books" else " req/s")
        if k + "_p50" in net:
            fig += f", p50 {fmt(net[k + '_p50'], 'us')}"
        if k == "books":
            fig += f" ({net['booked']:.0f} booked)"
        cells = [label, fig]
        if k in stub:
            cells += [fmt(stub[k], "rate"), fmt_ratio(paired(nets["redmark"], nets["stub"], k))]
        else:
            cells += ["—", "—"]
        if base is not None:
            r = paired(nets["redmark"], nets["baseline"], k)
            ceiling = paired(nets["stub"], nets["baseline"], k) if k in stub else None
            verdict = "" if want is None or r is None else ("PASS" if r[0] >= want else "MISS")
            target = f"≥ {want:g} × baseline" if want else ""
            cells += [fmt(base.get(k), "rate"), fmt_ratio(r), fmt_ratio(ceiling), target,
                      verdict]
        print("| " + " | ".join(cells) + " |")
    if "rmcp" in nets:
        report_round_trips(nets, base is not None)
    sys.stdout.flush()


# The round trip's target: redmark's durable round trips per second over rmcp's in memory.
ROUND_TRIP_TARGET = 1.5


def report_round_trips(nets, with_base):
    """The booking round trip table: redmark beside rmcp 3.11 (and the baseline)."""
    med = lambda name, k: median([r[k] for r in nets[name]])
    print()
    print("booking round trip over Streamable HTTP (booker --round-trip, lock-step; ask answered "
          "input_required, then the retry accepting a room: redmark commits it durably before "
          "answering, rmcp 3.11 keeps it in memory; per second and p50/p99 of whole round trips, "
          "medians of the rounds)")
    head = ["connections", "redmark", "rmcp 3.11", "÷ rmcp", "target", "verdict"]
    if with_base:
        head += ["baseline", "÷ baseline"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for c in ROUND_TRIP_CLIENTS:
        k = f"rt{c}"
        cell = lambda name: (f"{fmt(med(name, k), 'rate')}/s, p50 {fmt(med(name, k + '_p50'), 'us')}, "
                             f"p99 {fmt(med(name, k + '_p99'), 'us')}")
        r = paired(nets["redmark"], nets["rmcp"], k)
        cells = [str(c), cell("redmark"), cell("rmcp"), fmt_ratio(r),
                 f"≥ {ROUND_TRIP_TARGET:g} × rmcp",
                 "" if r is None else ("PASS" if r[0] >= ROUND_TRIP_TARGET else "MISS")]
        if with_base:
            cells += [cell("baseline"), fmt_ratio(paired(nets["redmark"], nets["baseline"], k))]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
