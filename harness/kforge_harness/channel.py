"""The control channel to the kforge process: JSON lines on fds 3 (in) and 4 (out).

fds 3/4 rather than stdin/stdout so that whatever the candidate prints never
reaches the protocol. Only metadata travels here; tensors travel through files.
"""
import json
import os
import time

CONTROL_IN = 3
CONTROL_OUT = 4


class Channel:
    def __init__(self, fd_in=CONTROL_IN, fd_out=CONTROL_OUT):
        self._in = os.fdopen(fd_in, "rb", buffering=0)
        self._fd_out = fd_out
        self._buf = b""

    def read_line(self):
        while b"\n" not in self._buf:
            chunk = os.read(self._in.fileno(), 65536)
            if not chunk:
                return None
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line.decode()

    def read_line_spinning(self, max_seconds):
        """read_line, but polling without sleeping for up to max_seconds first.
        Used between `armed` and `go`: waking from a blocking read costs tens
        of microseconds, unevenly, and would land inside the measured interval."""
        fd = self._in.fileno()
        deadline = time.perf_counter() + max_seconds
        os.set_blocking(fd, False)
        try:
            while b"\n" not in self._buf and time.perf_counter() < deadline:
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    return None
                self._buf += chunk
        finally:
            os.set_blocking(fd, True)
        return self.read_line()

    def write_line(self, text):
        data = (text + "\n").encode()
        while data:
            n = os.write(self._fd_out, data)
            data = data[n:]

    def send(self, obj):
        self.write_line(json.dumps(obj, allow_nan=True))


def serve(channel, host, failure_reply):
    """Answers kforge's commands until `quit` or end of input: `arm ...` lines
    go to host.server.handle_arm (the sample protocol, timing.py), JSON lines
    to the host's cmd_NAME method for {"cmd": NAME}. A command that raises is
    answered with failure_reply(exc), a reply dict; a method that returns None
    has answered already."""
    handlers = {name[4:]: getattr(host, name) for name in dir(host) if name.startswith("cmd_")}
    while True:
        line = channel.read_line()
        if line is None or line == "quit":
            return 0
        try:
            if line.startswith("arm "):
                host.server.handle_arm(line[4:])  # it answers on the channel itself
                reply = None
            else:
                msg = json.loads(line)
                handler = handlers.get(msg.get("cmd"))
                if handler is None:
                    raise RuntimeError(f"unknown command {msg.get('cmd')}")
                reply = handler(msg)
        except Exception as exc:  # noqa: BLE001 - reported, kforge decides
            reply = failure_reply(exc)
        if reply is not None:
            channel.send(reply)
