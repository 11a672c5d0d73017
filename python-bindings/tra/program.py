"""tra.compile: plan a model for a hardware description, compile it and run
it in this process on NumPy arrays.

    program = tra.compile(model, hw="local", entry="ffn")
    print(program.explain())           # as `tra-compile --emit=plan --explain`
    program.signature.inputs           # [Tensor(name='h', shape=(4, 64), dtype='f32'), ...]
    out = program(h=h, ffn_norm=n, w1=w1, w2=w2, w3=w3)
    out["out"]                         # a NumPy array

The planning is `tra-compile`'s (plan::planModule); the entry is compiled
into a shared library through the library cache (~/.cache/tra, or
`cache_dir`; "" compiles without the cache) and loaded into this process.
Inputs are checked against the entry's signature and converted to its
element types: f32, f16 and bf16 accept real arrays (bf16 is rounded to
nearest even and its results come back as float32, NumPy having no
bfloat16), i64 and i32 accept integer arrays whose values fit, i1 accepts
booleans (or integers 0 and 1). Every error is a ValueError.
"""
from collections import namedtuple

import numpy as np

from . import _tra

Tensor = namedtuple("Tensor", "name shape dtype")
Tensor.__doc__ = "An input or output of a program: name, shape, element type."
Signature = namedtuple("Signature", "inputs outputs")
Signature.__doc__ = "The inputs and outputs of a program's entry function."


def _model_text(model):
    if isinstance(model, str):
        return model
    # A tra.Builder's text with locations: diagnostics name Python lines.
    text = getattr(model, "_source_text", None) or getattr(model, "text",
                                                            None)
    if callable(text):
        return text()
    raise ValueError("tra.compile takes tra IR text or a model with a "
                     "text() method (tra.Model, tra.Builder), not %s"
                     % type(model).__name__)


def compile(model, hw="local", entry=None, cache_dir=None, threads=0,
            emulate_on_cpu=False, beam=32, max_split_indices=2):
    """Plans `model` (tra IR text, a tra.Model or a tra.Builder) for `hw`
    ("local" or a hardware file) and, for one device, compiles its entry
    (`entry`, else @main, else its only public function) and loads it.

    Returns a Program. With several devices (or GPU devices without
    `emulate_on_cpu`) the Program is planned but not compiled: explain()
    and plan() work, calling it raises ValueError saying how to run it.
    `threads` (0: the hardware file's cores) is the program's thread count;
    `beam` and `max_split_indices` are tra-compile's search options.
    """
    text = _model_text(model)
    if cache_dir is not None:
        cache_dir = str(cache_dir)
    impl = _tra._compile(text, str(hw), entry or "", cache_dir, int(threads),
                         bool(emulate_on_cpu), int(beam),
                         int(max_split_indices))
    return Program(impl)


class Program:
    """A model compiled by tra.compile; call it with NumPy arrays."""

    def __init__(self, impl):
        self._impl = impl
        sig = impl.signature
        self._inputs = sig["inputs"]
        self._outputs = sig["outputs"]
        self.signature = Signature(
            [Tensor(t["name"], t["shape"], t["dtype"]) for t in self._inputs],
            [Tensor(t["name"], t["shape"], t["dtype"]) for t in self._outputs])

    @property
    def entry(self):
        """The name of the compiled function."""
        return self._impl.entry

    @property
    def hardware(self):
        """The name of the hardware description planned for."""
        return self._impl.hardware

    @property
    def devices(self):
        """Devices of the hardware description."""
        return self._impl.devices

    @property
    def runnable(self):
        """Whether the program runs in this process (one device)."""
        return self._impl.runnable

    @property
    def from_cache(self):
        """Whether the library came from the cache (nothing compiled)."""
        return self._impl.from_cache

    @property
    def compile_seconds(self):
        return self._impl.compile_seconds

    @property
    def cache_path(self):
        """The library in the cache ("" when compiled without it)."""
        return self._impl.cache_path

    def explain(self):
        """The plan, as `tra-compile --emit=plan --explain` prints it."""
        return self._impl.explain()

    def plan(self):
        """The planned IR (tra_plan dialect), as `tra-compile --emit=plan`."""
        return self._impl.plan()

    def __repr__(self):
        args = ", ".join("%s: %s%s" % (t.name, t.dtype, list(t.shape))
                         for t in self.signature.inputs)
        return "<tra.Program @%s(%s) on %s>" % (self.entry, args,
                                                self.hardware)

    def __call__(self, *args, **kwargs):
        """Runs the program: program(name=array, ...) or program({name:
        array}). Returns {output name: NumPy array}."""
        if args:
            if len(args) != 1 or not isinstance(args[0], dict):
                raise ValueError("call a program with keyword arrays or one "
                                 "dict of arrays keyed by input name")
            inputs = dict(args[0])
            for name in kwargs:
                if name in inputs:
                    raise ValueError("input '%s' given twice" % name)
            inputs.update(kwargs)
        else:
            inputs = kwargs
        if not self._impl.runnable:
            raise ValueError(self._impl.not_runnable_reason)
        names = [t["name"] for t in self._inputs]
        unknown = sorted(set(inputs) - set(names))
        if unknown:
            raise ValueError("@%s has no input named %s (inputs: %s)"
                             % (self.entry,
                                ", ".join("'%s'" % n for n in unknown),
                                ", ".join(names)))
        missing = [n for n in names if n not in inputs]
        if missing:
            raise ValueError("no array for input %s of @%s"
                             % (", ".join("'%s'" % n for n in missing),
                                self.entry))
        buffers = [_to_buffer(inputs[t["name"]], t) for t in self._inputs]
        results = self._impl.run(buffers)
        return {t["name"]: _from_buffer(r, t)
                for t, r in zip(self._outputs, results)}


def _to_buffer(value, tensor):
    """`value` as a C-contiguous array of `tensor`'s storage dtype."""
    name, dtype = tensor["name"], tensor["dtype"]
    try:
        array = np.asarray(value)
    except Exception as e:  # e.g. ragged nested lists
        raise ValueError("input '%s' is not an array: %s" % (name, e))
    shape = tuple(tensor["shape"])
    if array.shape != shape:
        raise ValueError("input '%s' has the wrong shape: %s, expected %s"
                         % (name, array.shape, shape))
    kind = array.dtype.kind
    if dtype in ("f32", "f16", "bf16"):
        if kind not in "biuf":
            raise ValueError("input '%s' is %s: expected real numbers, got %s"
                             % (name, dtype, array.dtype))
        if dtype == "f32":
            return np.asarray(array, dtype=np.float32, order="C")
        if dtype == "f16":
            return np.asarray(array, dtype=np.float16, order="C")
        return _round_to_bf16(array)
    if dtype in ("i64", "i32"):
        if kind not in "biu":
            raise ValueError("input '%s' is %s: expected integers, got %s"
                             % (name, dtype, array.dtype))
        target = np.int64 if dtype == "i64" else np.int32
        info = np.iinfo(target)
        if array.size and kind != "b" and (array.min() < info.min
                                           or array.max() > info.max):
            raise ValueError("input '%s' is %s: its values do not fit"
                             % (name, dtype))
        return np.asarray(array, dtype=target, order="C")
    if dtype == "i1":
        if kind == "b":
            return np.asarray(array, dtype=np.bool_, order="C")
        if kind in "iu" and np.all((array == 0) | (array == 1)):
            return np.asarray(array, dtype=np.bool_, order="C")
        raise ValueError("input '%s' is i1: expected booleans, got %s"
                         % (name, array.dtype))
    raise ValueError("input '%s' has the unsupported element type %s"
                     % (name, dtype))


def _round_to_bf16(array):
    """The bf16 bits (uint16) nearest to `array` (via float32; ties to
    even; NaN stays NaN)."""
    f = np.asarray(array, dtype=np.float32, order="C")
    bits = f.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = np.isnan(f)
    rounded[nan] = (bits[nan] >> 16) | 0x0040  # keep the sign, stay quiet NaN
    return np.asarray(rounded, dtype=np.uint16, order="C")


def _from_buffer(array, tensor):
    if tensor["dtype"] == "bf16":
        return (array.astype(np.uint32) << 16).view(np.float32)
    return array
