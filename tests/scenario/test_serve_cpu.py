"""`kforge serve --device cpu`: the real binary, real CPU evaluations over HTTP."""
import json
import os
import re
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

from conftest import EXAMPLES, FIXTURES, ROOT

TASK = EXAMPLES / "tasks" / "fused_bias_relu6_scale.py"
CANDIDATE = EXAMPLES / "candidates" / "fused_bias_relu6_scale_cpp.py"
TOKEN = "serve-test-token"
CONTRACT_KEYS = {"kforge_version", "task", "candidate", "device", "policy", "compiled", "compile",
                 "correct", "correctness", "timing", "speedup", "sol", "integrity", "accepted",
                 "reward", "error"}


class Server:
    def __init__(self, env, *extra):
        binary = os.environ.get("KFORGE_BIN", str(ROOT / "build" / "kforge"))
        env = dict(env, KFORGE_SERVE_TOKEN=TOKEN)
        self.proc = subprocess.Popen(
            [binary, "serve", "--port", "0", "--device", "cpu", "--token-env",
             "KFORGE_SERVE_TOKEN", "--set", "eval.timing.max_seconds=2", "--set",
             "eval.timing.compile=false", *extra],
            stderr=subprocess.PIPE, text=True, env=env)
        first = self.proc.stderr.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)", first)
        assert match, first
        self.url = f"http://127.0.0.1:{match.group(1)}"
        self.lines = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def call(self, method, path, body=None, token=TOKEN, raw=None):
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None
                                            else None)
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(req, timeout=900) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def stop(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout=600)
        self.reader.join(timeout=10)
        return code


@pytest.fixture(scope="module")
def server(kforge_env):
    s = Server(kforge_env)
    yield s
    if s.proc.poll() is None:
        s.stop()


def evaluate_body(candidate=CANDIDATE, **fields):
    body = {"task": TASK.read_text(), "candidate": candidate.read_text(), "format": "cpp",
            "policy": "strict", "task_name": "fused_bias_relu6_scale"}
    body.update(fields)
    return body


def test_health_needs_the_token(server):
    assert server.call("GET", "/v1/health", token=None)[0] == 401
    assert server.call("GET", "/v1/health", token="wrong")[0] == 401
    status, health = server.call("GET", "/v1/health")
    assert status == 200
    assert health["status"] == "ok"
    assert health["queue"] == {"depth": 0, "capacity": 64}
    assert health["workers"] == 1
    assert health["device"]["kind"] == "cpu"


def test_evaluate_answers_the_eval_json_object(server):
    busy_seen = []

    def watch():
        # Health is answered while the only worker evaluates.
        for _ in range(600):
            status, health = server.call("GET", "/v1/health")
            if status == 200 and health["busy"] == 1:
                busy_seen.append(health)
                return
            time.sleep(0.1)

    watcher = threading.Thread(target=watch)
    watcher.start()
    status, r = server.call("POST", "/v1/evaluate", evaluate_body())
    watcher.join()
    assert status == 200, r
    assert CONTRACT_KEYS <= set(r), set(r) ^ CONTRACT_KEYS
    assert r["accepted"] is True, r
    assert r["task"]["name"] == "fused_bias_relu6_scale"
    assert r["candidate"]["format"] == "cpp"
    assert r["device"]["kind"] == "cpu"
    assert r["policy"] == "strict"
    assert r["reward"]["milestone"] in (1, 2, 3)
    assert busy_seen, "health was not answered during the evaluation"


def test_policy_reaches_the_evaluator(server):
    reference = EXAMPLES / "candidates" / "fused_bias_relu6_scale_reference.py"
    status, r = server.call("POST", "/v1/evaluate", evaluate_body(reference))
    assert status == 200
    assert r["accepted"] is False
    assert any(f["check"] == "torch_compute" for f in r["integrity"]["flags"])


def test_bad_requests_get_4xx_and_the_server_stays_up(server):
    cases = [
        ("POST", "/v1/evaluate", None, b"{not json", 400),
        ("POST", "/v1/evaluate", {"task": "x"}, None, 400),
        ("POST", "/v1/evaluate", evaluate_body(format="cuda"), None, 400),
        ("POST", "/v1/evaluate", evaluate_body(policy="lenient"), None, 400),
        ("POST", "/v1/evaluate", evaluate_body(task=5), None, 400),
        ("POST", "/v1/evaluate", evaluate_body(format="native"), None, 422),
        ("POST", "/v1/evaluate",
         evaluate_body(task=(FIXTURES / "syntax_error_task.py").read_text()), None, 422),
        ("GET", "/v1/evaluate", None, None, 405),
        ("GET", "/v2/nothing", None, None, 404),
    ]
    for method, path, body, raw, expected in cases:
        status, answer = server.call(method, path, body, raw=raw)
        assert status == expected, (method, path, body if raw is None else raw, answer)
        assert isinstance(answer.get("error"), str) and "\n" not in answer["error"]
    assert server.call("GET", "/v1/health")[0] == 200


def test_sigterm_finishes_and_logs_every_request(server):
    code = server.stop(signal.SIGTERM)
    assert code == 0, server.lines
    requests = [l for l in server.lines if l.startswith("serve: 127.0.0.1")]
    assert any(" POST /v1/evaluate " in l and " 200 " in l for l in requests), requests
    assert any(" 401 " in l for l in requests)
    assert server.lines[-1] == "kforge serve: stopped"


def test_bad_flags_exit_2_with_one_line(kforge):
    for args in (["serve"], ["serve", "--port", "70000"], ["serve", "--port", "0", "--queue", "0"],
                 ["serve", "--port", "0", "--token-env", "KFORGE_NO_SUCH_VARIABLE"],
                 ["serve", "--port", "0", "--device", "tpu"]):
        proc = kforge(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
