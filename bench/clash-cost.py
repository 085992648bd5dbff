#!/usr/bin/env python3
"""What a clash check costs as a floor's history grows: durable bookings per second over the
real server path (`redmark serve --tcp`, 8 clients each pipelining its own distinct spans, as
bench/compare.py's durable figure) on (a) an empty redb store and (b) a store holding
PREFILL active bookings of 16 rooms over several years (and CANCELLED cancelled ones). Run it
through bench/clash-cost.sh, which builds the release binary.

    python3 bench/clash-cost.py --redmark BIN [--rounds N] [--per N] [--window N]
                                [--clash-every N] [--pg]
    python3 bench/clash-cost.py --pool LOG...   (the pairs of runs saved to LOG, taken together)

The filled store is made once, through the server's TCP listener: 16 rooms (a floor file
written here), PER_DAY bookings a room a day from 2030-01-01 (45 to 90 minutes, starts shifted
by 0, 15 or 30 minutes from room to room and day to day), then CANCELLED more booked and
cancelled (cancel_booking, confirmed); the server is stopped cleanly and its data folder kept
as a template. Every round runs on a fresh copy (b) or a fresh empty folder (a), with the same
requests: spans in the gaps between the stored ones, back to back with them (09:15-10:00,
11:30-12:30, 15:00-16:00) on days drawn across all the years, and every CLASH_EVERY-th
one overlapping a stored booking (refused on (b) as taken, with the free rooms: one more index
read per room; booked on (a)). Rounds alternate a, b, a, b ... so a drift in the machine's load
hits both. Per round: calls answered per second (booked + taken), the server's CPU time per
call (utime + stime from /proc, which a busy driver does not skew) and the bytes it wrote to
files per call (/proc wchar: the store's pages; answers go by send(2), not counted there).
The ratio b/a is taken per pair of rounds; printed as the median with the lowest and highest.
`--window N` puts the new spans on the last N days of the stored ones; `--clash-every N`
changes how many clash (0: none); `--clash-with own` makes each clashing call overlap the same
client's call before it instead, so (a) refuses as many calls as (b) and both answer the same
mix (the clash check's cost alone, without the taken answer's extra reads that only (b) pays
otherwise); `--pg` measures the PostgreSQL store instead (a throwaway
cluster, a database per round: empty, or a copy of the filled one; the CPU and write figures
are then redmark's alone, not the database's).
"""
import argparse, datetime, glob, multiprocessing, os, re, shutil, socket, subprocess, sys
import statistics, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import META, META_ELICIT, line, median, start_net, stop  # noqa: E402

ROOMS = [f"r{i:02}" for i in range(16)]
PREFILL = 100_000
CANCELLED = 5_000
PER_DAY = 4
FIRST_DAY = datetime.date(2030, 1, 1)
DAYS = -(-PREFILL // (len(ROOMS) * PER_DAY))  # days the prefill spans
CLASH_EVERY = 20
CLIENTS = 8
STEP = 7919  # prime, coprime to every count below: spreads requests over rooms and days
TARGET = 0.8  # the "within 20 % of an empty store"


def floor_file(path):
    with open(path, "w") as f:
        for i, r in enumerate(ROOMS):
            f.write(f'[[room]]\nid = "{r}"\nname = "Room {i}"\nseats = {4 + i}\n\n')


def day(d):
    return (FIRST_DAY + datetime.timedelta(days=d)).isoformat()


def hhmm(m):
    return f"{m // 60:02}:{m % 60:02}"


def shift(room, d):
    return 15 * ((room + d) % 3)


# The stored bookings of a room and day: (start minute, minutes), ends at most 09:15, 11:30,
# 15:00 and 17:15; the cancelled ones 18:00-19:00.
def stored(room, d, k):
    s = shift(room, d)
    return [(8 * 60 + s, 45), (10 * 60 + s, 60), (13 * 60 + s, 90), (16 * 60 + s, 45)][k]


def gap(k):
    return [(9 * 60 + 15, 45), (11 * 60 + 30, 60), (15 * 60, 60)][k]


def clash(room, d):
    return (10 * 60 + 15 + shift(room, d), 30)  # inside the stored 10:00+s for 60 minutes


def book(i, room, d, span, title):
    start, minutes = span
    return line({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                 "params": {"name": "book_room",
                            "arguments": {"day": day(d), "start": hhmm(start), "minutes": minutes,
                                          "room_id": ROOMS[room], "title": title},
                            "_meta": META}})


def prefill_requests():
    out, n = [], 0
    for d in range(DAYS):
        for room in range(len(ROOMS)):
            for k in range(PER_DAY):
                if n < PREFILL:
                    out.append(book(n, room, d, stored(room, d, k), f"Stored {n}"))
                    n += 1
    return out


def to_cancel_requests():
    out = []
    for c in range(CANCELLED):
        t = (c * STEP) % (DAYS * len(ROOMS))
        out.append(book(c, t % len(ROOMS), t // len(ROOMS), (18 * 60, 60), "Cancelled"))
    return out


def full_days():
    """Days on which every room holds PER_DAY stored bookings (the last day may hold fewer)."""
    return PREFILL // (len(ROOMS) * PER_DAY)


def measured_requests(m, window, own=False):
    """`m` distinct spans: gaps of the stored layout on the last `window` days of it (all of
    it when 0), every CLASH_EVERY-th one a clash: with a stored booking, or (`own`) with the
    same client's call CLIENTS before it, so (a) and (b) refuse the same calls."""
    full = full_days()
    window = window or full
    first, out, g, c = full - window, [], 0, 0
    spans = []
    for j in range(m):
        if own and CLASH_EVERY and j % CLASH_EVERY == CLASH_EVERY - 1 and j >= CLIENTS:
            room, d, (start, _) = spans[j - CLIENTS]
            out.append(book(j, room, d, (start + 15, 30), "Clash"))
            spans.append(None)
            c += 1
        elif not own and CLASH_EVERY and j % CLASH_EVERY == CLASH_EVERY - 1:
            t = (c * STEP) % (window * len(ROOMS))
            room, d = t % len(ROOMS), first + t // len(ROOMS)
            out.append(book(j, room, d, clash(room, d), "Clash"))
            spans.append(None)
            c += 1
        else:
            t = (g * STEP) % (window * len(ROOMS) * 3)
            room, d, k = (t // 3) % len(ROOMS), first + t // (3 * len(ROOMS)), t % 3
            out.append(book(j, room, d, gap(k), "New"))
            spans.append((room, d, gap(k)))
            g += 1
    return out


def pipeline(addr, blob, count, timeout=300.0):
    """Writes `blob` (`count` requests) on one TCP connection and reads `count` answers."""
    s = socket.create_connection(addr, timeout=timeout)
    w = threading.Thread(target=s.sendall, args=(blob,), daemon=True)
    w.start()
    f = s.makefile("rb")
    answers = [f.readline() for _ in range(count)]
    w.join(timeout)
    s.close()
    return answers


def worker(addr, blob, count, go, out):
    go.wait()
    answers = pipeline(addr, blob, count)
    booked = sum(1 for a in answers if b'"booked":true' in a)
    taken = sum(1 for a in answers if b'"reason":"taken"' in a)
    other = [a[:300] for a in answers if b'"booked":true' not in a and b'"reason":"taken"' not in a]
    out.put((booked, taken, other[:1]))


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def written(pid):
    """Bytes the process has passed to write(2)-family calls: its writes to files (the store's
    pages; socket sends are not counted)."""
    with open(f"/proc/{pid}/io") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("wchar:"))


def flood(p, addr, requests):
    """CLIENTS forked clients, client k pipelining requests k, k+CLIENTS, ...: (calls/s,
    server CPU µs per call, server bytes written per call, booked, taken, an unexpected
    answer)."""
    ctx = multiprocessing.get_context("fork")
    go, out = ctx.Event(), ctx.Queue()
    parts = [requests[k::CLIENTS] for k in range(CLIENTS)]
    procs = [ctx.Process(target=worker, args=(addr, b"".join(part), len(part), go, out))
             for part in parts]
    for x in procs:
        x.start()
    time.sleep(0.2)  # every client forked and its blob built
    ticks, wrote = cpu_ticks(p.pid), written(p.pid)
    t = time.perf_counter()
    go.set()
    res = [out.get(timeout=600) for _ in procs]
    dt = time.perf_counter() - t
    ticks, wrote = cpu_ticks(p.pid) - ticks, written(p.pid) - wrote
    for x in procs:
        x.join(10)
    booked, taken = sum(r[0] for r in res), sum(r[1] for r in res)
    other = [o for r in res for o in r[2]]
    calls = booked + taken
    cpu_us = ticks / os.sysconf("SC_CLK_TCK") * 1e6 / max(calls, 1)
    return calls / dt, cpu_us, wrote / max(calls, 1), booked, taken, other[:1]


def serve(bin_, data, floor, store=None):
    extra = ("--store", store) if store else ()
    p, addrs = start_net(bin_, data, "--rooms", floor, "--tcp", "127.0.0.1:0", *extra)
    if "tcp" not in addrs:
        stop(p)
        raise SystemExit("redmark did not start listening")
    return p, addrs["tcp"]


def cancel_all(addr, ids):
    """cancel_booking each of `ids`, confirmed: the questions pipelined, then the retries."""
    def ask(i, bid):
        return line({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                     "params": {"name": "cancel_booking", "arguments": {"booking_id": bid},
                                "_meta": META_ELICIT}})
    answers = pipeline(addr, b"".join(ask(i, b) for i, b in enumerate(ids)), len(ids))
    retries = []
    for i, (bid, a) in enumerate(zip(ids, answers)):
        m = re.search(rb'"requestState":"((?:[^"\\]|\\.)*)"', a)
        if not m:
            raise SystemExit(f"cancel {bid}: no question: {a[:300]!r}")
        head = line({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                     "params": {"name": "cancel_booking", "arguments": {"booking_id": bid},
                                "inputResponses": {"confirm": {"action": "accept",
                                                               "content": {"confirm": True}}},
                                "requestState": "@STATE@", "_meta": META_ELICIT}})
        retries.append(head.replace(b"@STATE@", m.group(1)))
    done = pipeline(addr, b"".join(retries), len(retries))
    return sum(1 for a in done if b'"status":"cancelled"' in a)


class Postgres:
    """A throwaway PostgreSQL cluster in `work` (as the `postgres` user when run as root, as
    bench/pg-bench.sh), a database per round, stopped by `close`."""

    def __init__(self, work):
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                      key=lambda b: int(b.split("/")[-2]))
        if not bins:
            raise SystemExit("PostgreSQL is not installed (apt-get install postgresql)")
        self.bin, self.dir = bins[-1], os.path.join(work, "pg")
        self.as_pg = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
        if self.as_pg:
            shutil.chown(work, "postgres", "postgres")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.run("initdb", "-D", self.dir, "-U", "redmark", "-A", "trust")
        self.run("pg_ctl", "-D", self.dir, "-l", os.path.join(work, "pg.log"), "-w", "start",
                 "-o", f"-p {self.port} -c listen_addresses=127.0.0.1 "
                       f"-c unix_socket_directories={work}")

    def run(self, tool, *args):
        subprocess.run([*self.as_pg, os.path.join(self.bin, tool), *args], check=True,
                       stdout=subprocess.DEVNULL)

    def url(self, db):
        return f"postgres://redmark@127.0.0.1:{self.port}/{db}"

    def sql(self, text):
        subprocess.run([os.path.join(self.bin, "psql"), "-q", "-v", "ON_ERROR_STOP=1",
                        self.url("postgres"), "-c", text], check=True, stdout=subprocess.DEVNULL)

    def close(self):
        self.run("pg_ctl", "-D", self.dir, "-m", "immediate", "-w", "stop")


def make_template(bin_, work, floor, pg=None):
    data = os.path.join(work, "template")
    if pg:
        pg.sql("CREATE DATABASE template_full")
    print(f"filling a store: {PREFILL} bookings of {len(ROOMS)} rooms over {DAYS} days "
          f"({day(0)} to {day(DAYS - 1)}), {CANCELLED} more booked and cancelled ...",
          file=sys.stderr, flush=True)
    reqs = prefill_requests()
    p, addr = serve(bin_, data, floor, pg and pg.url("template_full"))
    try:
        t = time.perf_counter()
        _, _, _, booked, taken, other = flood(p, addr, reqs)
        if booked != len(reqs):
            raise SystemExit(f"filling: {booked} of {len(reqs)} booked, {taken} taken: {other}")
        ids = []
        for a in pipeline(addr, b"".join(to_cancel_requests()), CANCELLED):
            m = re.search(rb'"id":"(bk_\d+)","room_id"', a)
            if not m:
                raise SystemExit(f"filling: not booked: {a[:300]!r}")
            ids.append(m.group(1).decode())
        cancelled = cancel_all(addr, ids)
        if cancelled != CANCELLED:
            raise SystemExit(f"filling: {cancelled} of {CANCELLED} cancelled")
        print(f"  filled in {time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)
    finally:
        stop(p, grace=60)
    if pg:
        return data, None
    return data, os.path.getsize(os.path.join(data, "bookings.redb"))


def main():
    global PREFILL, CANCELLED, DAYS, CLASH_EVERY
    ap = argparse.ArgumentParser()
    ap.add_argument("--redmark")
    ap.add_argument("--pool", nargs="+", metavar="LOG",
                    help="no run: the pairs of earlier runs' printed tables, taken together")
    ap.add_argument("--rounds", type=int, default=5, help="pairs of rounds (a then b)")
    ap.add_argument("--per", type=int, default=4000, help="bookings each client pipelines")
    ap.add_argument("--prefill", type=int, default=PREFILL, help="active bookings in (b)")
    ap.add_argument("--clash-every", type=int, default=CLASH_EVERY,
                    help="every N-th call overlaps a stored booking (0: none)")
    ap.add_argument("--clash-with", choices=("stored", "own"), default="stored",
                    help="a clashing call overlaps a stored booking (taken on (b) only) or the "
                         "same client's call before it (taken on both)")
    ap.add_argument("--window", type=int, default=0,
                    help="the new spans fall on the last N days of the stored ones (0: all)")
    ap.add_argument("--pg", action="store_true", help="the PostgreSQL store instead of redb")
    a = ap.parse_args()
    if a.pool:
        return pool(a.pool)
    if not a.redmark:
        ap.error("--redmark is required (or --pool)")
    PREFILL, CANCELLED, CLASH_EVERY = a.prefill, a.prefill // 20, a.clash_every
    DAYS = -(-PREFILL // (len(ROOMS) * PER_DAY))
    if a.window > full_days() or a.per * CLIENTS > (a.window or full_days()) * len(ROOMS) * 3:
        raise SystemExit("--per: more requests than gaps in the stored layout")
    work = tempfile.mkdtemp(prefix="redmark-clash-")
    pg = None
    try:
        pg = Postgres(work) if a.pg else None
        floor = os.path.join(work, "floor.toml")
        floor_file(floor)
        template, size = make_template(a.redmark, work, floor, pg)
        own = a.clash_with == "own"
        reqs = measured_requests(a.per * CLIENTS, a.window, own)
        clashes = sum(1 for r in reqs if b'"title":"Clash"' in r)
        rows = []
        for r in range(a.rounds):
            for which in ("a", "b"):
                data, store = os.path.join(work, f"{which}{r}"), None
                if pg:
                    store = pg.url(f"{which}{r}")
                    pg.sql(f"CREATE DATABASE {which}{r}"
                           + (" TEMPLATE template_full" if which == "b" else ""))
                elif which == "b":
                    shutil.copytree(template, data, ignore=shutil.ignore_patterns("*.sock"))
                p, addr = serve(a.redmark, data, floor, store)
                try:
                    rate, cpu, wrote, booked, taken, other = flood(p, addr, reqs)
                finally:
                    stop(p, grace=60)
                shutil.rmtree(data)
                if pg:
                    pg.sql(f"DROP DATABASE {which}{r}")
                want_taken = clashes if which == "b" or own else 0
                if taken != want_taken or booked + taken != len(reqs):
                    raise SystemExit(f"round {which}{r}: {booked} booked, {taken} taken "
                                     f"(expected {len(reqs) - want_taken}, {want_taken}): {other}")
                rows.append((r, which, rate, cpu, wrote, booked, taken))
                print(f"  round {r + 1} {which}: {rate:,.0f} calls/s, {cpu:.1f} µs server CPU "
                      f"and {wrote / 1024:.1f} KiB written to files a call ({booked} booked, {taken} taken)",
                      file=sys.stderr, flush=True)
    finally:
        if pg:
            pg.close()
        shutil.rmtree(work, ignore_errors=True)
    report(rows, a, len(reqs), clashes, size)


def report(rows, a, n, clashes, size):
    def col(which, i):
        return [x[i] for x in rows if x[1] == which]

    def ratios(i):
        return [y / x for x, y in zip(col("a", i), col("b", i))]

    def spread(rs):
        return f"{median(rs):.2f} (lowest {min(rs):.2f}, highest {max(rs):.2f})"
    ra, rb, ca, cb, wa, wb = (col(w, i) for i in (2, 3, 4) for w in ("a", "b"))
    rate, cpu, wrote = ratios(2), ratios(3), ratios(4)
    kind = "PostgreSQL database (one instance)" if a.pg else "redb store"
    held = "" if size is None else f" (bookings.redb {size / 2**20:.1f} MiB)"
    where = f"the last {a.window} days of them" if a.window else "days across all of them"
    what = ("the same client's call before it, taken on (a) and (b)" if a.clash_with == "own"
            else "a stored booking, taken on (b)")
    print(f"clash-check cost: redmark serve --tcp, {CLIENTS} clients pipelining {a.per} distinct "
          f"book_room calls each ({n} a round, {clashes} of them overlapping {what}; "
          f"the rest in the gaps between stored ones, on {where}), durable commit before each "
          f"answer; {a.rounds} pairs of rounds a, b interleaved")
    print(f"(a) empty {kind}; (b) {PREFILL} active bookings of {len(ROOMS)} rooms over {DAYS} "
          f"days from {day(0)} and {CANCELLED} cancelled{held}")
    print("| round | (a) calls/s | (b) calls/s | b/a | (a) server CPU a call | (b) | b/a "
          "| (a) store writes a call | (b) | b/a |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in range(a.rounds):
        writes = ("— | — | —" if a.pg else
                  f"{wa[r] / 1024:.1f} KiB | {wb[r] / 1024:.1f} KiB | {wrote[r]:.2f}")
        print(f"| {r + 1} | {ra[r]:,.0f} | {rb[r]:,.0f} | {rate[r]:.2f} | {ca[r]:.1f} µs "
              f"| {cb[r]:.1f} µs | {cpu[r]:.2f} | {writes} |")
    verdict = "PASS" if median(rate) >= TARGET else "MISS"
    print(f"calls/s (b)/(a): {spread(rate)} over {a.rounds} pairs; target ≥ {TARGET:.2f} "
          f"(within 20 % of the empty store): {verdict}")
    print(f"server CPU a call (b)/(a): {spread(cpu)}"
          + ("" if a.pg else f"; bytes the server wrote to the store a call (b)/(a): "
                              f"{spread(wrote)}"))


def pool(logs):
    """The calls/s ratios b/a of every pair in the tables `logs` hold (this script's output),
    taken together: their median, quartiles and verdict."""
    rates = []
    for log in logs:
        with open(log) as f:
            for l in f:
                m = re.match(r"\| \d+ \| ([\d,]+) \| ([\d,]+) \|", l)
                if m:
                    a, b = (float(x.replace(",", "")) for x in m.groups())
                    rates.append(b / a)
    if len(rates) < 2:
        raise SystemExit("--pool: no table of pairs in " + " ".join(logs))
    low, mid, high = statistics.quantiles(rates, n=4)
    verdict = "PASS" if median(rates) >= TARGET else "MISS"
    print(f"calls/s (b)/(a): {median(rates):.3f} over {len(rates)} pairs of {len(logs)} runs "
          f"(quartiles {low:.3f} and {high:.3f}, lowest {min(rates):.2f}, highest "
          f"{max(rates):.2f}); target ≥ {TARGET:.2f}: {verdict}")


if __name__ == "__main__":
    main()
