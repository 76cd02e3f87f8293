"""Dynamic Resource Allocation for the DynamicResources plugin: CEL selectors, the structured allocator, and
the claims and devices a run has allocated (kube-scheduler v1.34.1, `k8s.io/dynamic-resource-allocation`)."""
