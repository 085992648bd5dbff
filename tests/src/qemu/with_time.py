#!/usr/bin/env python3
"""Runs a UART panel's command (QEMU with its UART on stdio) after telling it the time as its
host would, then relays stdin and stdout: for a client that starts the panel itself
(`redmark call --stdio`). Usage: with_time.py TIME_KEY_HEX UNIX_TIME -- COMMAND...

QEMU dies with this process (PR_SET_PDEATHSIG), so a client that kills it leaves no QEMU.
"""
import ctypes
import hashlib
import hmac
import json
import signal
import subprocess
import sys
import threading


def die_with_parent():
    """In the child: SIGKILL when this wrapper dies (Linux prctl PR_SET_PDEATHSIG)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)


def main():
    key, t, sep, *cmd = sys.argv[1:]
    assert sep == "--" and cmd, __doc__
    t = int(t)
    qemu = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, preexec_fn=die_with_parent)
    qemu.stdin.write(b'{"jsonrpc":"2.0","id":"c","method":"redmark/timeChallenge"}\n')
    qemu.stdin.flush()
    nonce = json.loads(qemu.stdout.readline())["result"]["nonce"]
    msg = b"redmark-panel time v1" + bytes.fromhex(nonce) + t.to_bytes(8, "big")
    tag = hmac.new(bytes.fromhex(key), msg, hashlib.sha256).hexdigest()
    answer = {"jsonrpc": "2.0", "id": "t", "method": "redmark/time", "params": {"t": t, "tag": tag}}
    qemu.stdin.write(json.dumps(answer).encode() + b"\n")
    qemu.stdin.flush()
    told = json.loads(qemu.stdout.readline())
    if "result" not in told:
        sys.exit(f"with_time.py: the panel did not take the time: {told}")

    def relay_in():
        for chunk in iter(lambda: sys.stdin.buffer.read1(4096), b""):
            qemu.stdin.write(chunk)
            qemu.stdin.flush()
        qemu.stdin.close()

    threading.Thread(target=relay_in, daemon=True).start()
    for chunk in iter(lambda: qemu.stdout.read1(4096), b""):
        sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()
    sys.exit(qemu.wait())


if __name__ == "__main__":
    main()
