#!/usr/bin/env python3
"""Writes shell/link/hot-functions.txt: the functions `redmark serve` runs, which the release
build asks the linker to place first in .text (shell/build.rs).

Why: the kernel maps a binary's code 64 KiB around each page a process faults in, so a server
whose code is scattered over the binary ends up with nearly all of it resident. Grouped, the
resident code is about the code it runs.

    scripts/order-functions.py      (about 8 minutes: up to six release links)

How: two workloads, each listed together, stdio first. A stdio session (start, tools/list, an
ambiguous book_room answered input_required, the declined retry, an unknown method, a line
that is not JSON, end of input), on a new data folder and again on the same folder; then one
server on TCP and HTTP, lock-step tools/list on each, stopped by SIGTERM. Each runs once under
valgrind's callgrind, which names every function it runs. Valgrind hides some CPU features
(SHA-NI, wider vector paths), so they then run natively under `perf record -e page-faults`,
in rounds: a function whose code page is faulted in and is not yet on the list joins it, and
the binary is linked again, until a round adds none. shell/link/hot-functions.rustc records
the rustc the names are for.

Needs valgrind and perf. Run it again after a toolchain or dependency change: the list holds
mangled names, and names the binary no longer has are skipped (the layout degrades, nothing
breaks); scripts/check-release-binary.sh, in the test command, says when.
"""
import bisect, os, shutil, signal, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import compare as c  # noqa: E402  (the benchmark's stdio client and messages)

LIST = os.path.join(ROOT, "shell", "link", "hot-functions.txt")
STAMP = os.path.join(ROOT, "shell", "link", "hot-functions.rustc")  # the rustc it was made with
BIN = os.path.join(ROOT, "target", "release", "redmark")
ROUNDS = 5


def build():
    subprocess.run(["cargo", "build", "--release", "--locked", "-p", "redmark"], cwd=ROOT,
                   check=True)


def stdio_session(argv, data):
    """The stdio workload, twice on one data folder: a first start (which creates the store)
    and a start on the store a clean stop left."""
    for _ in range(2):
        s = c.Stdio(argv + [BIN, "serve", "--data", data],
                    dict(os.environ, REDMARK_LOG="warn", REDMARK_KEY=c.KEY))
        try:
            assert b'"result"' in s.call(c.tools_list(1), timeout=60)
            time.sleep(0.2)
            first = s.call(c.ask(2), timeout=60)
            state = c.STATE_RE.search(first).group(1)
            assert b'"result"' in s.call(c.retry(3, state), timeout=60)
            s.call(c.line({"jsonrpc": "2.0", "id": 4, "method": "no/such", "params": {}}), 60)
            s.call(b"not json\n", timeout=60)
        finally:
            s.stop()


def net_session(argv, data):
    """The network workload: one server on TCP and HTTP, lock-step tools/list on each, then a
    graceful stop (SIGTERM to the server, not to a tool wrapping it)."""
    p, addrs = c.start_net_argv(argv + [BIN, "serve", "--data", data, "--tcp", "127.0.0.1:0",
                                        "--http", "127.0.0.1:0"], want=2)
    try:
        c.http_lockstep(addrs["http"], 20)
        c.tcp_lockstep(addrs["tcp"], 20, 1)
    finally:
        server = p.pid
        # Under `perf record` the server is perf's child.
        kids = f"/proc/{p.pid}/task/{p.pid}/children"
        if argv and argv[0] == "perf" and os.path.exists(kids):
            server = int(open(kids).read().split()[0])
        os.kill(server, signal.SIGTERM)
        p.wait(timeout=120)


# Each workload's functions are listed together, stdio first: an idle stdio server's code
# then stays one span, and a network server's adds the next.
SESSIONS = [stdio_session, net_session]


def text_symbols():
    """(start, size, name) of the binary's functions, by address. A symbol nm gives no size
    (the C runtime's `frame_dummy` and its neighbours) extends to the next one."""
    out = subprocess.run(["nm", "-S", "--defined-only", BIN], capture_output=True, text=True,
                         check=True).stdout
    syms = []
    for l in out.splitlines():
        p = l.split()
        if len(p) == 4 and p[2] in "tTwW":
            syms.append((int(p[0], 16), int(p[1], 16), p[3]))
        elif len(p) == 3 and p[1] in "tTwW":
            syms.append((int(p[0], 16), None, p[2]))
    syms.sort()
    return [(a, size if size is not None else (syms[i + 1][0] - a if i + 1 < len(syms) else 0),
             n) for i, (a, size, n) in enumerate(syms)]


def ran_under_callgrind(work, session):
    out = os.path.join(work, "callgrind.out")
    data = tempfile.mkdtemp(dir=work)
    session(["valgrind", "--tool=callgrind", "--demangle=no", "--compress-strings=no",
             "--callgrind-out-file=" + out], data)
    names = set()
    for l in open(out, errors="replace"):
        if l.startswith(("fn=", "cfn=")):
            names.add(l.split("=", 1)[1].strip())
    return names


def faulted_natively(work, syms, session):
    """Functions whose code pages `session` faulted in, natively."""
    out = os.path.join(work, "faults.data")
    data = tempfile.mkdtemp(dir=work)
    session(["perf", "record", "-q", "-e", "page-faults", "-c", "1", "-d", "-o", out], data)
    text = subprocess.run(["perf", "script", "-i", out, "-F", "addr", "--show-mmap-events"],
                          capture_output=True, text=True, check=True).stdout
    base, addrs = None, []
    for l in text.splitlines():
        if "PERF_RECORD_MMAP" in l:
            if BIN in l and base is None:
                seg = l.split("[", 1)[1]
                base = int(seg.split("(")[0], 16) - int(seg.split("@")[1].split()[0], 16)
        elif l.strip():
            addrs.append(int(l.split()[0], 16))
    starts = [s for s, _, _ in syms]
    hit = set()
    for a in addrs if base is not None else []:
        i = bisect.bisect_right(starts, a - base) - 1
        if i >= 0 and syms[i][0] <= a - base < syms[i][0] + syms[i][1]:
            hit.add(syms[i][2])
    return hit


def write(groups, syms):
    """The list: each group in the binary's current address order (which keeps neighbours
    together), the groups in turn, a name only in the first group that has it."""
    order, seen = [], set()
    for names in groups:
        order += [n for _, _, n in syms if n in names and n not in seen]
        seen |= names
    tmp = LIST + ".tmp"
    with open(tmp, "w") as f:
        f.write("".join(n + "\n" for n in order))
    os.replace(tmp, LIST)
    size = sum(s for _, s, n in syms if n in seen)
    print(f"order-functions: {len(order)} functions, {size // 1024} KiB of code", flush=True)


def main():
    work = tempfile.mkdtemp(prefix="redmark-order-")
    try:
        order(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def order(work):
    build()
    syms = text_symbols()
    known = {n for _, _, n in syms}
    groups = [ran_under_callgrind(work, session) & known for session in SESSIONS]
    write(groups, syms)
    for _ in range(ROUNDS):
        build()
        syms = text_symbols()
        added = 0
        for k, session in enumerate(SESSIONS):
            # A function an earlier workload runs moves to that workload's group.
            new = faulted_natively(work, syms, session) - set().union(*groups[:k + 1])
            groups[k] |= new
            for later in groups[k + 1:]:
                later -= new
            added += len(new)
        print(f"order-functions: {added} more faulted in natively", flush=True)
        if not added:
            break
        write(groups, syms)
    else:
        build()
    rustc = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    with open(STAMP, "w") as f:
        f.write(next(l for l in rustc.splitlines() if l.startswith("release: "))[9:] + "\n")


if __name__ == "__main__":
    main()
