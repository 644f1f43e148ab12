"""kforge optimize / resume / show / best / runs end to end on the CPU, against the fake
OpenAI-compatible server (tests/fixtures/fake_llm_server.py) serving scripted replies.

The scripted candidates are honest C++ (`load_inline(cpp_sources=...)`, policy strict) built
from examples/candidates/fused_bias_relu6_scale_cpp.py. They differ only outside the C++
source string, so torch's extension cache (one per test session, see conftest.py) builds
the extension once: the evaluations here cost harness start-up and timing, not compiles.
"""
import hashlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request

import pytest

from conftest import EXAMPLES, FAST, FIXTURES, ROOT

# examples/tasks/fused_bias_relu6_scale.py, smaller: an evaluation takes seconds, not a minute.
TASK = FIXTURES / "small_bias_relu6_scale.py"
CPP = (EXAMPLES / "candidates" / "fused_bias_relu6_scale_cpp.py").read_text()
CALL = "return _ext.fused_bias_relu6_scale(x, self.bias, self.scale)"
assert CALL in CPP


def variant(forward_body):
    return CPP.replace(CALL, forward_body)


CAND_FUSED = CPP  # one fused pass: the fastest
# Correct but eight times the work: slower by a margin that CPU timing noise cannot close.
CAND_SLOW = variant("for _ in range(7):\n            _ext.fused_bias_relu6_scale(x, self.bias, "
                    "self.scale)\n        " + CALL)
CAND_TORCH = variant("return torch.clamp(x + self.bias, 0.0, 6.0) * self.scale")


def reply(analysis, code=None):
    return analysis if code is None else f"{analysis}\n\n```python\n{code}```\n"


# What the scripted "model" answers, in order (cycling): a reply without code and a
# duplicate are not evaluated and do not count, so N = 3 evaluations use all five.
REPLIES = [
    reply("Fusing the four passes into one loop is the way to go; code follows next time."),
    reply("Let PyTorch do it in fewer ops.", CAND_TORCH),
    reply("One fused C++ pass over the tensor.", CAND_FUSED),
    reply("The same fused pass.", CAND_FUSED),
    reply("Warm the cache by running the kernel a few times first.", CAND_SLOW),
]
N = 3
EVALUATED = {hashlib.sha256(c.encode()).hexdigest() for c in (CAND_TORCH, CAND_FUSED, CAND_SLOW)}
FUSED_SHA = hashlib.sha256(CAND_FUSED.encode()).hexdigest()
BINARY = os.environ.get("KFORGE_BIN", str(ROOT / "build" / "kforge"))
SERVER = ROOT / "tests" / "fixtures" / "fake_llm_server.py"
# Fast, quiet LLM retries against the local server.
LLM_FLAGS = ["--set", "llm.retry.max_attempts=2", "--set", "llm.retry.base_delay_ms=10"]


class FakeLlm:
    def __init__(self, replies_path):
        self.proc = subprocess.Popen([sys.executable, str(SERVER), "--port", "0", "--replies",
                                      str(replies_path)], stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline())
        self.spec = f"openai:scripted@http://127.0.0.1:{self.port}/v1"

    def requests(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_requests") as r:
            return json.load(r)["requests"]

    def close(self):
        self.proc.kill()
        self.proc.wait()


@pytest.fixture(scope="module")
def llm(tmp_path_factory):
    path = tmp_path_factory.mktemp("replies") / "replies.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in REPLIES))
    server = FakeLlm(path)
    yield server
    server.close()


def optimize_args(llm_spec, db, *extra):
    return ["optimize", "--task", TASK, "--device", "cpu", "--db", db, "--iterations", N,
            "--llm", llm_spec, *FAST, *LLM_FLAGS, *extra]


def show(kforge, run_id, db):
    proc = kforge("show", run_id, "--db", db, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def evaluated_shas(kforge, run_id, db):
    evaluations = sorted(show(kforge, run_id, db)["evaluations"], key=lambda e: e["iteration"])
    return [e["sha256"] for e in evaluations]


@pytest.fixture(scope="module")
def uninterrupted(kforge, llm, tmp_path_factory):
    """One run from start to end, one proposal at a time (the reference for replay and resume)."""
    db = tmp_path_factory.mktemp("uninterrupted") / "kforge.db"
    start = time.monotonic()
    proc = kforge(*optimize_args(llm.spec, db, "--set", "run.max_in_flight=1", "--json"))
    duration = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    return {"db": db, "result": result, "run_id": result["run_id"], "duration": duration,
            "stderr": proc.stderr, "requests": llm.requests()}


def test_optimize_completes_n_evaluations_and_finds_a_speedup(kforge, uninterrupted):
    r = uninterrupted["result"]
    assert set(r) >= {"run_id", "status", "evaluations", "best", "llm"}
    assert r["status"] == "completed"
    assert r["evaluations"] == N
    assert r["best"]["candidate_id"]
    assert r["best"]["speedup"]["eager"] > 1.0
    assert r["best"]["sha256"] == FUSED_SHA
    assert r["llm"]["calls"] == len(REPLIES)  # two replies gave no candidate
    assert set(r["llm"]) == {"calls", "input_tokens", "output_tokens", "cost_usd"}

    s = show(kforge, r["run_id"], uninterrupted["db"])
    assert s["status"] == "completed" and s["strategy"] == "greedy"
    assert s["task"] == "small_bias_relu6_scale"
    shas = [e["sha256"] for e in s["evaluations"]]
    assert len(shas) == N and set(shas) == EVALUATED
    by_sha = {e["sha256"]: e for e in s["evaluations"]}
    torch_eval = by_sha[hashlib.sha256(CAND_TORCH.encode()).hexdigest()]
    assert not torch_eval["accepted"] and torch_eval["verdict"] == "rejected"
    slow = by_sha[hashlib.sha256(CAND_SLOW.encode()).hexdigest()]
    assert slow["accepted"]
    assert by_sha[FUSED_SHA]["speedup"]["eager"] > slow["speedup"]["eager"]
    types = [e["type"] for e in s["events"]]
    assert types[0] == "run_started" and types[-1] == "completed"
    assert types.count("evaluation") == N
    assert types.count("proposal_unusable") == 2
    for e in s["events"]:
        assert set(e) >= {"type", "island", "iteration", "detail"}

    # Plain progress lines in a log (stderr is not a terminal here).
    assert f"[{N}/{N}]" in uninterrupted["stderr"]
    assert "eval/min" in uninterrupted["stderr"]


def test_greedy_prompts_carry_the_task_and_the_feedback(uninterrupted):
    prompts = []
    for request in uninterrupted["requests"]:
        body = request["body"]
        prompts.append("\n".join(str(m.get("content")) for m in body["messages"]))
    assert len(prompts) == len(REPLIES)
    first = prompts[0]
    assert "class Model(nn.Module)" in first  # the task source
    assert "cpp_sources" in first and "Policy `strict`" in first
    assert "```python" in first
    # The last proposal (made while the fused candidate was being evaluated) sees the
    # integrity verdict of the torch candidate, with that candidate's source.
    later = prompts[-1]
    assert "## Last attempt" in later
    assert "rejected by the integrity checks (torch_compute)" in later
    assert "torch.clamp(x + self.bias, 0.0, 6.0)" in later


def test_show_runs_and_best_out(kforge, kforge_env, uninterrupted, tmp_path):
    run_id, db = uninterrupted["run_id"], uninterrupted["db"]
    text = kforge("show", run_id, "--db", db)
    assert text.returncode == 0, text.stderr
    assert run_id in text.stdout and "best: candidate" in text.stdout

    runs = kforge("runs", "--db", db, "--json")
    assert runs.returncode == 0, runs.stderr
    listed = json.loads(runs.stdout)
    created = [r["created_at"] for r in listed]
    assert created == sorted(created, reverse=True)  # newest first
    entry = next(r for r in listed if r["run_id"] == run_id)
    assert set(entry) >= {"run_id", "status", "task", "strategy", "created_at", "evaluations"}
    assert entry["evaluations"] == N and entry["status"] == "completed"
    assert run_id in kforge("runs", "--db", db).stdout

    out = tmp_path / "best"
    best = kforge("best", run_id, "--db", db, "--out", out)
    assert best.returncode == 0, best.stderr
    model_new = (out / "model_new.py").read_text()
    assert run_id in model_new and "class ModelNew" in model_new
    sources = [p for p in out.glob("*.py") if p.name != "model_new.py"]
    assert len(sources) == 1 and sources[0].read_text() == CAND_FUSED

    # model_new.py is a drop-in module: same outputs as the task's Model.
    check = (
        "import sys, torch\n"
        f"sys.path[:0] = [{str(out)!r}, {str(TASK.parent)!r}]\n"
        "import model_new, small_bias_relu6_scale as task\n"
        "torch.manual_seed(0); ref = task.Model(*task.get_init_inputs())\n"
        "torch.manual_seed(0); new = model_new.ModelNew(*task.get_init_inputs())\n"
        "x = task.get_inputs()[0]\n"
        "with torch.no_grad():\n"
        "    assert torch.allclose(ref(x), new(x), atol=1e-5), 'outputs differ'\n"
        "print('same')\n")
    proc = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True,
                          env=kforge_env, timeout=600)
    assert proc.returncode == 0 and "same" in proc.stdout, proc.stderr


def test_replay_reproduces_the_candidates(kforge, llm, uninterrupted):
    calls_before = len(llm.requests())
    proc = kforge(*optimize_args(f"replay:{uninterrupted['run_id']}", uninterrupted["db"],
                                 "--set", "run.max_in_flight=1", "--json"))
    assert proc.returncode == 0, proc.stderr
    replayed = json.loads(proc.stdout)
    assert replayed["status"] == "completed" and replayed["evaluations"] == N
    assert len(llm.requests()) == calls_before  # nothing asked of the model
    assert replayed["llm"]["calls"] == len(REPLIES) and replayed["llm"]["cost_usd"] == 0
    original = evaluated_shas(kforge, uninterrupted["run_id"], uninterrupted["db"])
    assert evaluated_shas(kforge, replayed["run_id"], uninterrupted["db"]) == original


def wait_for_run_id(kforge, db, deadline):
    while time.monotonic() < deadline:
        if db.exists():
            proc = kforge("runs", "--db", db, "--json")
            if proc.returncode == 0 and json.loads(proc.stdout):
                return json.loads(proc.stdout)[0]["run_id"]
        time.sleep(0.2)
    return None


def start(kforge_env, args):
    return subprocess.Popen([BINARY, *map(str, args)], env=kforge_env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def test_sigkill_at_random_points_then_resume(kforge, kforge_env, llm, uninterrupted, tmp_path):
    rng = random.Random(int(os.environ.get("KFORGE_TEST_SEED", time.time())))
    longest = max(2.0, 0.8 * uninterrupted["duration"])
    for round_no in range(2):
        delay = rng.uniform(1.0, longest)
        # The kill must land inside the run: a run with warm caches (inductor's
        # on-disk cache, filled by the uninterrupted run) can finish sooner
        # than `longest`; then the round is tried again with half the delay.
        for attempt in range(5):
            db = tmp_path / f"round{round_no}_{attempt}.db"
            proc = start(kforge_env, optimize_args(llm.spec, db))
            time.sleep(delay)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            run_id = wait_for_run_id(kforge, db, time.monotonic() + 5)
            assert run_id, "the run was not created within a second"
            if show(kforge, run_id, db)["status"] != "completed":
                break
            delay = max(0.5, delay / 2)
        else:
            pytest.fail(f"every run finished before its kill (last delay {delay:.1f}s)")
        if round_no == 1:
            # Kill the resumed run too, then interrupt the next one with Ctrl-C.
            resumed = start(kforge_env, ["resume", run_id, "--db", db])
            time.sleep(rng.uniform(1.0, longest / 2))
            resumed.send_signal(signal.SIGKILL)
            resumed.wait()
            interrupted = start(kforge_env, ["resume", run_id, "--db", db])
            time.sleep(rng.uniform(1.0, longest / 2))
            interrupted.send_signal(signal.SIGINT)
            _, err = interrupted.communicate(timeout=600)
            if interrupted.returncode == 130:
                assert show(kforge, run_id, db)["status"] == "stopped", err
                assert "kforge resume" in err
            else:  # it had already finished
                assert interrupted.returncode == 0, err
        final = kforge("resume", run_id, "--db", db, "--json")
        assert final.returncode == 0, final.stderr
        result = json.loads(final.stdout)
        s = show(kforge, run_id, db)
        shas = [e["sha256"] for e in s["evaluations"]]
        context = f"round {round_no}, killed after {delay:.1f}s"
        assert result["status"] == "completed", context
        assert result["evaluations"] == N and len(shas) == N, context
        assert len(set(shas)) == N and set(shas) == EVALUATED, context
        assert result["best"]["sha256"] == uninterrupted["result"]["best"]["sha256"], context
        types = [e["type"] for e in s["events"]]
        assert "run_resumed" in types, context
        # Resuming a completed run changes nothing.
        again = kforge("resume", run_id, "--db", db, "--json")
        assert again.returncode == 0 and json.loads(again.stdout)["evaluations"] == N


def test_bad_database_files_exit_2_with_one_line(kforge, llm, tmp_path):
    not_db = tmp_path / "notes.db"
    not_db.write_text("this is not a database\n" * 100)
    for args in (["runs", "--db", not_db], ["show", "x", "--db", not_db],
                 ["runs", "--db", tmp_path / "missing.db"],
                 ["optimize", "--task", TASK, "--device", "cpu", "--db", not_db, "--llm",
                  llm.spec]):
        proc = kforge(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr

    # A database another program holds locked for writing.
    locked = tmp_path / "locked.db"
    assert kforge("optimize", "--task", TASK, "--device", "cpu", "--db", locked,
                  "--llm", "openai:x", "--strategy", "nope").returncode == 2
    holder = sqlite3.connect(locked, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        proc = kforge(*optimize_args(llm.spec, locked, "--set", "store.busy_timeout_ms=200"))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert proc.returncode == 2, proc.stderr
    assert "locked" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr

    unknown = kforge("show", "no-such-run", "--db", locked)
    assert unknown.returncode == 2 and "no-such-run" in unknown.stderr


def test_unknown_strategies_and_bad_flags_exit_2(kforge, llm, tmp_path):
    db = tmp_path / "k.db"
    for extra in (["--strategy", "nope"], ["--iterations", "0"],
                  ["--policy", "lax"], ["--islands", "-1"],
                  # native candidates are .cu files for a GPU; an unknown format
                  ["--set", "run.candidate_format=native"],
                  ["--set", "run.candidate_format=triton"]):
        proc = kforge(*optimize_args(llm.spec, db, *extra))
        assert proc.returncode == 2, (extra, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    runs = kforge("runs", "--db", db, "--json")
    assert runs.returncode in (0, 2)
    if runs.returncode == 0:
        assert json.loads(runs.stdout) == []  # bad input leaves no run behind


def test_budget_stop_is_clean_and_resumable(kforge, tmp_path):
    replies = tmp_path / "talk.jsonl"
    replies.write_text(json.dumps("I would fuse the passes, but no code this time.") + "\n")
    server = FakeLlm(replies)
    try:
        db = tmp_path / "k.db"
        proc = kforge(*optimize_args(server.spec, db, "--budget-tokens", "1", "--json"))
        assert proc.returncode == 0, proc.stderr
        r = json.loads(proc.stdout)
        assert r["status"] == "stopped" and "budget" in r["reason"], r
        assert r["evaluations"] == 0 and 1 <= r["llm"]["calls"] <= 2
        assert "kforge resume" in proc.stderr
        s = show(kforge, r["run_id"], db)
        assert s["status"] == "stopped"
        assert s["events"][-1]["type"] == "stopped" and "budget" in s["events"][-1]["detail"]["reason"]
        # Still over the cap: resuming stops again without calling the model.
        calls = len(server.requests())
        again = kforge("resume", r["run_id"], "--db", db, "--budget-tokens", "2", "--json")
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["status"] == "stopped"
        assert len(server.requests()) == calls
    finally:
        server.close()
