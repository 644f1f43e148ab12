"""The knowledge base in a run, end to end on the CPU (docs/knowledge-base.md, "In a run"):
`kforge optimize` against the fake OpenAI-compatible server, whose code replies name a
technique and whose structured replies answer the three textual-gradient stages.

The run stops after two evaluations (a reply without code, with run.max_unusable_proposals=1)
and is resumed to three: each candidate's update is applied once, the stored statistics
match the kb_update events, and resuming the completed run changes nothing.
"""
import json

import pytest

from test_optimize_cpu import CAND_FUSED, CAND_SLOW, LLM_FLAGS, TASK, FakeLlm, show
from conftest import FAST

STAGES = ("kb_policy_evaluation", "kb_perf_gap_analysis", "kb_parameter_update")
NOTES = "fusing the elementwise chain into one C++ loop pays off"


def code_reply(technique, code):
    return {"text": f"The four passes over memory are the cost.\n**Technique:** `{technique}`\n\n"
                    f"```python\n{code}```\n"}


REPLIES = [
    code_reply("kernel_fusion", CAND_FUSED + "\n# fused once\n"),
    code_reply("coalesced_access", CAND_SLOW),
    {"text": "I would rather think about it first; no code this time."},
    code_reply("Kernel Fusion", CAND_FUSED + "\n# fused again\n"),
    {"schema": "kb_policy_evaluation",
     "text": json.dumps({"verdict": "better", "expected": "1.1x", "achieved": "more",
                         "evidence": "one pass instead of four"})},
    {"schema": "kb_perf_gap_analysis",
     "text": json.dumps({"explanation": "the passes were memory-bound", "causes": ["traffic"],
                         "state_after": "memory_bound"})},
    {"schema": "kb_parameter_update",
     "text": json.dumps({"notes": NOTES, "description": "", "new_state": None,
                         "new_techniques": [{"technique": "loop_blocking",
                                             "description": "block the loop for the cache"}]})},
]


@pytest.fixture(scope="module")
def kb_run(kforge, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("kb-run")
    replies = tmp / "replies.jsonl"
    replies.write_text("".join(json.dumps(r) + "\n" for r in REPLIES))
    server = FakeLlm(replies)
    db = tmp / "kforge.db"
    try:
        first = kforge("optimize", "--task", TASK, "--device", "cpu", "--db", db,
                       "--iterations", 3, "--llm", server.spec, *FAST, *LLM_FLAGS,
                       "--set", "run.max_in_flight=1", "--set", "run.max_unusable_proposals=1",
                       "--json")
        assert first.returncode == 0, first.stderr[-3000:]
        stopped = json.loads(first.stdout)
        stopped_show = show(kforge, stopped["run_id"], db)
        kb_after_stop = kb_show(kforge, db)
        requests_before_resume = len(server.requests())
        resumed = kforge("resume", stopped["run_id"], "--db", db,
                         "--set", "run.max_unusable_proposals=10", "--json")
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        yield {"db": db, "stopped": stopped, "stopped_show": stopped_show,
               "kb_after_stop": kb_after_stop, "resumed": json.loads(resumed.stdout),
               "requests": server.requests(), "requests_before_resume": requests_before_resume,
               "stderr": first.stderr + resumed.stderr}
    finally:
        server.close()


def kb_show(kforge, db):
    proc = kforge("kb", "show", "--arch", "cpu", "--json", "--db", db)
    assert proc.returncode == 0, proc.stderr
    return {o["id"]: o for o in json.loads(proc.stdout)["optimizations"]}


def prompt_of(request):
    return "\n".join(str(m.get("content")) for m in request["body"]["messages"])


def schema_of(request):
    fmt = request["body"].get("response_format") or {}
    return fmt.get("json_schema", {}).get("name") if fmt.get("type") == "json_schema" else None


def test_code_prompts_carry_the_knowledge_base_section(kb_run):
    code_requests = [r for r in kb_run["requests"] if schema_of(r) is None]
    assert len(code_requests) == 4  # three candidates and the reply without code
    for request in code_requests:
        prompt = prompt_of(request)
        assert "## Knowledge base" in prompt
        # A CPU run has no profile: the state is unknown, and the prompt says why.
        assert "performance state `unknown`" in prompt and "on the CPU" in prompt
        assert "`kernel_fusion` (predicted gain" in prompt
        assert "Technique: kernel_fusion" in prompt  # how to name the technique
        # Before the answer format, which stays last.
        assert prompt.index("## Knowledge base") < prompt.index("Answer format")


def test_each_named_technique_runs_the_three_stages_once(kb_run):
    assert kb_run["stopped"]["status"] == "stopped" and kb_run["stopped"]["evaluations"] == 2
    assert kb_run["resumed"]["status"] == "completed" and kb_run["resumed"]["evaluations"] == 3
    stages = [schema_of(r) for r in kb_run["requests"] if schema_of(r) is not None]
    # One candidate's stages run in order; two candidates' may interleave.
    assert stages[:3] == list(STAGES), stages
    assert all(stages.count(stage) == 3 for stage in STAGES), stages
    # The stage prompts show the entry and the measurement.
    first_stage = next(r for r in kb_run["requests"] if schema_of(r) == STAGES[0])
    assert "Technique `kernel_fusion` in state `unknown`" in prompt_of(first_stage)
    assert "Speedup over eager PyTorch" in prompt_of(first_stage)
    # Recorded like every call: the run's LLM accounting counts them (3 code calls, 2 × 3 stages).
    assert kb_run["stopped"]["llm"]["calls"] == 3 + 2 * 3


def test_kb_update_events_say_what_changed(kforge, kb_run):
    s = show(kforge, kb_run["resumed"]["run_id"], kb_run["db"])
    techniques = [e for e in s["events"] if e["type"] == "kb_technique"]
    updates = [e for e in s["events"] if e["type"] == "kb_update"]
    assert len(techniques) == 3 and len(updates) == 3
    assert [u["detail"]["candidate_id"] for u in updates] == \
        [t["detail"]["candidate_id"] for t in techniques]
    assert len({u["detail"]["candidate_id"] for u in updates}) == 3
    by_technique = {}
    for u in updates:
        d = u["detail"]
        assert set(u) >= {"type", "island", "iteration", "detail"}
        assert d["state"] == "unknown"
        assert set(d["predicted_gain"]) == {"at_selection", "old", "new"}
        assert d["stages"] == {stage: "ok" for stage in STAGES}
        assert d["verdict"] == "better" and d["state_after"] == "memory_bound"
        assert d["text_update"]["notes"] == NOTES
        by_technique.setdefault(d["technique"], []).append(d)
    # "Kernel Fusion" in the third reply is the offered kernel_fusion.
    assert sorted(by_technique) == ["coalesced_access", "kernel_fusion"]
    fusion = by_technique["kernel_fusion"]
    assert len(fusion) == 2 and fusion[0]["accepted"]
    assert fusion[1]["predicted_gain"]["old"] == pytest.approx(fusion[0]["predicted_gain"]["new"])
    # New techniques from the text update join the state (once).
    assert fusion[0]["text_update"]["new_techniques"] == ["loop_blocking"]
    assert "new_techniques" not in fusion[1]["text_update"]
    assert "kb: kernel_fusion in state unknown" in kb_run["stderr"]


def test_the_stored_knowledge_base_learned_each_candidate_once(kforge, kb_run):
    before = kb_run["kb_after_stop"]
    assert before["unknown/kernel_fusion"]["attempts"] == 1
    assert before["unknown/coalesced_access"]["attempts"] == 1
    after = kb_show(kforge, kb_run["db"])
    assert after["unknown/kernel_fusion"]["attempts"] == 2
    assert after["unknown/coalesced_access"]["attempts"] == 1
    assert "unknown/loop_blocking" in after and after["unknown/loop_blocking"]["attempts"] == 0
    s = show(kforge, kb_run["resumed"]["run_id"], kb_run["db"])
    updates = [e for e in s["events"] if e["type"] == "kb_update"]
    fusion = [u["detail"] for u in updates if u["detail"]["technique"] == "kernel_fusion"]
    # A success is a clean acceptance at least 1.01x over the parent (the second fused
    # candidate builds on the first, as fast as it).
    successes = sum(1 for d in fusion if d["accepted"] and d["speedup_over_parent"] >= 1.01)
    assert after["unknown/kernel_fusion"]["successes"] == successes
    last_fusion = {"detail": fusion[-1]}
    assert after["unknown/kernel_fusion"]["predicted_gain"] == \
        pytest.approx(last_fusion["detail"]["predicted_gain"]["new"])
    # Another architecture's knowledge base is untouched.
    sm90 = json.loads(kforge("kb", "show", "--json", "--db", kb_run["db"]).stdout)
    assert all(o["attempts"] == 0 for o in sm90["optimizations"])

    # Resuming the completed run applies nothing again.
    again = kforge("resume", kb_run["resumed"]["run_id"], "--db", kb_run["db"], "--json")
    assert again.returncode == 0, again.stderr
    assert kb_show(kforge, kb_run["db"]) == after


def test_kb_can_be_switched_off(kforge, tmp_path):
    replies = tmp_path / "replies.jsonl"
    replies.write_text(json.dumps(REPLIES[0]) + "\n")
    server = FakeLlm(replies)
    try:
        db = tmp_path / "k.db"
        proc = kforge("optimize", "--task", TASK, "--device", "cpu", "--db", db, "--iterations", 1,
                      "--llm", server.spec, *FAST, *LLM_FLAGS, "--set", "kb.enabled=false",
                      "--json")
        assert proc.returncode == 0, proc.stderr[-3000:]
        requests = server.requests()
        assert len(requests) == 1 and "## Knowledge base" not in prompt_of(requests[0])
        s = show(kforge, json.loads(proc.stdout)["run_id"], db)
        assert not [e for e in s["events"] if e["type"].startswith("kb_")]
    finally:
        server.close()
    bad = kforge("optimize", "--task", TASK, "--device", "cpu", "--db", tmp_path / "b.db",
                 "--llm", "openai:x@http://127.0.0.1:9/v1", "--set", "kb.profile=ncu")
    assert bad.returncode == 2 and "kb.profile=ncu" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr
