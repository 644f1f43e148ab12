"""kforge optimize --strategy pacevolve (two islands) and --strategy contrastive end to end on
the CPU, against the fake OpenAI-compatible server answering every JSON schema of the
PACEvolve stages with a generated valid instance and returning code for the implementation
stage.

The scripted candidates (test_optimize_cpu.py explains them) share one C++ source, so the
extension is built once. Most are the fused kernel with a different comment, i.e. equally
fast: the islands stagnate, and with a short freeze period, a small momentum β and a high
stagnation threshold ε_rel an island intervenes every two or three generations. Small K_idea
and K_hyp make pruning and summarisation happen within a few iterations.

Which intervention a stagnant island of several picks is drawn from the CE weights, which
follow the islands' measured progress: two islands that both closed most of the gap to the
target (the fused kernel does, about 0.9 of it) cross over with probability above 0.99 and
backtrack with under 0.01, so a two-island run shows crossovers, and backtracking is shown
by a one-island run, where a stagnant island always backtracks. Neither outcome depends on
timing noise.
"""
import json

import pytest

from conftest import FAST
from test_optimize_cpu import (CAND_FUSED, CAND_SLOW, LLM_FLAGS, TASK, FakeLlm, show)

N = 28
PACEVOLVE_FLAGS = ["--set", "pacevolve.freeze_iterations=1", "--set", "pacevolve.momentum_beta=0.3",
                   "--set", "pacevolve.stagnation_threshold=0.5",
                   "--set", "pacevolve.max_ideas=2", "--set", "pacevolve.max_hypotheses=1",
                   "--set", "pacevolve.ideas_per_generation=3", "--set",
                   "pacevolve.fruitless_limit=2"]


def replies():
    # Every structured stage is answered with a generated instance of its schema (the
    # fake server's "auto" replies): ids are taken from the prompt's idea pool, texts are
    # unique per call, every third classification merges into an existing idea.
    out = [{"structured": True, "auto": True}]
    # Code: equally fast fused variants, and a slower one now and then.
    for k in range(60):
        code = (CAND_SLOW if k % 5 == 4 else CAND_FUSED) + f"\n# variant {k}\n"
        out.append({"text": f"Variant {k}.\n\n```python\n{code}```\n"})
    return out


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    path = tmp_path_factory.mktemp("pacevolve-replies") / "replies.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in replies()))
    s = FakeLlm(path)
    yield s
    s.close()


@pytest.fixture(scope="module")
def pacevolve_run(kforge, server, tmp_path_factory):
    db = tmp_path_factory.mktemp("pacevolve") / "kforge.db"
    proc = kforge("optimize", "--task", TASK, "--device", "cpu", "--db", db, "--iterations", N,
                  "--strategy", "pacevolve", "--islands", 2, "--llm", server.spec, *FAST,
                  *LLM_FLAGS, *PACEVOLVE_FLAGS, "--set", "run.max_unusable_proposals=40",
                  "--json", timeout=1500)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    return {"db": db, "result": result, "show": show(kforge, result["run_id"], db),
            "requests": server.requests()}


def test_pacevolve_two_islands_completes_and_finds_a_speedup(pacevolve_run):
    r = pacevolve_run["result"]
    assert r["status"] == "completed" and r["evaluations"] == N
    assert r["best"]["speedup"]["eager"] > 1.0
    s = pacevolve_run["show"]
    assert s["strategy"] == "pacevolve"
    islands = {e["island"] for e in s["evaluations"]}
    assert islands == {0, 1}
    # The structured stages went out with their JSON schemas.
    schemas = set()
    for req in pacevolve_run["requests"]:
        fmt = req["body"].get("response_format") or {}
        if fmt.get("type") == "json_schema":
            schemas.add(fmt["json_schema"]["name"])
    assert {"pacevolve_idea_generation", "pacevolve_idea_classification",
            "pacevolve_idea_selection"} <= schemas


def test_pacevolve_events_show_ideas_backtrack_and_crossover(pacevolve_run):
    types = [e["type"] for e in pacevolve_run["show"]["events"]]
    for wanted in ("idea_added", "idea_merged", "idea_pruned", "hypotheses_summarized"):
        assert wanted in types, (wanted, sorted(set(types)))
    assert "backtrack" in types or "crossover" in types, sorted(set(types))
    interventions = [e for e in pacevolve_run["show"]["events"]
                     if e["type"] in ("backtrack", "crossover")]
    # An intervention happens after the freeze period, on a stagnant island.
    for e in interventions:
        assert e["iteration"] >= 2 and e["island"] in (0, 1)
        assert e["detail"], e


def test_pacevolve_two_islands_cross_over_as_their_weights_say(pacevolve_run):
    interventions = [e for e in pacevolve_run["show"]["events"]
                     if e["type"] in ("backtrack", "crossover")]
    assert any(e["type"] == "crossover" for e in interventions), interventions
    for e in interventions:
        d = e["detail"]
        w = d["weights"]
        total = w["backtrack"] + sum(w["crossover"])
        # The recorded probability is the drawn action's share of the weights.
        if e["type"] == "crossover":
            assert d["partner"] != e["island"]
            share = w["crossover"][d["partner"]] / total
        else:
            share = w["backtrack"] / total
        assert d["action_probability"] == pytest.approx(share, rel=1e-9), d


def test_pacevolve_one_island_backtracks_when_stagnant(kforge, server, tmp_path):
    n = 8
    db = tmp_path / "kforge.db"
    proc = kforge("optimize", "--task", TASK, "--device", "cpu", "--db", db, "--iterations", n,
                  "--strategy", "pacevolve", "--islands", 1, "--llm", server.spec, *FAST,
                  *LLM_FLAGS, *PACEVOLVE_FLAGS, "--set", "run.max_unusable_proposals=40",
                  "--json", timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    assert result["status"] == "completed" and result["evaluations"] == n
    events = show(kforge, result["run_id"], db)["events"]
    interventions = [e for e in events if e["type"] in ("backtrack", "crossover")]
    assert interventions and all(e["type"] == "backtrack" for e in interventions), interventions
    for e in interventions:
        d = e["detail"]
        assert d["action_probability"] == 1.0 and not d["collaborative"]
        assert 0 <= d["to_state"] < d["states"] and d["to_generation"] <= d["from_generation"]
        assert d["momentum"] < d["stagnation_threshold"] or d["trigger"] != "momentum"


def test_pacevolve_state_is_saved_for_resume(pacevolve_run):
    import sqlite3
    con = sqlite3.connect(pacevolve_run["db"])
    (state,) = con.execute("SELECT state_json FROM strategy_states WHERE run_id = ?",
                           (pacevolve_run["result"]["run_id"],)).fetchone()
    state = json.loads(state)
    assert state["version"] == 1
    assert state["search"]["evaluations"] == N
    assert len(state["search"]["islands"]) == 2


def test_contrastive_completes_and_shows_scored_variants(kforge, server, tmp_path):
    db = tmp_path / "kforge.db"
    proc = kforge("optimize", "--task", TASK, "--device", "cpu", "--db", db, "--iterations", 4,
                  "--strategy", "contrastive", "--llm", server.spec, *FAST, *LLM_FLAGS,
                  "--json", "--set", "run.max_in_flight=1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    r = json.loads(proc.stdout)
    assert r["status"] == "completed" and r["evaluations"] == 4
    assert r["best"]["speedup"]["eager"] > 1.0
    prompts = [json.dumps(req["body"]) for req in server.requests()[-4:]]
    assert any("Earlier variants and their measured speedups" in p for p in prompts)
    assert all("Performance Analysis" in p for p in prompts)


def test_pacevolve_sigkill_then_resume_continues_the_saved_search(kforge, kforge_env, server,
                                                                   tmp_path):
    """Killed mid-run, the resumed run restores the saved search state and ends with exactly
    N unique evaluations; the events recorded before the kill are kept."""
    from test_optimize_cpu import start, wait_for_run_id
    import signal
    import time
    n = 6
    db = tmp_path / "kforge.db"
    args = ["optimize", "--task", TASK, "--device", "cpu", "--db", db, "--iterations", n,
            "--strategy", "pacevolve", "--llm", server.spec, *FAST, *LLM_FLAGS,
            *PACEVOLVE_FLAGS, "--set", "run.max_unusable_proposals=40"]
    proc = start(kforge_env, args)
    # Kill once the search has recorded a few evaluations (so there is state to restore).
    run_id, deadline = None, time.monotonic() + 600
    while time.monotonic() < deadline:
        run_id = run_id or wait_for_run_id(kforge, db, time.monotonic() + 1)
        if run_id and len(show(kforge, run_id, db)["evaluations"]) >= 2:
            break
        time.sleep(0.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = show(kforge, run_id, db)
    assert 2 <= len(before["evaluations"]) < n, "killed too late to test resume"
    final = kforge("resume", run_id, "--db", db, "--json", timeout=1200)
    assert final.returncode == 0, final.stderr[-3000:]
    result = json.loads(final.stdout)
    s = show(kforge, run_id, db)
    shas = [e["sha256"] for e in s["evaluations"]]
    assert result["status"] == "completed" and result["evaluations"] == n
    assert len(shas) == n and len(set(shas)) == n
    types = [e["type"] for e in s["events"]]
    assert "run_resumed" in types
    assert any(e["type"] == "idea_added" for e in before["events"])
    # The resumed search is the saved one, continued: it holds the evaluations recorded
    # before the kill as well as those after. (A fresh search would ignore the earlier
    # ones. One candidate may be missing: one submitted in the instant between its record
    # and the state's save is evaluated and counted, but unknown to the search.)
    import sqlite3
    con = sqlite3.connect(db)
    (state,) = con.execute("SELECT state_json FROM strategy_states WHERE run_id = ?",
                           (run_id,)).fetchone()
    assert json.loads(state)["search"]["evaluations"] >= n - 1
