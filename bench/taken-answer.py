#!/usr/bin/env python3
"""What a taken `book_room` answer costs on a building of many rooms: the store reads and the
time of one answer ("taken; free then: ...; free from ..."), from `redmark serve --tcp` with
a floor file of ROOMS rooms, one of them booked and the same call then sent CALLS times.

    cargo build --release --locked -p redmark
    python3 bench/taken-answer.py --redmark target/release/redmark [--rooms 500] [--calls 20]
                                  [--store postgres://USER@HOST:PORT/DB]   (an empty database)

Reads are the server's own count (`redmark_store_seconds_count{op="read"}` on its /metrics);
the time is the client's, one call after another on one connection.
"""
import argparse, json, os, re, shutil, socket, sys, tempfile, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import META, start_net, stop  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--redmark", required=True)
    ap.add_argument("--rooms", type=int, default=500)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--store", help="a PostgreSQL store's URL (an empty database) instead of redb")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="redmark-taken-")
    try:
        floor = os.path.join(work, "floor.toml")
        with open(floor, "w") as f:
            for i in range(a.rooms):
                f.write(f'[[room]]\nid = "r{i:03}"\nname = "Room {i}"\nseats = 8\n\n')
        store = ("--store", a.store) if a.store else ()
        p, addrs = start_net(a.redmark, os.path.join(work, "data"), "--rooms", floor,
                             "--tcp", "127.0.0.1:0", "--http", "127.0.0.1:0", *store)
        try:
            measure(a, addrs)
        finally:
            stop(p)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(a, addrs):
    s = socket.create_connection(addrs["tcp"], timeout=60)
    answers = s.makefile("rb")
    args = {"room_id": f"r{a.rooms // 2:03}", "day": "2031-03-04", "start": "10:00",
            "minutes": 60}

    def call(i):
        s.sendall((json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                               "params": {"name": "book_room", "arguments": args,
                                          "_meta": META}}) + "\n").encode())
        return json.loads(answers.readline())["result"]["structuredContent"]

    def reads():
        text = urllib.request.urlopen("http://%s:%d/metrics" % addrs["http"]).read().decode()
        return int(re.search(r'redmark_store_seconds_count\{op="read"\} (\d+)', text).group(1))

    if call(0).get("booked") is not True:
        raise SystemExit("the first call did not book")
    before, t = reads(), time.perf_counter()
    for i in range(a.calls):
        answer = call(1 + i)
        if answer.get("reason") != "taken":
            raise SystemExit(f"call {i + 1} was not taken: {answer}")
    took = (time.perf_counter() - t) / a.calls
    per = (reads() - before) / a.calls
    print(f"taken answer on a floor of {a.rooms} rooms: {per:.1f} store reads and "
          f"{took * 1000:.2f} ms an answer ({a.calls} calls); it names "
          f"{len(answer.get('free_rooms', []))} free rooms and "
          f"{len(answer.get('free_starts', []))} other starts")


if __name__ == "__main__":
    main()
