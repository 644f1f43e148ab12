"""Loading a KernelBench-style task file into a module, with clear errors."""
import importlib.util
import sys
import traceback


class TaskError(Exception):
    """The task (or candidate) file is malformed; the message is one clear line."""


def _short_exc(exc):
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:500]


def import_file(path, module_name):
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise TaskError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise TaskError(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from None
    except Exception as exc:  # noqa: BLE001 - any import failure is the file's fault
        raise TaskError(f"{path}: importing it raised {_short_exc(exc)}") from None
    return module


def load_task(path):
    module = import_file(path, "kforge_task")
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, name):
            raise TaskError(f"{path}: the task defines no '{name}'")
    return module


def call_checked(fn, what):
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001
        raise TaskError(f"{what} raised {_short_exc(exc)}") from None


def describe_exception(exc):
    tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return _short_exc(exc), "".join(tb[-6:])
