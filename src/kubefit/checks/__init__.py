"""`kubefit check`: assertions on the answers of the other verbs, for a pull request or a pre-commit hook.

`expectations` decodes what is asserted (the `SchedulingExpectations` file, the options); `evaluate` asks each
verb (`kubefit.verbs`) for its answer and judges it. No scheduling rule lives here: every number is the one
the verb prints.
"""
