"""Writing tra models in Python.

    import numpy as np
    import tra
    from tra import builder as tb

    b = tra.Builder()
    f = b.function("mlp")
    x = f.arg("x", (8, 64))                      # f32 unless dtype= says
    w1 = f.arg("w1", (64, 128))
    w2 = f.arg("w2", (128, 64))
    h = f.einsum("sd,df->sf", x, w1)             # combiner mul, reduce sum
    h = f.map(lambda v: v * tb.sigmoid(v), h)    # traced to a scalar body
    y = f.einsum("sf,fd->sd", h, w2)
    f.returns(y=y)                               # results named by tra.name
    print(b.text())                              # model-level tra IR
    model = b.model()                            # parsed and verified
    program = tra.compile(b)                     # see tra.compile

Functions take tensor arguments (shape, element type f32, f16, bf16, i64,
i32 or i1) and build the dialect's operations: `einsum` (combiners and
aggregations of tra.einsum), `map` (a Python function called once on
scalar tracers; its arithmetic, comparisons and the math functions of this
module become the body), `reshape`, `slice`, `concat`, `fill`, `convert`,
`gather` and `update_slice`. Mistakes found while building (shapes,
element types, a function that cannot be traced) raise ValueError at the
Python line that made them; the verifier's diagnostics (from `model()` or
`tra.compile`) point to the same lines.

Map functions see tracers, not numbers: use `+ - * / // % **`, unary `-`,
comparisons (giving i1), `&`, `|`, `^`, `~` on i1, `where(c, a, b)`,
`maximum`, `minimum`, `exp`, `exp2`, `log`, `log2`, `sqrt`, `rsqrt`,
`tanh`, `sin`, `cos`, `abs`, `erf`, `floor`, `ceil`, `sigmoid`, `silu`,
`astype(x, dtype)` and `index(d)` (the result's index along dimension d,
as i64). NumPy's ufuncs (np.exp, np.maximum, ...) map to the same
operations. Python's `if`, `and`, `or`, `math.*` and `float()` cannot see
a traced value: they raise ValueError.
"""
import inspect
import math
import os
import re
import threading

import numpy as np

__all__ = [
    "Builder", "Function", "Value", "Scalar", "einsum", "map", "where",
    "maximum", "minimum", "exp", "exp2", "log", "log2", "sqrt", "rsqrt",
    "tanh", "sin", "cos", "abs", "erf", "floor", "ceil", "sigmoid", "silu",
    "astype", "index",
]

_ELEMENT_TYPES = ("f32", "f16", "bf16", "i64", "i32", "i1")
_FLOAT_TYPES = ("f32", "f16", "bf16")
_INT_TYPES = ("i64", "i32")
_DTYPE_ALIASES = {
    "float32": "f32", "float16": "f16", "half": "f16", "bfloat16": "bf16",
    "int64": "i64", "int32": "i32", "bool": "i1",
}
_COMBINERS = ("mul", "add", "max", "min", "sub", "div", "id", "neg", "exp",
              "silu", "rsqrt", "sqrt", "square", "tanh", "abs", "recip",
              "relu", "sigmoid")
_NARY_COMBINERS = ("mul", "add", "max", "min")
_BINARY_COMBINERS = ("sub", "div")
_AGGREGATIONS = ("sum", "max", "min", "prod")
_HERE = os.path.abspath(__file__)
_MARK = re.compile("\x00([0-9]+)\x00")


def _element_type(dtype):
    """"f32", ..., "i1" for a tra name, a NumPy dtype or a Python type."""
    if isinstance(dtype, str):
        name = _DTYPE_ALIASES.get(dtype, dtype)
        if name in _ELEMENT_TYPES:
            return name
    else:
        try:
            name = _DTYPE_ALIASES.get(np.dtype(dtype).name)
        except TypeError:
            name = None
        if name:
            return name
    raise ValueError("unsupported element type %r (expected one of %s)"
                     % (dtype, ", ".join(_ELEMENT_TYPES)))


def _tensor_type(shape, dtype):
    return "tensor<%s%s>" % ("".join("%dx" % d for d in shape), dtype)


def _quote(s):
    return '"%s"' % s.replace("\\", "\\\\").replace('"', '\\"')


def _location():
    """loc("file":line:col) of the innermost caller outside this file."""
    frame = inspect.currentframe()
    while frame is not None and os.path.abspath(
            frame.f_code.co_filename) == _HERE:
        frame = frame.f_back
    if frame is None:
        return ""
    col = 1
    try:
        info = inspect.getframeinfo(frame, context=0)
        pos = getattr(info, "positions", None)
        if pos is not None and pos.col_offset is not None:
            col = pos.col_offset + 1
    except Exception:  # pragma: no cover - best effort
        pass
    return "loc(%s:%d:%d)" % (_quote(frame.f_code.co_filename),
                              frame.f_lineno, col)


def _float_literal(value, dtype):
    """An MLIR float literal of `value` for arith.constant (hex for the
    values decimal cannot write)."""
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        bits = {
            "f32": (0x7FC00000, 0x7F800000, 0xFF800000),
            "f16": (0x7E00, 0x7C00, 0xFC00),
            "bf16": (0x7FC0, 0x7F80, 0xFF80),
        }[dtype]
        pick = 0 if math.isnan(value) else (1 if value > 0 else 2)
        return "0x%X" % bits[pick]
    return _decimal(value)


def _decimal(value):
    s = repr(float(value))
    mantissa, e, exponent = s.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + (e + exponent if e else "")


def _shape_tuple(shape):
    try:
        dims = tuple(int(d) for d in shape)
    except TypeError:
        raise ValueError("a shape is a sequence of extents, got %r"
                         % (shape,))
    if any(d < 0 for d in dims):
        raise ValueError("negative extent in shape %s" % (dims,))
    return dims


def _parse_spec(spec, ranks, what):
    """Splits "ab,b->a" into input terms and the output term, checking the
    letters and the ranks."""
    if not isinstance(spec, str) or "->" not in spec:
        raise ValueError("%s spec %r must read 'in0,in1,...->out'"
                         % (what, spec))
    lhs, out = spec.split("->", 1)
    terms = lhs.split(",") if ranks else []
    if lhs == "" and len(ranks) == 1:
        terms = [""]
    if len(terms) != len(ranks):
        raise ValueError("%s spec %r has %d input terms for %d operands"
                         % (what, spec, len(terms), len(ranks)))
    for term in terms + [out]:
        for c in term:
            if not ("a" <= c <= "z" or "A" <= c <= "Z"):
                raise ValueError("%s spec %r: index %r is not a letter"
                                 % (what, spec, c))
        if len(set(term)) != len(term):
            raise ValueError("%s spec %r: term %r repeats an index"
                             % (what, spec, term))
    for i, (term, rank) in enumerate(zip(terms, ranks)):
        if len(term) != rank:
            raise ValueError("%s spec %r: term %r of operand %d has %d "
                             "indices for a rank-%d tensor"
                             % (what, spec, term, i, len(term), rank))
    return terms, out


def _extents(spec, terms, operands, what):
    extents = {}
    for i, (term, operand) in enumerate(zip(terms, operands)):
        for c, d in zip(term, operand.shape):
            if extents.setdefault(c, d) != d:
                raise ValueError("%s spec %r: index %r is %d in one operand "
                                 "and %d in operand %d"
                                 % (what, spec, c, extents[c], d, i))
    return extents


#===----------------------------------------------------------------------===#
# Tensors and functions
#===----------------------------------------------------------------------===#


class Value:
    """A tensor value of a function being built: an argument or the result
    of an operation."""

    def __init__(self, function, ssa, shape, dtype):
        self.function = function
        self._ssa = ssa
        self.shape = tuple(shape)
        self.dtype = dtype

    @property
    def type(self):
        """The MLIR type, e.g. tensor<4x64xf32>."""
        return _tensor_type(self.shape, self.dtype)

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return "<tra.builder.Value %s: %s in @%s>" % (self._ssa, self.type,
                                                      self.function.name)

    def __bool__(self):
        raise ValueError("a tensor being built has no truth value")


class Function:
    """A func.func being built; made by Builder.function."""

    def __init__(self, builder, name, public=True):
        self.builder = builder
        self.name = name
        self.public = public
        self._args = []      # (Value, name)
        self._results = []   # (Value, name)
        self._lines = []
        self._locations = []  # loc(...) of every operation, see _mark
        self._next = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __repr__(self):
        return "<tra.builder.Function @%s>" % self.name

    # -- arguments and results ----------------------------------------------

    def arg(self, name, shape, dtype="f32"):
        """Adds a tensor argument named `name` (its tra.name)."""
        _check_name(name, "argument")
        if any(n == name for _, n in self._args):
            raise ValueError("@%s has two arguments named '%s'"
                             % (self.name, name))
        v = Value(self, "%%arg%d" % len(self._args), _shape_tuple(shape),
                  _element_type(dtype))
        self._args.append((v, name))
        return v

    def returns(self, *values, **named):
        """Adds results: returns(y=value, ...) names them; positional values
        are named result<i>."""
        for v in values:
            self._add_result("result%d" % len(self._results), v)
        for name, v in named.items():
            self._add_result(name, v)

    def result(self, name, value):
        """Adds one result named `name`."""
        self._add_result(name, value)

    def _add_result(self, name, value):
        _check_name(name, "result")
        self._own(value)
        if any(n == name for _, n in self._results):
            raise ValueError("@%s has two results named '%s'"
                             % (self.name, name))
        self._results.append((value, name))

    # -- operations ---------------------------------------------------------

    def einsum(self, spec, *operands, combiner=None, reduce="sum"):
        """tra.einsum: `combiner` (default mul for several operands, id for
        one) joins the operands' elements, `reduce` (sum, max, min, prod)
        aggregates the indices absent from the output."""
        self._own(*operands)
        if not operands:
            raise ValueError("einsum needs at least one operand")
        combiner = combiner or ("mul" if len(operands) > 1 else "id")
        if combiner not in _COMBINERS:
            raise ValueError("unknown einsum combiner %r (one of %s)"
                             % (combiner, ", ".join(_COMBINERS)))
        n = len(operands)
        if combiner in _BINARY_COMBINERS and n != 2:
            raise ValueError("combiner %s takes two operands, got %d"
                             % (combiner, n))
        if combiner not in _NARY_COMBINERS + _BINARY_COMBINERS and n != 1:
            raise ValueError("combiner %s takes one operand, got %d"
                             % (combiner, n))
        if reduce not in _AGGREGATIONS:
            raise ValueError("unknown einsum aggregation %r (one of %s)"
                             % (reduce, ", ".join(_AGGREGATIONS)))
        dtype = operands[0].dtype
        if dtype not in _FLOAT_TYPES or any(o.dtype != dtype
                                            for o in operands):
            raise ValueError("einsum operands share one float element type "
                             "(f32, f16, bf16), got %s"
                             % ", ".join(o.dtype for o in operands))
        terms, out = _parse_spec(spec, [o.ndim for o in operands], "einsum")
        extents = _extents(spec, terms, operands, "einsum")
        for c in out:
            if c not in extents:
                raise ValueError("einsum spec %r: output index %r is in no "
                                 "operand" % (spec, c))
        shape = tuple(extents[c] for c in out)
        agg = "" if reduce == "sum" else " reduce %s" % reduce
        return self._op(
            "tra.einsum %s %s (%s)%s : %s" % (
                _quote(spec), combiner, self._operands(operands), agg,
                self._functional_type(operands, shape, dtype)),
            shape, dtype)

    def map(self, fn, *operands, spec=None, shape=None, dtype=None):
        """tra.map: the result's element at every index is `fn` of the
        operands' elements there. Without `spec` every operand has the
        result's shape; with one ("sd,d->sd", "->s") operands broadcast and
        `shape` gives the output extents no operand has. `fn` is called once
        on tracers (see the module's documentation); `dtype` converts its
        result, else the result has the traced value's type."""
        self._own(*operands)
        if not callable(fn):
            raise ValueError("map takes a function, got %r" % (fn,))
        if not operands:
            raise ValueError("map needs at least one operand (a 0-d tensor "
                             "broadcasts: spec '->s'; or use fill)")
        if spec is None:
            out_shape = operands[0].shape
            for o in operands:
                if o.shape != out_shape:
                    raise ValueError(
                        "map operands have shapes %s: give a spec to "
                        "broadcast" % ", ".join(str(list(o.shape))
                                                for o in operands))
            if shape is not None and _shape_tuple(shape) != out_shape:
                raise ValueError("map shape %s is not the operands' %s"
                                 % (tuple(shape), out_shape))
        else:
            terms, out = _parse_spec(spec, [o.ndim for o in operands], "map")
            extents = _extents(spec, terms, operands, "map")
            given = _shape_tuple(shape) if shape is not None else None
            if given is not None and len(given) != len(out):
                raise ValueError("map spec %r has %d output indices but "
                                 "shape %s" % (spec, len(out), given))
            out_shape = []
            for i, c in enumerate(out):
                if c in extents:
                    if given is not None and given[i] != extents[c]:
                        raise ValueError(
                            "map shape %s: index %r is %d in the operands"
                            % (given, c, extents[c]))
                    out_shape.append(extents[c])
                elif given is not None:
                    out_shape.append(given[i])
                else:
                    raise ValueError("map spec %r: output index %r is in no "
                                     "operand; give shape=" % (spec, c))
            out_shape = tuple(out_shape)
        want = _element_type(dtype) if dtype is not None else None
        m = self._fresh()
        body = _Trace(self, m, len(out_shape)).run(fn, [o.dtype for o in operands],
                                             want)
        result_dtype = body.result.dtype
        text = "tra.map %s(%s) : %s {\n%s  }" % (
            _quote(spec) + " " if spec is not None else "",
            self._operands(operands),
            self._functional_type(operands, out_shape, result_dtype),
            body.text("    "))
        return self._op(text, out_shape, result_dtype, ssa=m)

    def reshape(self, x, shape):
        """tra.reshape: groups or ungroups dimensions (one extent may be
        -1)."""
        self._own(x)
        dims = [int(d) for d in shape]
        size = int(np.prod(x.shape, dtype=np.int64))
        if dims.count(-1) > 1:
            raise ValueError("reshape: at most one extent may be -1")
        if -1 in dims:
            rest = int(np.prod([d for d in dims if d != -1], dtype=np.int64))
            if rest == 0 or size % rest:
                raise ValueError("reshape of %s to %s: sizes do not divide"
                                 % (x.shape, tuple(shape)))
            dims[dims.index(-1)] = size // rest
        dims = _shape_tuple(dims)
        if int(np.prod(dims, dtype=np.int64)) != size:
            raise ValueError("reshape of %s to %s changes the number of "
                             "elements" % (x.shape, dims))
        return self._op("tra.reshape %s : %s -> %s" % (
            x._ssa, x.type, _tensor_type(dims, x.dtype)), dims, x.dtype)

    def slice(self, x, dim, offset, size):
        """tra.slice: elements offset .. offset+size-1 along `dim`."""
        self._own(x)
        dim = self._dim(x, dim)
        offset, size = int(offset), int(size)
        if offset < 0 or size < 0 or offset + size > x.shape[dim]:
            raise ValueError("slice [%d, %d) of dimension %d of extent %d"
                             % (offset, offset + size, dim, x.shape[dim]))
        shape = list(x.shape)
        shape[dim] = size
        return self._op("tra.slice %s dim %d offset %d size %d : %s -> %s" % (
            x._ssa, dim, offset, size, x.type,
            _tensor_type(shape, x.dtype)), shape, x.dtype)

    def concat(self, values, dim):
        """tra.concat of `values` along `dim`."""
        values = list(values)
        self._own(*values)
        if not values:
            raise ValueError("concat needs at least one value")
        first = values[0]
        dim = self._dim(first, dim)
        for v in values:
            if v.dtype != first.dtype or v.ndim != first.ndim or any(
                    a != b for i, (a, b) in enumerate(zip(v.shape,
                                                          first.shape))
                    if i != dim):
                raise ValueError("concat along %d of %s" % (
                    dim, ", ".join(v.type for v in values)))
        shape = list(first.shape)
        shape[dim] = sum(v.shape[dim] for v in values)
        return self._op("tra.concat dim %d (%s) : %s" % (
            dim, self._operands(values),
            self._functional_type(values, shape, first.dtype)),
            shape, first.dtype)

    def fill(self, value, shape, dtype="f32"):
        """tra.fill: a tensor with every element `value`."""
        dtype = _element_type(dtype)
        shape = _shape_tuple(shape)
        if dtype == "i1":
            if value not in (0, 1, True, False):
                raise ValueError("fill value %r for i1" % (value,))
            literal = "true" if value else "false"
        elif dtype in _INT_TYPES:
            if isinstance(value, float) and not float(value).is_integer():
                raise ValueError("fill value %r for %s" % (value, dtype))
            literal = str(int(value))
        else:
            v = float(value)
            literal = ("nan" if math.isnan(v) else
                       ("inf" if v > 0 else "-inf") if math.isinf(v) else
                       _decimal(v))
        return self._op("tra.fill %s : %s" % (
            literal, _tensor_type(shape, dtype)), shape, dtype)

    def convert(self, x, dtype):
        """tra.convert to another element type."""
        self._own(x)
        dtype = _element_type(dtype)
        return self._op("tra.convert %s : %s to %s" % (
            x._ssa, x.type, _tensor_type(x.shape, dtype)), x.shape, dtype)

    def gather(self, table, indices):
        """tra.gather: rows of `table` selected by the integer tensor
        `indices` (shape indices.shape + table.shape[1:])."""
        self._own(table, indices)
        if indices.dtype not in _INT_TYPES:
            raise ValueError("gather indices are i64 or i32, got %s"
                             % indices.dtype)
        if table.ndim < 1:
            raise ValueError("gather from a 0-d table")
        shape = indices.shape + table.shape[1:]
        return self._op("tra.gather %s[%s] : %s, %s -> %s" % (
            table._ssa, indices._ssa, table.type, indices.type,
            _tensor_type(shape, table.dtype)), shape, table.dtype)

    def update_slice(self, update, dest, dim, position):
        """tra.update_slice: `dest` with `update` written along `dim` from
        the run-time `position` (a 0-d i64 or i32 tensor)."""
        self._own(update, dest, position)
        dim = self._dim(dest, dim)
        if position.shape != () or position.dtype not in _INT_TYPES:
            raise ValueError("update_slice position is a 0-d i64 or i32 "
                             "tensor, got %s" % position.type)
        return self._op(
            "tra.update_slice %s into %s dim %d at %s : %s into %s at %s" % (
                update._ssa, dest._ssa, dim, position._ssa, update.type,
                dest.type, position.type), dest.shape, dest.dtype)

    # -- text ---------------------------------------------------------------

    def text(self, locations=False):
        """The function as func.func text."""
        if not self._results:
            raise ValueError("@%s has no results (call returns)" % self.name)
        args = ", ".join("%s: %s {tra.name = %s}" % (v._ssa, v.type, _quote(n))
                         for v, n in self._args)
        results = ", ".join("%s {tra.name = %s}" % (v.type, _quote(n))
                            for v, n in self._results)
        lines = ["func.func %s@%s(%s) -> (%s) {" % (
            "" if self.public else "private ", self.name, args, results)]
        def loc(match):
            text = self._locations[int(match.group(1))]
            return " " + text if locations and text else ""
        for op in self._lines:
            lines.append("  " + _MARK.sub(loc, op))
        lines.append("  return %s : %s" % (
            ", ".join(v._ssa for v, _ in self._results),
            ", ".join(v.type for v, _ in self._results)))
        lines.append("}")
        return "\n".join(lines)

    # -- helpers ------------------------------------------------------------

    def _own(self, *values):
        for v in values:
            if not isinstance(v, Value):
                raise ValueError("expected a tensor of @%s, got %r"
                                 % (self.name, v))
            if v.function is not self:
                raise ValueError("%r belongs to @%s, not @%s"
                                 % (v, v.function.name, self.name))

    def _dim(self, x, dim):
        dim = int(dim)
        if dim < 0:
            dim += x.ndim
        if not 0 <= dim < x.ndim:
            raise ValueError("dimension %d of a rank-%d tensor" % (dim,
                                                                 x.ndim))
        return dim

    def _fresh(self):
        ssa = "%%%d" % self._next
        self._next += 1
        return ssa

    def _mark(self):
        """A placeholder for the location of the Python line building an
        operation; text() writes it as loc(...) or drops it."""
        self._locations.append(_location())
        return "\x00%d\x00" % (len(self._locations) - 1)

    def _op(self, text, shape, dtype, ssa=None):
        ssa = ssa or self._fresh()
        self._lines.append("%s = %s%s" % (ssa, text, self._mark()))
        return Value(self, ssa, shape, dtype)

    @staticmethod
    def _operands(values):
        return ", ".join(v._ssa for v in values)

    @staticmethod
    def _functional_type(operands, shape, dtype):
        return "(%s) -> %s" % (", ".join(o.type for o in operands),
                               _tensor_type(shape, dtype))


def _check_name(name, what):
    if not isinstance(name, str) or not name or any(
            c in name for c in '"\\\n'):
        raise ValueError("%s name %r: a non-empty string without quotes, "
                         "backslashes or newlines" % (what, name))


class Builder:
    """A module being written in Python: functions, each with arguments,
    operations and named results. text() gives the tra IR, model() the
    parsed and verified tra.Model; tra.compile(builder) compiles it."""

    def __init__(self):
        self._functions = []

    def function(self, name, public=True):
        """Starts a function @name; returns its Function."""
        if not isinstance(name, str) or not name or not (
                name[0].isalpha() or name[0] == "_") or not all(
                c.isalnum() or c in "_$." for c in name):
            raise ValueError("function name %r: letters, digits, _ $ ."
                             % (name,))
        if any(f.name == name for f in self._functions):
            raise ValueError("two functions named @%s" % name)
        f = Function(self, name, public)
        self._functions.append(f)
        return f

    def text(self, locations=False):
        """The module as tra IR text; with `locations`, every operation
        carries the Python line that built it (loc(...))."""
        return "\n\n".join(f.text(locations) for f in self._functions) + "\n"

    def _source_text(self):
        return self.text(locations=True)

    def model(self):
        """The module parsed and verified (a tra.Model); ValueError with the
        verifier's diagnostics, at the Python lines, if it is not valid."""
        from . import parse
        return parse(self.text(locations=True))

    def compile(self, **kwargs):
        """tra.compile(self, **kwargs)."""
        from .program import compile as compile_program
        return compile_program(self, **kwargs)

    def __str__(self):
        return self.text()


def einsum(spec, *operands, combiner=None, reduce="sum"):
    """Function.einsum on the function of the operands."""
    return _function_of(operands).einsum(spec, *operands, combiner=combiner,
                                         reduce=reduce)


def map(fn, *operands, spec=None, shape=None, dtype=None):  # noqa: A001
    """Function.map on the function of the operands."""
    return _function_of(operands).map(fn, *operands, spec=spec, shape=shape,
                                      dtype=dtype)


def _function_of(operands):
    for o in operands:
        if isinstance(o, Value):
            return o.function
    raise ValueError("no tensor operand: use the Function's method")


#===----------------------------------------------------------------------===#
# Tracing map bodies
#===----------------------------------------------------------------------===#

_tracing = threading.local()


class _Trace:
    """One map body being traced: its block arguments and operations."""

    def __init__(self, function, prefix, rank):
        self.function = function
        self.prefix = "%m" + prefix[1:] + "_"
        self.rank = rank
        self.lines = []
        self.args = []
        self.next = 0
        self.result = None

    def fresh(self):
        name = "%sv%d" % (self.prefix, self.next)
        self.next += 1
        return name

    def emit(self, text, dtype):
        s = Scalar(self, self.fresh(), dtype)
        self.lines.append("%s = %s%s" % (s.ssa, text, self.function._mark()))
        return s

    def constant(self, value, dtype):
        if isinstance(value, (bool, np.bool_)):
            value = int(value)
        if dtype == "i1":
            if value not in (0, 1):
                raise TypeError("constant %r used as i1" % (value,))
            return self.emit("arith.constant %s" % ("true" if value
                                                    else "false"), "i1")
        if dtype in _INT_TYPES or dtype == "index":
            if isinstance(value, (float, np.floating)) and not float(
                    value).is_integer():
                raise TypeError("constant %r used as %s" % (value, dtype))
            return self.emit("arith.constant %d : %s" % (int(value), dtype),
                             dtype)
        return self.emit("arith.constant %s : %s" % (
            _float_literal(value, dtype), dtype), dtype)

    def run(self, fn, dtypes, want):
        self.args = [Scalar(self, "%sa%d" % (self.prefix, i), t)
                     for i, t in enumerate(dtypes)]
        stack = getattr(_tracing, "stack", None)
        if stack is None:
            stack = _tracing.stack = []
        stack.append(self)
        name = getattr(fn, "__name__", repr(fn))
        try:
            result = fn(*self.args)
            if isinstance(result, (tuple, list)):
                raise TypeError("it returned %d values; a map body yields "
                                "one" % len(result))
            if not isinstance(result, Scalar):
                if isinstance(result, (bool, int, float, np.number,
                                       np.bool_)):
                    dtype = want or (dtypes[0] if dtypes else "f32")
                    result = self.constant(result, dtype)
                else:
                    raise TypeError("it returned %r, not a traced value"
                                    % (result,))
            if result.trace is not self:
                raise TypeError("it returned a value of another map body")
            if want is not None and result.dtype != want:
                result = astype(result, want)
            if result.dtype == "index":
                result = astype(result, "i64")
        except Exception as e:
            raise ValueError("map function %s cannot be traced: %s"
                             % (name, e)) from e
        finally:
            stack.pop()
        self.result = result
        return self

    def text(self, indent):
        out = [indent[:-2] + "^bb0(%s):" % ", ".join(
            "%s: %s" % (a.ssa, a.dtype) for a in self.args)]
        for line in self.lines:
            out.append(indent + line)
        out.append(indent + "tra.yield %s : %s" % (self.result.ssa,
                                                   self.result.dtype))
        return "\n".join(out) + "\n"


def _current_trace(what):
    stack = getattr(_tracing, "stack", None)
    if not stack:
        raise ValueError("%s is only available inside a map function" % what)
    return stack[-1]


class Scalar:
    """A traced scalar of a map body (a block argument or the result of an
    arith/math operation)."""

    __array_priority__ = 1000  # NumPy defers to our operators

    def __init__(self, trace, ssa, dtype):
        self.trace = trace
        self.ssa = ssa
        self.dtype = dtype

    def __repr__(self):
        return "<traced %s %s>" % (self.dtype, self.ssa)

    __hash__ = object.__hash__

    # Python cannot look inside a traced value.
    def __bool__(self):
        raise TypeError("a traced value has no truth value (Python `if`, "
                        "`and`, `or`, `min`, `max` or chained comparisons); "
                        "use tra.builder.where, maximum, minimum or & |")

    def __float__(self):
        raise TypeError("a traced value is not a number (float(), math.*); "
                        "use tra.builder's functions (exp, sqrt, ...)")

    __int__ = __float__
    __index__ = __float__
    __complex__ = __float__

    def __iter__(self):
        raise TypeError("a traced scalar is not iterable")

    def __array__(self, *args, **kwargs):
        raise TypeError("NumPy functions other than the ufuncs of "
                        "tra.builder's documentation cannot take traced "
                        "values")

    # Arithmetic.
    def __add__(self, o):
        return _binary("add", self, o)

    def __radd__(self, o):
        return _binary("add", o, self)

    def __sub__(self, o):
        return _binary("sub", self, o)

    def __rsub__(self, o):
        return _binary("sub", o, self)

    def __mul__(self, o):
        return _binary("mul", self, o)

    def __rmul__(self, o):
        return _binary("mul", o, self)

    def __truediv__(self, o):
        return _binary("div", self, o)

    def __rtruediv__(self, o):
        return _binary("div", o, self)

    def __floordiv__(self, o):
        return _binary("floordiv", self, o)

    def __rfloordiv__(self, o):
        return _binary("floordiv", o, self)

    def __mod__(self, o):
        return _binary("rem", self, o)

    def __rmod__(self, o):
        return _binary("rem", o, self)

    def __pow__(self, o):
        return _binary("pow", self, o)

    def __rpow__(self, o):
        return _binary("pow", o, self)

    def __neg__(self):
        if self.dtype in _FLOAT_TYPES:
            return self.trace.emit("arith.negf %s : %s" % (self.ssa,
                                                           self.dtype),
                                   self.dtype)
        return _binary("sub", 0, self)

    def __pos__(self):
        return self

    def __abs__(self):
        return abs(self)

    # Comparisons (i1 results).
    def __lt__(self, o):
        return _compare("lt", self, o)

    def __le__(self, o):
        return _compare("le", self, o)

    def __gt__(self, o):
        return _compare("gt", self, o)

    def __ge__(self, o):
        return _compare("ge", self, o)

    def __eq__(self, o):
        return _compare("eq", self, o)

    def __ne__(self, o):
        return _compare("ne", self, o)

    # Logic on i1 (and bitwise on integers).
    def __and__(self, o):
        return _binary("and", self, o)

    __rand__ = __and__

    def __or__(self, o):
        return _binary("or", self, o)

    __ror__ = __or__

    def __xor__(self, o):
        return _binary("xor", self, o)

    __rxor__ = __xor__

    def __invert__(self):
        if self.dtype != "i1":
            raise TypeError("~ takes an i1 value, got %s" % self.dtype)
        return _binary("xor", self, True)

    def astype(self, dtype):
        return astype(self, dtype)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        fn = _UFUNCS.get(ufunc.__name__)
        if method != "__call__" or fn is None or kwargs:
            raise TypeError("NumPy's %s has no tra equivalent in a map body"
                            % ufunc.__name__)
        return fn(*inputs)


def _common(a, b):
    """Both operands as scalars of one trace and one type (Python numbers
    become constants of the other's type)."""
    trace = a.trace if isinstance(a, Scalar) else b.trace
    if isinstance(a, Scalar) and isinstance(b, Scalar):
        if a.trace is not b.trace:
            raise TypeError("values of two map bodies are mixed")
        if a.dtype == "index" and b.dtype == "i64":
            a = astype(a, "i64")
        if b.dtype == "index" and a.dtype == "i64":
            b = astype(b, "i64")
        if a.dtype != b.dtype:
            raise TypeError("%s and %s mixed: convert one with astype"
                            % (a.dtype, b.dtype))
        return trace, a, b
    if isinstance(a, Scalar):
        return trace, a, trace.constant(_number(b), a.dtype)
    return trace, trace.constant(_number(a), b.dtype), b


def _number(x):
    if isinstance(x, (bool, int, float, np.number, np.bool_)):
        return x
    raise TypeError("cannot use %r in a map body" % (x,))


_FLOAT_BINARY = {"add": "arith.addf", "sub": "arith.subf",
                 "mul": "arith.mulf", "div": "arith.divf",
                 "rem": "arith.remf", "pow": "math.powf",
                 "max": "arith.maximumf", "min": "arith.minimumf"}
_INT_BINARY = {"add": "arith.addi", "sub": "arith.subi", "mul": "arith.muli",
               "floordiv": "arith.divsi", "rem": "arith.remsi",
               "max": "arith.maxsi", "min": "arith.minsi",
               "and": "arith.andi", "or": "arith.ori", "xor": "arith.xori"}


def _binary(op, a, b):
    trace, a, b = _common(a, b)
    t = a.dtype
    if t in _FLOAT_TYPES:
        if op == "floordiv":
            return floor(_binary("div", a, b))
        name = _FLOAT_BINARY.get(op)
    elif t == "i1":
        name = _INT_BINARY.get(op) if op in ("and", "or", "xor") else None
    else:
        if t == "index":
            a, b = astype(a, "i64"), astype(b, "i64")
            t = "i64"
        name = _INT_BINARY.get(op)
        if op == "div":
            raise TypeError("/ on %s: use // (signed division)" % t)
    if name is None:
        raise TypeError("%s is not defined on %s" % (op, t))
    return trace.emit("%s %s, %s : %s" % (name, a.ssa, b.ssa, t), t)


_FLOAT_PREDICATES = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge",
                     "eq": "oeq", "ne": "une"}
_INT_PREDICATES = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge",
                   "eq": "eq", "ne": "ne"}


def _compare(op, a, b):
    trace, a, b = _common(a, b)
    if a.dtype in _FLOAT_TYPES:
        return trace.emit("arith.cmpf %s, %s, %s : %s" % (
            _FLOAT_PREDICATES[op], a.ssa, b.ssa, a.dtype), "i1")
    if a.dtype == "i1" and op not in ("eq", "ne"):
        raise TypeError("i1 values compare only with == and !=")
    return trace.emit("arith.cmpi %s, %s, %s : %s" % (
        _INT_PREDICATES[op], a.ssa, b.ssa, a.dtype), "i1")


def _scalar(x, what):
    if isinstance(x, Scalar):
        return x
    if isinstance(x, (bool, int, float, np.number, np.bool_)):
        # A function of constants only: fold it in Python.
        raise TypeError("%s of a Python number: compute it in Python" % what)
    raise TypeError("%s takes a traced value, got %r" % (what, x))


def _unary_math(name, op):
    def fn(x):
        x = _scalar(x, name)
        if x.dtype not in _FLOAT_TYPES:
            raise TypeError("%s takes a float (f32, f16, bf16), got %s"
                            % (name, x.dtype))
        return x.trace.emit("%s %s : %s" % (op, x.ssa, x.dtype), x.dtype)
    fn.__name__ = name
    fn.__doc__ = "%s of a traced float (%s)." % (name, op)
    return fn


exp = _unary_math("exp", "math.exp")
exp2 = _unary_math("exp2", "math.exp2")
log = _unary_math("log", "math.log")
log2 = _unary_math("log2", "math.log2")
sqrt = _unary_math("sqrt", "math.sqrt")
rsqrt = _unary_math("rsqrt", "math.rsqrt")
tanh = _unary_math("tanh", "math.tanh")
sin = _unary_math("sin", "math.sin")
cos = _unary_math("cos", "math.cos")
erf = _unary_math("erf", "math.erf")
floor = _unary_math("floor", "math.floor")
ceil = _unary_math("ceil", "math.ceil")
_absf = _unary_math("abs", "math.absf")


def abs(x):  # noqa: A001
    """|x|: math.absf on floats, a select on integers."""
    x = _scalar(x, "abs")
    if x.dtype in _FLOAT_TYPES:
        return _absf(x)
    return where(x < 0, -x, x)


def sigmoid(x):
    """1 / (1 + exp(-x))."""
    return 1.0 / (1.0 + exp(-_scalar(x, "sigmoid")))


def silu(x):
    """x * sigmoid(x)."""
    return x * sigmoid(x)


def maximum(a, b):
    """The larger of a and b (arith.maximumf: NaN if either is NaN; maxsi
    on integers)."""
    return _binary("max", a, b)


def minimum(a, b):
    """The smaller of a and b (arith.minimumf / minsi)."""
    return _binary("min", a, b)


def where(cond, a, b):
    """arith.select: a where cond (an i1) holds, else b."""
    cond = _scalar(cond, "where")
    if cond.dtype != "i1":
        raise TypeError("where takes an i1 condition (a comparison), got %s"
                        % cond.dtype)
    if not isinstance(a, Scalar) and not isinstance(b, Scalar):
        raise TypeError("where needs a traced value among its choices")
    trace, a, b = _common(a, b)
    return trace.emit("arith.select %s, %s, %s : %s" % (cond.ssa, a.ssa,
                                                        b.ssa, a.dtype),
                      a.dtype)


def astype(x, dtype):
    """Converts a traced value: floats round to nearest, float to integer
    truncates, integer to i1 is x != 0."""
    x = _scalar(x, "astype")
    to = _element_type(dtype)
    frm, t = x.dtype, x.trace
    if frm == to:
        return x
    width = {"f32": 32, "f16": 16, "bf16": 16, "i64": 64, "i32": 32, "i1": 1}
    if frm == "index":
        x = t.emit("arith.index_cast %s : index to i64" % x.ssa, "i64")
        return astype(x, to)
    if to == "i1":
        return x != 0
    if frm == "i1":
        one, zero = t.constant(1, to), t.constant(0, to)
        return t.emit("arith.select %s, %s, %s : %s" % (x.ssa, one.ssa,
                                                        zero.ssa, to), to)
    if frm in _FLOAT_TYPES and to in _FLOAT_TYPES:
        if frm == "bf16" and to == "f16" or frm == "f16" and to == "bf16":
            return astype(astype(x, "f32"), to)
        op = "arith.extf" if width[to] > width[frm] else "arith.truncf"
    elif frm in _FLOAT_TYPES:
        op = "arith.fptosi"
    elif to in _FLOAT_TYPES:
        op = "arith.sitofp"
    else:
        op = "arith.extsi" if width[to] > width[frm] else "arith.trunci"
    return t.emit("%s %s : %s to %s" % (op, x.ssa, frm, to), to)


def index(dim):
    """Inside a map function: the result's index along dimension `dim`, as
    an i64 value (tra.index)."""
    trace = _current_trace("tra.builder.index")
    dim = int(dim)
    if not 0 <= dim < trace.rank:
        raise TypeError("index(%d) of a rank-%d result" % (dim, trace.rank))
    i = trace.emit("tra.index %d" % dim, "index")
    return astype(i, "i64")


_UFUNCS = {
    "add": lambda a, b: _binary("add", a, b),
    "subtract": lambda a, b: _binary("sub", a, b),
    "multiply": lambda a, b: _binary("mul", a, b),
    "true_divide": lambda a, b: _binary("div", a, b),
    "divide": lambda a, b: _binary("div", a, b),
    "power": lambda a, b: _binary("pow", a, b),
    "maximum": maximum, "minimum": minimum,
    "negative": lambda a: -a,
    "exp": exp, "exp2": exp2, "log": log, "log2": log2, "sqrt": sqrt,
    "tanh": tanh, "sin": sin, "cos": cos, "absolute": abs, "fabs": abs,
    "floor": floor, "ceil": ceil,
    "less": lambda a, b: _compare("lt", a, b),
    "less_equal": lambda a, b: _compare("le", a, b),
    "greater": lambda a, b: _compare("gt", a, b),
    "greater_equal": lambda a, b: _compare("ge", a, b),
    "equal": lambda a, b: _compare("eq", a, b),
    "not_equal": lambda a, b: _compare("ne", a, b),
}
