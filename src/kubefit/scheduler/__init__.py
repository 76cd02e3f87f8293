"""One cluster, kube-scheduler v1.34 semantics."""
