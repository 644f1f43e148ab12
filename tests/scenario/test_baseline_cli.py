"""`kforge baseline` through the real binary: a suite measured, stored in the
database, found there on the next run (so a suite can span sessions), measured
again with --force; a task that cannot allocate its inputs is skipped with the
reason, a missing listed file is that entry's error, bad input is one line
and exit code 2."""
import json
import sqlite3

import pytest
import torch

from conftest import EXAMPLES, FAST


def baseline_json(kforge, *args):
    proc = kforge("baseline", "--json", *FAST, *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_suite_measured_stored_and_found_again(kforge, tmp_path):
    db = tmp_path / "kforge.db"
    # --stored-only measures nothing: every task is missing on a new database.
    none = baseline_json(kforge, "--suite", EXAMPLES / "tasks", "--db", db, "--stored-only")
    assert {t["status"] for t in none["tasks"]} == {"missing"}
    assert none["summary"]["missing"] == none["summary"]["tasks"] > 0
    first = baseline_json(kforge, "--suite", EXAMPLES / "tasks", "--db", db)
    names = sorted(t["task"] for t in first["tasks"])
    assert names == sorted(p.stem for p in (EXAMPLES / "tasks").glob("*.py"))
    assert first["device"]["kind"] == "cpu"
    assert first["device"]["torch_version"] == torch.__version__
    assert first["summary"]["measured"] == len(names) and first["summary"]["errors"] == 0
    for t in first["tasks"]:
        assert t["status"] == "measured"
        assert t["eager_ms"] > 0 and t["sol_floor_ms"] > 0
        assert t["degenerate"] is False
        assert len(t["sha256"]) == 64
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT task_hash, gpu_name, torch_version, baseline_json "
                           "FROM baselines").fetchall()
    assert {r[0] for r in rows} == {t["sha256"] for t in first["tasks"]}
    assert all(r[1] == first["device"]["name"] and r[2] == torch.__version__ for r in rows)
    stored = {json.loads(r[3])["task"]: json.loads(r[3]) for r in rows}
    for t in first["tasks"]:
        assert stored[t["task"]]["eager_ms"]["median"] == t["eager_ms"]
        # Where the task's time went, per step of the measurement.
        phases = stored[t["task"]]["phase_seconds"]
        assert {"reference", "trials", "timing"} <= phases.keys()
        assert all(v > 0 for v in phases.values())
        assert sum(phases.values()) <= t["seconds"]

    # The next run finds every task measured on this device and measures none.
    again = baseline_json(kforge, "--suite", EXAMPLES / "tasks", "--db", db)
    assert [t["status"] for t in again["tasks"]] == ["stored"] * len(names)
    listed = baseline_json(kforge, "--suite", EXAMPLES / "tasks", "--db", db, "--stored-only")
    assert [t["status"] for t in listed["tasks"]] == ["stored"] * len(names)
    assert {t["task"]: t["eager_ms"] for t in again["tasks"]} == \
        {t["task"]: t["eager_ms"] for t in first["tasks"]}

    one = EXAMPLES / "tasks" / "row_softmax.py"
    forced = baseline_json(kforge, "--suite", one, "--db", db, "--force")
    assert [t["status"] for t in forced["tasks"]] == ["measured"]


def test_compile_ahead_builds_before_timing(kforge, tmp_path):
    # With compile timing on, --compile-jobs builds each task's torch.compile
    # program in its own process first and records how that went.
    one = EXAMPLES / "tasks" / "row_softmax.py"
    proc = kforge("baseline", "--json", "--set", "eval.timing.max_seconds=1", "--suite", one,
                  "--db", tmp_path / "k.db", "--compile-jobs", "1")
    assert proc.returncode == 0, proc.stderr
    [t] = json.loads(proc.stdout)["tasks"]
    assert t["status"] == "measured" and t["compile_ms"] > 0
    with sqlite3.connect(tmp_path / "k.db") as con:
        [(record,)] = con.execute("SELECT baseline_json FROM baselines").fetchall()
    ahead = json.loads(record)["compiled_ahead"]
    assert ahead["ok"] is True and ahead["seconds"] > 0 and ahead["error"] is None
    assert json.loads(record)["torch_compile_seconds"] > 0


def test_unallocatable_task_is_skipped_and_missing_entry_is_an_error(kforge, tmp_path):
    huge = tmp_path / "huge_inputs.py"
    huge.write_text(
        "import torch\n"
        "class Model(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return x + 1\n"
        "def get_inputs():\n"
        "    return [torch.empty(2 ** 50)]  # 4 PiB: no machine has it\n"
        "def get_init_inputs():\n"
        "    return []\n")
    listing = tmp_path / "suite.txt"
    listing.write_text(f"# two entries\n{huge}\nno_such_task.py\n")
    out = baseline_json(kforge, "--suite", listing, "--db", tmp_path / "k.db")
    by = {t["task"]: t for t in out["tasks"]}
    assert by["huge_inputs"]["status"] == "skipped"
    assert by["huge_inputs"]["reason"].startswith("does not fit in memory")
    assert by["no_such_task"]["status"] == "error"
    assert "not found" in by["no_such_task"]["reason"]
    assert out["summary"]["skipped_tasks"] == [
        {"task": "huge_inputs", "reason": by["huge_inputs"]["reason"]}]


def test_bad_input_is_one_line_and_exit_2(kforge, tmp_path):
    proc = kforge("baseline", "--suite", tmp_path / "missing", "--db", tmp_path / "k.db")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "suite not found" in proc.stderr
    proc = kforge("baseline", "--suite", EXAMPLES / "tasks", "--device", "tpu",
                  "--db", tmp_path / "k.db")
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_cuda_without_a_gpu_is_bad_input(kforge, tmp_path):
    proc = kforge("baseline", "--suite", EXAMPLES / "tasks", "--device", "cuda",
                  "--db", tmp_path / "k.db")
    assert proc.returncode == 2
    assert "CUDA" in proc.stderr and proc.stderr.strip().count("\n") == 0
