"""The integrity corpus (tests/integrity/) end to end: `kforge eval --json` on
every case this machine can run, asserting the verdict and that every
expected check id is among the flags. Legitimate candidates must come out
`ok` and accepted.

Runs: every CPU case whose hack only the runtime checks can catch, every CPU
legitimate case, and a handful of static-phase hacks (the static checks
themselves are covered case by case in harness/tests/test_static_check.py).
CUDA cases are marked `gpu` and skipped without a GPU; the device run is
bench/device/issue3_corpus.sh.

The C++ extensions build once per machine: TORCH_EXTENSIONS_DIR defaults to
a directory under the system temp dir that outlives the session (set it to
choose another). The first run compiles about twenty small extensions (a few
minutes on two cores); later runs take about a minute per ten cases.
"""
import json
import os
import pathlib
import subprocess
import tempfile

import pytest

from conftest import FAST, ROOT

CORPUS = ROOT / "tests" / "integrity"
# Static-phase hacks that also run end to end here: no compiler needed, or
# a runtime check must agree with the static one.
STATIC_END_TO_END = ("hack_torch_relu", "hack_timer_monkey_patch", "hack_lazy_tensor_subclass",
                     "hack_reference_subclass")


def _has_cuda():
    try:
        import torch
        return torch.cuda.is_available()
    except Exception:  # noqa: BLE001 - no torch, no GPU
        return False


HAS_CUDA = _has_cuda()


def _cases():
    out = []
    for d in sorted(p for p in CORPUS.iterdir() if p.is_dir() and p.name != "tasks"):
        e = json.loads((d / "expect.json").read_text())
        if e["task"] is None or e["format"] != "kernelbench":
            continue  # static-only cases: harness/tests/test_static_check.py
        runs_here = e["label"] == "legit" or e["phase"] == "runtime" or \
            d.name in STATIC_END_TO_END
        if e["device"] == "cpu" and not runs_here:
            continue
        marks = []
        if e["device"] == "cuda":
            marks = [pytest.mark.gpu,
                     pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")]
        out.append(pytest.param(d, e, id=d.name, marks=marks))
    return out


CASES = _cases()


@pytest.fixture(scope="module")
def corpus_kforge(kforge_env):
    """`kforge` with a machine-wide extension cache, so reruns skip compiling."""
    env = dict(kforge_env)
    env["TORCH_EXTENSIONS_DIR"] = os.environ.get(
        "TORCH_EXTENSIONS_DIR", str(pathlib.Path(tempfile.gettempdir()) / "kforge-corpus-torch-ext"))
    binary = os.environ.get("KFORGE_BIN", str(ROOT / "build" / "kforge"))

    def run(*args, timeout=900):
        return subprocess.run([binary, *map(str, args)], capture_output=True, text=True, env=env,
                              timeout=timeout)

    return run


def evaluate(corpus_kforge, case_dir, expect):
    device = expect["device"]
    proc = corpus_kforge("eval", "--task", CORPUS / expect["task"], "--candidate",
                         case_dir / expect["candidate"], "--device", device, "--json", *FAST)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_corpus_selection_covers_what_ci_must_run():
    ids = {p.id for p in CASES}
    cpu_runtime = {d.name for d in CORPUS.iterdir() if (d / "expect.json").is_file()
                   and json.loads((d / "expect.json").read_text())["phase"] == "runtime"
                   and json.loads((d / "expect.json").read_text())["device"] == "cpu"}
    assert cpu_runtime <= ids
    assert set(STATIC_END_TO_END) <= ids
    legit = [p for p in CASES if p.values[1]["label"] == "legit"]
    assert len(legit) >= 10


@pytest.mark.parametrize("case_dir,expect", CASES)
def test_corpus_case(corpus_kforge, case_dir, expect):
    r = evaluate(corpus_kforge, case_dir, expect)
    flags = {f["check"] for f in r["integrity"]["flags"]}
    summary = {"verdict": r["integrity"]["verdict"], "flags": r["integrity"]["flags"],
               "correct": r["correct"], "error": r["error"],
               "detail": r["correctness"]["detail"], "degenerate": r["task"]["degenerate"]}
    if expect["label"] == "legit":
        assert r["compiled"] and r["correct"], summary
        assert r["integrity"]["verdict"] == "ok", summary
        assert r["accepted"] is True, summary
        assert r["speedup"]["eager"] is not None and r["speedup"]["eager"] > 0
        used = [v for v in r["extra"].get("input_variants", []) if v["used"]]
        for v in used:
            assert v["passed"], (v, summary)
        return
    assert r["integrity"]["verdict"] == expect["expected_verdict"], summary
    missing = set(expect["expected_checks"]) - flags
    assert not missing, (missing, summary)
    if expect["expected_verdict"] == "rejected":
        assert r["accepted"] is False, summary
        assert r["speedup"]["eager"] is None and r["timing"]["candidate_ms"] is None
