"""The model-zoo corpus: models as people write them, for the PyTorch exporter.

MODELS maps a name to a builder; build(name, size) returns an Example
(model, example_inputs, loss_fn, model_inputs) ready for
autopar_export.export. Every torchvision 0.14 classification family is here,
plus an nn.Transformer encoder-decoder, an nn.TransformerDecoder LM, a GPT
(tied embedding, mask and positions built in forward), an nn.LSTM classifier
and a UNet (nearest + bilinear upsampling, per-pixel cross-entropy).

Sizes:
  tiny  for CI: the smallest widths, depths, images and batch (2) that keep
        each architecture's block kinds; families without width knobs in their
        constructor (alexnet, squeezenet, inception_v3, googlenet, the VGG
        classifier, the fixed 1280/2048-channel heads) keep their widths and
        get the smallest image that works.
  full  torchvision's defaults with num_classes=10, 64x64 images (299x299 for
        inception_v3, whose aux head needs it), batch 2; the other models at
        their constructors' defaults (nn.Transformer: d_model 512, 6+6 layers).

Dropout stays at each model's default unless build(..., dropout=0.0): then
every dropout-like constructor argument is 0 and zero_dropout() zeroes what
the constructors hard-code (nn.Dropout, nn.MultiheadAttention, stochastic
depth), so a step has no random ops and compares exactly with PyTorch.
Classification losses are F.cross_entropy on the logits, plus 0.3x the
cross-entropy of each auxiliary head (inception_v3, googlenet) as their papers
train them.
"""
import collections
import functools
import inspect
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.models as tv
from torchvision.models.efficientnet import FusedMBConvConfig, MBConvConfig
from torchvision.models.mobilenetv3 import InvertedResidualConfig
from torchvision.models.regnet import BlockParams
from torchvision.models.resnet import Bottleneck

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

SIZES = ("tiny", "full")
CLASSES = 10
BATCH = 2
# Constructor arguments that set a dropout or stochastic-depth probability.
DROPOUT_ARGS = ("dropout", "attention_dropout", "dropout_aux", "stochastic_depth_prob",
                "drop_rate")

Example = collections.namedtuple("Example", "model inputs loss_fn model_inputs")
MODELS = {}


def register(name):
    def add(builder):
        MODELS[name] = builder
        return builder
    return add


def build(name, size="tiny", dropout=None, seed=0, dtype=None):
    """The Example of corpus model `name` at `size`; dropout=0.0 turns every
    dropout off (for comparing with PyTorch), None keeps the defaults. dtype
    (e.g. torch.float64) converts the model and its floating inputs."""
    if size not in SIZES:
        raise ValueError(f"size {size!r}: expected one of {SIZES}")
    if name not in MODELS:
        raise KeyError(f"unknown corpus model {name!r} (known: {', '.join(sorted(MODELS))})")
    torch.manual_seed(seed)
    example = MODELS[name](size, dropout)
    if dropout is not None:
        set_dropout(example.model, dropout)
    if dtype is not None:
        example = to_dtype(example, dtype)
    return example


def to_dtype(example, dtype):
    """The example with its model's floating parameters and buffers and its
    floating inputs in dtype (integer inputs and buffers stay as they are)."""
    example.model.to(dtype)
    inputs = tuple(t.to(dtype) if t.is_floating_point() else t for t in example.inputs)
    return example._replace(inputs=inputs)


def dropout_kwargs(ctor, dropout):
    """{argument: dropout} for every dropout-like argument ctor takes; {} when
    dropout is None (keep the defaults)."""
    if dropout is None:
        return {}
    params = inspect.signature(ctor).parameters
    return {k: dropout for k in DROPOUT_ARGS if k in params}


def set_dropout(model, p):
    """Sets the probability of every dropout a constructor hard-codes."""
    for m in model.modules():
        if isinstance(m, nn.modules.dropout._DropoutNd):
            m.p = p
        elif isinstance(m, nn.MultiheadAttention):
            m.dropout = p
        elif isinstance(m, torchvision.ops.StochasticDepth):
            m.p = p


def zero_dropout(model):
    set_dropout(model, 0.0)


def classification_loss(out, y):
    """Cross-entropy of the logits; a tuple output (inception_v3, googlenet in
    training) is (logits, aux logits...), each aux head weighted 0.3."""
    if isinstance(out, torch.Tensor):
        return F.cross_entropy(out, y)
    loss = F.cross_entropy(out[0], y)
    for aux in out[1:]:
        if aux is not None:
            loss = loss + 0.3 * F.cross_entropy(aux, y)
    return loss


def lm_loss(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def _images(model, image):
    x = torch.randn(BATCH, 3, image, image)
    y = torch.randint(0, CLASSES, (BATCH,))
    return Example(model, (x, y), classification_loss, 1)


def _vision(name, tiny_ctor, tiny_image, full_image=64, **full_kwargs):
    """A torchvision family: tiny builds the class with small widths,
    full calls torchvision's builder `name` with num_classes=10."""
    def builder(size, dropout):
        if size == "tiny":
            ctor, args, kwargs = tiny_ctor()
            kwargs.update(dropout_kwargs(ctor, dropout))
            model = ctor(*args, num_classes=CLASSES, **kwargs)
            return _images(model, tiny_image)
        model = getattr(tv, name)(num_classes=CLASSES, **full_kwargs)
        return _images(model, full_image)
    register(name)(builder)


def _resnet(groups=1, width_per_group=8):
    return tv.ResNet, (Bottleneck, [1, 1, 1, 1]), {"groups": groups,
                                                   "width_per_group": width_per_group}


_VGG_TINY = [8, "M", 8, "M", 8, 8, "M", 8, 8, "M", 8, 512, "M"]   # vgg11's layers, narrow
_vision("alexnet", lambda: (tv.AlexNet, (), {}), tiny_image=63)
_vision("vgg11", lambda: (tv.VGG, (tv.vgg.make_layers(_VGG_TINY),), {}), tiny_image=32)
_vision("resnet50", lambda: _resnet(), tiny_image=64)
_vision("resnext50_32x4d", lambda: _resnet(groups=4, width_per_group=2), tiny_image=64)
_vision("wide_resnet50_2", lambda: _resnet(width_per_group=16), tiny_image=64)
_vision("squeezenet1_0", lambda: (tv.SqueezeNet, ("1_0",), {}), tiny_image=32)
_vision("densenet121", lambda: (tv.DenseNet, (), {
    "growth_rate": 4, "block_config": (1, 1, 1, 1), "num_init_features": 8, "bn_size": 2}),
    tiny_image=32)
_vision("inception_v3", lambda: (tv.Inception3, (), {"init_weights": True}), tiny_image=299,
        full_image=299, init_weights=True)
_vision("googlenet", lambda: (tv.GoogLeNet, (), {"init_weights": True}), tiny_image=32,
        init_weights=True)
_vision("shufflenet_v2_x0_5", lambda: (tv.ShuffleNetV2, ([2, 1, 1], [8, 16, 32, 64, 64]), {}),
        tiny_image=32)
_vision("mobilenet_v2", lambda: (tv.MobileNetV2, (), {
    "inverted_residual_setting": [[1, 8, 1, 1], [2, 8, 2, 2], [2, 16, 1, 2]]}), tiny_image=32)
_vision("mobilenet_v3_small", lambda: (tv.MobileNetV3, ([
    InvertedResidualConfig(8, 3, 8, 8, True, "RE", 2, 1, 1.0),
    InvertedResidualConfig(8, 3, 16, 8, False, "RE", 1, 1, 1.0),
    InvertedResidualConfig(8, 5, 16, 16, True, "HS", 2, 1, 1.0)], 32), {}), tiny_image=32)
_vision("mnasnet0_5", lambda: (tv.MNASNet, (0.1,), {}), tiny_image=32)
_vision("efficientnet_b0", lambda: (tv.EfficientNet, ([
    MBConvConfig(1, 3, 1, 8, 8, 1), MBConvConfig(4, 3, 2, 8, 16, 2)],), {"dropout": 0.2}),
    tiny_image=32)
_vision("efficientnet_v2_s", lambda: (tv.EfficientNet, ([
    FusedMBConvConfig(1, 3, 1, 8, 8, 1), FusedMBConvConfig(4, 3, 2, 8, 16, 1),
    MBConvConfig(4, 3, 2, 16, 16, 2)],), {
        "dropout": 0.2, "last_channel": 64,
        "norm_layer": functools.partial(nn.BatchNorm2d, eps=1e-3)}),
    tiny_image=32)
_vision("regnet_y_400mf", lambda: (tv.RegNet, (BlockParams(
    depths=[1, 2], widths=[8, 16], group_widths=[8, 8], bottleneck_multipliers=[1.0, 1.0],
    strides=[2, 2], se_ratio=0.25),), {"stem_width": 8}), tiny_image=32)
_vision("convnext_tiny", lambda: (tv.ConvNeXt, ([
    tv.convnext.CNBlockConfig(8, 16, 1), tv.convnext.CNBlockConfig(16, None, 1)],),
    {"stochastic_depth_prob": 0.1}), tiny_image=32)
_vision("vit_b_16", lambda: (tv.VisionTransformer, (), {
    "image_size": 32, "patch_size": 16, "num_layers": 1, "num_heads": 2, "hidden_dim": 16,
    "mlp_dim": 32}), tiny_image=32, image_size=64)
_vision("swin_t", lambda: (tv.SwinTransformer, (), {
    "patch_size": [4, 4], "embed_dim": 8, "depths": [2, 1], "num_heads": [2, 2],
    "window_size": [4, 4], "stochastic_depth_prob": 0.2}), tiny_image=32)


def _tokens(vocab, *shape):
    return torch.randint(0, vocab, shape)


# Token models: (vocab, dim, heads, layers, ffn, seq) per size.
_LM = {"tiny": (32, 16, 2, 1, 32, 8), "full": (1000, 512, 8, 6, 2048, 32)}


def _dropout_arg(dropout):
    return {} if dropout is None else {"dropout": dropout}


@register("transformer")
def _transformer(size, dropout):
    vocab, dim, heads, layers, ffn, seq = _LM[size]
    model = models.Seq2Seq(vocab, dim, heads, layers, ffn, **_dropout_arg(dropout))
    src, tgt = _tokens(vocab, BATCH, seq), _tokens(vocab, BATCH, seq - 2)
    return Example(model, (src, tgt, _tokens(vocab, BATCH, seq - 2)), lm_loss, 2)


@register("transformer_decoder")
def _decoder(size, dropout):
    vocab, dim, heads, layers, ffn, seq = _LM[size]
    model = models.DecoderLM(vocab, dim, heads, layers, ffn, **_dropout_arg(dropout))
    memory = torch.randn(BATCH, seq - 2, dim)
    tgt = _tokens(vocab, BATCH, seq)
    return Example(model, (tgt, memory, _tokens(vocab, BATCH, seq)), lm_loss, 2)


@register("gpt")
def _gpt(size, dropout):
    vocab, dim, heads, layers, _, seq = _LM[size]
    model = models.GPT(vocab, dim, heads, layers, seq, **_dropout_arg(dropout))
    return Example(model, (_tokens(vocab, BATCH, seq), _tokens(vocab, BATCH, seq)), lm_loss, 1)


@register("lstm")
def _lstm(size, dropout):
    vocab, dim, seq = (32, 8, 6) if size == "tiny" else (1000, 256, 32)
    model = models.LSTMClassifier(vocab, dim, dim, CLASSES, **_dropout_arg(dropout))
    y = torch.randint(0, CLASSES, (BATCH,))
    return Example(model, (_tokens(vocab, BATCH, seq), y), F.cross_entropy, 1)


@register("unet")
def _unet(size, dropout):
    width, classes, image = (4, 3, 8) if size == "tiny" else (32, CLASSES, 64)
    model = models.UNet(width, classes)
    x = torch.randn(BATCH, 3, image, image)
    y = torch.randint(0, classes, (BATCH, image, image))
    return Example(model, (x, y), F.cross_entropy, 1)
