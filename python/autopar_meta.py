"""Meta (shape-only) kernels for aten ops that torch 1.13's fake tensors lack.

Without one, fake tracing runs the op's real CPU kernel on zero-filled tensors
of full size (fake_tensor.run_fallback_kernel): exporting resnet50 at batch
256, 224x224 would compute every convolution's backward for real (and hold
~20 GB). Registering the shape rule keeps tracing cost independent of the
batch size. Importing this module registers them once per process.
"""
import torch

_LIB = torch.library.Library("aten", "IMPL", "Meta")


def _convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                          transposed, output_padding, groups, output_mask):
    grad_input = input.new_empty(input.shape) if output_mask[0] else None
    grad_weight = weight.new_empty(weight.shape) if output_mask[1] else None
    grad_bias = None
    if output_mask[2] and bias_sizes is not None:
        grad_bias = grad_output.new_empty(bias_sizes)
    return grad_input, grad_weight, grad_bias


_LIB.impl("convolution_backward", _convolution_backward)
