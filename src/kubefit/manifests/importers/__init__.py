"""Importers: public cluster traces → kubefit scenarios (Kubernetes Node and Pod objects)."""
