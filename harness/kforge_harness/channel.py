"""The control channel to the kforge process: JSON lines on fds 3 (in) and 4 (out).

fds 3/4 rather than stdin/stdout so that whatever the candidate prints never
reaches the protocol. Only metadata travels here; tensors travel through files.
"""
import json
import os

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

    def write_line(self, text):
        data = (text + "\n").encode()
        while data:
            n = os.write(self._fd_out, data)
            data = data[n:]

    def send(self, obj):
        self.write_line(json.dumps(obj, allow_nan=True))
