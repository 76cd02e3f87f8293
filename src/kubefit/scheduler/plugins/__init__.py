"""kube-scheduler plugins as pure functions over ClusterState arrays; `registry` builds them by name."""
