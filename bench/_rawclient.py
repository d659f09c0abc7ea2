"""The one raw NDJSON client that drives every stdio server in the benchmarks.

Deliberately lean and synchronous, so that it costs less than any server it measures:

* requests are pre-encoded byte strings built before the measured phase starts;
* reads use ``select.poll`` + ``os.read`` on the server's stdout pipe, every wait bounded
  by a timeout (a hung or dead server raises :class:`ServerError`, never hangs the run);
* writes go to a non-blocking stdin pipe, also bounded by a timeout;
* each answer line is decoded with one msgspec struct that reads only ``id``, ``result``
  and ``error`` (both kept as raw bytes), and is matched to its request by id;
* with ``window`` requests in flight, every batch of answers read is refilled with the
  same number of new requests in a single ``write``.

The client's own CPU time (``time.process_time``) is measured around each phase too, so
the report can show it is not the bottleneck.

Server CPU time is read from ``/proc/<pid>/stat`` (``utime`` + ``stime``, fields 14 and 15,
in clock ticks of ``1/os.sysconf("SC_CLK_TCK")`` s; all threads of the process, including
exited ones). As a finer cross-check, the per-thread ``/proc/<pid>/task/*/schedstat``
run times (nanoseconds, live threads only) are summed as well.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Any, Final

import msgspec

__all__ = [
    "CLK_TCK",
    "INIT_PARAMS",
    "PROTOCOL_VERSION",
    "PhaseResult",
    "RawServer",
    "ServerError",
    "build_calls",
]

PROTOCOL_VERSION: Final = "2025-11-25"
INIT_PARAMS: Final[dict[str, Any]] = {
    "protocolVersion": PROTOCOL_VERSION,
    "capabilities": {},
    "clientInfo": {"name": "mcpkit-bench", "version": "0"},
}
CLK_TCK: Final = os.sysconf("SC_CLK_TCK")
_READ_SIZE: Final = 256 * 1024
_EMPTY_RAW: Final = msgspec.Raw()


class ServerError(RuntimeError):
    """The server misbehaved: timed out, exited, or answered wrongly."""


class _Reply(msgspec.Struct):
    """Just enough of an answer to match it and check it succeeded."""

    id: int | str | None = None
    result: msgspec.Raw = _EMPTY_RAW
    error: msgspec.Raw = _EMPTY_RAW


_REPLY_DECODER: Final = msgspec.json.Decoder(_Reply)


def build_calls(first_id: int, count: int, text: str) -> list[bytes]:
    """Pre-encode ``count`` ``tools/call echo`` requests with consecutive integer ids."""
    arguments = json.dumps({"text": text}, separators=(",", ":"))
    head = b'{"jsonrpc":"2.0","id":'
    tail = (
        ',"method":"tools/call","params":{"name":"echo","arguments":' + arguments + "}}\n"
    ).encode()
    return [head + str(first_id + i).encode() + tail for i in range(count)]


@dataclass(frozen=True, slots=True)
class PhaseResult:
    """One measured phase of calls.

    Attributes:
        calls: number of calls answered.
        window: requests kept in flight.
        wall_s: wall time from the first write to the last answer.
        server_cpu_s: server utime+stime over the phase (``/proc/<pid>/stat``).
        server_cpu_sched_s: the same from ``schedstat`` (ns resolution, live threads),
            or ``None`` where unavailable.
        client_cpu_s: this process's CPU time over the phase.
        latencies_s: per-call latency (start of the write of its batch to the return of the
            read that brought its answer), by id.
    """

    calls: int
    window: int
    wall_s: float
    server_cpu_s: float
    server_cpu_sched_s: float | None
    client_cpu_s: float
    latencies_s: list[float]


class RawServer:
    """A server subprocess spoken to in raw NDJSON over its stdin/stdout pipes.

    Args:
        argv: the command line.
        timeout: bound in seconds on every single read or write wait.
        cwd: working directory of the server.
        cpu: pin the server (and the threads it starts) to this CPU, if given.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        timeout: float = 10.0,
        cwd: str | None = None,
        cpu: int | None = None,
    ):
        self.argv = list(argv)
        self.timeout = timeout
        self.cwd = cwd
        self.cpu = cpu
        self.proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        #: the end of the server's stderr, kept when it is closed
        self.stderr_text = ""
        self._buf = b""
        self._poll_in = select.poll()
        self._poll_out = select.poll()
        self._rfd = -1
        self._wfd = -1

    # -- process ----------------------------------------------------------------------

    def start(self) -> None:
        """Spawn the server (stderr goes to a temporary file, shown if it fails)."""
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=self.cwd,
            bufsize=0,
        )
        if self.cpu is not None:
            # Right after the fork: the interpreter has not started any thread yet, and
            # threads inherit the main thread's affinity.
            os.sched_setaffinity(self.proc.pid, {self.cpu})
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self._wfd = self.proc.stdin.fileno()
        self._rfd = self.proc.stdout.fileno()
        os.set_blocking(self._wfd, False)
        self._poll_in.register(self._rfd, select.POLLIN | select.POLLHUP | select.POLLERR)
        self._poll_out.register(self._wfd, select.POLLOUT | select.POLLERR)

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stderr_tail(self, limit: int = 2000) -> str:
        """The end of what the server wrote to stderr (for error messages)."""
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0)
            data = self._stderr.read()
        except (OSError, ValueError):
            return ""
        return data[-limit:].decode("utf-8", "replace")

    def close(self, timeout: float = 5.0) -> int | None:
        """Close the server's stdin (the stdio shutdown signal), wait, kill if it lingers.

        Returns the exit status (negative: killed by that signal).
        """
        proc = self.proc
        if proc is None:
            return None
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait(timeout=timeout)
        if proc.stdout is not None:
            with contextlib.suppress(OSError):
                proc.stdout.close()
        if self._stderr is not None:
            self.stderr_text = self.stderr_tail()
            self._stderr.close()
            self._stderr = None
        return rc

    def __enter__(self) -> RawServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- CPU accounting ---------------------------------------------------------------

    def cpu_seconds(self) -> float:
        """utime + stime of the whole server process so far (all threads, tick resolution)."""
        with open(f"/proc/{self.pid}/stat", "rb") as f:
            stat = f.read()
        # Field 2 (comm) may contain spaces: split after its closing parenthesis.
        fields = stat[stat.rindex(b")") + 2 :].split()
        # fields[0] is field 3 (state): utime and stime are fields 14 and 15.
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def cpu_seconds_sched(self) -> float | None:
        """Sum of the live threads' run time from ``schedstat`` (ns), or ``None``."""
        total = 0
        try:
            for task in os.listdir(f"/proc/{self.pid}/task"):
                try:
                    with open(f"/proc/{self.pid}/task/{task}/schedstat", "rb") as f:
                        total += int(f.read().split()[0])
                except (FileNotFoundError, ProcessLookupError):
                    continue  # the thread exited meanwhile
        except OSError:
            return None
        return total / 1e9

    # -- raw I/O ----------------------------------------------------------------------

    def _fail(self, what: str) -> ServerError:
        assert self.proc is not None
        status = self.proc.poll()
        state = "running" if status is None else f"exited with status {status}"
        return ServerError(f"{what} ({' '.join(self.argv)}: {state})\n{self.stderr_tail()}")

    def write(self, data: bytes) -> None:
        """Write all of ``data``; each wait for pipe space is bounded by the timeout."""
        view = memoryview(data)
        while view:
            try:
                written = os.write(self._wfd, view)
            except BlockingIOError:
                if not self._poll_out.poll(self.timeout * 1000):
                    raise self._fail(f"server did not read stdin for {self.timeout} s") from None
                continue
            except BrokenPipeError:
                raise self._fail("server closed its stdin") from None
            view = view[written:]

    def read_lines(self) -> list[bytes]:
        """Return every complete line available, waiting (bounded) for at least one."""
        while True:
            if b"\n" in self._buf:
                *lines, self._buf = self._buf.split(b"\n")
                return lines
            if not self._poll_in.poll(self.timeout * 1000):
                raise self._fail(f"no answer within {self.timeout} s")
            chunk = os.read(self._rfd, _READ_SIZE)
            if not chunk:
                raise self._fail("server closed its stdout")
            self._buf += chunk

    def send_json(self, message: dict[str, Any]) -> None:
        self.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    def receive_json(self, rid: int | str) -> dict[str, Any]:
        """Read until the answer to ``rid`` arrives (notifications in between are skipped),
        within the timeout overall."""
        deadline = time.monotonic() + self.timeout
        while True:
            if time.monotonic() > deadline:
                raise self._fail(f"no answer to {rid!r} within {self.timeout} s")
            for line in self.read_lines():
                if not line.strip():
                    continue
                message: dict[str, Any] = json.loads(line)
                if message.get("id") == rid and "method" not in message:
                    return message

    def initialize(self) -> dict[str, Any]:
        """The handshake: ``initialize``, then ``notifications/initialized``."""
        self.send_json({"id": "init", "method": "initialize", "params": INIT_PARAMS})
        reply = self.receive_json("init")
        if "result" not in reply:
            raise self._fail(f"initialize failed: {reply}")
        self.send_json({"method": "notifications/initialized"})
        return reply

    # -- the measured loop ------------------------------------------------------------

    def call_many(
        self, requests: Sequence[bytes], first_id: int, window: int, expect: bytes | None
    ) -> PhaseResult:
        """Send ``requests`` (ids ``first_id`` ...), at most ``window`` in flight, and
        collect every answer.

        Args:
            expect: bytes every result must contain (the echoed text, JSON-encoded), or
                ``None`` to only check that each answer is a success for a pending id.

        Raises:
            ServerError: a timeout (any single wait longer than the timeout, or the whole
                phase longer than the timeout plus 10 ms per call), an exit, an error
                answer, or an unexpected id.
        """
        n = len(requests)
        deadline = time.perf_counter() + self.timeout + 0.01 * n
        sent_at = [0.0] * n
        latency = [-1.0] * n
        decode = _REPLY_DECODER.decode
        clock = time.perf_counter
        cpu0 = self.cpu_seconds()
        sched0 = self.cpu_seconds_sched()
        client0 = time.process_time()
        start = now = clock()
        sent = min(window, n)
        self.write(b"".join(requests[:sent]))
        for i in range(sent):
            sent_at[i] = now
        done = 0
        while done < n:
            lines = self.read_lines()
            now = clock()
            if now > deadline:
                raise self._fail(f"{n} calls took longer than {deadline - start:.1f} s")
            for line in lines:
                try:
                    reply = decode(line)
                except msgspec.DecodeError:
                    raise self._fail(f"not a JSON-RPC message: {line[:300]!r}") from None
                rid = reply.id
                if rid is None:
                    continue  # a notification
                i = rid - first_id if type(rid) is int else -1
                if not 0 <= i < sent or latency[i] >= 0.0:
                    raise self._fail(f"answer for unexpected id {rid!r}: {line[:300]!r}")
                if len(reply.error) or not len(reply.result):
                    raise self._fail(f"call {rid} failed: {line[:300]!r}")
                if expect is not None and expect not in bytes(reply.result):
                    raise self._fail(f"call {rid}: unexpected result {line[:300]!r}")
                latency[i] = now - sent_at[i]
                done += 1
            more = min(n - sent, window - (sent - done))
            if more > 0:
                now = clock()
                self.write(b"".join(requests[sent : sent + more]))
                for i in range(sent, sent + more):
                    sent_at[i] = now
                sent += more
        wall = clock() - start
        client_cpu = time.process_time() - client0
        cpu1 = self.cpu_seconds()
        sched1 = self.cpu_seconds_sched()
        sched = None if sched0 is None or sched1 is None else sched1 - sched0
        return PhaseResult(n, window, wall, cpu1 - cpu0, sched, client_cpu, latency)
