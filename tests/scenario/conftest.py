"""Scenario tests drive the real kforge binary (KFORGE_BIN, default build/kforge)."""
import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"
# Short timing windows keep CI fast; the pipeline is the same as a real run.
FAST = ["--set", "eval.timing.max_seconds=2", "--set", "eval.timing.compile=false"]


@pytest.fixture(scope="session")
def kforge_env(tmp_path_factory):
    env = dict(os.environ)
    cache = tmp_path_factory.mktemp("kforge-cache")
    env["KFORGE_CACHE_DIR"] = str(cache)
    # One extension build cache for the whole session: each candidate compiles once.
    env.setdefault("TORCH_EXTENSIONS_DIR", str(tmp_path_factory.mktemp("torch-ext")))
    return env


@pytest.fixture(scope="session")
def kforge(kforge_env):
    binary = os.environ.get("KFORGE_BIN", str(ROOT / "build" / "kforge"))

    def run(*args, timeout=900):
        proc = subprocess.run([binary, *map(str, args)], capture_output=True, text=True,
                              env=kforge_env, timeout=timeout)
        return proc

    return run


def eval_json(kforge, task, candidate, *extra):
    proc = kforge("eval", "--task", task, "--candidate", candidate, "--device", "cpu", "--json",
                  *FAST, *extra)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped without one)")
