#!/usr/bin/env python3
"""Writes a LLaMA model as model-level tra IR.

The model is the LLaMA architecture as the C++ front end builds it
(lib/Frontend/Llama.cpp: RMSNorm, rotary embeddings of adjacent pairs,
grouped-query attention over a KV cache, SwiGLU feed-forward), with a batch
dimension, for one step over `seq` tokens per sequence at positions
pos .. pos+seq-1. One transformer layer is written once, as @layer, and
@forward calls it once per layer; tra-compile (or `tra-opt --inline`)
inlines it, so the plan is made per operation of every layer.

  llama.py --preset 65b --batch 1 --seq 128 -o llama-65b.mlir

Weights are [out][in] with Meta's names (layers.L.attention.wq.weight, ...);
every argument and result carries its name in `tra.name`.
"""

import argparse
import sys

PRESETS = {
    # name: dim, layers, heads, kv_heads, hidden, vocab
    "tiny": (64, 5, 8, 4, 172, 512),
    # Big enough that plans for several devices split it (tests of
    # distributed code generation), small enough to run on one machine.
    "small": (512, 2, 8, 4, 1376, 2048),
    "7b": (4096, 32, 32, 32, 11008, 32000),
    "13b": (5120, 40, 40, 40, 13824, 32000),
    "65b": (8192, 80, 64, 64, 22016, 32000),
    "70b": (8192, 80, 64, 8, 28672, 32000),
}


def tensor(shape, dtype):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


class Writer:
    def __init__(self, args):
        (self.D, self.L, self.NH, self.NKV, self.F,
         self.V) = PRESETS[args.preset]
        if args.layers is not None:
            self.L = args.layers
        self.B, self.S, self.T = args.batch, args.seq, args.cache
        self.dt = args.dtype
        self.HD = self.D // self.NH
        self.P = self.HD // 2
        self.G = self.NH // self.NKV
        self.eps = 1e-5
        self.lines = []
        self.counter = 0

    def t(self, *shape):
        return tensor(shape, self.dt)

    def emit(self, line):
        self.lines.append(line)

    def fresh(self, name):
        self.counter += 1
        return f"%{name}{self.counter}"

    def einsum(self, spec, comb, ins, shape, reduce=None):
        r = self.fresh("e")
        types = ", ".join(t for _, t in ins)
        red = f" reduce {reduce}" if reduce else ""
        self.emit(f"    {r} = tra.einsum \"{spec}\" {comb} "
                  f"({', '.join(v for v, _ in ins)}){red} : ({types}) -> "
                  f"{self.t(*shape)}")
        return r, self.t(*shape)

    def map(self, spec, ins, rtype, body_args, body):
        r = self.fresh("m")
        types = ", ".join(t for _, t in ins)
        sp = f"\"{spec}\" " if spec else ""
        self.emit(f"    {r} = tra.map {sp}({', '.join(v for v, _ in ins)}) "
                  f": ({types}) -> {rtype} {{")
        self.emit(f"    ^bb0({', '.join(body_args)}):")
        for line in body:
            self.emit("      " + line)
        self.emit("    }")
        return r, rtype

    def reshape(self, value, shape):
        r = self.fresh("r")
        v, t = value
        self.emit(f"    {r} = tra.reshape {v} : {t} -> {self.t(*shape)}")
        return r, self.t(*shape)

    def rmsnorm(self, x, w):
        B, S, D, dt = self.B, self.S, self.D, self.dt
        ss = self.einsum("bsd->bs", "square", [x], (B, S))
        return self.map(
            "bsd,bs,d->bsd", [x, ss, w], self.t(B, S, D),
            [f"%nx: {dt}", f"%nss: {dt}", f"%nw: {dt}"],
            [f"%n = arith.constant {float(D)} : {dt}",
             f"%eps = arith.constant {self.eps:e} : {dt}",
             f"%mean = arith.divf %nss, %n : {dt}",
             f"%sh = arith.addf %mean, %eps : {dt}",
             f"%rs = math.rsqrt %sh : {dt}",
             f"%xn = arith.mulf %nx, %rs : {dt}",
             f"%o = arith.mulf %xn, %nw : {dt}",
             f"tra.yield %o : {dt}"])

    def layer(self):
        B, S, D, T, dt = self.B, self.S, self.D, self.T, self.dt
        NH, NKV, G, HD, P, F = self.NH, self.NKV, self.G, self.HD, self.P, self.F
        cache = tensor((B, T, NKV, HD), dt)
        args = [("%x", self.t(B, S, D)), ("%pos", "tensor<i64>"),
                ("%rot", self.t(S, P, 2, 2)), ("%k_cache", cache),
                ("%v_cache", cache), ("%attn_norm", self.t(D)),
                ("%wq", self.t(D, D)), ("%wk", self.t(NKV * HD, D)),
                ("%wv", self.t(NKV * HD, D)), ("%wo", self.t(D, D)),
                ("%ffn_norm", self.t(D)), ("%w1", self.t(F, D)),
                ("%w2", self.t(D, F)), ("%w3", self.t(F, D))]
        self.emit("  // One transformer layer: attention and SwiGLU "
                  "feed-forward, each with a residual.")
        self.emit("  func.func private @layer(" +
                  ", ".join(f"{v}: {t}" for v, t in args) +
                  f") -> ({self.t(B, S, D)}, {cache}, {cache}) {{")
        a = dict(args)
        arg = lambda n: (n, a[n])
        xn = self.rmsnorm(arg("%x"), arg("%attn_norm"))
        q = self.einsum("bsd,ed->bse", "mul", [xn, arg("%wq")], (B, S, D))
        k = self.einsum("bsd,ed->bse", "mul", [xn, arg("%wk")], (B, S, NKV * HD))
        v = self.einsum("bsd,ed->bse", "mul", [xn, arg("%wv")], (B, S, NKV * HD))
        q5 = self.reshape(q, (B, S, NH, P, 2))
        k5 = self.reshape(k, (B, S, NKV, P, 2))
        qr = self.einsum("sptu,bshpu->bshpt", "mul", [arg("%rot"), q5],
                         (B, S, NH, P, 2))
        kr = self.einsum("sptu,bshpu->bshpt", "mul", [arg("%rot"), k5],
                         (B, S, NKV, P, 2))
        k4 = self.reshape(kr, (B, S, NKV, HD))
        v4 = self.reshape(v, (B, S, NKV, HD))
        kc, vc = self.fresh("kc"), self.fresh("vc")
        self.emit(f"    {kc} = tra.update_slice {k4[0]} into %k_cache dim 1 "
                  f"at %pos : {k4[1]} into {cache} at tensor<i64>")
        self.emit(f"    {vc} = tra.update_slice {v4[0]} into %v_cache dim 1 "
                  f"at %pos : {v4[1]} into {cache} at tensor<i64>")
        kc, vc = (kc, cache), (vc, cache)
        qg = self.reshape(qr, (B, S, NKV, G, HD))
        scores = self.einsum("bsgrd,btgd->bgrst", "mul", [qg, kc],
                             (B, NKV, G, S, T))
        scale = 1.0 / HD ** 0.5
        ninf = "0xFF80" if dt == "bf16" else ("0xFC00" if dt == "f16"
                                              else "0xFF800000")
        masked = self.map(
            "bgrst,->bgrst", [scores, arg("%pos")], scores[1],
            [f"%sc: {dt}", "%p: i64"],
            ["%si = tra.index 3", "%ti = tra.index 4",
             "%s64 = arith.index_cast %si : index to i64",
             "%t64 = arith.index_cast %ti : index to i64",
             "%last = arith.addi %p, %s64 : i64",
             "%vis = arith.cmpi sle, %t64, %last : i64",
             f"%scale = arith.constant {scale:e} : {dt}",
             f"%scaled = arith.mulf %sc, %scale : {dt}",
             f"%ninf = arith.constant {ninf} : {dt}",
             f"%r = arith.select %vis, %scaled, %ninf : {dt}",
             f"tra.yield %r : {dt}"])
        mx = self.einsum("bgrst->bgrs", "id", [masked], (B, NKV, G, S), "max")
        e = self.map("bgrst,bgrs->bgrst", [masked, mx], scores[1],
                     [f"%av: {dt}", f"%mv: {dt}"],
                     [f"%d = arith.subf %av, %mv : {dt}",
                      f"%ex = math.exp %d : {dt}", f"tra.yield %ex : {dt}"])
        z = self.einsum("bgrst->bgrs", "id", [e], (B, NKV, G, S))
        probs = self.einsum("bgrst,bgrs->bgrst", "div", [e, z],
                            (B, NKV, G, S, T))
        att = self.einsum("bgrst,btgd->bsgrd", "mul", [probs, vc],
                          (B, S, NKV, G, HD))
        att2 = self.reshape(att, (B, S, D))
        o = self.einsum("bsd,ed->bse", "mul", [att2, arg("%wo")], (B, S, D))
        h = self.einsum("bsd,bsd->bsd", "add", [arg("%x"), o], (B, S, D))
        hn = self.rmsnorm(h, arg("%ffn_norm"))
        g1 = self.einsum("bsd,fd->bsf", "mul", [hn, arg("%w1")], (B, S, F))
        g3 = self.einsum("bsd,fd->bsf", "mul", [hn, arg("%w3")], (B, S, F))
        g = self.map("", [g1, g3], self.t(B, S, F),
                     [f"%av: {dt}", f"%bv: {dt}"],
                     [f"%one = arith.constant 1.0 : {dt}",
                      f"%na = arith.negf %av : {dt}",
                      f"%en = math.exp %na : {dt}",
                      f"%den = arith.addf %one, %en : {dt}",
                      f"%silu = arith.divf %av, %den : {dt}",
                      f"%r = arith.mulf %silu, %bv : {dt}",
                      f"tra.yield %r : {dt}"])
        f = self.einsum("bsf,df->bsd", "mul", [g, arg("%w2")], (B, S, D))
        out = self.einsum("bsd,bsd->bsd", "add", [h, f], (B, S, D))
        self.emit(f"    return {out[0]}, {kc[0]}, {vc[0]} : {out[1]}, "
                  f"{cache}, {cache}")
        self.emit("  }")

    def forward(self):
        B, S, D, T, V, dt = self.B, self.S, self.D, self.T, self.V, self.dt
        NKV, HD, P, F = self.NKV, self.HD, self.P, self.F
        cache = tensor((B, T, NKV, HD), dt)
        args = [("%tokens", tensor((B, S), "i64"), "tokens"),
                ("%pos", "tensor<i64>", "pos"),
                ("%freqs_cos", self.t(T, P), "freqs_cos"),
                ("%freqs_sin", self.t(T, P), "freqs_sin")]
        for l in range(self.L):
            args.append((f"%kc{l}_in", cache, f"layers.{l}.k_cache"))
            args.append((f"%vc{l}_in", cache, f"layers.{l}.v_cache"))
        args.append(("%tok_embeddings", self.t(V, D), "tok_embeddings.weight"))
        per_layer = [("attention_norm", (D,)), ("attention.wq", (D, D)),
                     ("attention.wk", (NKV * HD, D)),
                     ("attention.wv", (NKV * HD, D)),
                     ("attention.wo", (D, D)), ("ffn_norm", (D,)),
                     ("feed_forward.w1", (F, D)), ("feed_forward.w2", (D, F)),
                     ("feed_forward.w3", (F, D))]
        for l in range(self.L):
            for name, shape in per_layer:
                ssa = f"%l{l}_" + name.replace(".", "_")
                args.append((ssa, self.t(*shape), f"layers.{l}.{name}.weight"))
        args.append(("%norm", self.t(D), "norm.weight"))
        args.append(("%output", self.t(V, D), "output.weight"))
        results = [(self.t(B, S, V), "logits")]
        for l in range(self.L):
            results.append((cache, f"layers.{l}.k_cache_out"))
            results.append((cache, f"layers.{l}.v_cache_out"))
        self.emit("  // One step of the model over `seq` tokens per sequence.")
        self.emit("  func.func @forward(")
        for i, (v, t, n) in enumerate(args):
            sep = "," if i + 1 < len(args) else ")"
            self.emit(f"      {v}: {t} {{tra.name = \"{n}\"}}{sep}")
        self.emit("      -> (" + ", ".join(
            f"{t} {{tra.name = \"{n}\"}}" for t, n in results) + ") {")
        x = self.fresh("x")
        self.emit(f"    {x} = tra.gather %tok_embeddings[%tokens] : "
                  f"{self.t(V, D)}, {tensor((B, S), 'i64')} -> {self.t(B, S, D)}")
        self.emit(f"    %positions = tra.map \"->s\" (%pos) : (tensor<i64>) -> "
                  f"tensor<{S}xi64> {{")
        self.emit("    ^bb0(%p: i64):")
        self.emit("      %i = tra.index 0")
        self.emit("      %ii = arith.index_cast %i : index to i64")
        self.emit("      %r = arith.addi %p, %ii : i64")
        self.emit("      tra.yield %r : i64")
        self.emit("    }")
        for table in ("cos", "sin"):
            self.emit(f"    %{table} = tra.gather %freqs_{table}[%positions] : "
                      f"{self.t(T, P)}, tensor<{S}xi64> -> {self.t(S, P)}")
        rot, _ = self.map(
            "sp,sp->sptu", [("%cos", self.t(S, P)), ("%sin", self.t(S, P))],
            self.t(S, P, 2, 2), [f"%c: {dt}", f"%s: {dt}"],
            ["%t = tra.index 2", "%u = tra.index 3",
             "%zero = arith.constant 0 : index",
             "%diag = arith.cmpi eq, %t, %u : index",
             "%first = arith.cmpi eq, %t, %zero : index",
             f"%ns = arith.negf %s : {dt}",
             f"%off = arith.select %first, %ns, %s : {dt}",
             f"%r = arith.select %diag, %c, %off : {dt}",
             f"tra.yield %r : {dt}"])
        layer_types = ", ".join(
            [self.t(B, S, D), "tensor<i64>", self.t(S, P, 2, 2), cache, cache,
             self.t(D), self.t(D, D), self.t(NKV * HD, D), self.t(NKV * HD, D),
             self.t(D, D), self.t(D), self.t(F, D), self.t(D, F),
             self.t(F, D)])
        caches_out = []
        for l in range(self.L):
            weights = ", ".join(f"%l{l}_" + n.replace(".", "_")
                                for n, _ in per_layer)
            y = f"%y{l}"
            self.emit(f"    {y}:3 = func.call @layer({x}, %pos, {rot}, "
                      f"%kc{l}_in, %vc{l}_in, {weights}) : ({layer_types}) -> "
                      f"({self.t(B, S, D)}, {cache}, {cache})")
            x = f"{y}#0"
            caches_out += [f"{y}#1", f"{y}#2"]
        xt = (x, self.t(B, S, D))
        xn = self.rmsnorm(xt, ("%norm", self.t(D)))
        logits = self.einsum("bsd,vd->bsv", "mul",
                             [xn, ("%output", self.t(V, D))], (B, S, V))
        self.emit(f"    return {logits[0]}, " + ", ".join(caches_out) + " : " +
                  ", ".join(t for t, _ in results))
        self.emit("  }")

    def write(self, out, argv):
        out.write(f"// LLaMA {self.L} layers, dim {self.D}, {self.NH} heads "
                  f"({self.NKV} key/value heads), FFN {self.F}, vocabulary "
                  f"{self.V};\n// batch {self.B}, {self.S} tokens per step, "
                  f"KV cache of {self.T}, {self.dt}.\n")
        out.write("// Generated by examples/models/llama.py " +
                  " ".join(argv) + "; do not edit.\n")
        out.write("module {\n")
        self.layer()
        self.forward()
        out.write("\n".join(self.lines) + "\n}\n")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", choices=sorted(PRESETS), default="7b")
    parser.add_argument("--layers", type=int, help="override the layer count")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seq", type=int, default=128,
                        help="tokens per sequence in this step")
    parser.add_argument("--cache", type=int, default=2048,
                        help="KV cache length (maximum sequence length)")
    parser.add_argument("--dtype", choices=["bf16", "f16", "f32"],
                        default="bf16")
    parser.add_argument("-o", "--output", default="-")
    args = parser.parse_args(argv)
    if args.seq > args.cache:
        parser.error("--seq must not exceed --cache")
    writer = Writer(args)
    # The command line without the output file, for the header.
    shown = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in ("-o", "--output"):
            skip = True
        elif not arg.startswith(("-o", "--output=")):
            shown.append(arg)
    if args.output == "-":
        writer.write(sys.stdout, shown)
    else:
        with open(args.output, "w") as out:
            writer.write(out, shown)


if __name__ == "__main__":
    main(sys.argv[1:])
