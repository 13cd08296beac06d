#!/usr/bin/python3
"""Writes the small ONNX test models of decodegap/ort/testdata.

Run from the repository root with the system Python and its python3-onnx
(apt-get install python3-onnx python3-numpy):

    /usr/bin/python3 scripts/make-test-models.py

The models are committed: tests read them and need no Python. Weights are
drawn from a fixed seed, so the script writes the same bytes every time.

  decoder_kv.onnx      a 2-layer decoder (hidden 64, 2 heads of 32, vocab
                       128) with a KV cache: input_ids [batch,sequence_length]
                       int64, attention_mask [batch,total_sequence_length]
                       int64, past_key_values.L.key/value
                       [batch,2,past_sequence_length,32] float32 → logits,
                       present.L.key/value [batch,2,total_sequence_length,32]
  decoder_merged.onnx  the same shape (hidden 32) as a merged decoder: a
                       use_cache_branch bool [1] input selects, by an If,
                       present = Concat(past, new) (true) or new alone
                       (false), so left false with a non-empty past the
                       attention fails on a shape
  decoder_fp16.onnx    the decoder_kv layout with float16 caches (hidden 32)
  vad_sr.onnx          Silero VAD v4's signature: input [batch,512] float32,
                       sr int64 scalar, h, c [2,batch,64] → output [batch,1],
                       hn, cn; sr == 16000 takes a costlier branch than
                       8000, as Silero's 16 kHz branch is
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "decodegap", "ort", "testdata")
rng = np.random.default_rng(26)


class G:
    """A graph under construction."""

    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def w(self, name, shape, scale=0.1):
        t = (rng.standard_normal(shape) * scale).astype(np.float32)
        self.inits.append(numpy_helper.from_array(t, name))
        return name

    def c(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def op(self, op, ins, nout=1, **attrs):
        outs = []
        for _ in range(nout):
            self.n += 1
            outs.append(f"t{self.n}")
        self.nodes.append(helper.make_node(op, ins, outs, **attrs))
        return outs[0] if nout == 1 else outs


def kv(name, dtype, heads, hd, axis):
    return helper.make_tensor_value_info(name, dtype, ["batch", heads, axis, hd])


def decoder(path, hidden, heads, layers, vocab, ffn, cache=TensorProto.FLOAT, merged=False):
    hd = hidden // heads
    g = G()
    g.c("shape_heads", np.array([0, 0, heads, hd], dtype=np.int64))
    g.c("shape_hidden", np.array([0, 0, hidden], dtype=np.int64))
    g.c("one", np.array(1.0, dtype=np.float32))
    g.c("neg", np.array(-1e4, dtype=np.float32))
    g.c("scale", np.array(1.0 / np.sqrt(hd), dtype=np.float32))
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence_length"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "total_sequence_length"])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "sequence_length", vocab])]
    if merged:
        inputs.append(helper.make_tensor_value_info("use_cache_branch", TensorProto.BOOL, [1]))
    x = g.op("Gather", [g.w("embed", [vocab, hidden]), "input_ids"])
    m = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    m = g.op("Mul", [g.op("Sub", ["one", m]), "neg"])
    m = g.op("Unsqueeze", [m, g.c("axes12", np.array([1, 2], dtype=np.int64))])
    for l in range(layers):
        pk, pv = f"past_key_values.{l}.key", f"past_key_values.{l}.value"
        ok, ov = f"present.{l}.key", f"present.{l}.value"
        inputs += [kv(pk, cache, heads, hd, "past_sequence_length"), kv(pv, cache, heads, hd, "past_sequence_length")]
        outputs += [kv(ok, cache, heads, hd, "total_sequence_length"), kv(ov, cache, heads, hd, "total_sequence_length")]

        def split(t):
            return g.op("Transpose", [g.op("Reshape", [t, "shape_heads"])], perm=[0, 2, 1, 3])

        q = split(g.op("MatMul", [x, g.w(f"wq{l}", [hidden, hidden])]))
        k = split(g.op("MatMul", [x, g.w(f"wk{l}", [hidden, hidden])]))
        v = split(g.op("MatMul", [x, g.w(f"wv{l}", [hidden, hidden])]))
        pastk, pastv = pk, pv
        if cache != TensorProto.FLOAT:
            pastk = g.op("Cast", [pk], to=TensorProto.FLOAT)
            pastv = g.op("Cast", [pv], to=TensorProto.FLOAT)
        if merged:
            kk, vv = f"k{l}_all", f"v{l}_all"
            then = helper.make_graph(
                [helper.make_node("Concat", [pastk, k], [f"tk{l}"], axis=2),
                 helper.make_node("Concat", [pastv, v], [f"tv{l}"], axis=2)],
                f"with_past{l}", [], [helper.make_tensor_value_info(f"tk{l}", TensorProto.FLOAT, None),
                                      helper.make_tensor_value_info(f"tv{l}", TensorProto.FLOAT, None)])
            other = helper.make_graph(
                [helper.make_node("Identity", [k], [f"ek{l}"]), helper.make_node("Identity", [v], [f"ev{l}"])],
                f"without_past{l}", [], [helper.make_tensor_value_info(f"ek{l}", TensorProto.FLOAT, None),
                                         helper.make_tensor_value_info(f"ev{l}", TensorProto.FLOAT, None)])
            g.nodes.append(helper.make_node("If", ["use_cache_branch"], [kk, vv], then_branch=then, else_branch=other))
        else:
            kk = g.op("Concat", [pastk, k], axis=2)
            vv = g.op("Concat", [pastv, v], axis=2)
        if cache != TensorProto.FLOAT:
            g.nodes.append(helper.make_node("Cast", [kk], [ok], to=cache))
            g.nodes.append(helper.make_node("Cast", [vv], [ov], to=cache))
        else:
            g.nodes.append(helper.make_node("Identity", [kk], [ok]))
            g.nodes.append(helper.make_node("Identity", [vv], [ov]))
        s = g.op("Mul", [g.op("MatMul", [q, g.op("Transpose", [kk], perm=[0, 1, 3, 2])]), "scale"])
        p = g.op("Softmax", [g.op("Add", [s, m])], axis=-1)
        a = g.op("Reshape", [g.op("Transpose", [g.op("MatMul", [p, vv])], perm=[0, 2, 1, 3]), "shape_hidden"])
        x = g.op("Add", [x, g.op("MatMul", [a, g.w(f"wo{l}", [hidden, hidden])])])
        h = g.op("Relu", [g.op("MatMul", [x, g.w(f"w1{l}", [hidden, ffn])])])
        x = g.op("Add", [x, g.op("MatMul", [h, g.w(f"w2{l}", [ffn, hidden])])])
    g.nodes.append(helper.make_node("MatMul", [x, g.w("lm_head", [hidden, vocab])], ["logits"]))
    save(path, helper.make_graph(g.nodes, "decoder", inputs, outputs, g.inits))


def vad(path):
    g = G()
    inputs = [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 512]),
              helper.make_tensor_value_info("sr", TensorProto.INT64, []),
              helper.make_tensor_value_info("h", TensorProto.FLOAT, [2, "batch", 64]),
              helper.make_tensor_value_info("c", TensorProto.FLOAT, [2, "batch", 64])]
    outputs = [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["batch", 1]),
               helper.make_tensor_value_info("hn", TensorProto.FLOAT, [2, "batch", 64]),
               helper.make_tensor_value_info("cn", TensorProto.FLOAT, [2, "batch", 64])]
    w1, w2, w3 = g.w("w1", [512, 64]), g.w("w2", [64, 64]), g.w("w3", [256, 64])
    wide = helper.make_graph(
        [helper.make_node("MatMul", ["input", w1], ["a16"]), helper.make_node("Tanh", ["a16"], ["b16"]),
         helper.make_node("MatMul", ["b16", w2], ["c16"]), helper.make_node("Tanh", ["c16"], ["d16"]),
         helper.make_node("MatMul", ["d16", w2], ["f16"])],
        "sr16k", [], [helper.make_tensor_value_info("f16", TensorProto.FLOAT, None)])
    g.c("s0", np.array([0], dtype=np.int64))
    g.c("s256", np.array([256], dtype=np.int64))
    g.c("s1", np.array([1], dtype=np.int64))
    narrow = helper.make_graph(
        [helper.make_node("Slice", ["input", "s0", "s256", "s1"], ["a8"]), helper.make_node("MatMul", ["a8", w3], ["f8"])],
        "sr8k", [], [helper.make_tensor_value_info("f8", TensorProto.FLOAT, None)])
    is16 = g.op("Equal", ["sr", g.c("k16", np.array(16000, dtype=np.int64))])
    feat = g.op("If", [is16], then_branch=wide, else_branch=narrow)
    g.nodes.append(helper.make_node("Tanh", [g.op("Add", ["h", feat])], ["hn"]))
    g.nodes.append(helper.make_node("Add", ["c", "hn"], ["cn"]))
    top = g.op("Gather", ["hn", g.c("zero", np.array(0, dtype=np.int64))], axis=0)
    g.nodes.append(helper.make_node("Sigmoid", [g.op("ReduceMean", [top], axes=[1], keepdims=1)], ["output"]))
    save(path, helper.make_graph(g.nodes, "vad_sr", inputs, outputs, g.inits))


def save(name, graph):
    model = helper.make_model(graph, producer_name="gapbench make-test-models.py",
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    p = os.path.join(OUT, name)
    onnx.save(model, p)
    print(f"{p}: {os.path.getsize(p)} bytes")


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    decoder("decoder_kv.onnx", hidden=64, heads=2, layers=2, vocab=128, ffn=128)
    decoder("decoder_merged.onnx", hidden=32, heads=2, layers=2, vocab=64, ffn=64, merged=True)
    decoder("decoder_fp16.onnx", hidden=32, heads=2, layers=2, vocab=64, ffn=64, cache=TensorProto.FLOAT16)
    vad("vad_sr.onnx")
