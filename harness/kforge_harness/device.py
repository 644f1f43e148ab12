"""What the harness needs of the device: sync, an L2/LLC flush, properties and
measured ceilings (bandwidth, matrix throughput) for the speed-of-light floor."""
import os
import time

import torch

# Captured at harness import, before any candidate code runs: the harness
# always calls these originals, and the runtime checks compare identities.
_perf_counter = time.perf_counter


def _read_cache_bytes():
    """Largest CPU cache (normally the LLC) from sysfs; 32 MiB if unknown."""
    best = 0
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for entry in os.listdir(base):
            try:
                with open(os.path.join(base, entry, "size")) as f:
                    text = f.read().strip()
                mult = {"K": 1024, "M": 1024 * 1024}.get(text[-1], 1)
                val = int(text[:-1]) if text[-1] in "KM" else int(text)
                best = max(best, val * mult)
            except (OSError, ValueError):
                continue
    except OSError:
        pass
    return best or 32 * 1024 * 1024


class Device:
    def __init__(self, kind, index=0):
        if kind == "auto":  # as documented for --device: the GPU when there is one
            kind = "cuda" if torch.cuda.is_available() else "cpu"
        self.kind = kind
        self.index = index
        if kind == "cuda":
            if not torch.cuda.is_available():
                raise RuntimeError("CUDA requested but torch.cuda.is_available() is False")
            torch.cuda.set_device(index)
            self.torch_device = torch.device("cuda", index)
            props = torch.cuda.get_device_properties(index)
            self.name = props.name
            self.cache_bytes = int(getattr(props, "L2_cache_size", 50 * 1024 * 1024))
            self.sm_count = props.multi_processor_count
            self.capability = f"{props.major}.{props.minor}"
            self._sync = torch.cuda.synchronize
        else:
            self.torch_device = torch.device("cpu")
            self.name = _cpu_name()
            self.cache_bytes = _read_cache_bytes()
            self.sm_count = os.cpu_count() or 1
            self.capability = ""
            self._sync = lambda *a, **k: None
        # nvbench's rule: flush with a buffer of at least twice the cache.
        self.flush_bytes = 2 * self.cache_bytes
        self._flush_buf = None
        self._persist_reset = _persisting_l2_reset() if kind == "cuda" else None

    def sync(self):
        self._sync()

    def flush_cache(self):
        self.enqueue_flush()
        self.sync()

    def new_flush_buffer(self):
        """A flush buffer at another address (taken while the old one is
        still held, so the allocator cannot hand the same block back)."""
        if self.kind != "cuda":
            return
        self._flush_buf = torch.empty(self.flush_bytes // 4, dtype=torch.int32,
                                      device=self.torch_device)

    def enqueue_flush(self):
        """Queues the cache flush on the current stream without waiting for it
        (on a CPU device the flush is synchronous anyway)."""
        if self._flush_buf is None:
            n = self.flush_bytes // 4
            self._flush_buf = torch.empty(n, dtype=torch.int32, device=self.torch_device)
        # A write of every line evicts everything the previous sample left.
        self._flush_buf.fill_(int(_perf_counter() * 1e6) & 0x7FFFFFFF)
        if self._persist_reset is not None:
            self._persist_reset()

    def pci_slot(self):
        """The GPU's PCI address as sysfs names it ("0000:00:06.0"), or None."""
        if self.kind != "cuda":
            return None
        props = torch.cuda.get_device_properties(self.index)
        bus = getattr(props, "pci_bus_id", None)
        if bus is None:
            return None
        return (f"{getattr(props, 'pci_domain_id', 0):04x}:{bus:02x}:"
                f"{getattr(props, 'pci_device_id', 0):02x}.0")

    def info(self):
        return {"kind": self.kind, "name": self.name, "index": self.index,
                "cache_bytes": self.cache_bytes, "sm_count": self.sm_count,
                "capability": self.capability, "torch_version": torch.__version__,
                "pci_slot": self.pci_slot()}

    def measure_ceilings(self, dtype=torch.float32):
        """Measured memory bandwidth (bytes/s) and matrix throughput (FLOP/s)."""
        dev = self.torch_device
        nbytes = max(8 * self.cache_bytes, 256 * 1024 * 1024 if self.kind == "cuda" else 64 << 20)
        src = torch.empty(nbytes // 4, dtype=torch.float32, device=dev).uniform_()
        dst = torch.empty_like(src)
        bw = _best_rate(lambda: dst.copy_(src), 2 * nbytes, self)
        n = 8192 if self.kind == "cuda" else 1024
        a = torch.randn(n, n, dtype=dtype, device=dev)
        b = torch.randn(n, n, dtype=dtype, device=dev)
        flops = _best_rate(lambda: torch.mm(a, b), 2 * n ** 3, self)
        del src, dst, a, b
        return {"bandwidth_bytes_per_s": bw, "matmul_flops_per_s": flops, "dtype": str(dtype)}


def _best_rate(fn, work, device, reps=10):
    fn()
    device.sync()
    times = []
    for _ in range(reps):
        t0 = _perf_counter()
        fn()
        device.sync()
        times.append(_perf_counter() - t0)
    times.sort()
    return work / times[len(times) // 2]


def _cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "cpu"


class ProcessPinning:
    """Binds every thread of this process to the CPUs kforge names, and puts
    the original masks back on request. kforge decides where (see
    src/eval/cpu_placement.h); this only carries it out. Threads started
    while bound inherit the binding."""

    def __init__(self):
        self._saved = None   # tid -> mask, from before the first binding

    @staticmethod
    def _threads():
        try:
            return [int(t) for t in os.listdir("/proc/self/task")]
        except OSError:
            return [0]

    def apply(self, cpus):
        """cpus: a list to bind to, or None to restore. Returns the calling
        thread's mask afterwards (sorted), or None where affinity is not
        supported."""
        if not hasattr(os, "sched_setaffinity"):
            return None
        if cpus is None:
            for tid, mask in (self._saved or {}).items():
                try:
                    os.sched_setaffinity(tid, mask)
                except OSError:
                    pass   # the thread has ended
            self._saved = None
            return sorted(os.sched_getaffinity(0))
        if self._saved is None:
            self._saved = {}
            for tid in self._threads():
                try:
                    self._saved[tid] = os.sched_getaffinity(tid)
                except OSError:
                    pass
        for tid in self._threads():
            try:
                os.sched_setaffinity(tid, cpus)
            except OSError:
                pass
        return sorted(os.sched_getaffinity(0))


def _persisting_l2_reset():
    """cudaCtxResetPersistingL2Cache from the CUDA runtime torch loaded, if found."""
    import ctypes
    import glob

    candidates = []
    try:
        import nvidia.cuda_runtime  # noqa: F401
        base = os.path.dirname(nvidia.cuda_runtime.__file__)
        candidates += glob.glob(os.path.join(base, "lib", "libcudart.so*"))
    except Exception:  # noqa: BLE001
        pass
    candidates += glob.glob(os.path.join(os.path.dirname(torch.__file__), "lib", "libcudart*.so*"))
    candidates += ["libcudart.so", "libcudart.so.13", "libcudart.so.12"]
    for name in candidates:
        try:
            lib = ctypes.CDLL(name)
            fn = lib.cudaCtxResetPersistingL2Cache
            fn.restype = ctypes.c_int
            return lambda: fn()
        except (OSError, AttributeError):
            continue
    return None


def main(argv=None):
    """`python -m kforge_harness.device KIND [INDEX]`: the device identity the
    harness processes would report (kind auto resolves as they resolve it),
    as one JSON line. kforge baseline keys its stored baselines by it."""
    import json
    import sys

    args = sys.argv[1:] if argv is None else argv
    kind = args[0] if args else "auto"
    index = int(args[1]) if len(args) > 1 else 0
    try:
        info = Device(kind, index).info()
    except Exception as exc:  # noqa: BLE001 - no such device, CUDA unusable
        print(json.dumps({"ok": False, "error": str(exc)}))
        return 1
    print(json.dumps({"ok": True, **info}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
