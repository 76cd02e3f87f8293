"""One cluster, kube-scheduler semantics of each supported version (v1.34 … v1.37, `kubefit.k8s.version`)."""
