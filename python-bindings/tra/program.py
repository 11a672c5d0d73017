"""tra.compile: plan a model for a hardware description, compile it and run
it in this process on NumPy arrays.

    program = tra.compile(model, hw="local", entry="ffn")
    print(program.explain())           # as `tra-compile --emit=plan --explain`
    program.signature.inputs           # [Tensor(name='h', shape=(4, 64), dtype='f32'), ...]
    out = program(h=h, ffn_norm=n, w1=w1, w2=w2, w3=w3)
    out["out"]                         # a NumPy array

The planning is `tra-compile`'s (plan::planModule). For one device the
entry is compiled into a shared library through the library cache
(~/.cache/tra, or `cache_dir`; "" compiles without the cache), loaded into
this process and called there (without the GIL). For several devices the
plan is compiled, when first called, into the MPI executable `tra-compile
--emit=exe` writes, and each call runs it on this machine as one MPI job of
one rank per device (`mpirun --oversubscribe`, inputs and outputs through
.npy files); GPU hardware files need `emulate_on_cpu=True` (CPU code on
every rank), as with tra-compile's --emulate-on-cpu.
Inputs are checked against the entry's signature and converted to its
element types: f32, f16 and bf16 accept real arrays (bf16 is rounded to
nearest even and its results come back as float32, NumPy having no
bfloat16), i64 and i32 accept integer arrays whose values fit, i1 accepts
booleans (or integers 0 and 1). Every error is a ValueError.
"""
import os
import shutil
import subprocess
import tempfile
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

    Returns a Program. With several devices it is planned now and compiled
    into an MPI executable when first called (each call is one mpirun job
    on this machine). GPU devices need `emulate_on_cpu` (CPU code); without
    it explain() and plan() work and calling raises ValueError saying how
    to run the plan. `threads` is the thread count of the program (0: the
    hardware file's cores; with several devices, of each rank, 0: this
    machine's cores shared among the ranks); `beam` and
    `max_split_indices` are tra-compile's search options.
    """
    text = _model_text(model)
    if cache_dir is not None:
        cache_dir = str(cache_dir)
    impl = _tra._compile(text, str(hw), entry or "", cache_dir, int(threads),
                         bool(emulate_on_cpu), int(beam),
                         int(max_split_indices))
    return Program(impl, int(threads))


class Program:
    """A model compiled by tra.compile; call it with NumPy arrays."""

    def __init__(self, impl, threads=0):
        self._impl = impl
        self._threads_given = threads > 0
        self._mpi_dir = None
        self._mpi_exe = None
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
    def mpi(self):
        """Whether calls run the plan as one MPI job of one rank per device
        on this machine (several devices)."""
        return self._impl.mpi

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
        if not self._impl.runnable and not self._impl.mpi:
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
        if self._impl.mpi:
            return self._run_mpi(buffers)
        results = self._impl.run(buffers)
        return {t["name"]: _from_buffer(r, t)
                for t, r in zip(self._outputs, results)}

    def _run_mpi(self, buffers):
        """Runs the plan for several devices as one MPI job on this machine
        (mpirun --oversubscribe, one rank per device), as `tra-compile
        --emit=exe` and `mpirun` would: inputs and outputs go through .npy
        files in a temporary directory."""
        mpirun = shutil.which("mpirun")
        if mpirun is None:
            raise ValueError(
                "%s has %d devices: running its plan needs mpirun (Open "
                "MPI), which is not on PATH" % (self.hardware, self.devices))
        if self._mpi_dir is None:
            self._mpi_dir = tempfile.TemporaryDirectory(prefix="tra-mpi-")
            self._mpi_exe = os.path.join(self._mpi_dir.name, self.entry)
            try:
                self._impl.compile_mpi(self._mpi_exe)
            except ValueError:
                self._mpi_dir.cleanup()
                self._mpi_dir = None
                raise
        ranks = self.devices
        threads = self._impl.mpi_threads
        if not self._threads_given:
            threads = max(1, (os.cpu_count() or 1) // ranks)
        with tempfile.TemporaryDirectory(dir=self._mpi_dir.name) as work:
            command = [mpirun, "--oversubscribe", "-np", str(ranks)]
            if hasattr(os, "geteuid") and os.geteuid() == 0:
                command.append("--allow-run-as-root")
            command += [self._mpi_exe, "--threads", str(threads)]
            for i, (t, b) in enumerate(zip(self._inputs, buffers)):
                path = os.path.join(work, "in%d.npy" % i)
                # The executable reads bf16 inputs from f32 files.
                np.save(path, _from_buffer(b, t))
                command += ["--input", "%s=%s" % (t["name"], path)]
            outputs = []
            for i, t in enumerate(self._outputs):
                path = os.path.join(work, "out%d.npy" % i)
                outputs.append(path)
                command += ["--output", "%s=%s" % (t["name"], path)]
            done = subprocess.run(command, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
            if done.returncode != 0:
                raise ValueError("mpirun -np %d of @%s failed (exit %d):\n%s"
                                 % (ranks, self.entry, done.returncode,
                                    done.stdout[-4000:]))
            # bf16 outputs come as f32 files, as from the in-process run.
            return {t["name"]: np.load(path)
                    for t, path in zip(self._outputs, outputs)}


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
    if dtype in ("i64", "i32", "i8"):
        if kind not in "biu":
            raise ValueError("input '%s' is %s: expected integers, got %s"
                             % (name, dtype, array.dtype))
        target = {"i64": np.int64, "i32": np.int32, "i8": np.int8}[dtype]
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
