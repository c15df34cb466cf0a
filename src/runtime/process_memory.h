// A caching CPU allocator for libtorch, as PyTorch's CUDA caching allocator
// is for a GPU.
//
// libtorch's CPU tensors come from glibc: a block freed in one step goes back
// to the kernel (above the mmap threshold) or fragments the heap, whose top
// then grows a few MiB every step (llama3-debugmodel: +5 MB of RSS per step at
// a constant 112 MB of live tensors). Either way the next step's tensors fault
// fresh pages in, and on the VMs this project is measured on a fresh page
// costs about 10 us (2.7 ms per MiB, against 0.008 ms to rewrite a touched
// MiB): a step paid tens of milliseconds that no device pays.
//
// keep_freed_memory() installs an allocator that keeps every freed block in a
// free list by its size and hands it to the next tensor of that size. A
// training step allocates the same sizes every time, so from the second step
// on no tensor touches a fresh page. Blocks are never returned to the system:
// the process's footprint is the most it ever held of each size, as the CUDA
// allocator's "reserved" memory is; the memory model and the runtime's tracker
// count tensors held (PyTorch's "allocated"). Every runtime process (MPI ranks,
// calibration) calls it before allocating.
#pragma once

namespace autopar {

void keep_freed_memory();

}  // namespace autopar
