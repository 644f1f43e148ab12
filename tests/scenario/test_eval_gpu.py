"""`kforge eval --device cuda` parts that only a GPU exercises (skipped without one)."""
import json

import pytest
import torch

from conftest import EXAMPLES, FAST

TASK = EXAMPLES / "tasks" / "fused_bias_relu6_scale.py"
REFERENCE = EXAMPLES / "candidates" / "fused_bias_relu6_scale_reference.py"

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]


def test_pin_cpus_places_harnesses_and_timer_apart(kforge):
    proc = kforge("eval", "--task", TASK, "--candidate", REFERENCE, "--device", "cuda",
                  "--policy", "any", "--json", "--set", "eval.timing.pin_cpus=true", *FAST)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)
    assert r["accepted"] is True, r
    place = r["extra"]["cpu_placement"]
    assert "skipped" not in place, place
    assert place["harness_cpu"] != place["timer_cpu"]
    assert "binding_refused" not in place and "timer_binding_refused" not in place, place
    assert r["extra"]["candidate_frozen_during_reference"] is True


def test_pin_cpus_off_leaves_placement_alone(kforge):
    proc = kforge("eval", "--task", TASK, "--candidate", REFERENCE, "--device", "cuda",
                  "--policy", "any", "--json", "--set", "eval.timing.pin_cpus=false", *FAST)
    assert proc.returncode == 0, proc.stderr
    assert "cpu_placement" not in json.loads(proc.stdout)["extra"]
