"""`kforge kb` and `kforge profile` through the real binary (CPU machine: no ncu runs)."""
import json

import pytest


def test_show_without_a_database_is_the_shipped_default(kforge, tmp_path):
    proc = kforge("kb", "show", "--json", "--db", tmp_path / "none.db")
    assert proc.returncode == 0, proc.stderr
    kb = json.loads(proc.stdout)
    assert set(kb) == {"states", "optimizations"}  # CONTRACT.md, exactly
    names = {s["name"] for s in kb["states"]}
    assert {"memory_bound", "compute_bound", "latency_bound", "occupancy_limited",
            "launch_overhead_bound", "near_roofline"} <= names
    for s in kb["states"]:
        assert set(s) >= {"id", "name", "description", "signature"}
    opt = kb["optimizations"][0]
    assert set(opt) >= {"id", "state", "technique", "description", "attempts", "successes",
                        "mean_log_speedup", "predicted_gain"}
    assert all(o["attempts"] == 0 for o in kb["optimizations"])
    assert not (tmp_path / "none.db").exists()  # showing creates nothing


def test_export_import_merge_round_trip(kforge, tmp_path):
    db, out = tmp_path / "kforge.db", tmp_path / "kb.json"
    proc = kforge("kb", "export", out, "--db", db)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["format"] == "kforge-kb" and doc["arch"] == "sm_90"
    # Record experience in the file, import it, and read it back.
    for s in doc["states"]:
        if s["name"] == "memory_bound":
            for o in s["optimizations"]:
                if o["technique"] == "kernel_fusion":
                    o.update(attempts=4, successes=3, sum_log_speedup=1.2)
    out.write_text(json.dumps(doc))
    assert kforge("kb", "import", out, "--db", db).returncode == 0
    shown = json.loads(kforge("kb", "show", "--json", "--db", db).stdout)
    fusion = next(o for o in shown["optimizations"] if o["id"] == "memory_bound/kernel_fusion")
    assert (fusion["attempts"], fusion["successes"]) == (4, 3)
    # Merging the same file adds its statistics once more.
    assert kforge("kb", "merge", out, "--db", db).returncode == 0
    shown = json.loads(kforge("kb", "show", "--json", "--db", db).stdout)
    fusion = next(o for o in shown["optimizations"] if o["id"] == "memory_bound/kernel_fusion")
    assert (fusion["attempts"], fusion["successes"]) == (8, 6)
    # Exported again, it is what was stored; another arch still has the default.
    again = tmp_path / "again.json"
    assert kforge("kb", "export", again, "--db", db).returncode == 0
    exported = json.loads(again.read_text())
    mem = next(s for s in exported["states"] if s["name"] == "memory_bound")
    assert next(o for o in mem["optimizations"]
                if o["technique"] == "kernel_fusion")["attempts"] == 8
    other = json.loads(kforge("kb", "show", "--json", "--arch", "sm_80", "--db", db).stdout)
    assert all(o["attempts"] == 0 for o in other["optimizations"])


@pytest.mark.parametrize("content,why", [
    ("not json", "not JSON"),
    ('{"format": "other"}', "kforge-kb"),
    ('{"format": "kforge-kb", "version": 1, "arch": "sm_80", "states": []}', "sm_80"),
])
def test_bad_files_are_one_line_and_exit_2(kforge, tmp_path, content, why):
    f = tmp_path / "bad.json"
    f.write_text(content)
    proc = kforge("kb", "import", f, "--db", tmp_path / "kforge.db")
    assert proc.returncode == 2
    assert why in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_profile_bad_input_and_missing_ncu(kforge, tmp_path):
    proc = kforge("profile", "--task", tmp_path / "missing.py")
    assert proc.returncode == 2 and "no such file" in proc.stderr
    task = tmp_path / "t.py"
    task.write_text("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                    "        return x\ndef get_inputs():\n    return [torch.ones(2)]\n"
                    "def get_init_inputs():\n    return []\n")
    proc = kforge("profile", "--task", task, "--ncu", tmp_path / "no-ncu")
    assert proc.returncode == 1
    assert proc.stderr.strip()
