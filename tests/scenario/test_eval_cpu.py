"""End-to-end `kforge eval --device cpu` on the bundled example tasks."""
import json
import os
import pathlib
import subprocess
import time

import torch

from conftest import EXAMPLES, FAST, FIXTURES, ROOT, eval_json

TASK = EXAMPLES / "tasks" / "fused_bias_relu6_scale.py"


def test_version_and_help(kforge):
    v = kforge("--version")
    assert v.returncode == 0
    assert v.stdout.startswith("kforge 0.1.0 (")
    h = kforge("--help")
    assert h.returncode == 0 and "eval" in h.stdout


def test_unknown_flag_is_usage_error(kforge):
    p = kforge("eval", "--bogus")
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1


def test_fused_cpp_candidate_is_accepted_and_faster(kforge):
    r = eval_json(kforge, TASK, EXAMPLES / "candidates" / "fused_bias_relu6_scale_cpp.py")
    assert r["compiled"] and r["correct"], r
    assert r["integrity"]["verdict"] in ("ok", "suspect"), r["integrity"]
    assert r["accepted"] is True
    assert r["correctness"]["trials"] == 5
    assert r["correctness"]["max_abs_err"] < 1e-4
    t = r["timing"]["candidate_ms"]
    assert t["samples"] >= 10 and t["median"] > 0
    # One fused pass against four eager passes over 16 MB: faster on any CPU.
    assert r["speedup"]["eager"] > 1.0, r["timing"]
    assert r["sol"]["floor_ms"] > 0
    assert r["reward"]["milestone"] in (2, 3)
    assert r["candidate"]["format"] == "cpp"
    assert r["device"]["kind"] == "cpu"


def test_reference_as_candidate_is_accepted(kforge):
    r = eval_json(kforge, TASK, EXAMPLES / "candidates" / "fused_bias_relu6_scale_reference.py",
                  "--policy", "any")
    assert r["accepted"] is True, r
    assert r["correctness"]["max_abs_err"] == 0.0
    assert r["speedup"]["eager"] > 0


def test_device_auto_resolves_to_the_device_used(kforge):
    # --device defaults to auto; the harness once kept "auto" as the kind
    # (running on the CPU even with a GPU present). It must name what it used.
    proc = kforge("eval", "--task", TASK, "--candidate",
                  EXAMPLES / "candidates" / "fused_bias_relu6_scale_reference.py", "--policy",
                  "any", "--json", *FAST)
    assert proc.returncode == 0, proc.stderr
    kind = json.loads(proc.stdout)["device"]["kind"]
    assert kind == ("cuda" if torch.cuda.is_available() else "cpu")


def test_reference_as_candidate_is_rejected_under_strict(kforge):
    r = eval_json(kforge, TASK, EXAMPLES / "candidates" / "fused_bias_relu6_scale_reference.py")
    assert r["integrity"]["verdict"] == "rejected"
    assert any(f["check"] == "torch_compute" for f in r["integrity"]["flags"])
    assert r["accepted"] is False
    assert r["speedup"]["eager"] is None and r["timing"]["candidate_ms"] is None


def test_wrong_shape_is_a_failed_evaluation(kforge):
    r = eval_json(kforge, TASK, FIXTURES / "wrong_shape.py", "--policy", "any")
    assert r["compiled"] is True and r["correct"] is False
    assert "shape" in r["correctness"]["detail"]
    assert r["accepted"] is False and r["reward"]["milestone"] == -1


def test_missing_modelnew_is_a_failed_evaluation(kforge):
    r = eval_json(kforge, TASK, FIXTURES / "no_modelnew.py", "--policy", "any")
    assert r["compiled"] is False
    assert "ModelNew" in r["error"]


def test_hang_times_out_and_next_eval_works(kforge):
    r = eval_json(kforge, TASK, FIXTURES / "hang.py", "--policy", "any",
                  "--set", "eval.sandbox.run_timeout_floor_s=3", "--set",
                  "eval.sandbox.run_timeout_factor=1")
    assert r["correct"] is False and "timeout" in r["error"], r["error"]
    ok = eval_json(kforge, TASK, EXAMPLES / "candidates" / "fused_bias_relu6_scale_reference.py",
                   "--policy", "any")
    assert ok["accepted"] is True


def test_segfault_is_a_failed_evaluation(kforge):
    r = eval_json(kforge, TASK, FIXTURES / "segfault.py", "--policy", "any")
    assert r["correct"] is False
    assert "signal 11" in r["error"], r["error"]


def test_bad_inputs_exit_2_with_one_line(kforge):
    cases = [
        ("eval", "--task", "/nonexistent/task.py", "--candidate", TASK),
        ("eval", "--task", TASK, "--candidate", "/nonexistent/cand.py"),
        ("eval", "--task", FIXTURES / "syntax_error_task.py", "--candidate", TASK,
         "--device", "cpu", *FAST),
        ("eval", "--task", FIXTURES / "raising_inputs_task.py", "--candidate",
         EXAMPLES / "candidates" / "fused_bias_relu6_scale_reference.py", "--device", "cpu", *FAST),
        ("eval", "--task", TASK, "--candidate", TASK, "--set", "no.such.key=1"),
        ("eval", "--task", TASK, "--candidate", TASK, "--device", "tpu"),
    ]
    for args in cases:
        p = kforge(*args)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        lines = [l for l in p.stderr.strip().splitlines() if not l.startswith("warning:")]
        assert len(lines) == 1, (args, p.stderr)
        assert lines[0].startswith("kforge: error:"), lines


def test_config_show_masks_nothing_secret_and_lists_keys(kforge):
    p = kforge("config", "show", "--json")
    assert p.returncode == 0
    j = json.loads(p.stdout)
    assert j["eval.trials"] == "5"



def _harness_states(role):
    """State letters ('S', 'R', 'T' when stopped) of every running harness
    process of the given role."""
    states = []
    for proc in pathlib.Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        if f"kforge_harness.{role}".encode() in cmd:
            states.append(stat[stat.rindex(") ") + 2])
    return states


def test_candidate_process_is_frozen_while_the_reference_is_timed(kforge_env):
    # Whatever the candidate left running (a thread, a child) must not compete
    # with the reference while the reference is timed: kforge stops the
    # candidate's whole process group during the reference's batches. Seen
    # from outside: the candidate harness in state T, the reference never.
    binary = os.environ.get("KFORGE_BIN", str(ROOT / "build" / "kforge"))
    proc = subprocess.Popen(
        [binary, "eval", "--task", str(TASK), "--candidate",
         str(EXAMPLES / "candidates" / "fused_bias_relu6_scale_reference.py"), "--device", "cpu",
         "--json", "--policy", "any", *FAST],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=kforge_env)
    seen = {"candidate": set(), "reference": set()}
    while proc.poll() is None:
        for role in seen:
            seen[role].update(_harness_states(role))
        time.sleep(0.002)
    out, err = proc.communicate()
    assert proc.returncode == 0, err
    r = json.loads(out)
    assert r["accepted"] is True, r
    assert r["extra"]["candidate_frozen_during_reference"] is True
    assert "T" in seen["candidate"], seen
    assert "T" not in seen["reference"], seen
