"""A command model (JSON lines) whose fit leaves a daemon: `python daemon_command.py [MEGABYTES]`.

On fit it double-forks: the first child calls `setsid` and forks the daemon, which `exec`s a fresh
interpreter (`tests.support.daemons.become_daemon`'s work, without structbench imported) that
appends its pid to `STRUCTBENCH_TEST_DAEMON_PIDS`, names itself `sb-test-daemon`, holds MEGABYTES
and sleeps ten minutes. It answers transduce with its input.
"""

import json
import os
import sys
import time

DAEMON = """
import os, sys, time
open('/proc/self/comm', 'w').write('sb-test-daemon')
with open(os.environ['STRUCTBENCH_TEST_DAEMON_PIDS'], 'a') as pids:
    pids.write(f'{os.getpid()}\\n')
held = b'\\x01' * (int(sys.argv[1]) * 2**20)
time.sleep(600)
"""


def daemonise(megabytes: int) -> None:
    child = os.fork()
    if child == 0:
        os.setsid()
        if os.fork():
            os._exit(0)
        os.execv(sys.executable, [sys.executable, "-c", DAEMON, str(megabytes)])
    os.waitpid(child, 0)


def daemons(path: str) -> int:
    """How many daemons have written their pid to `path` so far."""
    if not os.path.isfile(path):
        return 0
    with open(path, encoding="utf-8") as pids:
        return len(pids.read().split())


def main() -> None:
    megabytes = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    print(json.dumps({"type": "hello", "name": "daemon-command", "protocols": ["transduction"]}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        if request["type"] == "close":
            break
        if request["type"] == "fit":
            path = os.environ["STRUCTBENCH_TEST_DAEMON_PIDS"]
            before = daemons(path)
            daemonise(megabytes)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and daemons(path) <= before:
                time.sleep(0.05)
            print(json.dumps({"type": "ok"}), flush=True)
        else:
            print(json.dumps({"type": "predictions", "outputs": request["inputs"]}), flush=True)


if __name__ == "__main__":
    main()
