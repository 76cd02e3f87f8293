"""The compiled parts, all optional (without a compiler, or without libyaml's headers for the reader, kubefit
runs the same code in Python, with the same answers): rows.py's row kernels in C, the change log's counts by pod
class (scheduler/_countkernels.c), and the streaming manifest reader over libyaml's event API
(manifests/_reader.c)."""

from setuptools import Extension, setup

setup(ext_modules=[
    Extension("kubefit.scheduler._rowkernels", ["src/kubefit/scheduler/_rowkernels.c"],
              depends=["src/kubefit/scheduler/_ndview.h"],  # numpy arrays read without the buffer protocol
              extra_compile_args=["-O2", "-ffp-contract=off"],  # IEEE float64 as Python computes it: no FMA
              libraries=["m"], optional=True),
    Extension("kubefit.scheduler._countkernels", ["src/kubefit/scheduler/_countkernels.c"],
              depends=["src/kubefit/scheduler/_ndview.h"],
              extra_compile_args=["-O2", "-ffp-contract=off"],  # IEEE float64 as Python computes it: no FMA
              libraries=["m"], optional=True),
    Extension("kubefit.manifests._reader", ["src/kubefit/manifests/_reader.c"],
              extra_compile_args=["-O2", "-pthread"], extra_link_args=["-pthread"],  # its prefetch thread
              libraries=["yaml", "m"], optional=True),
])
