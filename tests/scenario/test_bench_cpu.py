"""kforge bench end to end on the CPU: a suite of two tasks, one run each, against the fake
OpenAI-compatible server; killed mid-way and resumed; bad input."""
import json
import shutil
import signal
import sqlite3
import subprocess
import time

import pytest

from conftest import FAST, FIXTURES
# The scripted model of the optimize tests, served afresh for this module.
from test_optimize_cpu import BINARY, LLM_FLAGS, TASK, llm  # noqa: F401  (llm: a fixture)

N = 2


@pytest.fixture
def suite(tmp_path):
    """Two tasks whose file names repeat in different folders (as across KernelBench levels)."""
    root = tmp_path / "suite"
    for level in ("level_a", "level_b"):
        (root / level).mkdir(parents=True)
        shutil.copy(TASK, root / level / "small.py")
    return root


def bench_args(llm, db, *extra):
    return ["bench", "--device", "cpu", "--db", db, "--iterations", N, "--llm", llm.spec,
            *FAST, *LLM_FLAGS, "--json", *extra]


def test_bench_runs_every_task_and_reports_the_suite(kforge, llm, suite, tmp_path):
    db = tmp_path / "kforge.db"
    # A malformed task is that task's result; the bench does the rest (exit 0).
    shutil.copy(FIXTURES / "syntax_error_task.py", suite / "level_b" / "broken.py")
    proc = kforge(*bench_args(llm, db, "--suite", suite))
    assert proc.returncode == 0, (proc.stdout, proc.stderr[-300:])
    r = json.loads(proc.stdout)
    assert set(r) == {"bench_id", "tasks", "metrics"}
    assert [t["task"] for t in r["tasks"]] == ["level_a/small", "level_b/broken", "level_b/small"]
    broken = r["tasks"].pop(1)
    assert broken["status"] == "failed" and broken["best"] is None, broken
    runs = {t["run_id"] for t in r["tasks"]}
    assert len(runs) == 2 and None not in runs
    for t in r["tasks"]:
        assert t["status"] == "completed" and t["degenerate"] is False
        # The fused C++ candidate is among each run's replies and beats eager.
        assert t["best"] is not None and t["best"]["speedup"]["eager"] > 1.0, t
    m = r["metrics"]
    # n counts every non-degenerate task, the failed one included (KernelBench's fast_p).
    assert m["tasks"] == 3 and m["pass_rate"] == pytest.approx(2 / 3)
    assert set(m["fast_p"]["eager"]) == {"0", "0.5", "0.8", "1", "1.5", "2"}
    assert m["fast_p"]["eager"]["0"] == pytest.approx(2 / 3)
    assert m["faster_rate"]["eager"] == pytest.approx(2 / 3)
    assert m["geomean_speedup"]["eager"] > 1.0
    # Every run has exactly N evaluations.
    con = sqlite3.connect(db)
    counts = dict(con.execute("SELECT run_id, COUNT(*) FROM evaluations GROUP BY run_id"))
    assert counts == {run: N for run in runs}
    # `kforge report` reads the same bench back.
    rep = kforge("report", r["bench_id"], "--db", db, "--json")
    assert rep.returncode == 0, rep.stderr
    assert json.loads(rep.stdout)["metrics"]["pass_rate"] == pytest.approx(2 / 3)


def test_bench_killed_then_resumed_completes_each_task_once(kforge, llm, suite, tmp_path):
    db = tmp_path / "kforge.db"
    args = [BINARY, *map(str, bench_args(llm, db, "--suite", suite))]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Kill it once the first task's run has an evaluation recorded.
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            con = sqlite3.connect(db)
            n = con.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0]
            con.close()
        except sqlite3.Error:
            n = 0
        if n >= 1:
            break
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    con = sqlite3.connect(db)
    bench_id, = con.execute("SELECT id FROM benches").fetchone()
    before = dict(con.execute("SELECT task, run_id FROM bench_runs"))
    con.close()
    assert "level_a/small" in before  # recorded as soon as its run existed

    again = kforge(*bench_args(llm, db, "--resume", bench_id))
    assert again.returncode == 0, again.stderr
    r = json.loads(again.stdout)
    assert r["bench_id"] == bench_id
    by_task = {t["task"]: t for t in r["tasks"]}
    assert by_task["level_a/small"]["run_id"] == before["level_a/small"]  # resumed, not restarted
    assert all(t["status"] == "completed" for t in r["tasks"])
    con = sqlite3.connect(db)
    counts = dict(con.execute("SELECT run_id, COUNT(*) FROM evaluations GROUP BY run_id"))
    assert sorted(counts.values()) == [N, N] and len(counts) == 2

    # A completed bench resumed again runs nothing more.
    third = kforge(*bench_args(llm, db, "--resume", bench_id))
    assert third.returncode == 0, third.stderr
    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0] == 2 * N


@pytest.mark.parametrize("args,needle", [
    ([], "--suite"),
    (["--suite", "/nonexistent/suite"], "/nonexistent/suite"),
    (["--resume", "no-such-bench"], "no-such-bench"),
    (["--suite", str(FIXTURES / "small_bias_relu6_scale.py"), "--iterations", "0"], "--iterations"),
])
def test_bad_input_is_one_line_and_exit_2(kforge, llm, tmp_path, args, needle):
    proc = kforge(*bench_args(llm, tmp_path / "kforge.db", *args))
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], proc.stderr


def test_one_scripted_model_serves_each_task_its_own_replies(kforge, tmp_path):
    # The fake server's "when" replies let one scripted model answer several tasks
    # (as the device bench script uses it): each run sees only its task's candidate.
    import hashlib
    from test_optimize_cpu import CAND_FUSED, CAND_SLOW, FakeLlm, reply
    root = tmp_path / "suite"
    root.mkdir()
    for name in ("alpha", "beta"):
        shutil.copy(TASK, root / f"{name}.py")
    replies = tmp_path / "replies.jsonl"
    replies.write_text(
        json.dumps({"when": "Task `alpha`", "text": reply("Fused.", CAND_FUSED)}) + "\n"
        + json.dumps({"when": "Task `beta`", "text": reply("Slow.", CAND_SLOW)}) + "\n")
    server = FakeLlm(replies)
    try:
        proc = kforge("bench", "--suite", root, "--device", "cpu", "--db", tmp_path / "k.db",
                      "--iterations", 1, "--llm", server.spec, *FAST, *LLM_FLAGS, "--json")
    finally:
        server.close()
    assert proc.returncode == 0, proc.stderr
    tasks = {t["task"]: t for t in json.loads(proc.stdout)["tasks"]}
    for name, source in (("alpha", CAND_FUSED), ("beta", CAND_SLOW)):
        show = kforge("show", tasks[name]["run_id"], "--db", tmp_path / "k.db", "--json")
        shas = [e["sha256"] for e in json.loads(show.stdout)["evaluations"]]
        assert shas == [hashlib.sha256(source.encode()).hexdigest()], name
