"""Tests of the sample server's relocation between batches (timing.py): the
timed programs read their inputs from one list, which relocate() refills with
copies at new addresses. The CUDA cases run only where a GPU is present."""
import sys
from pathlib import Path

import pytest
import torch

HARNESS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HARNESS))

from kforge_harness.device import Device  # noqa: E402
from kforge_harness.timing import SampleServer  # noqa: E402

HAS_CUDA = torch.cuda.is_available()


def server_with(device_kind, inputs):
    server = SampleServer(channel=None, device=Device(device_kind))
    server.register("prog", lambda: inputs[0] * 2 + inputs[1])
    server.set_inputs(inputs)
    return server


def test_relocate_is_a_no_op_on_cpu():
    inputs = [torch.arange(6.0), torch.ones(6)]
    first = [x.data_ptr() for x in inputs]
    server = server_with("cpu", inputs)
    assert server.relocate(1) is False
    assert [x.data_ptr() for x in inputs] == first


def test_relocate_without_inputs_does_nothing():
    server = SampleServer(channel=None, device=Device("cpu"))
    assert server.relocate(1) is False


@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")
def test_relocate_moves_inputs_keeps_values_and_strides():
    dev = torch.device("cuda")
    a = torch.rand(64, 32, device=dev).t()  # a transposed view: strides must survive
    b = torch.rand(32, 64, device=dev)
    inputs = [a, b, 3]  # non-tensor inputs stay as they are
    expect = [a.clone(), b.clone()]
    server = server_with("cuda", inputs)
    server.programs["prog"] = lambda: inputs[0] * 2 + inputs[1]
    before = server.programs["prog"]()
    for seed in range(5):
        previous = {inputs[0].data_ptr(), inputs[1].data_ptr()}
        assert server.relocate(seed) is True
        assert inputs[2] == 3
        assert inputs[0].stride() == a.stride() and inputs[0].shape == a.shape
        assert torch.equal(inputs[0], expect[0]) and torch.equal(inputs[1], expect[1])
        ptrs = {inputs[0].data_ptr(), inputs[1].data_ptr()}
        # The copies are taken while the old tensors live: always new addresses.
        assert not ptrs & previous
        assert torch.equal(server.programs["prog"](), before)


@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")
def test_relocate_moves_the_flush_buffer_and_forgets_last_outputs():
    dev = torch.device("cuda")
    inputs = [torch.rand(1024, device=dev), torch.rand(1024, device=dev)]
    server = server_with("cuda", inputs)
    server.device.flush_cache()
    old = server.device._flush_buf.data_ptr()
    server.last_outputs["prog"] = server.programs["prog"]()
    assert server.relocate(11) is True
    assert server.device._flush_buf.data_ptr() != old
    assert server.last_outputs == {}


def test_pinning_binds_every_thread_and_restores():
    import os
    import threading
    from kforge_harness.device import ProcessPinning
    before = os.sched_getaffinity(0)
    target = max(before)
    started = threading.Event()
    stop = threading.Event()
    tids = []

    def idle():
        tids.append(threading.get_native_id())
        started.set()
        stop.wait()

    t = threading.Thread(target=idle)
    t.start()
    started.wait()
    try:
        pinning = ProcessPinning()
        assert pinning.apply([target]) == [target]
        assert os.sched_getaffinity(tids[0]) == {target}
        assert pinning.apply(None) == sorted(before)
        assert os.sched_getaffinity(tids[0]) == before
    finally:
        stop.set()
        t.join()
        os.sched_setaffinity(0, before)
