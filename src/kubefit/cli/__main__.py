"""`python -m kubefit.cli`."""

from kubefit.cli import run

run()
