#!/usr/bin/python3
"""Tests of the exporter on small models written the ways people write them:
captured tensors, tied weights, buffers, unused parameters, odd outputs,
and the errors for what cannot be exported. Each exported step is run by
autopar_graph_check against PyTorch's own values.

  /usr/bin/python3 python/test_autopar_export.py [-v]
"""
import collections
import contextlib
import functools
import io
import json
import os
import sys
import tempfile
import unittest

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import autopar_export  # noqa: E402
import autopar_graph_check  # noqa: E402

CLASS_WEIGHTS = torch.tensor([1.0, 2.0, 0.5, 1.0])   # a global a loss reads


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 4))


def _batch():
    torch.manual_seed(1)
    return torch.randn(5, 6), torch.randint(0, 4, (5,))


class ExportTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def export(self, model, inputs, loss_fn, **kwargs):
        """Exports with values, checks the graph against PyTorch; the JSON."""
        path = os.path.join(self.dir.name, "g.json")
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            obj = autopar_export.export(model, inputs, loss_fn, path, with_values=True,
                                        **kwargs)
        self.stderr = stderr.getvalue()
        rows, summary, ok = autopar_graph_check.check(path, os.path.join(self.dir.name,
                                                                        "g.values"))
        self.assertTrue(ok, summary + "\n" + "\n".join(str(r) for r in rows if not r[3]))
        with open(path) as f:
            self.assertEqual(json.load(f), obj)   # the JSON lines parse back to the same
        return obj

    def kinds(self, obj):
        return collections.Counter(n["kind"] for n in obj["nodes"] if n["op"] == "placeholder")

    def test_loss_closing_over_a_target_tensor_lifts_it_as_a_constant(self):
        x, y = _batch()

        def loss(out):
            return F.cross_entropy(out, y)
        obj = self.export(_mlp(), (x,), loss)
        constants = [n for n in obj["nodes"] if n.get("kind") == "constant"]
        self.assertEqual([c["target"] for c in constants], [f"{loss.__qualname__}.y"])
        self.assertEqual(constants[0]["outputs"], [{"shape": [5], "dtype": "i64"}])

    def test_partial_global_and_loss_module_tensors_are_lifted(self):
        x, y = _batch()
        w = torch.tensor([0.5, 1.0, 1.0, 2.0])
        for loss in (functools.partial(F.cross_entropy, weight=w),
                     lambda out, y: F.cross_entropy(out, y, weight=CLASS_WEIGHTS),
                     nn.CrossEntropyLoss(weight=w)):
            obj = self.export(_mlp(), (x, y), loss)
            self.assertEqual(self.kinds(obj)["constant"], 1)

    def test_plain_tensor_attribute_of_a_module_is_lifted(self):
        class Masked(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(6, 4)
                self.mask = torch.tensor([1.0, 0.0, 1.0, 1.0])   # not a buffer

            def forward(self, x):
                return self.fc(x) * self.mask
        obj = self.export(Masked(), _batch(), F.cross_entropy)
        self.assertIn("mask", [n.get("target") for n in obj["nodes"]])

    def test_a_tensor_the_exporter_cannot_reach_is_a_clear_error(self):
        holder = {"weights": torch.ones(4)}   # a dict: not lifted

        class Scaled(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(6, 4)
                self.table = holder

            def forward(self, x):
                return self.fc(x) * self.table["weights"]
        with self.assertRaises(autopar_export.ExportError) as e:
            autopar_export.export(Scaled(), _batch(), F.cross_entropy,
                                  os.path.join(self.dir.name, "g.json"))
        message = str(e.exception)
        self.assertIn("float32[4] tensor held in model attribute Scaled.table['weights']",
                      message)
        self.assertIn("register it as a buffer", message)

    def test_tied_weights_are_one_parameter(self):
        class Tied(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(10, 8)
                self.head = nn.Linear(8, 10, bias=False)
                self.head.weight = self.embed.weight

            def forward(self, t):
                return self.head(self.embed(t))
        torch.manual_seed(0)
        tokens = torch.randint(0, 10, (3, 4))
        obj = self.export(Tied(), (tokens, tokens.reshape(-1)),
                          lambda out, y: F.cross_entropy(out.reshape(-1, 10), y))
        params = [n["target"] for n in obj["nodes"] if n.get("kind") == "param"]
        self.assertEqual(params, ["embed.weight"])

    def test_batch_norm_running_stats_and_counter_are_buffer_outputs(self):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4, momentum=0.3), nn.ReLU(),
                              nn.Flatten(), nn.Linear(64, 4))
        before = [b.clone() for b in model.buffers()]
        obj = self.export(model, (torch.randn(2, 3, 6, 6), torch.tensor([0, 3])),
                          F.cross_entropy)
        buffers = [o for o in obj["outputs"] if o["kind"] == "buffer"]
        self.assertEqual([o["buffer"] for o in buffers],
                         ["1_running_mean", "1_running_var", "1_num_batches_tracked"])
        for b, old in zip(model.buffers(), before):   # the model itself is unchanged
            self.assertTrue(torch.equal(b, old))

    def test_unused_parameters_get_zero_gradients_and_a_warning(self):
        class TwoHeads(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(6, 8)
                self.main = nn.Linear(8, 4)
                self.aux = nn.Linear(8, 4)

            def forward(self, x):
                h = self.body(x)
                return {"logits": self.main(h), "aux": self.aux(h)}
        obj = self.export(TwoHeads(), _batch(), lambda out, y: F.cross_entropy(out["logits"], y))
        self.assertIn("their gradients are zeros: aux.weight, aux.bias", self.stderr)
        self.assertEqual(len([o for o in obj["outputs"] if o["kind"] == "grad"]), 6)

    def test_frozen_parameters_and_unused_inputs_have_no_gradient_outputs(self):
        model = _mlp()
        model[0].weight.requires_grad_(False)
        x, y = _batch()
        obj = self.export(model, (x, y, torch.arange(3)),
                          lambda out, y, unused: F.cross_entropy(out, y))
        grads = [o["param"] for o in obj["outputs"] if o["kind"] == "grad"]
        self.assertEqual(grads, ["0_bias", "2_weight", "2_bias"])
        self.assertEqual(self.kinds(obj)["param"], 4)
        self.assertEqual(self.kinds(obj)["input"], 3)

    def test_namedtuple_output_and_two_model_inputs(self):
        Out = collections.namedtuple("Out", "logits extra")

        class Pair(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(6, 4)
                self.b = nn.Linear(3, 4)

            def forward(self, x, z):
                return Out(self.a(x) + self.b(z), z.sum())
        x, y = _batch()
        self.export(Pair(), (x, torch.randn(5, 3), y),
                    lambda out, y: F.cross_entropy(out.logits, y) + out.extra * 0.0,
                    model_inputs=2)

    def test_writing_into_an_input_is_an_error_naming_the_node(self):
        class Writes(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(6, 4)

            def forward(self, x):
                x.mul_(2)
                return self.fc(x)
        with self.assertRaises(autopar_export.ExportError) as e:
            autopar_export.export(Writes(), _batch(), F.cross_entropy,
                                  os.path.join(self.dir.name, "g.json"))
        self.assertRegex(str(e.exception), r"node copy_\w* \(aten.copy_.default\) writes into "
                         r"\w+ \(input placeholder\)")

    def test_ops_outside_the_corpus_are_written_as_traced(self):
        class Mixed(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv1d(4, 8, 3, padding=1)
                self.gn = nn.GroupNorm(2, 8)
                self.prelu = nn.PReLU()
                self.gru = nn.GRU(8, 8, batch_first=True)
                self.up = nn.ConvTranspose2d(2, 2, 2, stride=2)
                self.ln = nn.LayerNorm(8, elementwise_affine=False)
                self.fc = nn.Linear(8, 5)

            def forward(self, x):
                h, _ = self.gru(self.prelu(self.gn(self.conv(x))).transpose(1, 2))
                h = torch.where(h > 0, h, 0.1 * h).clamp(-3, 3)
                h = F.normalize(h, dim=-1) + torch.einsum("btd,de->bte", h, torch.eye(8))
                img = h.reshape(h.shape[0], 2, 2, -1)
                img = self.up(F.pad(img, (1, 1, 1, 1), mode="reflect"))
                h = self.ln(h + img.mean((1, 2, 3))[:, None, None])
                g = torch.gather(h, 2, torch.zeros(h.shape[0], h.shape[1], 1, dtype=torch.long))
                peak = F.softplus(h).amax((1, 2))[:, None]
                return self.fc(h.cumsum(1)).mean(1) + g.mean(1) + peak
        torch.manual_seed(0)
        obj = self.export(Mixed(), (torch.randn(2, 4, 6), torch.tensor([1, 3])), F.cross_entropy)
        ops = {n["op"] for n in obj["nodes"]}
        for op in ("aten.native_group_norm.default", "aten.convolution.default",
                   "aten.reflection_pad2d.default", "aten.gather.default", "aten.cumsum.default",
                   "aten.where.self", "aten.clamp.default"):
            self.assertIn(op, ops)
        ln_backward = [n for n in obj["nodes"]
                       if n["op"] == "aten.native_layer_norm_backward.default"]
        self.assertEqual(ln_backward[0]["attrs"]["output_mask"], [1, 0, 0])
        self.assertEqual(ln_backward[0]["arg_inputs"], [1, 1, 1, 1, 0, 0])

    def test_lstm_flat_weights_and_dropout_export(self):
        class Tagger(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(6, 5, num_layers=2, batch_first=True)
                self.drop = nn.Dropout(0.5)
                self.fc = nn.Linear(5, 4)

            def forward(self, x):
                return self.fc(self.drop(self.lstm(x)[0][:, -1]))
        torch.manual_seed(0)
        model, x, y = Tagger(), torch.randn(2, 3, 6), torch.tensor([1, 2])
        path = os.path.join(self.dir.name, "drop.json")
        obj = autopar_export.export(model, (x, y), F.cross_entropy, path)
        ops = {n["op"] for n in obj["nodes"]}
        self.assertIn("aten.bernoulli.p", ops)
        in_place = [op for op in ops if op.startswith("aten.") and op.split(".")[1].endswith("_")]
        self.assertEqual(in_place, [])
        model.drop.p = 0.0
        self.export(model, (x, y), F.cross_entropy)

    def test_cli_exports_any_torchvision_classifier_and_names_the_choices(self):
        path = os.path.join(self.dir.name, "squeeze.json")
        with contextlib.redirect_stdout(io.StringIO()):
            autopar_export.main(["--model", "torchvision:squeezenet1_1", "--batch", "2",
                                 "--image", "32", "--classes", "3", "--out", path])
        with open(path) as f:
            obj = json.load(f)
        loss_input = [n for n in obj["nodes"] if n["op"] == "placeholder"
                      and n["kind"] == "input"]
        self.assertEqual([n["outputs"][0]["shape"] for n in loss_input], [[2, 3, 32, 32], [2]])
        with self.assertRaises(SystemExit) as caught:
            autopar_export.main(["--model", "torchvision:no_such_net", "--out", path])
        self.assertIn("'no_such_net'", str(caught.exception))
        self.assertIn("resnet50", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
