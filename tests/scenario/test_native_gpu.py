"""`kforge eval` of native (.cu) candidates on a GPU (skipped without one): the
build through nvcc and the cache, the harness's loading through the C ABI,
and the same integrity rules as every other format."""
import json
import pathlib
import shutil

import pytest
import torch

from conftest import FAST

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "gpu" / "fixtures"
NATIVE = FIXTURES / "native"
RELU_TASK = FIXTURES / "relu_task.py"

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
              pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")]


def evaluate(kforge, task, candidate, *extra):
    proc = kforge("eval", "--task", task, "--candidate", candidate, "--device", "cuda",
                  "--json", *FAST, *extra)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_correct_native_candidate_is_accepted_and_cached(kforge, tmp_path):
    cache = ["--set", f"compile.nvcc={shutil.which('nvcc')}"]
    first = evaluate(kforge, RELU_TASK, NATIVE / "relu.cu", *cache)
    assert first["candidate"]["format"] == "native"
    assert first["accepted"] is True, first
    assert first["integrity"]["verdict"] == "ok", first["integrity"]
    assert first["speedup"]["eager"] > 0
    kernels = first["compile"]["resources"]
    assert kernels and kernels[0]["registers"] > 0 and kernels[0]["arch"].startswith("sm_")
    again = evaluate(kforge, RELU_TASK, NATIVE / "relu.cu", *cache)
    assert again["compile"]["cached"] is True and again["accepted"] is True


def test_parameters_scalars_and_tuple_outputs(kforge):
    r = evaluate(kforge, FIXTURES / "scale_bias_task.py", NATIVE / "scale_bias.cu")
    assert r["accepted"] is True, r


def test_unwritten_output_elements_fail(kforge):
    r = evaluate(kforge, RELU_TASK, NATIVE / "wrong.cu")
    assert r["compiled"] is True and r["correct"] is False and r["accepted"] is False


def test_nvcc_errors_are_a_failed_build_with_the_log(kforge):
    r = evaluate(kforge, RELU_TASK, NATIVE / "no_compile.cu")
    assert r["compiled"] is False and r["accepted"] is False
    assert r["error"].startswith("nvcc failed") and "zero" in r["compile"]["log"]


def test_an_object_without_the_abi_version_fails_to_load(kforge):
    r = evaluate(kforge, RELU_TASK, NATIVE / "no_abi_version.cu")
    assert r["compiled"] is False and "kforge_abi_version" in r["error"]


def test_side_stream_work_is_caught(kforge):
    # strict: the static check rejects the stream outright.
    r = evaluate(kforge, RELU_TASK, NATIVE / "side_stream.cu")
    assert r["accepted"] is False and r["integrity"]["verdict"] == "rejected"
    assert "stream_creation" in {f["check"] for f in r["integrity"]["flags"]}
    # any: a warning, and the timing must show the work anyway (device-wide
    # synchronisation counts it; current-stream events do not see it).
    r = evaluate(kforge, RELU_TASK, NATIVE / "side_stream.cu", "--policy", "any")
    assert r["integrity"]["verdict"] == "suspect", r["integrity"]
    assert "side_stream" in {f["check"] for f in r["integrity"]["flags"]}, r["integrity"]


def test_optimize_with_the_native_format(kforge, tmp_path):
    """`kforge optimize --set run.candidate_format=native` against the fake server: the
    prompt is the native format's, the ```cuda answers are evaluated as native candidates
    (one that does not compile among them), and the best exports as a .cu file."""
    from test_optimize_cpu import LLM_FLAGS, FakeLlm, show
    relu = (NATIVE / "relu.cu").read_text()
    replies = [{"text": f"Variant {k}.\n\n```cuda\n{relu}// variant {k}\n```\n"} for k in (1, 2)]
    replies.insert(1, {"text": "Broken.\n\n```cuda\n" + (NATIVE / "no_compile.cu").read_text()
                       + "```\n"})
    path = tmp_path / "replies.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in replies))
    server = FakeLlm(path)
    try:
        db = tmp_path / "kforge.db"
        proc = kforge("optimize", "--task", RELU_TASK, "--device", "cuda", "--db", db,
                      "--iterations", 3, "--strategy", "greedy", "--llm", server.spec, *FAST,
                      *LLM_FLAGS, "--set", "run.candidate_format=native", "--set",
                      "kb.enabled=false", "--set", "run.max_in_flight=1", "--json",
                      timeout=1200)
        requests = server.requests()
    finally:
        server.close()
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    assert result["status"] == "completed" and result["evaluations"] == 3
    first_prompt = json.dumps(requests[0]["body"])
    assert "kforge_forward" in first_prompt and "cuda_sources" not in first_prompt
    evaluations = show(kforge, result["run_id"], db)["evaluations"]
    assert sum(1 for e in evaluations if e["accepted"]) == 2, evaluations
    assert result["best"]["speedup"]["eager"] > 0
    out = tmp_path / "best"
    exported = kforge("best", result["run_id"], "--db", db, "--out", out)
    assert exported.returncode == 0, exported.stderr
    assert any(p.suffix == ".cu" for p in out.iterdir()), list(out.iterdir())
