"""`python -m kubefit.cli`."""

import sys

from kubefit.cli import main

sys.exit(main())
