"""Tests of the tensor transport format (tensors.py): bit-exact round trips of
every dtype and of plain values, and rejection of damaged or hostile files
(the reference reads what the candidate wrote). One test prints the old
torch.save/torch.load time beside the new format's for an 8192x8192 fp32
tensor; it asserts nothing about speed."""
import json
import math
import os
import struct
import sys
import tempfile
import time
from pathlib import Path

import pytest
import torch

HARNESS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HARNESS))

from kforge_harness import tensors  # noqa: E402
from kforge_harness.compare import compare_lists  # noqa: E402
from kforge_harness.tensors import (ALIGN, MAGIC, OpaqueValue, load_tensors,  # noqa: E402
                                    save_tensors)

HAS_CUDA = torch.cuda.is_available()

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.int16,
          torch.int32, torch.int64, torch.uint8, torch.bool, torch.complex64, torch.complex128]


def sample(dtype, shape=(3, 5), seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if dtype.is_floating_point or dtype.is_complex:
        x = torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)
        flat = x.reshape(-1)
        if flat.numel() >= 4 and not dtype.is_complex:
            flat[:4] = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0]).to(dtype)
        return x
    info = torch.iinfo(dtype)
    return torch.randint(max(info.min, -1000), min(info.max, 1000), shape, generator=g,
                         dtype=dtype)


def same_bits(a, b):
    """Bitwise equality (NaN payloads and -0.0 included)."""
    assert isinstance(b, torch.Tensor)
    assert a.dtype == b.dtype and a.shape == b.shape
    ab = a.contiguous().reshape(-1).view(torch.uint8)
    bb = b.contiguous().reshape(-1).view(torch.uint8)
    return torch.equal(ab.cpu(), bb.cpu())


def round_trip(tmp_path, items, device="cpu"):
    path = tmp_path / "t.pt"
    save_tensors(path, items)
    return load_tensors(path, device)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_dtype_round_trips_bit_exact(tmp_path, dtype):
    x = sample(dtype)
    (y,) = round_trip(tmp_path, [x])
    assert same_bits(x, y)
    assert y.is_contiguous() and y.device.type == "cpu"


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_zero_dim_and_empty_tensors(tmp_path, dtype):
    scalar = sample(dtype, shape=())
    empties = [torch.empty(0, dtype=dtype), torch.empty(3, 0, 2, dtype=dtype)]
    out = round_trip(tmp_path, [scalar, *empties])
    assert out[0].shape == () and same_bits(scalar, out[0])
    for e, o in zip(empties, out[1:]):
        assert o.shape == e.shape and o.dtype == dtype


def test_nan_payload_survives(tmp_path):
    x = torch.tensor([0x7FC00001, 0xFFC12345, 0x7F800001], dtype=torch.int64).to(torch.int32)
    x = x.view(torch.float32)
    (y,) = round_trip(tmp_path, [x])
    assert torch.equal(x.view(torch.int32), y.view(torch.int32))


def test_non_contiguous_and_lazy_views_are_saved_as_their_values(tmp_path):
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    transposed = base.t()
    strided = base[:, ::2]
    offset = base[1:]  # contiguous, at a storage offset
    conj = torch.randn(4, dtype=torch.complex64).conj()  # lazy conjugate bit
    neg = torch.randn(4, dtype=torch.complex64).conj().imag  # lazy negation bit
    grad = torch.ones(3, requires_grad=True) * 2
    items = [transposed, strided, offset, conj, neg, grad]
    out = round_trip(tmp_path, items)
    for x, y in zip(items, out):
        assert torch.equal(x.detach().resolve_conj().resolve_neg(), y)
        assert y.is_contiguous() and not y.is_conj() and not y.requires_grad


def test_mixed_list_with_plain_values_and_opaque_objects(tmp_path):
    class Custom:
        pass

    items = [torch.ones(2), 7, -(2 ** 70), 1.5, 0.1, -0.0, float("inf"), -float("inf"),
             float("nan"), 5e-324, True, False, None, "héllo\n\"x\"", "\ud800",
             (1, 2), [torch.ones(1)], {"a": 1}, Custom(), torch.Size([2])]
    out = round_trip(tmp_path, items)
    assert len(out) == len(items)
    assert torch.equal(out[0], items[0])
    for x, y in zip(items[1:15], out[1:15]):
        assert type(y) is type(x)
        if isinstance(x, float) and math.isnan(x):
            assert math.isnan(y)
        else:
            assert y == x
            if isinstance(x, float):
                assert math.copysign(1, x) == math.copysign(1, y)  # -0.0 stays -0.0
    names = [o.type_name for o in out[15:]]
    assert all(isinstance(o, OpaqueValue) for o in out[15:])
    assert names[:3] == ["tuple", "list", "dict"]
    assert names[3].endswith("Custom") and names[4] == "torch.Size"


def test_int_stays_int_and_bool_stays_bool(tmp_path):
    out = round_trip(tmp_path, [1, 1.0, True, 0, 0.0, False])
    assert [type(v) for v in out] == [int, float, bool, int, float, bool]


def test_loaded_tensors_own_their_memory(tmp_path):
    path = tmp_path / "t.pt"
    x = torch.arange(1000, dtype=torch.float32)
    save_tensors(path, [x])
    (y,) = load_tensors(path, "cpu")
    with open(path, "r+b") as f:
        f.seek(-4, os.SEEK_END)
        f.write(b"\xff\xff\xff\xff")
    os.unlink(path)
    assert torch.equal(x, y)
    y.add_(1)  # writable, no warning needed
    assert torch.equal(x + 1, y)


def test_chunked_transfers_round_trip(tmp_path, monkeypatch):
    # Chunks smaller than the tensors, and a tensor that ends mid-chunk.
    monkeypatch.setattr(tensors, "STAGING_BYTES", 4096)
    items = [torch.randn(10_001), sample(torch.int16, (3, 1001)), torch.randn(1024)]
    out = round_trip(tmp_path, items)
    assert all(same_bits(x, y) for x, y in zip(items, out))


def test_layout_is_the_documented_one(tmp_path):
    path = tmp_path / "t.pt"
    save_tensors(path, [torch.arange(3, dtype=torch.int16), 2.5, "s", None])
    raw = path.read_bytes()
    assert raw.startswith(MAGIC)
    (length,) = struct.unpack("<Q", raw[len(MAGIC):len(MAGIC) + 8])
    header = json.loads(raw[len(MAGIC) + 8:len(MAGIC) + 8 + length])
    t, f, s, n = header["items"]
    assert t == {"kind": "tensor", "dtype": "int16", "shape": [3], "offset": t["offset"],
                 "nbytes": 6}
    assert t["offset"] % ALIGN == 0 and t["offset"] >= len(MAGIC) + 8 + length
    assert raw[t["offset"]:t["offset"] + 6] == b"\0\0\1\0\2\0"
    assert f == {"kind": "float", "repr": "2.5"}
    assert s == {"kind": "value", "value": "s"} and n == {"kind": "value", "value": None}


def test_many_tensors_keep_aligned_offsets(tmp_path):
    # Enough items that the offsets' digits push the data start back.
    items = [torch.full((i % 7,), i, dtype=torch.int16) for i in range(300)]
    out = round_trip(tmp_path, items)
    assert all(torch.equal(x, y) for x, y in zip(items, out))


def test_unsupported_tensors_are_refused_when_saving(tmp_path):
    with pytest.raises(ValueError, match="sparse"):
        save_tensors(tmp_path / "t.pt", [torch.eye(2).to_sparse()])


def test_compare_names_an_opaque_output(tmp_path):
    (cand,) = round_trip(tmp_path, [(torch.ones(2),)])
    st = compare_lists([torch.ones(2)], [cand], 1e-5, 1e-5)
    assert st["outputs"][0]["detail"] == "output is tuple, not a tensor"


# -- hostile files --------------------------------------------------------
DATA_START = 256


def forge(path, items, payload=b"", header_len=None, magic=MAGIC, data_start=DATA_START):
    """A file with this header, padded so data starts at data_start, then payload."""
    header = json.dumps({"items": items}).encode() if not isinstance(items, bytes) else items
    prefix = len(magic) + 8
    pad = max(0, data_start - prefix - len(header))
    header += b" " * pad
    length = len(header) if header_len is None else header_len
    path.write_bytes(magic + struct.pack("<Q", length) + header + payload)
    return path


def tensor_item(**over):
    item = {"kind": "tensor", "dtype": "float32", "shape": [4], "offset": DATA_START,
            "nbytes": 16}
    item.update(over)
    return item


def test_the_forged_baseline_loads(tmp_path):
    payload = struct.pack("<4f", 1, 2, 3, 4)
    (y,) = load_tensors(forge(tmp_path / "f.pt", [tensor_item()], payload), "cpu")
    assert y.tolist() == [1, 2, 3, 4]


PAYLOAD = bytes(16)
HOSTILE = {
    "bad magic": dict(items=[tensor_item()], magic=b"KFTENSOR2\n"),
    "pickle": "pickle",
    "empty file": "empty",
    "truncated data": dict(items=[tensor_item()], payload=bytes(8)),
    "offset past end": dict(items=[tensor_item(offset=DATA_START + 4096)]),
    "nbytes mismatch": dict(items=[tensor_item(nbytes=12)]),
    "nbytes lies with shape": dict(items=[tensor_item(shape=[1 << 40], nbytes=16)]),
    "unknown dtype": dict(items=[tensor_item(dtype="object")]),
    "dtype not a str": dict(items=[tensor_item(dtype=["float32"])]),
    "huge header length": dict(items=[tensor_item()], header_len=1 << 40),
    "header past end": dict(items=[tensor_item()], header_len=DATA_START + 10_000),
    "misaligned offset": dict(items=[tensor_item(offset=DATA_START + 4)],
                              payload=bytes(32)),
    "offset inside header": dict(items=[tensor_item(offset=0)]),
    "overlapping tensors": dict(items=[tensor_item(), tensor_item()]),
    "negative dim": dict(items=[tensor_item(shape=[-4], nbytes=-16)]),
    "bool dim": dict(items=[tensor_item(shape=[True, 4])]),
    "float dim": dict(items=[tensor_item(shape=[4.0])]),
    "too many dims": dict(items=[tensor_item(shape=[1] * 65 + [4])]),
    "overflowing zero-size shape": dict(items=[tensor_item(shape=[0, 1 << 40, 1 << 40],
                                                           nbytes=0)]),
    "string offset": dict(items=[tensor_item(offset=str(DATA_START))]),
    "not json": dict(items=b"{items: nope}"),
    "NaN token": dict(items=b'{"items": [{"kind": "value", "value": NaN}]}'),
    "not utf-8": dict(items=b'{"items": ["\xff"]}'),
    "deep nesting": dict(items=b"[" * 100_000),
    "no items": dict(items=b'{"tensors": []}'),
    "item not an object": dict(items=[3]),
    "unknown kind": dict(items=[{"kind": "pickle", "data": "..."}]),
    "list value": dict(items=[{"kind": "value", "value": [1, 2]}]),
    "bad float repr": dict(items=[{"kind": "float", "repr": "one"}]),
    "opaque without a name": dict(items=[{"kind": "opaque", "type": 3}]),
}


@pytest.mark.parametrize("case", list(HOSTILE), ids=list(HOSTILE))
def test_hostile_files_raise_value_error(tmp_path, case):
    path = tmp_path / "f.pt"
    spec = HOSTILE[case]
    if spec == "pickle":
        torch.save([torch.ones(4)], path)
    elif spec == "empty":
        path.write_bytes(b"")
    else:
        spec = dict(spec)
        forge(path, spec.pop("items"), spec.pop("payload", PAYLOAD), **spec)
    with pytest.raises(ValueError, match="tensor file"):
        load_tensors(path, "cpu")


def test_a_file_cut_short_while_read_is_a_value_error(tmp_path, monkeypatch):
    # The size checked up front is stale: the writer truncated the file since.
    path = forge(tmp_path / "f.pt", [tensor_item()], bytes(8))
    real = os.stat_result(os.stat(path))
    stale = os.stat_result((*real[:6], real.st_size + 8, *real[7:]))
    monkeypatch.setattr(tensors.os, "fstat", lambda fd: stale)
    with pytest.raises(ValueError, match="truncated data"):
        load_tensors(path, "cpu")


def test_bool_bytes_are_normalised(tmp_path):
    item = tensor_item(dtype="bool", shape=[4], nbytes=4)
    (y,) = load_tensors(forge(tmp_path / "f.pt", [item], bytes([0, 1, 2, 255])), "cpu")
    assert y.view(torch.uint8).tolist() == [0, 1, 1, 1]


@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_round_trip(tmp_path, monkeypatch, dtype):
    monkeypatch.setattr(tensors, "STAGING_BYTES", 1 << 16)
    items = [sample(dtype, (300, 301)).cuda(), sample(dtype, ()).cuda(),
             torch.empty(0, 2, dtype=dtype, device="cuda"), sample(dtype, (7, 9)).cuda().t(), 3]
    out = round_trip(tmp_path, items, device="cuda")
    for x, y in zip(items[:4], out[:4]):
        assert y.is_cuda and same_bits(x, y)
    assert out[4] == 3
    cpu = load_tensors(tmp_path / "t.pt", "cpu")
    assert all(same_bits(x, y) for x, y in zip(items[:4], cpu[:4]))


def test_timing_against_torch_save(capsys):
    """Prints save and load times, old and new, for 8192x8192 fp32; on a GPU
    machine also from and to the GPU. Measures only."""
    folder = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
    devices = ["cpu"] + (["cuda"] if HAS_CUDA else [])
    lines = []
    for device in devices:
        x = torch.randn(8192, 8192, device=device)
        old_path = os.path.join(folder, f"kforge_test_old_{os.getpid()}.pt")
        new_path = os.path.join(folder, f"kforge_test_new_{os.getpid()}.pt")

        def sync():
            if device == "cuda":
                torch.cuda.synchronize()

        def old_save():
            torch.save([x.detach().to("cpu", copy=True).contiguous()], old_path)

        def old_load():
            return [t.to(device) for t in torch.load(old_path, map_location="cpu",
                                                     weights_only=True)]

        def best(fn, runs=5):
            times = []
            for _ in range(runs):
                sync()
                t0 = time.perf_counter()
                result = fn()
                sync()
                times.append(time.perf_counter() - t0)
                del result
            return min(times) * 1e3

        try:
            timings = (best(old_save), best(old_load),
                       best(lambda: save_tensors(new_path, [x])),
                       best(lambda: load_tensors(new_path, device)))
            assert torch.equal(load_tensors(new_path, device)[0], x)
        finally:
            for p in (old_path, new_path):
                if os.path.exists(p):
                    os.unlink(p)
        lines.append(f"8192x8192 fp32 {device} via {folder}: torch.save {timings[0]:.0f} ms, "
                     f"torch.load {timings[1]:.0f} ms; save_tensors {timings[2]:.0f} ms, "
                     f"load_tensors {timings[3]:.0f} ms (best of 5)")
    with capsys.disabled():
        print("\n" + "\n".join(lines))


def test_reference_compare_fails_the_candidate_on_an_unusable_file(tmp_path):
    """A damaged or hostile output file is the candidate's failed comparison
    (count_ok false, with the reason), not an error of the reference process."""
    from types import SimpleNamespace

    from kforge_harness.reference import Reference

    ref = Reference(channel=None)
    ref.device = SimpleNamespace(torch_device=torch.device("cpu"))
    ref.trials = {0: {"outputs": [torch.ones(4)]}}
    good = tmp_path / "good.pt"
    save_tensors(str(good), [torch.ones(4)])
    reply = ref.cmd_compare({"trial": 0, "file": str(good), "atol": 1e-4, "rtol": 1e-4})
    assert reply["count_ok"] and reply["outputs"][0]["mismatched"] == 0
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a tensor file")
    reply = ref.cmd_compare({"trial": 0, "file": str(bad), "atol": 1e-4, "rtol": 1e-4})
    assert reply["ok"] and not reply["count_ok"]
    assert "unusable" in reply["detail"]
    reply = ref.cmd_compare_pair({"file_a": str(good), "file_b": str(tmp_path / "missing.pt"),
                                  "atol": 1e-4, "rtol": 1e-4})
    assert not reply["count_ok"]
