"""Runs a command (the Firebase Emulator Suite and what it runs) and leaves nothing running behind it.

    python scripts/supervise.py --config FIREBASE_JSON -- COMMAND [ARGS...]

firebase-tools stops the Functions emulator by killing the shell it started the
Python worker with, not the ``functions-framework`` (gunicorn) processes under it,
which then keep running and listening.  So the command runs here:

* in a process group of its own (given the terminal when we have it, so Ctrl-C
  reaches it as usual), with ``FJ_RUN_TAG`` set to a value unique to this run,
  which every process it starts inherits; on Linux this process also becomes the
  "child subreaper", so orphaned descendants are re-parented to it;
* signals this process gets (INT, TERM, HUP) are passed on to that group;
* when the command has ended, every process this run started -- the members of its
  process group, the processes carrying its tag, the orphans re-parented here --
  is asked to stop (SIGTERM), then killed (SIGKILL) after a grace period.  Nothing
  is ever chosen by name: other checkouts run the same programs on this machine;
* then it checks: no process of the run is alive and none of the emulator ports of
  the configuration (this run's port offset) is still bound.  If one is, it says
  which and exits non-zero even when the command succeeded.

The exit code is the command's, or 3 when the check fails after a successful command.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

TAG_VARIABLE = "FJ_RUN_TAG"
PR_SET_CHILD_SUBREAPER = 36
GRACE_SECONDS = 5.0
PORT_RELEASE_SECONDS = 5.0
CHECK_FAILED = 3


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    pgid: int
    state: str
    command: str

    def __str__(self) -> str:
        return f"pid {self.pid} (group {self.pgid}): {self.command[:160]}"


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def processes() -> dict[int, Proc]:
    """Every process we can see (Linux /proc; elsewhere ``ps``)."""
    found: dict[int, Proc] = {}
    proc = Path("/proc")
    if proc.is_dir():
        for entry in proc.iterdir():
            if not entry.name.isdigit():
                continue
            stat = _read(entry / "stat")
            if not stat:
                continue
            text = stat.decode(errors="replace")
            tail = text[text.rfind(")") + 2 :].split()  # the command name may hold spaces and parentheses
            command = (_read(entry / "cmdline") or b"").replace(b"\0", b" ").decode(errors="replace").strip()
            found[int(entry.name)] = Proc(int(entry.name), int(tail[1]), int(tail[2]), tail[0], command or text)
        return found
    listing = subprocess.run(["ps", "-axo", "pid=,ppid=,pgid=,state=,command="], capture_output=True, text=True)
    for line in listing.stdout.splitlines():
        parts = line.split(None, 4)
        if len(parts) >= 4:
            found[int(parts[0])] = Proc(int(parts[0]), int(parts[1]), int(parts[2]), parts[3][:1], " ".join(parts[4:]))
    return found


def tagged(pid: int, tag: str) -> bool:
    """Whether the process's environment carries this run's tag (Linux; False where unreadable)."""
    environ = _read(Path(f"/proc/{pid}/environ"))
    return bool(environ) and f"{TAG_VARIABLE}={tag}".encode() in environ.split(b"\0")  # type: ignore[union-attr]


def belonging(tag: str, group: int) -> tuple[list[Proc], bool]:
    """The live processes this run started, and whether ``group`` is still provably the run's group.

    A process is the run's when its environment carries the tag, when it is an orphan
    re-parented to us, or when it is in the run's process group while that group is
    provably ours (a tagged member; on systems without /proc the group alone counts).
    """
    me = os.getpid()
    live = [p for p in processes().values() if p.pid != me and p.state != "Z"]
    can_read_tags = Path("/proc").is_dir()
    tagged_pids = {p.pid for p in live if tagged(p.pid, tag)}
    group_is_ours = any(p.pgid == group for p in live if p.pid in tagged_pids) or not can_read_tags
    found = [p for p in live if p.pid in tagged_pids or p.ppid == me or (group_is_ours and p.pgid == group)]
    return found, group_is_ours


def reap() -> None:
    """Collect exited children (orphans re-parented to us as subreaper)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def stop(tag: str, group: int, grace: float = GRACE_SECONDS) -> list[Proc]:
    """SIGTERM, then SIGKILL after ``grace`` seconds, everything the run left; returns what is still alive."""
    left, group_is_ours = belonging(tag, group)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if not left:
            break
        if group_is_ours:
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(group, sig)
        for proc in left:
            with suppress(ProcessLookupError, PermissionError):
                os.kill(proc.pid, sig)
        deadline = time.monotonic() + (grace if sig == signal.SIGTERM else 2.0)
        while time.monotonic() < deadline:
            reap()
            if not belonging(tag, group)[0]:
                break
            time.sleep(0.1)
        left, group_is_ours = belonging(tag, group)
    return left


def emulator_ports(config: Path) -> list[tuple[str, int]]:
    """(host, port) of every emulator in a firebase.json (ports, websocket ports)."""
    emulators = json.loads(config.read_text()).get("emulators", {})
    ports = []
    for settings in emulators.values():
        if isinstance(settings, dict):
            for key in ("port", "websocketPort"):
                if isinstance(settings.get(key), int):
                    ports.append((str(settings.get("host") or "127.0.0.1"), settings[key]))
    return ports


def listening(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.3)
        return probe.connect_ex((host, port)) == 0


def bound_ports(ports: list[tuple[str, int]], wait: float = PORT_RELEASE_SECONDS) -> list[tuple[str, int]]:
    deadline = time.monotonic() + wait
    while True:
        bound = [(host, port) for host, port in ports if listening(host, port)]
        if not bound or time.monotonic() >= deadline:
            return bound
        time.sleep(0.2)


def become_subreaper() -> None:
    if sys.platform.startswith("linux"):
        with suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def foreground(group: int) -> None:
    """Hand the terminal to ``group`` when we hold it (so Ctrl-C reaches the command directly)."""
    with suppress(OSError):
        fd = sys.stdin.fileno()
        if os.isatty(fd) and os.tcgetpgrp(fd) == os.getpgrp():
            previous = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
            try:
                os.tcsetpgrp(fd, group)
            finally:
                signal.signal(signal.SIGTTOU, previous)


def take_back_terminal() -> None:
    with suppress(OSError):
        fd = sys.stdin.fileno()
        if os.isatty(fd) and os.tcgetpgrp(fd) != os.getpgrp():
            previous = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
            try:
                os.tcsetpgrp(fd, os.getpgrp())
            finally:
                signal.signal(signal.SIGTTOU, previous)


def supervise(command: list[str], config: Path | None, tag: str | None = None) -> int:
    tag = tag or uuid.uuid4().hex
    ports = emulator_ports(config) if config else []
    taken_before = [(host, port) for host, port in ports if listening(host, port)]
    for host, port in taken_before:  # not this run's to free: the emulators will refuse to start
        print(f"supervise: {host}:{port} is already in use by another program", file=sys.stderr)
    become_subreaper()
    env = {**os.environ, TAG_VARIABLE: tag}
    child = subprocess.Popen(command, env=env, process_group=0)
    group = child.pid

    def forward(signum: int, _frame: object) -> None:
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signum)

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, forward)
    foreground(group)
    try:
        code = child.wait()
    finally:
        take_back_terminal()
    found, _ = belonging(tag, group)
    if found:
        print(f"supervise: stopping {len(found)} process(es) the run left behind:", file=sys.stderr)
        for proc in found:
            print(f"  {proc}", file=sys.stderr)
    alive = stop(tag, group)
    bound = bound_ports([address for address in ports if address not in taken_before])
    if alive or bound:
        print("supervise: FAILED -- the run left things running:", file=sys.stderr)
        for proc in alive:
            print(f"  still alive: {proc}", file=sys.stderr)
        for host, port in bound:
            print(f"  emulator port still bound: {host}:{port}", file=sys.stderr)
        return code or CHECK_FAILED
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="supervise.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, help="the firebase.json whose emulator ports must be free afterwards")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")
    return supervise(command, args.config)


if __name__ == "__main__":
    sys.exit(main())
