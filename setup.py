"""The one compiled part: rows.py's row kernels in C (optional: without a compiler kubefit runs them in Python)."""

from setuptools import Extension, setup

setup(ext_modules=[Extension(
    "kubefit.scheduler._rowkernels", ["src/kubefit/scheduler/_rowkernels.c"],
    extra_compile_args=["-O2", "-ffp-contract=off"],  # IEEE float64 as Python computes it: no fused multiply-add
    libraries=["m"], optional=True)])
