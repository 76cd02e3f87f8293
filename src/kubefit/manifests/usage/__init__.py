"""Usage in, requests out: the formats people keep usage in, decoded into per-container usage (`model`), and the
requests rewritten from it as the real actors would (`rewrite`).

- decoders, one per format: `prometheus` (HTTP API answers; `promquery` asks a Prometheus directly), `vpa`
  (VerticalPodAutoscalers and checkpoints, whose histograms are `histogram`'s), `opencost`, `metricsserver`;
  `read` recognises a file's format;
- `owners`: which workload a pod (or a series) belongs to, and usage gathered per workload container;
- `recommender` (what the VPA recommender computes from checkpoints), `vpaadmission` (what the VPA admission
  controller writes into a pod), `strategy` (KRR-style: a percentile or the max, a margin, a floor), `plans`
  (either as a `rewrite.Plan`);
- `rewrite`: the scenario transformation, with `kubeletresize` judging in-place resizes.
"""
