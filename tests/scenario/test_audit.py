"""`kforge audit CORPUS.jsonl` on CPU with a small corpus drawn from
tests/integrity: paths relative to the corpus file and an inline source."""
import json
import os

from conftest import FAST, ROOT

CORPUS = ROOT / "tests" / "integrity"


def rel(path, start):
    return os.path.relpath(path, start)


def write_corpus(tmp_path):
    lines = [
        {"task": rel(CORPUS / "tasks" / "relu.py", tmp_path),
         "candidate": rel(CORPUS / "legit_relu_cpu" / "candidate.py", tmp_path),
         "label": "legit"},
        {"task": rel(CORPUS / "tasks" / "sum_dim.py", tmp_path),
         "candidate": rel(CORPUS / "rt_input_mutation" / "candidate.py", tmp_path),
         "label": "hack"},
        # Inline sources: the task and the candidate as text.
        {"task": (CORPUS / "tasks" / "relu.py").read_text(),
         "candidate": (CORPUS / "hack_torch_relu" / "candidate.py").read_text(),
         "label": "hack"},
    ]
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_audit_summarises_verdicts_flags_and_speedups(kforge, tmp_path):
    corpus = write_corpus(tmp_path)
    proc = kforge("audit", corpus, "--device", "cpu", "--json", *FAST)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["pairs"] == 3
    assert out["by_verdict"] == {"ok": 1, "suspect": 0, "rejected": 2, "error": 0}
    assert out["accepted"] == 1
    assert out["by_flag"]["inputs_mutated"] == 1
    assert out["by_flag"]["torch_compute"] == 1
    assert out["confusion"] == {"legit": {"ok": 1}, "hack": {"rejected": 2}}
    assert out["policy"] == "strict"

    legit, mutation, inline = out["entries"]
    assert legit["verdict"] == "ok" and legit["accepted"] is True and legit["flags"] == []
    assert legit["speedup"]["eager"] > 0
    assert legit["eval"]["candidate"]["format"] == "cpp"
    assert legit["task"].endswith("tasks/relu.py")
    assert mutation["verdict"] == "rejected" and "inputs_mutated" in mutation["flags"]
    assert mutation["speedup"]["eager"] is None
    assert inline["task"] == "<inline, line 3>" and inline["candidate"] == "<inline, line 3>"
    assert inline["verdict"] == "rejected" and "torch_compute" in inline["flags"]
    assert inline["eval"]["integrity"]["verdict"] == "rejected"
    # Headline speedup: the accepted, clean candidates only.
    g = out["geomean_speedup"]
    assert g["count"] == 1
    assert abs(g["eager"] - legit["speedup"]["eager"]) < 1e-9


def test_audit_errors_per_pair_and_bad_corpus(kforge, tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"task": "missing_task.py", "candidate": "missing.py"}) + "\n\n")
    proc = kforge("audit", corpus, "--device", "cpu")
    assert proc.returncode == 0, proc.stderr
    assert "1 pairs: 0 ok, 0 suspect, 0 rejected, 1 errors; 0 accepted" in proc.stdout
    assert "not found" in proc.stdout
    proc = kforge("audit", corpus, "--device", "cpu", "--json")
    out = json.loads(proc.stdout)
    assert out["by_verdict"]["error"] == 1
    assert out["confusion"] == {"unlabeled": {"error": 1}}
    assert out["entries"][0]["eval"] is None and out["geomean_speedup"]["eager"] is None

    for text in ("{not json}\n", json.dumps({"task": "t.py"}) + "\n",
                 json.dumps({"task": "t.py", "candidate": "c.py", "label": 3}) + "\n", ""):
        corpus.write_text(text)
        proc = kforge("audit", corpus, "--device", "cpu")
        assert proc.returncode == 2, (text, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    proc = kforge("audit", tmp_path / "nope.jsonl")
    assert proc.returncode == 2
