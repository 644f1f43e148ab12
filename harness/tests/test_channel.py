"""Tests of the command loop both harness processes run (channel.serve): how
commands reach the host's cmd_ methods, the sample protocol's `arm` lines
reach its sample server, and a failing command is answered, not fatal."""
import json
import sys
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HARNESS))

from kforge_harness.channel import serve  # noqa: E402


class ScriptedChannel:
    """Reads the given lines, then end of input; keeps what was written."""

    def __init__(self, lines):
        self.lines = list(lines)
        self.written = []

    def read_line(self):
        return self.lines.pop(0) if self.lines else None

    def write_line(self, text):
        self.written.append(text)

    def send(self, obj):
        self.written.append(json.dumps(obj))


class ArmServer:
    def __init__(self, channel):
        self.channel = channel
        self.armed = []

    def handle_arm(self, spec):
        if spec == "broken":
            raise RuntimeError("no such program")
        self.armed.append(spec)
        self.channel.write_line("done 0.5")
        return True


class Host:
    def __init__(self, channel):
        self.server = ArmServer(channel)

    def cmd_echo(self, msg):
        return {"ok": True, "echo": msg["value"]}

    def cmd_fail(self, msg):
        raise ValueError("bad value")

    def cmd_answered(self, msg):
        return None


def failure_reply(exc):
    return {"ok": False, "kind": type(exc).__name__, "error": str(exc)}


def run(lines):
    channel = ScriptedChannel(lines)
    host = Host(channel)
    assert serve(channel, host, failure_reply) == 0
    return channel.written, host


def test_commands_reach_their_methods_and_failures_are_answered():
    written, _ = run([
        json.dumps({"cmd": "echo", "value": 7}),
        json.dumps({"cmd": "fail"}),
        json.dumps({"cmd": "nope"}),
        json.dumps({"cmd": "answered"}),
        json.dumps({"cmd": "echo", "value": 8}),
    ])
    replies = [json.loads(w) for w in written]
    assert replies == [
        {"ok": True, "echo": 7},
        {"ok": False, "kind": "ValueError", "error": "bad value"},
        {"ok": False, "kind": "RuntimeError", "error": "unknown command nope"},
        {"ok": True, "echo": 8},  # `answered` returned None: nothing more was sent
    ]


def test_arm_lines_go_to_the_sample_server_and_a_failed_arm_is_answered():
    written, host = run(["arm eager 4", "arm broken", json.dumps({"cmd": "echo", "value": 1})])
    assert host.server.armed == ["eager 4"]
    assert written[0] == "done 0.5"
    assert json.loads(written[1]) == {"ok": False, "kind": "RuntimeError",
                                      "error": "no such program"}
    assert json.loads(written[2]) == {"ok": True, "echo": 1}


def test_quit_ends_the_loop_before_later_lines():
    written, _ = run(["quit", json.dumps({"cmd": "echo", "value": 1})])
    assert written == []
