"""`kforge tasks scan`: the degeneracy scan of task references (no candidate,
no timing), on small CPU tasks."""
import json

from conftest import EXAMPLES, FIXTURES, ROOT

INTEGRITY_TASKS = ROOT / "tests" / "integrity" / "tasks"


def scan_json(kforge, suite, *extra):
    proc = kforge("tasks", "scan", "--suite", suite, "--device", "cpu", "--json", *extra)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_scan_reports_each_degeneracy_rule_and_keeps_going_past_bad_tasks(kforge, tmp_path):
    listing = tmp_path / "suite.txt"
    entries = [
        EXAMPLES / "tasks" / "fused_bias_relu6_scale.py",
        FIXTURES / "constant_output_task.py",
        FIXTURES / "tiny_output_task.py",
        FIXTURES / "mostly_zero_task.py",
        FIXTURES / "nan_output_task.py",
        FIXTURES / "syntax_error_task.py",
        FIXTURES / "raising_inputs_task.py",
        tmp_path / "missing_task.py",
    ]
    listing.write_text("# a suite with broken entries in the middle\n" +
                       "\n".join(str(p) for p in entries) + "\n")
    out = scan_json(kforge, listing, "--trials", "3")
    by_name = {t["task"]: t for t in out["tasks"]}
    assert [t["task"] for t in out["tasks"]] == [p.stem for p in entries]

    healthy = by_name["fused_bias_relu6_scale"]
    assert healthy["degenerate"] is False and healthy["error"] is None
    assert healthy["kind"] is None and healthy["reason"] is None
    assert healthy["seeds"] == 4  # trials 0..3, as eval runs them
    assert healthy["outputs"][0]["max_abs"] > 0
    assert {v["variant"] for v in healthy["variants"]} == {"normal", "scaled"}
    assert all(v["usable"] for v in healthy["variants"]), healthy["variants"]

    expected = {"constant_output_task": "insensitive_to_inputs",
                "tiny_output_task": "zeros_pass",
                "mostly_zero_task": "mostly_zero",
                "nan_output_task": "nonfinite"}
    for name, kind in expected.items():
        t = by_name[name]
        assert t["error"] is None, t
        assert t["degenerate"] is True and t["kind"] == kind, t
        assert t["reason"]

    for name in ("syntax_error_task", "raising_inputs_task", "missing_task"):
        t = by_name[name]
        assert t["error"] and t["error_kind"] == "bad_task", t
        assert t["degenerate"] is False
    assert "get_inputs" in by_name["raising_inputs_task"]["error"]

    s = out["summary"]
    assert s["tasks"] == 8 and s["errors"] == 3 and s["scanned"] == 5
    assert s["degenerate"] == 4
    assert s["by_kind"] == {"insensitive_to_inputs": 1, "zeros_pass": 1, "mostly_zero": 1,
                            "nonfinite": 1}
    assert sorted(s["degenerate_tasks"]) == sorted(expected)
    assert out["device"]["kind"] == "cpu"


def test_scan_of_a_directory_agrees_with_eval(kforge):
    out = scan_json(kforge, INTEGRITY_TASKS)
    by_name = {t["task"]: t for t in out["tasks"]}
    assert set(by_name) == {p.stem for p in INTEGRITY_TASKS.glob("*.py")}
    assert [n for n, t in by_name.items() if t["degenerate"]] == ["shifted_relu"]
    assert by_name["shifted_relu"]["kind"] == "insensitive_to_inputs"
    assert out["summary"]["errors"] == 0
    # The uniform-input loss tasks are where input variants matter: both apply.
    huber = {v["variant"]: v for v in by_name["huber_loss"]["variants"]}
    assert huber["normal"]["usable"] and huber["scaled"]["usable"], huber


def test_scan_text_output_and_bad_usage(kforge, tmp_path):
    # One task file is a suite of one.
    p = kforge("tasks", "scan", "--suite", FIXTURES / "constant_output_task.py", "--device", "cpu",
               "--trials", "2")
    assert p.returncode == 0, p.stderr
    assert "1 tasks: 1 degenerate, 0 could not be scanned" in p.stdout
    assert "constant_output_task: output is identical across 3 input seeds" in p.stdout
    listing = tmp_path / "one.txt"
    listing.write_text(str(FIXTURES / "constant_output_task.py") + "\n")
    for args in (("tasks", "scan", "--suite", tmp_path / "nope"),
                 ("tasks", "scan", "--suite", listing, "--device", "tpu"),
                 ("tasks", "scan", "--suite", FIXTURES / "no_such_task.py")):
        p = kforge(*args)
        assert p.returncode == 2, (args, p.stderr)
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
