"""Kubernetes primitives below the API objects: apimachinery (quantities, label selectors, field errors,
names, Go integer arithmetic) and component-helpers (pod requests, node affinity, taints)."""
